// statewright plugin for opencode: every tool call is decided by the
// statewright binary (`statewright hook opencode <event>`, one JSON object
// on stdin, one JSON answer on stdout), so the law stays in one place.
//
// Installed by `statewright init opencode` into .opencode/plugins/, with
// the command line below filled in. Fail closed: a call runs only when the
// binary exits 0 with a well-formed answer whose decision is "allow";
// anything else (binary missing, crash, timeout, garbage) blocks it, by
// throwing, which is opencode's way to block a tool call.
//
// No imports beyond node:child_process: opencode loads this file as is.
import { spawn } from "node:child_process"

const HARNESS = "opencode"

/*STATEWRIGHT_COMMON*/

function outputString(output: unknown): string {
  return typeof output === "string" ? output : JSON.stringify(output ?? "")
}

// phaseModel is the opencode model ref of the phase an answer names:
// "provider/model", or a bare model id with the message's provider.
function phaseModel(m: Answer["model"], cur: { providerID?: string } | undefined) {
  const id = typeof m?.id === "string" ? m.id : ""
  if (!id) return undefined
  const slash = id.indexOf("/")
  if (slash > 0) return { providerID: id.slice(0, slash), modelID: id.slice(slash + 1) }
  return cur?.providerID ? { providerID: cur.providerID, modelID: id } : undefined
}

export const Statewright = async (ctx: { directory: string; worktree?: string }) => {
  const cwd = ctx.directory
  // opencode delivers session.created as an event, not awaited by the
  // prompt; the first tool call of a session waits for it, so that an
  // operator's default workflow is in force before anything runs.
  const started = new Map<string, Promise<Result>>()
  const start = (id: string) => {
    let p = started.get(id)
    if (!p) {
      p = ask("session-start", { session: id, cwd })
      started.set(id, p)
    }
    return p
  }
  return {
    "tool.execute.before": async (input: { tool: string; sessionID: string; callID: string }, output: { args: any }) => {
      await start(input.sessionID)
      const r = await ask("tool-before", {
        session: input.sessionID,
        cwd,
        tool: input.tool,
        call_id: input.callID,
        args: output.args ?? {},
      })
      if (r.code !== 0 || !r.answer || r.answer.decision !== "allow") {
        throw new Error(blockReason(r))
      }
      const stamped = r.answer.args
      if (stamped && typeof stamped === "object") {
        // Replace the arguments in place: opencode passes the same object on.
        if (!output.args || typeof output.args !== "object") output.args = {}
        for (const k of Object.keys(output.args)) if (!(k in stamped)) delete output.args[k]
        Object.assign(output.args, stamped)
      }
    },
    "tool.execute.after": async (
      input: { tool: string; sessionID: string; callID: string; args?: any },
      output: { output?: unknown; metadata?: any },
    ) => {
      const exit = output?.metadata?.exit
      await ask("tool-after", {
        session: input.sessionID,
        cwd,
        tool: input.tool,
        call_id: input.callID,
        args: input.args ?? {},
        output: outputString(output?.output).slice(0, MAX_OUTPUT),
        output_bytes: Buffer.byteLength(outputString(output?.output)),
        ...(typeof exit === "number" ? { exit_code: exit } : {}),
      })
    },
    "chat.message": async (
      input: { sessionID?: string; model?: { providerID?: string; modelID?: string } },
      output: { message?: any },
    ) => {
      // The phase's model (workflow `model`) for this user message, as
      // the original's opencode plugin did; opencode picks the model per
      // message, so a phase change takes effect at the next message.
      if (typeof input?.sessionID !== "string" || !output?.message) return
      const r = await ask("context", { session: input.sessionID, cwd })
      const m = phaseModel(r.answer?.model, input.model ?? output.message.model)
      if (m) output.message.model = m
    },
    "experimental.chat.system.transform": async (input: { sessionID?: string }, output: { system?: string[] }) => {
      // Advisory: the phase in the system prompt. Enforcement is the tool hook.
      if (typeof input?.sessionID !== "string" || !Array.isArray(output?.system)) return
      const r = await ask("context", { session: input.sessionID, cwd })
      if (r.answer?.context) output.system.push(r.answer.context)
    },
    event: async ({ event }: { event: { type: string; properties?: any } }) => {
      if (event?.type !== "session.created") return
      const id = event.properties?.info?.id ?? event.properties?.sessionID
      if (typeof id === "string") await start(id)
    },
  }
}
