//go:build linux

package gateway

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/internal/mcpio"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/store/sqlite"
)

// sbWorkflow: working may write the project; reviewing may only read, yet
// allows the upstream's write tool, so that only the OS sandbox stands
// between that tool and the disk.
const sbWorkflow = `{"id":"sbw","initial":"working","states":{
 "working":{"allowed_tools":["Read","Write","Edit","sb__write","sb__read","sb__whoami","sb__loop"],"on":{"DONE":"reviewing"}},
 "reviewing":{"allowed_tools":["Read","sb__write","sb__read","sb__whoami"],"on":{"BACK":"working","OK":"done"}},
 "done":{"type":"final"}}}`

// sbWorld is a project with secrets in it, a store, a run of sbWorkflow,
// and a gateway whose upstream "sb" is testdata/sbupstream, a real stdio
// MCP server, with a client connected.
type sbWorld struct {
	t                   *testing.T
	proj, store, secret string
	svc                 *runtime.Service
	m                   *Manager
	cs                  *mcp.ClientSession
}

const (
	sbSession = "claude-code:sb"
	sbToken   = "sw_op_0123456789abcdef"
	sbDotEnv  = "API_KEY=hunter2-secret"
)

// newSBWorld builds the world; sb is the gateway's sandbox (its Profile,
// Listing and Env are filled here).
func newSBWorld(t *testing.T, avail sandbox.Availability) *sbWorld {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	w := &sbWorld{t: t, proj: filepath.Join(dir, "proj")}
	w.store = filepath.Join(w.proj, "state.db")
	secrets := filepath.Join(w.proj, "secrets")
	w.secret = filepath.Join(secrets, "operator-token")
	for _, d := range []string{secrets, filepath.Join(dir, "home"), filepath.Join(dir, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range map[string]string{w.secret: sbToken, filepath.Join(w.proj, ".env"): sbDotEnv,
		filepath.Join(w.proj, "notes.txt"): "ordinary notes", filepath.Join(dir, "wf.json"): sbWorkflow} {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Outside the project: where that is under /tmp (the sandbox mounts
	// its own there), the program's directory stays visible all the same.
	bin := filepath.Join(dir, "bin", "sbupstream")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/sbupstream").CombinedOutput(); err != nil {
		t.Fatalf("build the upstream: %v: %s", err, out)
	}
	st, err := sqlite.Open(ctx, w.store, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w.svc = runtime.New(st, runtime.Options{ProjectDir: w.proj})
	if _, err := w.svc.Start(ctx, sbSession, filepath.Join(dir, "wf.json"), runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Timeout: Duration(20 * time.Second), Upstreams: []Upstream{{Name: "sb", Command: bin}}}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	w.m = NewManager(cfg, w.proj, nil)
	env := policy.SandboxEnv{ProjectDir: w.proj, Home: filepath.Join(dir, "home"), Store: w.store, Secrets: []string{secrets}}
	dormant, err := w.svc.SandboxProfile(ctx, "", env)
	if err != nil {
		t.Fatal(err)
	}
	w.m.SetSandbox(&Sandbox{Avail: avail, Env: env, Root: filepath.Join(dir, "sbroot"), Profile: w.svc.SandboxProfile, Listing: ListingProfile(dormant)})
	if err := w.m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.m.Close)
	g, err := New(Options{Runtime: w.svc, Store: st, Upstreams: w.m, ProjectDir: w.proj, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Wait)
	srv, err := g.NewServer(SessionOptions{Session: sbSession})
	if err != nil {
		t.Fatal(err)
	}
	ct, stt := mcpio.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, stt, nil); err != nil {
		t.Fatal(err)
	}
	w.cs, err = mcp.NewClient(&mcp.Implementation{Name: "test-client"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.cs.Close() })
	return w
}

// call calls an upstream tool and returns its text and whether it is an
// error result.
func (w *sbWorld) call(tool string, args map[string]any) (string, bool) {
	w.t.Helper()
	res, err := w.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		w.t.Fatalf("%s: %v", tool, err)
	}
	return text(res), res.IsError
}

// status is the upstreams statewright_get_status reports, as the agent
// sees them.
func (w *sbWorld) status() []UpstreamStatus {
	w.t.Helper()
	out, isErr := w.call("statewright_get_status", nil)
	if isErr {
		w.t.Fatalf("statewright_get_status: %s", out)
	}
	var v struct {
		Upstreams []UpstreamStatus `json:"upstreams"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		w.t.Fatalf("statewright_get_status: %v in %s", err, out)
	}
	return v.Upstreams
}

// transition moves the run as a person would, elsewhere.
func (w *sbWorld) transition(ev string) {
	w.t.Helper()
	if _, err := w.svc.Transition(context.Background(), sbSession, ev, nil, runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}); err != nil {
		w.t.Fatal(err)
	}
}

// sessionProcess is the PID (bubblewrap's, on the host) and the phase of
// the one client session's process of upstream sb; 0 when none runs.
func (w *sbWorld) sessionProcess() (int, string) {
	w.m.smu.Lock()
	var ids []string
	for id := range w.m.sessions {
		ids = append(ids, id)
	}
	w.m.smu.Unlock()
	if len(ids) > 1 {
		w.t.Fatalf("%d client sessions have upstream processes, want at most 1", len(ids))
	}
	if len(ids) == 0 {
		return 0, ""
	}
	return w.m.sessionPID(ids[0], "sb")
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// TestUpstreamRunsInThePhasesSandbox is the outcome test of gateway
// upstream servers under the OS sandbox, with a real stdio MCP server:
// the client session's process of it runs under the profile of the
// phase; in working its write lands, the secrets (a token file, the
// store, a .env) read empty or not at all, and a process it starts keeps
// writing; a person's transition to reviewing (read-only) stops that
// process and what it started, with no call after it; the next call runs
// in a new process (another PID) under reviewing's profile, where the
// same write tool fails on disk and the model is told why; ordinary
// calls still work, and back in working writes land again.
func TestUpstreamRunsInThePhasesSandbox(t *testing.T) {
	a := sandbox.Detect()
	if !a.OK() {
		if os.Getenv("STATEWRIGHT_REQUIRE_SANDBOX") != "" {
			t.Fatalf("no sandbox, and STATEWRIGHT_REQUIRE_SANDBOX is set: %s", a.Why)
		}
		t.Skipf("SKIPPED, not passed: no OS sandbox here: %s", a.Why)
	}
	w := newSBWorld(t, a)
	if st := w.status(); len(st) != 1 || !st[0].Up || st[0].Tools == 0 || !strings.HasPrefix(st[0].Sandbox, "bubblewrap") {
		t.Errorf("statewright_get_status upstreams: %+v, want sb up under bubblewrap", st)
	}
	first := filepath.Join(w.proj, "first.txt")
	if out, isErr := w.call("sb__write", map[string]any{"path": first, "text": "one"}); isErr {
		t.Fatalf("a write in working failed: %s", out)
	}
	if b, _ := os.ReadFile(first); string(b) != "one" {
		t.Fatalf("first.txt holds %q after a write in working", b)
	}
	for _, p := range []string{w.secret, w.store, filepath.Join(w.proj, ".env")} {
		out, _ := w.call("sb__read", map[string]any{"path": p})
		if strings.Contains(out, sbToken) || strings.Contains(out, "SQLite format") || strings.Contains(out, "hunter2") {
			t.Errorf("the upstream read %s: %q", p, clipText(out))
		}
	}
	if out, isErr := w.call("sb__read", map[string]any{"path": filepath.Join(w.proj, "notes.txt")}); isErr || out != "ordinary notes" {
		t.Errorf("an ordinary read: %q (error %v)", out, isErr)
	}
	who1, _ := w.call("sb__whoami", map[string]any{})
	if !strings.HasSuffix(who1, " pid=1") {
		t.Errorf("the upstream is not PID 1 of a namespace of its own: %s", who1)
	}
	pid1, phase1 := w.sessionProcess()
	if pid1 == 0 || phase1 != "working" {
		t.Fatalf("the session's process: pid %d, phase %q; want one under working", pid1, phase1)
	}
	ticks := filepath.Join(w.proj, "ticks")
	if out, isErr := w.call("sb__loop", map[string]any{"path": ticks}); isErr {
		t.Fatalf("loop: %s", out)
	}
	for deadline := time.Now().Add(20 * time.Second); fileSize(ticks) < 5; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the upstream's loop never wrote")
		}
	}

	w.transition("DONE")
	// The process of working stops with no call after the transition.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if pid, _ := w.sessionProcess(); pid == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the upstream's process of working still runs after the run moved to reviewing")
		}
	}
	if err := syscall.Kill(pid1, 0); err == nil {
		t.Errorf("process %d (working's) is still alive", pid1)
	}
	n := fileSize(ticks)
	time.Sleep(500 * time.Millisecond)
	if m := fileSize(ticks); m != n {
		t.Errorf("what working's process started still writes in reviewing (%d -> %d bytes)", n, m)
	}

	second := filepath.Join(w.proj, "second.txt")
	out, isErr := w.call("sb__write", map[string]any{"path": second, "text": "two"})
	if !isErr {
		t.Errorf("a write in reviewing succeeded: %s", out)
	}
	if _, err := os.Lstat(second); err == nil {
		t.Errorf("second.txt was written in reviewing")
	}
	if !strings.Contains(out, "phase reviewing") || !strings.Contains(out, "phase working was stopped") {
		t.Errorf("the call does not say its upstream was restarted under reviewing's sandbox: %s", out)
	}
	if out, _ := w.call("sb__write", map[string]any{"path": first, "text": "changed"}); !strings.Contains(out, "read-only file system") {
		t.Errorf("overwriting first.txt in reviewing: %s", out)
	}
	if b, _ := os.ReadFile(first); string(b) != "one" {
		t.Errorf("first.txt holds %q after reviewing", b)
	}
	who2, _ := w.call("sb__whoami", map[string]any{})
	pid2, phase2 := w.sessionProcess()
	if pid2 == 0 || pid2 == pid1 || phase2 != "reviewing" || who2 == who1 {
		t.Errorf("after the transition: pid %d (was %d), phase %q, %s (was %s); want a new process under reviewing", pid2, pid1, phase2, who2, who1)
	}
	if out, isErr := w.call("sb__read", map[string]any{"path": filepath.Join(w.proj, "notes.txt")}); isErr || out != "ordinary notes" {
		t.Errorf("an ordinary read in reviewing: %q (error %v)", out, isErr)
	}
	out, _ = w.call("sb__read", map[string]any{"path": w.secret})
	if strings.Contains(out, sbToken) {
		t.Errorf("the upstream read the token in reviewing")
	}

	w.transition("BACK")
	third := filepath.Join(w.proj, "third.txt")
	if out, isErr := w.call("sb__write", map[string]any{"path": third, "text": "three"}); isErr {
		t.Errorf("a write back in working failed: %s", out)
	}
	if b, _ := os.ReadFile(third); string(b) != "three" {
		t.Errorf("third.txt holds %q", b)
	}
}

// TestUpstreamWithoutSandbox: where no sandbox is available the upstream
// runs as without one (one process for every session, what the law allows
// it does, here a write in the read-only phase), and its status says why.
func TestUpstreamWithoutSandbox(t *testing.T) {
	w := newSBWorld(t, sandbox.Availability{Why: "bubblewrap (bwrap) is not installed"})
	if st := w.status(); len(st) != 1 || st[0].Name != "sb" || !st[0].Up || st[0].Tools == 0 || !strings.HasPrefix(st[0].Sandbox, "none: bubblewrap (bwrap) is not installed") {
		t.Errorf("statewright_get_status upstreams: %+v, want sb up, no sandbox and why", st)
	}
	w.transition("DONE")
	p := filepath.Join(w.proj, "unsandboxed.txt")
	if out, isErr := w.call("sb__write", map[string]any{"path": p, "text": "x"}); isErr {
		t.Errorf("without a sandbox the write failed: %s", out)
	}
	if _, err := os.Lstat(p); err != nil {
		t.Errorf("without a sandbox the write did not land: %v", err)
	}
	if pid, _ := w.sessionProcess(); pid != 0 {
		t.Errorf("a per-session process %d runs without a sandbox", pid)
	}
}

func clipText(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
