//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// The workflow the scenario runs: a read-only phase, an editing phase, and
// an approval gate before the final phase.
const e2eWorkflow = `{
  "id": "e2e-bugfix",
  "initial": "localizing",
  "states": {
    "localizing": {
      "instructions": "Find the bug. Do not edit anything.",
      "allowed_tools": ["Read", "Grep", "Glob", "Bash"],
      "on": {"LOCALIZED": "fixing"}
    },
    "fixing": {
      "instructions": "Fix it.",
      "allowed_tools": ["Read", "Edit", "Write", "Bash"],
      "on": {"FIXED": {"target": "done", "requires_approval": true}}
    },
    "done": {"type": "final"}
  }
}`

// The session every scenario run uses (claude -p --session-id, then --resume).
const e2eSession = "5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f"

// builtBinary is a package of this repository built once per test process.
type builtBinary struct {
	once sync.Once
	path string
	err  error
}

// get builds pkg (./cmd/NAME) into a temporary directory as name, once,
// and returns its path.
func (b *builtBinary) get(t *testing.T, pkg, name string) string {
	t.Helper()
	b.once.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			b.err = err
			return
		}
		dir, err := os.MkdirTemp("", "statewright-e2e-"+name)
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", b.path, pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = errors.New("go build " + pkg + ": " + err.Error() + "\n" + string(out))
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

var statewrightBuild, hookClientBuild builtBinary

// statewrightBinary builds cmd/statewright once per test process into a
// temporary directory and returns its path.
func statewrightBinary(t *testing.T) string {
	t.Helper()
	return statewrightBuild.get(t, "./cmd/statewright", "statewright")
}

// swProject is a temporary project set up by `statewright init claude-code`
// with its own copy of the binary (so a test may remove or replace it).
type swProject struct {
	claude, bin, dir, home, storePath, workflow string
}

