package harness

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/testreport/testrun"
)

// ShellKey is the tool-input key holding a shell tool's command line in
// every harness whose hooks can replace a tool's input: Claude Code's and
// Codex's Bash, opencode's and Pi's bash.
const ShellKey = "command"

// Route is how one shell call runs once it is allowed, the same in every
// harness whose hooks can replace a tool's input (Claude Code's and
// Codex's updatedInput, the opencode plugin's and the Pi extension's
// replaced arguments):
//
//   - under the OS sandbox, where the hook routes shell calls there
//     (--sandbox, --require-sandbox) and one runs here: the launcher runs
//     the command with the phase's profile and records its exit status
//     (and a test command's structured evidence);
//   - otherwise, a plain test command runs through `statewright testrun`,
//     which makes the runner also write its structured report: test
//     evidence comes from the tests that ran (issue 15.2, DECISIONS 19);
//   - any other call runs as it is.
//
// RouteShell prepares it at the tool gate, Rewrite gives the input to run
// after the decision, and AfterShell reads what ran at the result event.
type Route struct {
	sh                   *Shell
	shell                bool
	session, id, project string
	cwd                  string
	// root is the sandbox root whose servers the decision may stop ("":
	// the hook does not route shell calls through the sandbox).
	root string
}

// RouteShell prepares the route of the call tc at the tool gate; shell is
// true when tc's tool is the harness's shell tool. Where the call will run
// under the sandbox, it asks the decision for the call's profile
// (tc.Sandbox, tc.Call.Sandboxed). deny is set when the hook requires a
// sandbox and none runs here: the call is denied with that reason.
func (h *Hook) RouteShell(tc *runtime.ToolCall, shell bool) (r *Route, deny string) {
	sh, deny := h.ShellFor(shell, tc.Call.ProjectDir, true)
	if deny != "" {
		return nil, deny
	}
	r = &Route{sh: sh, shell: shell, session: tc.Session, id: tc.Call.ToolUseID, project: tc.Call.ProjectDir, cwd: tc.Call.Cwd}
	if sh != nil {
		tc.Sandbox, tc.Call.Sandboxed = sh.Request(r.session, r.id), true
	}
	if h.Sandbox || h.RequireSandbox {
		if root, err := sandbox.DefaultRoot(); err == nil {
			r.root = root
		}
	}
	return r, ""
}

// stopStale stops the session's sandbox server when it serves another
// phase than the one in force at this decision (any tool's): commands the
// harness keeps running in the background do not outlive their phase
// (docs/sandbox.md, "One sandbox per phase").
func (r *Route) stopStale(res runtime.DecideResult) {
	if r != nil && r.root != "" && r.session != "" {
		state := res.State
		sandbox.StopServerUnless(r.root, r.session, &state)
	}
}

// keepPhase stops the session's sandbox server when it serves another
// phase than the run's v (after a transition through a control tool, at a
// prompt, when the agent stops). A nil v (no run, or unread) stops
// nothing.
func (h *Hook) keepPhase(session string, v *runtime.RunView) {
	if v == nil || v.Run == nil || (!h.Sandbox && !h.RequireSandbox) {
		return
	}
	if root, err := sandbox.DefaultRoot(); err == nil {
		state := v.Run.State
		sandbox.StopServerUnless(root, session, &state)
	}
}

// EndSandbox stops the session's sandbox server and everything it runs
// (the harness ended the session).
func (h *Hook) EndSandbox(session string) {
	if !h.Sandbox && !h.RequireSandbox {
		return
	}
	if root, err := sandbox.DefaultRoot(); err == nil {
		sandbox.StopServer(root, session)
		// Calls whose end nobody reported: what they planted goes now.
		sandbox.SweepSession(sandbox.SessionDir(root, session))
	}
}

