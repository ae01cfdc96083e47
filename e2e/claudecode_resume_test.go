//go:build e2e

package e2e

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/store"
)

// TestClaudeCodeResume: `claude --resume SESSION` is a new process (new
// hooks, a new MCP server) with the same session id, and continues the
// same run. The agent starts bugfix through MCP and its Write is denied in
// localizing; after --resume the same Write is still denied in the same
// phase of the same run, the MCP server (started again) reads that run
// through the hook's stamp, and the store counts both processes' calls on
// one run.
func TestClaudeCodeResume(t *testing.T) {
	p := newSWProject(t)
	if out, err := p.initCommand("init", "claude-code", "--project", p.dir, "--store", p.storePath).CombinedOutput(); err != nil {
		t.Fatalf("init with MCP: %v\n%s", err, out)
	}
	const pre = "mcp__statewright__statewright_"
	x := p.path("x.txt")
	write := func(id string) fakemodel.ToolUse {
		return tool(id, "Write", map[string]any{"file_path": x, "content": "too early\n"})
	}
	srv := fakemodel.NewAnthropic(script(
		fakemodel.Call(tool("toolu_start", pre+"start", map[string]any{"name": "bugfix"})),
		fakemodel.Call(write("toolu_write1")),
		fakemodel.Say("Cannot write yet."),
	), fakemodel.WithLog(t.Logf))
	r := p.claudeRun(t, srv, "--session-id", e2eSession)
	srv.Close()
	if r.ExitCode != 0 {
		t.Fatalf("first run:\n%s", r)
	}
	if res := toolResult(t, srv, "toolu_write1"); !res.IsError || !strings.Contains(res.Content, "localizing") {
		t.Fatalf("first write: %+v; want a deny in localizing", res)
	}
	key := "claude-code:" + e2eSession
	svc, done := p.service(t)
	defer done()
	ctx := context.Background()
	v1, err := svc.Status(ctx, key)
	if err != nil || v1.Run.State != "localizing" {
		t.Fatalf("after the first run: %+v, %v; want a run in localizing", v1, err)
	}

	srv = fakemodel.NewAnthropic(script(
		fakemodel.Call(write("toolu_write2")),
		fakemodel.Call(tool("toolu_state", pre+"get_state", map[string]any{})),
		fakemodel.Say("Still localizing."),
	), fakemodel.WithLog(t.Logf))
	r = p.claudeRun(t, srv, "--resume", e2eSession)
	srv.Close()
	if r.ExitCode != 0 {
		t.Fatalf("resumed run:\n%s", r)
	}
	if res := toolResult(t, srv, "toolu_write2"); !res.IsError || !strings.Contains(res.Content, "localizing") {
		t.Errorf("write after --resume: %+v; want still denied in localizing", res)
	}
	if _, err := os.Stat(x); !os.IsNotExist(err) {
		t.Errorf("x.txt exists (stat: %v); both writes must be denied", err)
	}
	if res := toolResult(t, srv, "toolu_state"); res.IsError || !strings.Contains(res.Content, key) ||
		!strings.Contains(res.Content, `"state":"localizing"`) {
		t.Errorf("get_state after --resume: %+v; want this session's run in localizing", res)
	}

	runs, err := svc.Runs(ctx, store.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %+v, %v; want exactly one", runs, err)
	}
	run := runs[0]
	if run.ID != v1.Run.ID || run.SessionKey != key || run.State != "localizing" || run.Status != store.StatusActive {
		t.Errorf("run after --resume = %+v; want run %s of %s, still active in localizing", run, v1.Run.ID, key)
	}
	evs, err := svc.History(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]store.Event{}
	for _, e := range evs {
		if e.Kind == store.KindDecision {
			got[e.ToolUseID] = e
		}
	}
	for id, want := range map[string]string{"toolu_start": "allow", "toolu_write1": "deny", "toolu_write2": "deny", "toolu_state": "allow"} {
		e, ok := got[id]
		if !ok || e.Decision != want || (id != "toolu_start" && (e.RunID != run.ID || e.State != "localizing")) {
			t.Errorf("decision %s = %+v (found %v); want %s on run %s in localizing", id, e, ok, want, run.ID)
		}
	}
}