func newSWProject(t *testing.T, initArgs ...string) *swProject {
	t.Helper()
	claude, err := ClaudeBinary()
	if err != nil {
		t.Fatal(err)
	}
	p := &swProject{claude: claude, dir: t.TempDir(), home: t.TempDir()}
	if p.dir, err = filepath.EvalSymlinks(p.dir); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	p.bin = filepath.Join(state, "bin", "statewright")
	os.MkdirAll(filepath.Dir(p.bin), 0o755)
	src, err := os.ReadFile(statewrightBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	p.storePath = filepath.Join(state, "store", "state.db")
	p.workflow = filepath.Join(state, "e2e-bugfix.json")
	if err := os.WriteFile(p.workflow, []byte(e2eWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.path("main.txt"), []byte("old line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ClaudeHome(p.home, p.dir); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"init", "claude-code", "--project", p.dir, "--store", p.storePath, "--no-mcp"}, initArgs...)
	out, err := p.initCommand(args...).CombinedOutput()
	if err != nil {
		t.Fatalf("statewright init claude-code: %v\n%s", err, out)
	}
	t.Logf("init:\n%s", out)
	return p
}

func (p *swProject) path(name string) string { return filepath.Join(p.dir, name) }

// initCommand returns the statewright command (init) run with the
// project's HOME, so that `init claude-code` registers its MCP server in
// the local scope of the ~/.claude.json that the project's Claude Code
// reads.
func (p *swProject) initCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(p.bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+p.home, "XDG_CONFIG_HOME=", "CLAUDE_CONFIG_DIR=")
	return cmd
}

// service opens the store as the human operator would through the CLI.
func (p *swProject) service(t *testing.T) (*runtime.Service, func()) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), p.storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	return runtime.New(st, runtime.Options{ProjectDir: p.dir}), func() { st.Close() }
}

// cli runs the project's statewright binary as the operator, with its own
// config directory (for the operator token), and returns stdout.
func (p *swProject) cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(p.bin, args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(filepath.Dir(p.storePath), "config"), "STATEWRIGHT_STORE="+p.storePath)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("statewright %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

var human = runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli", Name: "e2e"}

// claudeRun runs claude -p in the project against srv.
func (p *swProject) claudeRun(t *testing.T, srv *fakemodel.Server, sessionArgs ...string) *Run {
	t.Helper()
	argv := append([]string{"-p", "Fix the bug.", "--output-format", "stream-json", "--verbose",
		"--permission-mode", "bypassPermissions"}, sessionArgs...)
	r, err := RunCommand(context.Background(), claudeTimeout, p.dir, ClaudeEnv(p.home, srv.URL), p.claude, argv...)
	if err != nil {
		t.Fatalf("start claude: %v", err)
	}
	t.Logf("claude ran in %v (exit %d)", r.Elapsed.Round(time.Millisecond), r.ExitCode)
	if r.TimedOut {
		t.Fatalf("claude timed out\n%s\n%s", r, srv.Summary())
	}
	return r
}

// toolResult returns the tool_result the model received for id.
func toolResult(t *testing.T, srv *fakemodel.Server, id string) fakemodel.ToolResult {
	t.Helper()
	res, ok := srv.ToolResult(id)
	if !ok {
		t.Fatalf("the model never received a tool_result for %s\n%s", id, srv.Summary())
	}
	return res
}

func script(turns ...fakemodel.Turn) fakemodel.Script {
	return fakemodel.Script{Turns: turns, ExhaustedText: "Stopping now."}
}

func tool(id, name string, input map[string]any) fakemodel.ToolUse {
	return fakemodel.ToolUse{ID: id, Name: name, Input: input}
}

// TestClaudeCodeWorkflow drives the real Claude Code, with the hooks `statewright
// init claude-code` installs, through a workflow: denials that teach, a
// transition by a person, an allowed edit, an approval gate, a final state,
// and the audit trail.
func TestClaudeCodeWorkflow(t *testing.T) {
	p := newSWProject(t)
	svc, closeSvc := p.service(t)
	defer closeSvc()
	ctx := context.Background()
	session := "claude-code:" + e2eSession
	p.cli(t, "start", p.workflow, "--session", e2eSession) // as the person, before the agent's session starts
	x := p.path("x.txt")

	// Phase localizing: a shell write and an edit are denied and teach.
	srv := fakemodel.NewAnthropic(script(
		fakemodel.Call(
			tool("toolu_heredoc", "Bash", map[string]any{"command": "cat > " + x + " <<'EOF'\nsneaky\nEOF", "description": "write x"}),
			tool("toolu_edit1", "Edit", map[string]any{"file_path": p.path("main.txt"), "old_string": "old line", "new_string": "new line"}),
		),
		fakemodel.Say("I cannot edit yet."),
	), fakemodel.WithLog(t.Logf))
	r := p.claudeRun(t, srv, "--session-id", e2eSession)
	srv.Close()
	if _, err := os.Stat(x); !os.IsNotExist(err) {
		t.Errorf("x.txt exists (stat err %v): the heredoc write was not denied\n%s", err, r)
	}
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "old line\n" {
		t.Errorf("main.txt = %q: the edit was not denied", b)
	}
	for _, id := range []string{"toolu_heredoc", "toolu_edit1"} {
		res := toolResult(t, srv, id)
		if !res.IsError || !strings.Contains(res.Content, "localizing") || !strings.Contains(res.Content, "LOCALIZED") ||
			!strings.Contains(res.Content, "Read") {
			t.Errorf("%s: tool_result %+v; want an error naming the phase, the allowed tools and the next event", id, res)
		}
	}
	// SessionStart / UserPromptSubmit put the phase into the model's context.
	if reqs := srv.MainRequests(); len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), `phase: localizing`) ||
		!strings.Contains(string(reqs[0].Body), `Allowed tools: Read, Grep, Glob, Bash`) {
		t.Errorf("the first model request does not carry the phase context\n%s", srv.Summary())
	}
	// The Stop hook kept the agent working once (non-final phase), then let it stop.
	var sawStopBlock bool
	for _, q := range srv.MainRequests() {
		if strings.Contains(string(q.Body), "which is not final") {
			sawStopBlock = true
		}
	}
	if !sawStopBlock {
		t.Errorf("the model was never told that the phase is not final (Stop hook)\n%s", srv.Summary())
	}
	if v, err := svc.Status(ctx, session); err != nil || v.Run.State != "localizing" {
		t.Fatalf("status after run 1: %+v, %v; want localizing", v, err)
	}

	// A person moves the run on; the same edit is now allowed and lands on disk.
	p.cli(t, "transition", e2eSession, "LOCALIZED")
	srv = fakemodel.NewAnthropic(script(
		fakemodel.Call(tool("toolu_edit2", "Edit", map[string]any{"file_path": p.path("main.txt"), "old_string": "old line", "new_string": "new line"})),
		fakemodel.Say("Fixed."),
	), fakemodel.WithLog(t.Logf))
	r = p.claudeRun(t, srv, "--resume", e2eSession)
	srv.Close()
	if res := toolResult(t, srv, "toolu_edit2"); res.IsError {
		t.Errorf("edit in phase fixing: %+v; want success\n%s", res, r)
	}
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "new line\n" {
		t.Errorf("main.txt = %q after the allowed edit, want \"new line\\n\"", b)
	}

	// The approval gate parks the run until a person approves.
	tr, err := svc.Transition(ctx, session, "FIXED", nil, runtime.Actor{Kind: runtime.ActorAgent, Channel: "e2e"})
	if err != nil || !tr.Parked || tr.ApprovalID == "" {
		t.Fatalf("transition FIXED = %+v, %v; want parked for approval", tr, err)
	}
	if v, _ := svc.Status(ctx, session); v == nil || v.Run.Status != store.StatusAwaitingApproval {
		t.Fatalf("status after FIXED: %+v; want awaiting_approval", v)
	}
	// A person approves with the CLI and the operator token (the agent's
	// shell could neither read the token nor run approve: see
	// TestClaudeCodeSelfProtectionAndParallel).
	token := strings.TrimSpace(p.cli(t, "token", "create"))
	p.cli(t, "approve", e2eSession, "--id", tr.ApprovalID, "--token", token)
	if runs, err := svc.Runs(ctx, store.RunFilter{SessionKey: session, Limit: 1}); err != nil || len(runs) != 1 || runs[0].State != "done" {
		t.Fatalf("run after approve: %+v, %v; want it in done", runs, err)
	}

	// The final phase denies every tool.
	srv = fakemodel.NewAnthropic(script(
		fakemodel.Call(tool("toolu_read_final", "Read", map[string]any{"file_path": p.path("main.txt")})),
		fakemodel.Say("Done."),
	), fakemodel.WithLog(t.Logf))
	p.claudeRun(t, srv, "--resume", e2eSession)
	srv.Close()
	if res := toolResult(t, srv, "toolu_read_final"); !res.IsError || !strings.Contains(res.Content, "final") {
		t.Errorf("Read in the final phase: %+v; want a deny naming the final state", res)
	}

	// The audit trail holds every decision and transition, as `statewright
	// history` shows it.
	var evs []store.Event
	if err := json.Unmarshal([]byte(p.cli(t, "history", e2eSession, "--json")), &evs); err != nil {
		t.Fatalf("history --json: %v", err)
	}
	decisions := map[string]string{}
	var transitions []string
	for _, e := range evs {
		switch e.Kind {
		case store.KindDecision:
			decisions[e.ToolUseID] = e.Decision
		case store.KindTransition:
			transitions = append(transitions, e.State)
		}
	}
	for id, want := range map[string]string{"toolu_heredoc": "deny", "toolu_edit1": "deny", "toolu_edit2": "allow", "toolu_read_final": "deny"} {
		if decisions[id] != want {
			t.Errorf("history: decision for %s = %q, want %q (all: %v)", id, decisions[id], want, decisions)
		}
	}
	if len(transitions) < 2 {
		t.Errorf("history has %d transitions, want at least 2: %+v", len(transitions), evs)
	}
}