// Rewrite returns the tool input to run instead of input, given the
// call's decision res, with the reason to show the harness; nil when the
// call runs as it is (it is no allowed, enforced shell call, or no plain
// test command outside the sandbox). An error means the sandboxed call
// cannot run: the harness's tool gate fails closed with it.
func (r *Route) Rewrite(res runtime.DecideResult, input json.RawMessage) (rewritten json.RawMessage, why string, err error) {
	r.stopStale(res)
	if r == nil || !r.shell || !res.Enforced || res.Verdict != policy.Allow {
		return nil, "", nil
	}
	if r.sh != nil {
		// The harness runs the updated command: the launcher, under the
		// profile in force now (docs/sandbox.md).
		out, err := r.sh.Rewrite(r.session, r.id, res.Sandbox, input, ShellKey, r.cwd)
		if err != nil {
			return nil, "", err
		}
		return out, "statewright: runs in the OS sandbox of " + PhaseName(res.State), nil
	}
	if out := TestRunRewrite(r.session, r.id, r.project, input, ShellKey); out != nil {
		return out, "statewright: " + res.Reason + " (the test run records a structured report)", nil
	}
	return nil, "", nil
}

// AfterShell reads, at the result event, what the route recorded for a
// shell call into tr (shell is true for the harness's shell tool): the
// evidence `statewright testrun` wrote, or the launcher's record (its exit
// status over the harness's report). It returns the lessons for paths the
// sandbox refused (DECISIONS 11), resolved against cwd ("" for none).
func (h *Hook) AfterShell(ctx context.Context, svc *runtime.Service, tr *runtime.ToolResult, shell bool, cwd string) string {
	if !shell {
		return ""
	}
	if TestRunAfter(tr, ShellKey) {
		// It ran through testrun, not the launcher (with --sandbox where
		// no sandbox runs, the tool gate let it run unsandboxed).
		return ""
	}
	if sh, _ := h.ShellFor(true, tr.Call.ProjectDir, false); sh != nil {
		return sh.After(ctx, svc, tr, cwd)
	}
	return ""
}

// TestRunRewrite returns the tool input with its command (under key)
// rewritten to run through `statewright testrun`, or nil when the command
// is no plain test command (or statewright's own path or the per-session
// directory cannot be found: the command then runs as it is, and its
// evidence says it had no report).
func TestRunRewrite(session, toolUseID, projectDir string, input json.RawMessage, key string) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return nil
	}
	command, ok := m[key].(string)
	if !ok || toolUseID == "" || !testrun.IsTestCommand(command) {
		return nil
	}
	dir, ok := testCallDir(session, toolUseID)
	if !ok {
		return nil
	}
	bin, ok := selfPath()
	if !ok {
		return nil
	}
	if testrun.MarkCall(dir, projectDir, command) != nil {
		return nil
	}
	m[key] = testrun.Command(bin, dir, command)
	out, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return out
}

// TestRunAfter puts the evidence `statewright testrun` recorded for the
// call into tr (runtime.ToolResult.TestReport), gives tr back the agent's
// own command under key, removes the call's directory and reports true,
// when the call ran through testrun; otherwise it leaves tr alone and
// reports false.
//
// A call ran through testrun only when the harness ran exactly the command
// the tool gate rewrote it to: a mark and evidence planted in the call's
// directory by an earlier command, for a call the hook never rewrote,
// count for nothing.
func TestRunAfter(tr *runtime.ToolResult, key string) bool {
	dir, ok := testCallDir(tr.Session, tr.ToolUseID)
	if !ok {
		return false
	}
	command, ev, marked := testrun.ReadCall(dir)
	if !marked || command == "" {
		return false
	}
	var m map[string]any
	if json.Unmarshal(tr.Call.Input, &m) != nil || m == nil {
		return false
	}
	ran, _ := m[key].(string)
	if bin, ok := selfPath(); !ok || ran != testrun.Command(bin, dir, command) {
		return false
	}
	_ = os.RemoveAll(dir)
	tr.TestReport = ev
	m[key] = command
	if b, err := json.Marshal(m); err == nil {
		tr.Call.Input = b
	}
	return true
}

// selfPath is statewright's own absolute path, resolved: the binary the
// rewritten command runs.
func selfPath() (string, bool) {
	bin, err := os.Executable()
	if err != nil {
		return "", false
	}
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	return bin, true
}

// testCallDir is the call's directory in the sandbox package's layout.
func testCallDir(session, toolUseID string) (string, bool) {
	if toolUseID == "" {
		return "", false
	}
	root, err := sandbox.DefaultRoot()
	if err != nil {
		return "", false
	}
	return sandbox.CallDir(sandbox.SessionDir(root, session), toolUseID).Dir, true
}
