package main

import (
	"context"

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
