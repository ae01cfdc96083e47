// statewright extension for Pi (pi-coding-agent): every tool call is
// decided by the statewright binary (`statewright hook pi <event>`, one JSON
// object on stdin, one JSON answer on stdout), so the law stays in one
// place. Pi has no MCP client, so the extension registers statewright's
// control tools itself and runs them through the binary too.
//
// Installed by `statewright init pi` into .pi/extensions/, with the command
// line below filled in. Fail closed: a call runs only when the binary exits
// 0 with a well-formed answer whose decision is "allow"; anything else
// (binary missing, crash, timeout, garbage) blocks it with
// { block: true, reason }.
import { spawn } from "node:child_process"
import { Type } from "typebox"

const HARNESS = "pi"

/*STATEWRIGHT_COMMON*/

function resultText(content: unknown): string {
  let s = ""
  if (Array.isArray(content)) {
    s = content
      .filter((c: any) => c && c.type === "text" && typeof c.text === "string")
      .map((c: any) => c.text)
      .join("\n")
  } else if (typeof content === "string") s = content
  return s
}

// bashExit derives the shell's exit status from Pi's bash tool (0.73):
// a result that is not an error exited 0; a non-zero exit is an error whose
// text ends in "Command exited with code N"; a timeout or abort has none.
function bashExit(tool: string, isError: boolean, text: string): { exit_code?: number } {
  if (tool !== "bash") return {}
  if (!isError) return { exit_code: 0 }
  const m = /Command exited with code (\d+)\s*$/.exec(text)
  return m ? { exit_code: Number(m[1]) } : {}
}

function session(ctx: any): string {
  try {
    return String(ctx?.sessionManager?.getSessionId?.() ?? "")
  } catch {
    return ""
  }
}

// applyModel switches Pi to the model and thinking level of the phase an
// answer names (workflow `model` / `thinking_level`, as the original's Pi
// extension did): "provider/id", or a bare id looked up in Pi's model
// registry (the current provider's first). An unknown model leaves Pi's
// as it is; the phase context still names it.
let appliedModel = ""

async function applyModel(pi: any, ctx: any, m: Answer["model"]) {
  if (!m || typeof m !== "object") return
  try {
    const id = typeof m.id === "string" ? m.id : ""
    if (id) {
      const reg = ctx?.modelRegistry
      const cur = ctx?.model
      const all: any[] = reg?.getAll?.() ?? []
      const slash = id.indexOf("/")
      let target = slash > 0 ? reg?.find?.(id.slice(0, slash), id.slice(slash + 1)) : undefined
      if (!target) target = all.find((x) => x?.id === id && x?.provider === cur?.provider) ?? all.find((x) => x?.id === id)
      // (ctx.model may be the model the turn started with: compare with
      // what this extension set last.)
      const key = target ? `${target.provider}/${target.id}` : ""
      if (target && key !== appliedModel && (await pi.setModel(target))) appliedModel = key
    }
    if (typeof m.thinking_level === "string" && m.thinking_level) pi.setThinkingLevel(m.thinking_level)
  } catch {}
}

// The control tools, under their MCP names; the binary serves them.
const CONTROL_TOOLS = [
  {
    name: "statewright_get_state",
    description: "statewright: the workflow's current phase, its allowed tools, instructions and next events.",
    parameters: Type.Object({}),
  },
  {
    name: "statewright_transition",
    description:
      "statewright: move the workflow on by sending one of the current phase's events (see statewright_get_state). Say why in data.rationale.",
    parameters: Type.Object({
      event: Type.String({ description: "The event to send, one of the current phase's transitions." }),
      data: Type.Optional(Type.Record(Type.String(), Type.Any(), { description: "Facts about the work, e.g. {rationale: ...}." })),
    }),
  },
  {
    name: "statewright_list_workflows",
    description: "statewright: the workflows this project may start.",
    parameters: Type.Object({}),
  },
  {
    name: "statewright_start",
    description: "statewright: start a workflow for this session (only when none is active).",
    parameters: Type.Object({ name: Type.String({ description: "The workflow to start, from statewright_list_workflows." }) }),
  },
  {
    name: "statewright_get_status",
    description: "statewright: the run's status (phase, iterations, pending approval).",
    parameters: Type.Object({}),
  },
]

export default function (pi: any) {
  for (const t of CONTROL_TOOLS) {
    pi.registerTool({
      name: t.name,
      label: t.name,
      description: t.description,
      parameters: t.parameters,
      async execute(toolCallId: string, params: any, _signal: any, _onUpdate: any, ctx: any) {
        const r = await ask("control", {
          session: session(ctx),
          cwd: ctx?.cwd ?? process.cwd(),
          tool: t.name,
          call_id: toolCallId,
          args: params ?? {},
        })
        if (!r.answer) throw new Error(blockReason(r))
        await applyModel(pi, ctx, r.answer.model)
        const text = [r.answer.text ?? r.answer.reason ?? "", r.answer.context ?? ""].filter((s) => s).join("\n\n")
        if (r.code !== 0 || r.answer.is_error || r.answer.decision === "deny") throw new Error(text || blockReason(r))
        return { content: [{ type: "text", text }], details: {} }
      },
    })
  }

  pi.on("session_start", async (_event: any, ctx: any) => {
    const id = session(ctx)
    if (id) await ask("session-start", { session: id, cwd: ctx?.cwd ?? process.cwd() })
  })

  pi.on("before_agent_start", async (event: any, ctx: any) => {
    // Advisory: the phase in the system prompt. Enforcement is tool_call.
    const id = session(ctx)
    if (!id) return
    const r = await ask("context", { session: id, cwd: ctx?.cwd ?? process.cwd() })
    await applyModel(pi, ctx, r.answer?.model)
    if (r.answer?.context) return { systemPrompt: `${event.systemPrompt ?? ""}\n\n${r.answer.context}` }
  })

  pi.on("tool_call", async (event: any, ctx: any) => {
    const r = await ask("tool-before", {
      session: session(ctx),
      cwd: ctx?.cwd ?? process.cwd(),
      tool: event.toolName,
      call_id: event.toolCallId,
      args: event.input ?? {},
    })
    if (r.code !== 0 || !r.answer || r.answer.decision !== "allow") return { block: true, reason: blockReason(r) }
    const stamped = r.answer.args
    if (stamped && typeof stamped === "object" && event.input && typeof event.input === "object") {
      for (const k of Object.keys(event.input)) if (!(k in stamped)) delete event.input[k]
      Object.assign(event.input, stamped)
    }
  })

  pi.on("tool_result", async (event: any, ctx: any) => {
    const text = resultText(event.content)
    await ask("tool-after", {
      ...bashExit(event.toolName, !!event.isError, text),
      session: session(ctx),
      cwd: ctx?.cwd ?? process.cwd(),
      tool: event.toolName,
      call_id: event.toolCallId,
      args: event.input ?? {},
      output: text.length > MAX_OUTPUT ? text.slice(-MAX_OUTPUT) : text,
      output_bytes: Buffer.byteLength(text),
      failed: !!event.isError,
    })
  })
}
