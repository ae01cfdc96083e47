//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// The workflow the gateway tests run: planning reads, implementing edits
// under src/ with small edits, an interrupt on .env files, an approval gate.
const gatewayWorkflow = `{
  "id": "gw-e2e",
  "initial": "planning",
  "states": {
    "planning": {
      "allowed_tools": ["Read", "LS", "Glob"],
      "on": {"PLAN_READY": "implementing"}
    },
    "implementing": {
      "allowed_tools": ["Read", "Write", "Edit", "MultiEdit", "LS", "Glob", "everything__echo"],
      "max_edit_lines": 3,
      "allowed_paths": ["src/**"],
      "on": {"DONE": {"target": "done", "requires_approval": true}}
    },
    "security_review": {
      "allowed_tools": ["Read"],
      "on": {"REVIEWED": "implementing"}
    },
    "done": {"type": "final"}
  },
  "interrupts": {
    "secrets": {"trigger": {"file_pattern": "**/*.env"}, "target": "security_review"}
  }
}`

// MCPServerBinary returns the path of an MCP server (or client) binary that
// scripts/install-harnesses.sh installs under .harnesses/node_modules/.bin.
// A missing one fails the test with how to install it.
func MCPServerBinary(t *testing.T, name string) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	prefix := os.Getenv("STATEWRIGHT_HARNESS_PREFIX")
	if prefix == "" {
		prefix = filepath.Join(root, ".harnesses")
	}
	p := filepath.Join(prefix, "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("e2e: %s is not installed at %s: run `bash scripts/install-harnesses.sh` (needs npm and the npm registry)", name, p)
	}
	return p
}

// gwProject is a project, a store with a run of gatewayWorkflow for
// session claude-code:gw, and the operator's config directory.
type gwProject struct {
	sw, dir, storePath, cfg, session string
}

func newGWProject(t *testing.T) *gwProject {
	t.Helper()
	return newGWProjectWith(t, gatewayWorkflow)
}

