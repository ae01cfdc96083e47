package doctorcmd

import (
	"context"
	"github.com/statewright-go/statewright/internal/cli/sandboxcmd"
	"github.com/statewright-go/statewright/sandbox"

	"github.com/statewright-go/statewright/agent/tools"
)

// checkAgentSandbox reports whether `statewright agent` can run the
// model's commands under bubblewrap here.
func checkAgentSandbox(ctx context.Context, r *doctorReport) {
	sb := tools.DetectSandbox(ctx)
	if sb.Bwrap != "" {
		r.ok("agent", "statewright agent runs commands under bubblewrap (%s): read-only filesystem outside the workspace, no network", sb.Bwrap)
		return
	}
	r.warn("agent", "statewright agent runs commands WITHOUT a sandbox: %s; file tools stay confined to the workspace, but run_command can reach anything your user can", sb.Why)
}

// checkHookSandbox reports whether the hooks run the agent's shell
// commands under the phase's OS sandbox (--sandbox, --require-sandbox) and
// whether one runs here; without one it says plainly that same-user
// secrecy cannot hold (docs/threat-model.md).
func checkHookSandbox(ctx context.Context, r *doctorReport, harnessName string, flags map[string]string) {
	a := sandbox.Probe(ctx)
	_, require := flags["require-sandbox"]
	_, on := flags["sandbox"]
	switch {
	case !a.OK() && require:
		r.ok("sandbox", "no OS sandbox here (%s), and --require-sandbox denies every shell call; %s", a.Why, "same-user secrecy would be impossible without it")
	case !a.OK():
		r.warn("sandbox", "%s (%s)", sandboxcmd.NoSandboxWarning, a.Why)
	case require || on:
		r.ok("sandbox", "every Bash call runs under the phase's OS sandbox (%s): secrets and the store hidden, the law read-only, writes only where the phase allows (docs/sandbox.md)", a.String())
	default:
		r.warn("sandbox", "an OS sandbox is available (%s) but the hooks do not use it: run `statewright init %s --sandbox` (or --require-sandbox); until then code the agent runs can read the operator token and the store (docs/threat-model.md)", a.String(), harnessName)
	}
	if a.OK() && (require || on) {
		if why := sandbox.FastPathRefusal(); why != "" {
			r.warn("sandbox fast path", "%s (docs/sandbox.md, \"The fast path\")", why)
		}
	}
}