// TestClaudeCodeFailClosed checks that the real client blocks a call when the
// hook cannot decide: the store deleted or recreated, the binary missing, or
// the hook crashing.
func TestClaudeCodeFailClosed(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		breakIt    func(t *testing.T, p *swProject)
	}{
		{"deleted store", "no store", func(t *testing.T, p *swProject) {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(p.storePath + suffix)
			}
		}},
		{"recreated store", "store id mismatch", func(t *testing.T, p *swProject) {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(p.storePath + suffix)
			}
			st, err := sqlite.Open(context.Background(), p.storePath, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
		}},
		{"unreadable store", "corrupt or unknown store", func(t *testing.T, p *swProject) {
			// (The tests run as root, for whom mode 000 still reads, so
			// "unreadable" is a store file that is not a database.)
			for _, suffix := range []string{"-wal", "-shm"} {
				os.Remove(p.storePath + suffix)
			}
			if err := os.WriteFile(p.storePath, []byte(strings.Repeat("not a database\n", 512)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"missing binary", "fail closed", func(t *testing.T, p *swProject) {
			if err := os.Remove(p.bin); err != nil {
				t.Fatal(err)
			}
		}},
		{"crashing hook", "fail closed", func(t *testing.T, p *swProject) {
			if err := os.WriteFile(p.bin, []byte("#!/bin/sh\nkill -SEGV $$\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newSWProject(t)
			tc.breakIt(t, p)
			target := p.path("written.txt")
			srv := fakemodel.NewAnthropic(script(
				fakemodel.Call(tool("toolu_write", "Write", map[string]any{"file_path": target, "content": "must not exist\n"})),
				fakemodel.Say("Blocked."),
			), fakemodel.WithLog(t.Logf))
			defer srv.Close()
			r := p.claudeRun(t, srv, "--session-id", e2eSession)
			if _, err := os.Stat(target); !os.IsNotExist(err) {
				t.Errorf("written.txt exists (stat err %v): the call went through\n%s", err, r)
			}
			if res := toolResult(t, srv, "toolu_write"); !res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Errorf("tool_result %+v; want an error containing %q", res, tc.want)
			}
			// UserPromptSubmit kept the prompt and Stop let the agent stop:
			// the run ended normally, with the prompt delivered to the model.
			if reqs := srv.MainRequests(); r.ExitCode != 0 || len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), "Fix the bug.") {
				t.Errorf("exit %d, %d model requests; want exit 0 and the prompt delivered\n%s", r.ExitCode, len(reqs), srv.Summary())
			}
		})
	}
}