// newGWProjectWith is newGWProject with the run's workflow given as JSON.
func newGWProjectWith(t *testing.T, workflowJSON string) *gwProject {
	t.Helper()
	p := &gwProject{sw: statewrightBinary(t), session: "gw"}
	var err error
	if p.dir, err = filepath.EvalSymlinks(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	p.storePath = filepath.Join(state, "state.db")
	p.cfg = filepath.Join(state, "config")
	if err := os.MkdirAll(filepath.Join(p.dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "src", "main.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(state, "gw-e2e.json")
	if err := os.WriteFile(wf, []byte(workflowJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	p.cli(t, "start", wf, "--session", p.session)
	return p
}

// cli runs statewright as the operator and returns stdout.
func (p *gwProject) cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(p.sw, args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+p.cfg, "STATEWRIGHT_STORE="+p.storePath)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("statewright %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// run reads the session's live run from the store.
func (p *gwProject) run(t *testing.T) *store.Run {
	t.Helper()
	st, err := sqlite.Open(context.Background(), p.storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.LiveRun(context.Background(), "claude-code:"+p.session)
	if err != nil {
		t.Fatalf("live run: %v", err)
	}
	return r
}

// gatewayClient connects the go-sdk client to `statewright mcp` with the
// given upstreams, counting list_changed notifications and progress.
type gatewayClient struct {
	cs       *mcp.ClientSession
	cmd      *exec.Cmd
	changed  chan struct{}
	progress chan float64
}

func (p *gwProject) connect(t *testing.T, upstreams ...string) *gatewayClient {
	t.Helper()
	return p.connectWith(t, &testLog{t: t, prefix: "gateway: "}, nil, upstreams...)
}

// connectWith is connect with the server's stderr going to stderr and
// further flags.
func (p *gwProject) connectWith(t *testing.T, stderr io.Writer, flags []string, upstreams ...string) *gatewayClient {
	t.Helper()
	args := append([]string{"mcp", "--store", p.storePath, "--session", p.session, "--project-dir", p.dir, "--poll", "100ms"}, flags...)
	for _, u := range upstreams {
		args = append(args, "--upstream", u)
	}
	cmd := exec.Command(p.sw, args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+p.cfg)
	cmd.Stderr = stderr
	gc := &gatewayClient{cmd: cmd, changed: make(chan struct{}, 64), progress: make(chan float64, 64)}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case gc.changed <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case gc.progress <- req.Params.Progress:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to statewright mcp: %v", err)
	}
	gc.cs = cs
	t.Cleanup(func() { cs.Close() })
	return gc
}

// testLog writes a process's stderr to the test log.
type testLog struct {
	t      *testing.T
	prefix string
	mu     sync.Mutex
}

func (l *testLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		l.t.Log(l.prefix + line)
	}
	return len(b), nil
}

func (gc *gatewayClient) toolNames(t *testing.T) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[string]bool{}
	for tool, err := range gc.cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		out[tool.Name] = true
	}
	return out
}

func (gc *gatewayClient) call(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := gc.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// waitChanged waits for a list_changed notification.
func (gc *gatewayClient) waitChanged(t *testing.T, why string) {
	t.Helper()
	select {
	case <-gc.changed:
	case <-time.After(15 * time.Second):
		t.Fatalf("no notifications/tools/list_changed within 15s after %s", why)
	}
}

func drain(c chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// TestGatewayFilesystemUnderWorkflow drives the real filesystem server
// through `statewright mcp` with the go-sdk client: a write in planning is
// denied and leaves the disk untouched, a transition announces a new tool
// list, writes are then decided like native edits (path scope, edit limit,
// interrupt), and the approval gate stays closed for the agent.
func TestGatewayFilesystemUnderWorkflow(t *testing.T) {
	p := newGWProject(t)
	fs := MCPServerBinary(t, "mcp-server-filesystem")
	gc := p.connect(t, "fs="+fs+" "+p.dir)

	// planning: reads listed, writes not.
	names := gc.toolNames(t)
	for _, want := range []string{"statewright_transition", "statewright_get_state", "fs__read_text_file", "fs__list_directory"} {
		if !names[want] {
			t.Errorf("planning: %s not listed; got %v", want, names)
		}
	}
	for _, hidden := range []string{"fs__write_file", "fs__edit_file", "fs__move_file", "fs__create_directory"} {
		if names[hidden] {
			t.Errorf("planning lists %s", hidden)
		}
	}
	res := gc.call(t, "fs__read_text_file", map[string]any{"path": filepath.Join(p.dir, "src", "main.txt")})
	if res.IsError || !strings.Contains(resultText(res), "two") {
		t.Fatalf("read in planning: %s", resultText(res))
	}

	// A write in planning is denied and the disk is untouched.
	target := filepath.Join(p.dir, "src", "new.txt")
	res = gc.call(t, "fs__write_file", map[string]any{"path": target, "content": "x\n"})
	if !res.IsError || !strings.Contains(resultText(res), "denied") || !strings.Contains(resultText(res), "PLAN_READY") {
		t.Fatalf("write in planning: isError=%v %s", res.IsError, resultText(res))
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("the denied write reached the disk: %v", err)
	}

	// Transition: list_changed arrives and the write tools appear.
	drain(gc.changed)
	res = gc.call(t, "statewright_transition", map[string]any{"event": "PLAN_READY"})
	if res.IsError {
		t.Fatalf("transition: %s", resultText(res))
	}
	gc.waitChanged(t, "PLAN_READY")
	if got := p.run(t).State; got != "implementing" {
		t.Fatalf("store state %q, want implementing", got)
	}
	if names = gc.toolNames(t); !names["fs__write_file"] || !names["fs__edit_file"] {
		t.Fatalf("implementing: write tools not listed: %v", names)
	}

	// Allowed write inside src/.
	res = gc.call(t, "fs__write_file", map[string]any{"path": target, "content": "x\n"})
	if res.IsError {
		t.Fatalf("write in implementing: %s", resultText(res))
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "x\n" {
		t.Fatalf("written file: %q %v", b, err)
	}
	// Path scope: outside src/ is denied, nothing written.
	outside := filepath.Join(p.dir, "outside.txt")
	res = gc.call(t, "fs__write_file", map[string]any{"path": outside, "content": "x\n"})
	if !res.IsError || !strings.Contains(resultText(res), "path-scope") {
		t.Fatalf("write outside allowed_paths: %s", resultText(res))
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatalf("the out-of-scope write reached the disk")
	}
	// Edit limit: a 4-line edit of main.txt is denied, the file unchanged.
	main := filepath.Join(p.dir, "src", "main.txt")
	res = gc.call(t, "fs__edit_file", map[string]any{"path": main,
		"edits": []map[string]any{{"oldText": "one\ntwo\nthree", "newText": "1\n2\n3\n4"}}})
	if !res.IsError || !strings.Contains(resultText(res), "max-edit-lines") {
		t.Fatalf("large edit: %s", resultText(res))
	}
	if b, _ := os.ReadFile(main); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("the denied edit changed the file: %q", b)
	}
	// The same edit beside a one-line decoy under the spelling the law
	// reads first (the server reads oldText/newText only and drops the
	// rest): refused, the file unchanged.
	res = gc.call(t, "fs__edit_file", map[string]any{"path": main,
		"edits": []map[string]any{{"oldText": "one\ntwo\nthree", "newText": "1\n2\n3\n4", "old_string": "x", "new_string": "x"}}})
	if !res.IsError {
		t.Fatalf("large edit with a decoy: %s", resultText(res))
	}
	if b, _ := os.ReadFile(main); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("the edit with a decoy changed the file: %q", b)
	}
	// A small edit goes through.
	res = gc.call(t, "fs__edit_file", map[string]any{"path": main, "edits": []map[string]any{{"oldText": "two", "newText": "TWO"}}})
	if res.IsError {
		t.Fatalf("small edit: %s", resultText(res))
	}
	if b, _ := os.ReadFile(main); string(b) != "one\nTWO\nthree\n" {
		t.Fatalf("edited file: %q", b)
	}
	// The decisions are in the event log under the canonical tools.
	st, err := sqlite.Open(context.Background(), p.storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Events(context.Background(), store.EventFilter{SessionKey: "claude-code:gw", Kinds: []store.EventKind{store.KindDecision}})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	var denied, allowed int
	for _, e := range evs {
		if e.Tool == "Write" || e.Tool == "MultiEdit" {
			if e.Decision == "deny" {
				denied++
			} else {
				allowed++
			}
		}
	}
	if denied < 3 || allowed < 2 {
		t.Fatalf("decision events: %d denied, %d allowed writes/edits; want >= 3 and >= 2", denied, allowed)
	}

	// Interrupt: writing a .env file moves the run to security_review,
	// announced with list_changed; the write tools disappear.
	drain(gc.changed)
	res = gc.call(t, "fs__write_file", map[string]any{"path": filepath.Join(p.dir, "src", "app.env"), "content": "K=V\n"})
	if res.IsError {
		t.Fatalf("write .env: %s", resultText(res))
	}
	gc.waitChanged(t, "the interrupt")
	if got := p.run(t).State; got != "security_review" {
		t.Fatalf("after editing a .env file the run is in %q, want security_review", got)
	}
	if names = gc.toolNames(t); names["fs__write_file"] {
		t.Fatal("security_review lists fs__write_file")
	}
	res = gc.call(t, "statewright_transition", map[string]any{"event": "REVIEWED"})
	if res.IsError {
		t.Fatalf("REVIEWED: %s", resultText(res))
	}

	// The approval gate: the agent's DONE parks the run; nothing the agent
	// does through the gateway approves it; an operator does, and the
	// session hears about it.
	res = gc.call(t, "statewright_transition", map[string]any{"event": "DONE"})
	if res.IsError || !strings.Contains(resultText(res), "approval") {
		t.Fatalf("DONE: %s", resultText(res))
	}
	if r := p.run(t); r.Status != store.StatusAwaitingApproval {
		t.Fatalf("after DONE: status %s", r.Status)
	}
	drain(gc.changed)
	tok := strings.TrimSpace(p.cli(t, "tokens", "create", "--role", "operator"))
	p.cli(t, "approve", p.session, "--token", tok)
	gc.waitChanged(t, "the CLI approval")
	st, err = sqlite.Open(context.Background(), p.storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), store.RunFilter{SessionKey: "claude-code:gw", Limit: 1})
	if err != nil || len(runs) != 1 || runs[0].State != "done" {
		t.Fatalf("after approval: %+v %v", runs, err)
	}
}

// TestGatewayUpstreamKilledMidCall kills the everything server while a
// long call is in flight: the client gets a clear error, and the gateway
// restarts the upstream and keeps serving. Progress is forwarded.
func TestGatewayUpstreamKilledMidCall(t *testing.T) {
	p := newGWProject(t)
	p.cli(t, "deactivate", p.session, "--token", strings.TrimSpace(p.cli(t, "tokens", "create", "--role", "operator")))
	ev := MCPServerBinary(t, "mcp-server-everything")
	gc := p.connect(t, "everything="+ev)

	res := gc.call(t, "everything__echo", map[string]any{"message": "hi"})
	if res.IsError || !strings.Contains(resultText(res), "hi") {
		t.Fatalf("echo: %s", resultText(res))
	}

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		r, err := gc.cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__trigger-long-running-operation",
			Arguments: map[string]any{"duration": 30, "steps": 30}, Meta: mcp.Meta{"progressToken": "e2e-progress"}})
		done <- outcome{r, err}
	}()
	select {
	case <-gc.progress:
	case <-time.After(20 * time.Second):
		t.Fatal("no progress notification forwarded from the upstream within 20s")
	}
	// Kill the upstream: the gateway's child processes.
	killChildren(t, gc.cmd.Process.Pid)
	var o outcome
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the in-flight call did not end within 30s of the upstream's death")
	}
	if o.err != nil {
		t.Fatalf("the call failed at the protocol level instead of a tool error: %v", o.err)
	}
	if !o.res.IsError || !strings.Contains(resultText(o.res), `upstream "everything" stopped`) {
		t.Fatalf("killed mid-call: isError=%v %q", o.res.IsError, resultText(o.res))
	}
	// The gateway keeps serving and restarts the upstream.
	deadline := time.Now().Add(45 * time.Second)
	for {
		res := gc.call(t, "everything__echo", map[string]any{"message": "again"})
		if !res.IsError && strings.Contains(resultText(res), "again") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upstream was not back within 45s: %s", resultText(res))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if names := gc.toolNames(t); !names["statewright_get_state"] || !names["everything__echo"] {
		t.Fatalf("after the restart tools/list lacks tools: %v", names)
	}
}

// killChildren SIGKILLs the direct children of pid (the upstream servers a
// gateway started), by id, found in /proc.
func killChildren(t *testing.T, pid int) {
	t.Helper()
	// Scan every process's parent (a thread's children file lists only
	// what that thread started, and Go starts processes from any thread).
	var kids []int
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		var k int
		if _, err := fmt.Sscan(e.Name(), &k); err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces; split after ')'.
		rest := string(st[strings.LastIndexByte(string(st), ')')+1:])
		var state string
		var ppid int
		fmt.Sscan(rest, &state, &ppid)
		if ppid == pid {
			kids = append(kids, k)
		}
	}
	n := 0
	for _, k := range kids {
		if killPid(k) == nil {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no upstream process of %d to kill", pid)
	}
}
