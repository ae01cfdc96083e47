package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/shell"
	"github.com/statewright-go/statewright/testreport"
	"github.com/statewright-go/statewright/testreport/testrun"
)

// Shell routes a harness's shell calls through the launcher: a hook asks
// for the call's profile (Request), rewrites the allowed call's command
// (Rewrite) and reads what the launcher recorded at PostToolUse (After).
type Shell struct {
	// Avail says whether the sandbox runs here.
	Avail sandbox.Availability
	// Bin is statewright's absolute path, which the rewritten command runs.
	Bin string
	// Root holds the per-session directories (sandbox.DefaultRoot).
	Root string
	// Host locates the profile's paths (HostEnv).
	Host policy.SandboxEnv
}

// ShellFor returns the shell router for a shell call decided in project
// when the hook routes shell calls through the OS sandbox (--sandbox,
// --require-sandbox), nil otherwise. deny is set when the hook requires a
// sandbox and none is available here. pre is true at the tool gate (it
// checks availability); the result event only reads the launcher's record.
func (h *Hook) ShellFor(shell bool, project string, pre bool) (sh *Shell, deny string) {
	if !shell || !(h.Sandbox || h.RequireSandbox) {
		return nil, ""
	}
	sh, err := NewShell(project, h.StorePath, pre)
	if err != nil {
		if h.RequireSandbox {
			return nil, err.Error()
		}
		return nil, ""
	}
	if pre && !sh.Avail.OK() {
		if h.RequireSandbox {
			return nil, "this install requires the OS sandbox for shell calls (--require-sandbox), and none is available here: " + sh.Avail.Why
		}
		return nil, ""
	}
	return sh, ""
}

// NewShell returns the shell router for a hook deciding in projectDir
// against store, or an error when statewright's own path or the sandbox
// root cannot be found. With detect, Avail comes from sandbox.DetectCached
// (PostToolUse needs none).
func NewShell(projectDir, store string, detect bool) (*Shell, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: statewright's own path: %w", err)
	}
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	root, err := sandbox.DefaultRoot()
	if err != nil {
		return nil, err
	}
	s := &Shell{Bin: bin, Root: root, Host: HostEnv(projectDir, store)}
	if detect {
		s.Avail = sandbox.DetectCached(root)
	}
	return s, nil
}

// Request returns the SandboxEnv to put in runtime.ToolCall.Sandbox for a
// shell call, with the session's and the call's directories.
func (s *Shell) Request(session, toolUseID string) *policy.SandboxEnv {
	env := s.Host
	env.SessionDir = sandbox.SessionDir(s.Root, session)
	env.CacheDir = sandbox.SharedCache(s.Root)
	env.CallDir = sandbox.CallDir(env.SessionDir, toolUseID).RW
	return &env
}

// escapeFields are the input fields by which a model asks a harness to
// skip its sandbox; a rewritten input never carries them (docs/sandbox.md, "No model-settable escape").
var escapeFields = []string{"dangerouslyDisableSandbox", "with_escalated_permissions", "sandbox_permissions", "justification"}

// Rewrite prepares the call's directory with the profile in force at the
// decision and returns the tool input with its command (under key)
// replaced by the launcher's, and every sandbox-escape field removed. cwd
// is the directory the harness runs the command in. A plain test command
// runs through statewright itself (`statewright sandbox exec` with the
// test observer, so that its evidence comes from the runner's report);
// both run the slim launcher when it sits next to statewright (it links the
// observer), else statewright itself.
func (s *Shell) Rewrite(session, toolUseID string, prof *sandbox.Profile, input json.RawMessage, key, cwd string) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(input, &m); err != nil {
		return nil, fmt.Errorf("sandbox: the tool input: %w", err)
	}
	command, ok := m[key].(string)
	if !ok || strings.TrimSpace(command) == "" {
		return nil, fmt.Errorf("sandbox: the tool input has no %q string", key)
	}
	if prof == nil {
		return nil, errors.New("sandbox: the phase's profile could not be derived, so the command does not run")
	}
	p := *prof
	if cwd != "" && filepath.IsAbs(cwd) && strings.HasPrefix(cwd+"/", "/tmp/") {
		// /tmp is the session's own inside: a working directory under the
		// host's /tmp stays visible (read-only unless writable anyway).
		p.Visible = append(append([]string(nil), p.Visible...), cwd)
	}
	if s.Host.Store != "" {
		// The phase's sandbox server stops as soon as the run leaves the
		// phase, whoever moves it (sandboxcmd.RunWatch).
		p.Watch = []string{s.Bin, "sandbox", "watch", "--store", s.Host.Store, "--session", session, "--root", s.Root, "--phase", p.Phase}
	}
	// One program, or a pipeline of programs, with literal words runs
	// without the inner bash (docs/sandbox.md, "Direct exec"); so does a
	// list of them with simple redirections, as far as the server is sure.
	elems, _ := shell.LiteralPipeline(command)
	var list []sandbox.ListItem
	if elems == nil {
		list = SandboxList(command)
	}
	c, err := sandbox.PrepareCallList(sandbox.SessionDir(s.Root, session), sandbox.SharedCache(s.Root), toolUseID, s.Avail, &p, command, elems, list)
	if err != nil {
		return nil, err
	}
	if testrun.IsTestCommand(command) {
		// Marked, the launcher watches it (testrun.Observe, linked into
		// the slim launcher too).
		_ = testrun.Mark(c.Dir, s.Host.ProjectDir, command)
	}
	m[key] = sandbox.ShellCommand(sandbox.LauncherFor(s.Bin), c, command)
	for _, f := range escapeFields {
		delete(m, f)
	}
	return json.Marshal(m)
}