// TestClaudeCodeSelfProtectionAndParallel checks that the agent's shell
// cannot approve its own run or open the store, and that 16 parallel tool
// calls in one turn are all decided and recorded.
func TestClaudeCodeSelfProtectionAndParallel(t *testing.T) {
	p := newSWProject(t)
	svc, closeSvc := p.service(t)
	defer closeSvc()
	ctx := context.Background()
	session := "claude-code:" + e2eSession
	if _, err := svc.Start(ctx, session, p.workflow, human); err != nil {
		t.Fatalf("start: %v", err)
	}
	uses := []fakemodel.ToolUse{
		tool("toolu_approve", "Bash", map[string]any{"command": "'" + p.bin + "' approve --store '" + p.storePath + "' ap_1"}),
		tool("toolu_sqlite", "Bash", map[string]any{"command": "sqlite3 '" + p.storePath + "' 'DELETE FROM runs'"}),
		tool("toolu_token", "Bash", map[string]any{"command": "cat " + filepath.Join(p.home, ".config", "statewright", "operator-token")}),
	}
	for i := range 13 {
		uses = append(uses, tool("toolu_par_"+string(rune('a'+i)), "Read", map[string]any{"file_path": p.path("main.txt")}))
	}
	srv := fakemodel.NewAnthropic(script(fakemodel.Call(uses...), fakemodel.Say("Done.")), fakemodel.WithLog(t.Logf))
	defer srv.Close()
	p.claudeRun(t, srv, "--session-id", e2eSession)
	for _, id := range []string{"toolu_approve", "toolu_sqlite", "toolu_token"} {
		if res := toolResult(t, srv, id); !res.IsError || !strings.Contains(res.Content, "self-protect") {
			t.Errorf("%s: %+v; want a self-protect deny", id, res)
		}
	}
	evs, err := svc.History(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	decided := map[string]bool{}
	for _, e := range evs {
		if e.Kind == store.KindDecision {
			decided[e.ToolUseID] = true
		}
	}
	for _, u := range uses {
		if !decided[u.ID] {
			t.Errorf("no decision recorded for %s", u.ID)
		}
		if res := toolResult(t, srv, u.ID); strings.HasPrefix(u.ID, "toolu_par_") && res.IsError {
			t.Errorf("%s: %+v; want the parallel Read allowed", u.ID, res)
		}
	}
	// Every call counts toward max_iterations, the denied ones too.
	v, err := svc.Status(ctx, session)
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	if v.Run.State != "localizing" || v.Run.Iterations != int64(len(uses)) {
		t.Errorf("run in %s with %d iterations; want localizing with %d (every call counted)", v.Run.State, v.Run.Iterations, len(uses))
	}
}

// TestClaudeCodeMCPTransition has the agent move its own run on through the
// MCP server that init registers: the PreToolUse hook stamps the session
// into the call (overwriting the model's forged value), the server
// transitions that session's run, and the edit that was denied before is
// allowed after.
func TestClaudeCodeMCPTransition(t *testing.T) {
	p := newSWProject(t)
	// newSWProject passes --no-mcp; register the MCP server too.
	if out, err := p.initCommand("init", "claude-code", "--project", p.dir, "--store", p.storePath).CombinedOutput(); err != nil {
		t.Fatalf("init with MCP: %v\n%s", err, out)
	}
	svc, closeSvc := p.service(t)
	defer closeSvc()
	ctx := context.Background()
	session := "claude-code:" + e2eSession
	if _, err := svc.Start(ctx, session, p.workflow, human); err != nil {
		t.Fatalf("start: %v", err)
	}
	// A second run under another session must not be touched by the forged stamp.
	other := "claude-code:00000000-0000-4000-8000-000000000000"
	if _, err := svc.Start(ctx, other, p.workflow, human); err != nil {
		t.Fatalf("start other: %v", err)
	}
	edit := map[string]any{"file_path": p.path("main.txt"), "old_string": "old line", "new_string": "new line"}
	srv := fakemodel.NewAnthropic(script(
		fakemodel.Call(tool("toolu_edit_early", "Edit", edit)),
		fakemodel.Call(tool("toolu_transition", "mcp__statewright__statewright_transition",
			map[string]any{"event": "LOCALIZED", "statewright_session": "00000000-0000-4000-8000-000000000000"})),
		fakemodel.Call(tool("toolu_edit_late", "Edit", edit)),
		fakemodel.Say("Fixed."),
	), fakemodel.WithLog(t.Logf))
	defer srv.Close()
	r := p.claudeRun(t, srv, "--session-id", e2eSession)
	if res := toolResult(t, srv, "toolu_edit_early"); !res.IsError {
		t.Errorf("edit before the transition: %+v; want a deny", res)
	}
	if res := toolResult(t, srv, "toolu_transition"); res.IsError {
		t.Fatalf("transition through MCP: %+v; want success\n%s", res, r)
	}
	if res := toolResult(t, srv, "toolu_edit_late"); res.IsError {
		t.Errorf("edit after the transition: %+v; want success", res)
	}
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "new line\n" {
		t.Errorf("main.txt = %q, want the edit applied", b)
	}
	if v, err := svc.Status(ctx, session); err != nil || v.Run.State != "fixing" {
		t.Errorf("this session's run: %+v, %v; want fixing", v, err)
	}
	if v, err := svc.Status(ctx, other); err != nil || v.Run.State != "localizing" {
		t.Errorf("the other session's run: %+v, %v; want it untouched in localizing (the forged stamp was trusted)", v, err)
	}
}

// TestClaudeCodeSubagentUnderWorkflow checks that a subagent's calls are
// decided like the main agent's, on the parent session's run: its edit in
// the read-only phase is denied with statewright's reason, its read is
// allowed, and both are in the session's history.
func TestClaudeCodeSubagentUnderWorkflow(t *testing.T) {
	p := newSWProject(t)
	svc, closeSvc := p.service(t)
	defer closeSvc()
	ctx := context.Background()
	session := "claude-code:" + e2eSession
	if _, err := svc.Start(ctx, session, p.workflow, human); err != nil {
		t.Fatalf("start: %v", err)
	}
	const marker = "SUBAGENT-sw-41c2"
	srv := fakemodel.NewAnthropic(fakemodel.Script{
		Turns: []fakemodel.Turn{
			fakemodel.Call(tool("toolu_agent", "Agent", map[string]any{
				"description": "look around", "prompt": marker + ": read and edit", "subagent_type": "general-purpose"})),
			fakemodel.Say("waiting for the agent"),
			fakemodel.Say("done"),
		},
		Threads: []fakemodel.Thread{{
			Name:  "sub",
			Match: fakemodel.AnthropicFirstUserContains(marker),
			Turns: []fakemodel.Turn{
				fakemodel.Call(
					tool("toolu_sub_edit", "Edit", map[string]any{"file_path": p.path("main.txt"), "old_string": "old line", "new_string": "sub line"}),
					tool("toolu_sub_read", "Read", map[string]any{"file_path": p.path("main.txt")}),
				),
				fakemodel.Say("sub done"),
			},
		}},
		ExhaustedText: "Stopping now.",
	}, fakemodel.WithLog(t.Logf))
	defer srv.Close()
	r := p.claudeRun(t, srv, "--session-id", e2eSession)
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "old line\n" {
		t.Errorf("main.txt = %q: the subagent's edit was not denied\n%s", b, r)
	}
	if res := toolResult(t, srv, "toolu_sub_edit"); !res.IsError || !strings.Contains(res.Content, "localizing") {
		t.Errorf("subagent's edit: %+v; want statewright's deny naming the phase", res)
	}
	if res := toolResult(t, srv, "toolu_sub_read"); res.IsError {
		t.Errorf("subagent's read: %+v; want it allowed", res)
	}
	evs, err := svc.History(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range evs {
		if e.Kind == store.KindDecision {
			got[e.ToolUseID] = e.Decision
		}
	}
	for id, want := range map[string]string{"toolu_agent": "allow", "toolu_sub_edit": "deny", "toolu_sub_read": "allow"} {
		if got[id] != want {
			t.Errorf("history: %s = %q, want %q (all %v)", id, got[id], want, got)
		}
	}
}
