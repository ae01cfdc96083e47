// The part of statewright's harness plugins (the opencode plugin, the Pi
// extension) that runs the statewright binary: `statewright init HARNESS`
// writes it into the plugin in place of the STATEWRIGHT_COMMON marker, and
// the command line into the STATEWRIGHT_CONFIG slot. It needs a constant
// HARNESS, the harness's name, and node:child_process's spawn, both
// declared by the plugin before the marker.

type Config = { argv: string[]; flags: string[]; timeout_ms: number }

// STATEWRIGHT_CONFIG is replaced by `statewright init HARNESS`.
const CONFIG: Config | null = /*STATEWRIGHT_CONFIG*/ null /*END_STATEWRIGHT_CONFIG*/

const MAX_OUTPUT = 64 * 1024
const PREFIX = "[statewright] "

type Answer = {
  decision?: string
  reason?: string
  args?: Record<string, unknown>
  context?: string
  text?: string
  is_error?: boolean
  notice?: string
  // The phase's model ("provider/model" or a bare model id) and thinking
  // level, for the plugin to switch to.
  model?: { id?: string; thinking_level?: string }
}

type Result = { code: number | null; answer: Answer | null; error: string }

// ask runs the binary for one event and parses its answer. It never
// throws; callers decide what a failure means (a block, for tool calls).
function ask(event: string, payload: Record<string, unknown>): Promise<Result> {
  return new Promise((resolve) => {
    if (!CONFIG || !Array.isArray(CONFIG.argv) || CONFIG.argv.length === 0) {
      resolve({ code: null, answer: null, error: `the statewright plugin has no command line; run \`statewright init ${HARNESS}\`` })
      return
    }
    const [bin, ...rest] = CONFIG.argv
    let out = ""
    let err = ""
    let settled = false
    const done = (r: Result) => {
      if (!settled) {
        settled = true
        resolve(r)
      }
    }
    let child: ReturnType<typeof spawn>
    try {
      child = spawn(bin, [...rest, event, ...(CONFIG.flags ?? [])], { stdio: ["pipe", "pipe", "pipe"] })
    } catch (e) {
      done({ code: null, answer: null, error: `cannot run ${bin}: ${String(e)}` })
      return
    }
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL")
      } catch {}
      done({ code: null, answer: null, error: `${bin} did not answer within ${CONFIG.timeout_ms} ms` })
    }, CONFIG.timeout_ms || 10000)
    child.stdout?.on("data", (d) => (out += d))
    child.stderr?.on("data", (d) => (err += d))
    child.on("error", (e) => {
      clearTimeout(timer)
      done({ code: null, answer: null, error: `cannot run ${bin}: ${String(e)}` })
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      let answer: Answer | null = null
      try {
        const parsed = JSON.parse(out)
        if (parsed && typeof parsed === "object" && !Array.isArray(parsed) && typeof parsed.decision === "string") answer = parsed
      } catch {}
      const ok = answer !== null && code === 0
      done({ code, answer, error: ok ? "" : `${bin} gave no valid answer (exit ${code}): ${(err || out).slice(0, 2000)}` })
    })
    child.stdin?.on("error", () => {})
    child.stdin?.end(JSON.stringify({ ...payload }))
  })
}

function blockReason(r: Result): string {
  if (r.answer?.reason) return r.answer.reason
  return `${PREFIX}the call is denied because statewright could not decide it (statewright fails closed): ${r.error}`
}