// SandboxList returns command's items, as the hook records them, when
// shell.LiteralList takes it (docs/sandbox.md, "Direct exec of literal
// lists"), nil otherwise.
func SandboxList(command string) []sandbox.ListItem {
	items, ok := shell.LiteralList(command)
	if !ok {
		return nil
	}
	list := make([]sandbox.ListItem, len(items))
	for i, it := range items {
		cmds := make([]sandbox.ListCmd, len(it.Cmds))
		for j, c := range it.Cmds {
			cmds[j] = sandbox.ListCmd{Argv: c.Argv}
			for _, r := range c.Redirs {
				cmds[j].Redirs = append(cmds[j].Redirs, sandbox.Redir{Fd: r.Fd, Op: r.Op, Target: r.Target})
			}
		}
		list[i] = sandbox.ListItem{Op: it.Op, Offset: it.Offset, Cmds: cmds}
	}
	return list
}

// After reads what was recorded about a call outside the sandbox's reach,
// removes the call's directory, and puts into the result the command's
// exit status (over the harness's report), the agent's own command (the
// harness reports the rewritten one) and the test evidence the launcher
// recorded. It returns the lessons for the paths the sandbox refused
// (DECISIONS 11), as the command's output names them, resolved against
// cwd: "" when the call was not sandboxed or nothing was refused.
func (s *Shell) After(ctx context.Context, svc *runtime.Service, tr *runtime.ToolResult, cwd string) string {
	sess := sandbox.SessionDir(s.Root, tr.Session)
	c := sandbox.CallDir(sess, tr.ToolUseID)
	// Names of the law the command created where the sandbox could not
	// bind them (they did not exist): the launcher moved them out when the
	// command ended; this is the second net (a launcher killed outright),
	// before anything else, and whatever the harness reports about the call.
	var out []string
	if l := c.Sweep(); l != "" {
		out = append(out, l)
	}
	r, ok := sandbox.ReadResult(c)
	if ok {
		_ = c.Remove()
	}
	// Else the command has not ended through the rewritten command: it
	// runs in the background (Claude Code reports a run_in_background call
	// as soon as it starts) or its launcher was killed. Its directory
	// stays, with the names it may plant (absent.json): the launcher or the
	// keeper sweeps them when it ends, SessionEnd after the sandbox stops
	// (sandbox.SweepSession). Removing it here left a background command
	// free to plant a .git/commondir after this sweep, and nothing swept
	// it again (TestBackgroundPlantIsSwept).
	if !ok || !s.ranRewritten(tr, c, r.Command) {
		// Not sandboxed, or not what the tool gate rewrote the call to: a
		// record planted for a call the hook never rewrote counts for
		// nothing (as for testrun, TestRunAfter).
		return strings.Join(out, "\n")
	}
	code := r.ExitCode
	tr.ExitCode = &code
	restoreCommand(tr, r.Command)
	if len(r.Observed) > 0 {
		var ev testreport.Evidence
		if json.Unmarshal(r.Observed, &ev) == nil && ev.Runner != "" {
			tr.TestReport = &ev
		}
	}
	for _, p := range sandbox.RefusedPaths(outputText(tr.Output), 3) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if l, err := svc.SandboxLesson(ctx, tr.Session, filepath.Clean(p), s.Host); err == nil && l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// ranRewritten reports whether the harness ran the command Rewrite gave it
// for the call (under ShellKey): the launcher in c for command.
func (s *Shell) ranRewritten(tr *runtime.ToolResult, c sandbox.Call, command string) bool {
	var m map[string]any
	if json.Unmarshal(tr.Call.Input, &m) != nil || m == nil {
		return false
	}
	ran, _ := m[ShellKey].(string)
	return ran != "" && (ran == sandbox.ShellCommand(s.Bin, c, command) || ran == sandbox.ShellCommand(sandbox.LauncherFor(s.Bin), c, command))
}

// restoreCommand puts the agent's command back into the result's input
// (under ShellKey).
func restoreCommand(tr *runtime.ToolResult, command string) {
	var m map[string]any
	if json.Unmarshal(tr.Call.Input, &m) != nil || m == nil {
		return
	}
	m[ShellKey] = command
	if b, err := json.Marshal(m); err == nil {
		tr.Call.Input = b
	}
}

// outputText returns the text of a tool's response: every string in it,
// one per line (Claude Code's stdout and stderr, a plugin's output).
func outputText(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

// PhaseName is "phase 'X'", or "this session" with no run.
func PhaseName(state string) string {
	if state == "" {
		return "this session"
	}
	return "phase '" + state + "'"
}

// NoSandboxNotice is what the session's start says where the hook would
// route shell calls through the OS sandbox and none runs here ("" when one
// runs, or the hook does not use it): plainly, that same-user secrecy
// cannot hold (docs/threat-model.md), or that shell calls are denied.
func (h *Hook) NoSandboxNotice() string {
	if !h.Sandbox && !h.RequireSandbox {
		return ""
	}
	root, err := sandbox.DefaultRoot()
	if err != nil {
		return ""
	}
	a := sandbox.DetectCached(root)
	if a.OK() {
		return ""
	}
	if h.RequireSandbox {
		return "[statewright] No OS sandbox is available here (" + a.Why + "), and this install requires one: every shell call is denied."
	}
	return "[statewright] No OS sandbox is available here (" + a.Why + "): shell commands run under the static law only, and same-user secrecy is impossible " +
		"(code you run could read operator tokens and the store; the law still denies every call that does so visibly)."
}
