package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/control"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// gateWorkflow is a project workflow with an empty tool list, an
// unrestricted state and an approval gate.
const gateWorkflow = `{
  "id": "gate",
  "initial": "locked",
  "states": {
    "locked": {"allowed_tools": [], "instructions": "Ask for the key.", "on": {"UNLOCK": "open"}},
    "open": {"instructions": "Anything goes.", "disallowed_tools": ["WebFetch"], "allowed_commands": ["go test"], "max_edit_lines": 40, "on": {"SHIP": {"target": "done", "requires_approval": true, "approval_message": "ship it?"}, "GIVE_UP": "failed"}},
    "env_check": {"instructions": "Check the .env change.", "on": {"CHECKED": "$return"}},
    "done": {"type": "final"},
    "failed": {"type": "final"}
  },
  "interrupts": {"env_edit": {"trigger": {"file_pattern": "**/.env"}, "target": "env_check"}}
}`

// fixture is a server over a real SQLite store, connected to an SDK client
// through the in-memory transport.
type fixture struct {
	t   testing.TB
	st  *sqlite.Store
	rt  *runtime.Service
	cs  *mcp.ClientSession
	dir string
}

func newFixture(t testing.TB, opts Options) *fixture {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	wfDir := filepath.Join(dir, ".statewright", "workflows")
	if err := os.MkdirAll(wfDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wfDir, "gate.json"), []byte(gateWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	rt := runtime.New(st, runtime.Options{ProjectDir: dir})
	if opts.ProjectDir == "" {
		opts.ProjectDir = dir
	}
	opts.Workflows = runtime.DefaultWorkflows(dir)
	srv, err := New(rt, st, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ct, stt := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, stt, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return &fixture{t: t, st: st, rt: rt, cs: cs, dir: dir}
}

// call calls a tool and returns its text and whether it is a tool error.
func (f *fixture) call(name string, args map[string]any) (string, bool) {
	f.t.Helper()
	res, err := f.cs.CallTool(f.t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		f.t.Fatalf("%s: protocol error: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// ok calls a tool that must succeed and decodes its JSON result into out.
func (f *fixture) ok(name string, args map[string]any, out any) {
	f.t.Helper()
	text, isErr := f.call(name, args)
	if isErr {
		f.t.Fatalf("%s %v: tool error: %s", name, args, text)
	}
	if out != nil {
		reflect.ValueOf(out).Elem().SetZero() // no stale fields from an earlier call
		if err := json.Unmarshal([]byte(text), out); err != nil {
			f.t.Fatalf("%s: result is not JSON: %v\n%s", name, err, text)
		}
	}
}

// fail calls a tool that must fail and returns its message.
func (f *fixture) fail(name string, args map[string]any) string {
	f.t.Helper()
	text, isErr := f.call(name, args)
	if !isErr {
		f.t.Fatalf("%s %v: want a tool error, got %s", name, args, text)
	}
	return text
}

// live returns the session's live run from the store (nil when none).
func (f *fixture) live(session string) *store.Run {
	f.t.Helper()
	r, err := f.st.LiveRun(f.t.Context(), session)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		f.t.Fatalf("LiveRun(%s): %v", session, err)
	}
	return r
}

// stamp returns tool arguments with the session stamp added.
func stamp(id string, kv ...any) map[string]any {
	m := map[string]any{StampKey: id}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func TestToolsList(t *testing.T) {
	f := newFixture(t, Options{})
	res, err := f.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(schema, &s); err != nil || s.Type != "object" {
			t.Errorf("%s: input schema %s is not an object schema", tool.Name, schema)
		}
		if _, ok := s.Properties[StampKey]; !ok {
			t.Errorf("%s: input schema does not admit %q: %s", tool.Name, StampKey, schema)
		}
		if tool.Description == "" {
			t.Errorf("%s: no description", tool.Name)
		}
	}
	slices.Sort(names)
	want := slices.Clone(ToolNames)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
}

func TestStartTransitionMovesTheStoredRun(t *testing.T) {
	f := newFixture(t, Options{})
	const key = "claude-code:s1"

	var started control.StartView
	f.ok(ToolStart, stamp("s1", "name", "bugfix"), &started)
	if started.InitialState != "localizing" || !started.Loaded || started.StateSnapshot == nil {
		t.Fatalf("start = %+v", started)
	}
	run := f.live(key)
	if run == nil || run.State != "localizing" || run.Status != store.StatusActive || run.WorkflowID == "" {
		t.Fatalf("stored run after start = %+v", run)
	}

	var tr control.TransitionView
	f.ok(ToolTransition, stamp("s1", "event", "LOCALIZED", "data", map[string]any{"rationale": "found it"}), &tr)
	if !tr.Transitioned || tr.From != "localizing" || tr.To != "planning" || tr.RequiresApproval {
		t.Fatalf("transition = %+v", tr)
	}
	f.ok(ToolTransition, stamp("s1", "event", "PLAN_READY"), &tr)
	if got := f.live(key); got == nil || got.State != "implementing" || got.Revision <= run.Revision {
		t.Fatalf("stored run after PLAN_READY = %+v", got)
	}

	var sv control.StateView
	f.ok(ToolGetState, stamp("s1"), &sv)
	if sv.State != "implementing" || sv.Session != key || sv.IsFinal || !slices.Contains(sv.AllowedTools, "Edit") {
		t.Fatalf("get_state = %+v", sv)
	}
	if !slices.ContainsFunc(sv.Transitions, func(ti control.TransitionInfo) bool { return ti.Event == "IMPLEMENTED" && ti.Target == "testing" }) {
		t.Errorf("get_state transitions = %+v, want IMPLEMENTED → testing", sv.Transitions)
	}

	// Another session is untouched.
	if r := f.live("claude-code:s2"); r != nil {
		t.Errorf("session s2 has a run: %+v", r)
	}
}

func TestLoadWorkflowAlias(t *testing.T) {
	f := newFixture(t, Options{})
	var started control.StartView
	f.ok(ToolLoadWorkflow, stamp("s1", "name", "feature"), &started)
	if r := f.live("claude-code:s1"); r == nil || r.State != "planning" {
		t.Fatalf("stored run = %+v", r)
	}
}

func TestTransitionErrorsTeach(t *testing.T) {
	f := newFixture(t, Options{})
	f.ok(ToolStart, stamp("s1", "name", "bugfix"), nil)

	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"unknown event", stamp("s1", "event", "SHIP_IT"), []string{"SHIP_IT", "localizing", "valid events", "LOCALIZED", "FAIL"}},
		{"empty event", stamp("s1", "event", " "), []string{"name an event", "LOCALIZED → planning"}},
		{"interrupt event", stamp("s1", "event", "INTERRUPT:env_edit"), []string{"not the agent's to send", "LOCALIZED → planning"}},
		{"interrupt event, lower case", stamp("s1", "event", "interrupt:x"), []string{"not the agent's to send"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := f.fail(ToolTransition, tt.args)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not contain %q", msg, w)
				}
			}
		})
	}
	if after := f.live("claude-code:s1"); after.State != "localizing" || after.Status != store.StatusActive {
		t.Errorf("refused transitions moved the run: %+v", after)
	}
}

func TestNoRunErrors(t *testing.T) {
	f := newFixture(t, Options{})
	for _, tool := range []string{ToolGetState, ToolTransition} {
		args := stamp("s9")
		if tool == ToolTransition {
			args["event"] = "GO"
		}
		msg := f.fail(tool, args)
		if !strings.Contains(msg, "no active workflow") || !strings.Contains(msg, "statewright_start") || !strings.Contains(msg, "bugfix") {
			t.Errorf("%s: message %q does not teach how to start", tool, msg)
		}
	}
	var st control.StatusView
	f.ok(ToolGetStatus, stamp("s9"), &st)
	if st.ActiveWorkflow != nil || st.CurrentState != nil || !slices.Contains(st.AvailableWorkflows, "gate") {
		t.Errorf("get_status without a run = %+v", st)
	}
}

func TestUnstampedCallsAreDenied(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		args map[string]any
		want string
	}{
		{"no stamp", Options{}, map[string]any{"name": "bugfix"}, "not tied to a session"},
		{"empty stamp", Options{}, map[string]any{"name": "bugfix", StampKey: ""}, "not tied to a session"},
		{"env not trusted", Options{EnvSession: "env1"}, map[string]any{"name": "bugfix"}, "not tied to a session"},
		{"trusted but empty env", Options{TrustEnvSession: true}, map[string]any{"name": "bugfix"}, "not tied to a session"},
		{"malformed stamp", Options{}, map[string]any{"name": "bugfix", StampKey: "a b/../c"}, "malformed session id"},
		{"stamp with a key prefix", Options{}, map[string]any{"name": "bugfix", StampKey: "codex:abc"}, "malformed session id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.opts)
			msg := f.fail(ToolStart, tt.args)
			if !strings.Contains(msg, tt.want) {
				t.Errorf("message %q does not contain %q", msg, tt.want)
			}
			runs, err := f.st.Runs(t.Context(), store.RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 0 {
				t.Errorf("a denied start created runs: %+v", runs)
			}
			// Every tool is denied, read-only ones too.
			for _, tool := range []string{ToolGetState, ToolGetStatus, ToolListWorkflows, ToolPause} {
				args := map[string]any{}
				if s, ok := tt.args[StampKey]; ok {
					args[StampKey] = s
				}
				if msg := f.fail(tool, args); !strings.Contains(msg, tt.want) {
					t.Errorf("%s: message %q does not contain %q", tool, msg, tt.want)
				}
			}
		})
	}
}

func TestStampWinsOverEnv(t *testing.T) {
	f := newFixture(t, Options{TrustEnvSession: true, EnvSession: "stale"})
	f.ok(ToolStart, stamp("fresh", "name", "bugfix"), nil)
	if f.live("claude-code:fresh") == nil {
		t.Error("the stamped session has no run")
	}
	if f.live("claude-code:stale") != nil {
		t.Error("the environment's session got the run")
	}
	// Without a stamp, the trusted environment names the session.
	f.ok(ToolStart, map[string]any{"name": "refactor"}, nil)
	if r := f.live("claude-code:stale"); r == nil || r.State != "analyzing" {
		t.Errorf("env session run = %+v", r)
	}
}

func TestHarnessPrefix(t *testing.T) {
	f := newFixture(t, Options{Harness: "codex"})
	var sv control.StartView
	f.ok(ToolStart, stamp("t1", "name", "bugfix"), &sv)
	if f.live("codex:t1") == nil || sv.StateSnapshot.Session != "codex:t1" {
		t.Errorf("run not under codex:t1: %+v", sv.StateSnapshot)
	}
	if _, err := New(f.rt, f.st, Options{Harness: "Claude Code"}); err == nil {
		t.Error("New accepted an invalid harness name")
	}
}

func TestStartRefusals(t *testing.T) {
	f := newFixture(t, Options{})
	f.ok(ToolStart, stamp("s1", "name", "bugfix"), nil)

	msg := f.fail(ToolStart, stamp("s1", "name", "feature"))
	for _, w := range []string{"already live", "bugfix", "localizing", "statewright deactivate claude-code:s1"} {
		if !strings.Contains(msg, w) {
			t.Errorf("restart message %q does not contain %q", msg, w)
		}
	}
	if r := f.live("claude-code:s1"); r.State != "localizing" || !strings.Contains(r.WorkflowSource, "bugfix") {
		t.Errorf("refused start changed the run: %+v", r)
	}

	outside := filepath.Join(f.dir, "evil.json")
	if err := os.WriteFile(outside, []byte(gateWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, why := range map[string]string{outside: "does not let an agent start", "nonesuch": "no workflow has that name", "": "name a workflow"} {
		msg := f.fail(ToolStart, stamp("s2", "name", name))
		if !strings.Contains(msg, why) || !strings.Contains(msg, "may start: bugfix") {
			t.Errorf("start %q: message %q does not say %q and list startable workflows", name, msg, why)
		}
	}
	if r := f.live("claude-code:s2"); r != nil {
		t.Errorf("refused starts created a run: %+v", r)
	}
}

func TestStartAfterFinal(t *testing.T) {
	f := newFixture(t, Options{})
	f.ok(ToolStart, stamp("s1", "name", "gate"), nil)
	var tr control.TransitionView
	f.ok(ToolTransition, stamp("s1", "event", "UNLOCK"), &tr)
	f.ok(ToolTransition, stamp("s1", "event", "GIVE_UP"), &tr)
	if !tr.IsFinal || tr.To != "failed" {
		t.Fatalf("GIVE_UP = %+v", tr)
	}
	f.ok(ToolStart, stamp("s1", "name", "bugfix"), nil)
	if r := f.live("claude-code:s1"); r == nil || r.State != "localizing" {
		t.Errorf("start after a final run: %+v", r)
	}
}

func TestApprovalGateParks(t *testing.T) {
	f := newFixture(t, Options{})
	const key = "claude-code:s1"
	var started control.StartView
	f.ok(ToolStart, stamp("s1", "name", "gate"), &started)

	// allowed_tools: [] is "nothing", distinct from absent ("anything").
	locked, _ := f.call(ToolGetState, stamp("s1"))
	if !strings.Contains(locked, `"allowed_tools": []`) {
		t.Errorf("locked state: allowed_tools should be []: %s", locked)
	}
	f.ok(ToolTransition, stamp("s1", "event", "UNLOCK"), nil)
	open, _ := f.call(ToolGetState, stamp("s1"))
	if !strings.Contains(open, `"allowed_tools": null`) {
		t.Errorf("open state: allowed_tools should be null: %s", open)
	}
	var ov control.StateView
	f.ok(ToolGetState, stamp("s1"), &ov)
	if r := ov.Rules; r == nil || !slices.Equal(r.DisallowedTools, []string{"WebFetch"}) || !slices.Equal(r.AllowedCommands, []string{"go test"}) ||
		r.MaxEditLines == nil || *r.MaxEditLines != 40 || r.MaxFilesPerState != nil {
		t.Errorf("open state rules = %+v", ov.Rules)
	}

	// The agent cannot fire an interrupt.
	if msg := f.fail(ToolTransition, stamp("s1", "event", "INTERRUPT:env_edit")); !strings.Contains(msg, "not the agent's to send") {
		t.Errorf("INTERRUPT: %q", msg)
	}
	if r := f.live(key); r.State != "open" || len(r.History) != 0 && string(r.History) != "null" {
		t.Fatalf("INTERRUPT moved the run: %+v", r)
	}

	var tr control.TransitionView
	f.ok(ToolTransition, stamp("s1", "event", "SHIP"), &tr)
	if tr.Transitioned || !tr.RequiresApproval || tr.ApprovalID == "" || tr.From != "open" || tr.To != "done" {
		t.Fatalf("SHIP = %+v", tr)
	}
	if !strings.Contains(tr.Message, "statewright approve "+key+" --id "+tr.ApprovalID) || !strings.Contains(tr.Message, "ship it?") {
		t.Errorf("message does not say how to approve: %q", tr.Message)
	}
	run := f.live(key)
	if run.Status != store.StatusAwaitingApproval || run.State != "open" || run.PendingApproval == nil || run.PendingApproval.ID != tr.ApprovalID {
		t.Fatalf("stored run = %+v", run)
	}

	var sv control.StateView
	f.ok(ToolGetState, stamp("s1"), &sv)
	if sv.PendingApproval == nil || sv.PendingApproval.ApprovalID != tr.ApprovalID || sv.PendingApproval.ToState != "done" {
		t.Errorf("get_state pending approval = %+v", sv.PendingApproval)
	}
	msg := f.fail(ToolTransition, stamp("s1", "event", "GIVE_UP"))
	if !strings.Contains(msg, "awaiting a human's approval") || !strings.Contains(msg, tr.ApprovalID) {
		t.Errorf("transition while parked: %q", msg)
	}
	// The very transition that awaits approval, asked for again, is no
	// error: the same answer as when it parked.
	var again control.TransitionView
	f.ok(ToolTransition, stamp("s1", "event", "ship"), &again)
	if again.Transitioned || !again.RequiresApproval || again.ApprovalID != tr.ApprovalID || again.To != "done" ||
		!strings.Contains(again.Message, "statewright approve "+key+" --id "+tr.ApprovalID) {
		t.Errorf("SHIP again while parked = %+v", again)
	}
	if run := f.live(key); run.State != "open" || run.Status != store.StatusAwaitingApproval {
		t.Errorf("SHIP again moved the run: %+v", run)
	}

	// A human approves through the runtime; the server re-reads the store.
	if _, err := f.rt.Approve(t.Context(), key, tr.ApprovalID, runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli"}); err != nil {
		t.Fatalf("Approve: %v", err)
	}
	runs, err := f.st.Runs(t.Context(), store.RunFilter{SessionKey: key})
	if err != nil || len(runs) != 1 || runs[0].State != "done" || runs[0].Status != store.StatusCompleted {
		t.Fatalf("runs after approval = %+v, %v", runs, err)
	}
	var st control.StatusView
	f.ok(ToolGetStatus, stamp("s1"), &st)
	if st.ActiveWorkflow != nil || st.LastRun == nil || st.LastRun.State != "done" || st.LastRun.Status != store.StatusCompleted {
		t.Errorf("status after approval = %+v", st)
	}
	// A completed run is reported as done, with no invitation to start
	// another workflow (issue 18 item 3).
	if msg := f.fail(ToolGetState, stamp("s1")); !strings.Contains(msg, "completed in state 'done'") ||
		strings.Contains(msg, "statewright_start") || strings.Contains(msg, "may start") {
		t.Errorf("get_state after the run ended: %q", msg)
	}
}

func TestRequestsAreRecordedNotPerformed(t *testing.T) {
	f := newFixture(t, Options{})
	const key = "claude-code:s1"
	f.ok(ToolStart, stamp("s1", "name", "bugfix"), nil)
	before := f.live(key)

	tests := []struct {
		tool, action string
		args         map[string]any
		command      string
	}{
		{ToolPause, "pause", stamp("s1", "reason", "lunch"), "statewright pause " + key},
		{ToolDeactivate, "deactivate", stamp("s1"), "statewright deactivate " + key},
		{ToolForceState, "force-state", stamp("s1", "state", "done"), "statewright deactivate " + key},
	}
	for _, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			var rv control.RequestView
			res, err := f.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args,
				Meta: mcp.Meta{ToolUseIDMetaKey: "toolu_" + tt.action}})
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %+v", tt.tool, err, res)
			}
			if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &rv); err != nil {
				t.Fatal(err)
			}
			if !rv.Requested || rv.Performed || rv.Command != tt.command || rv.State != "localizing" {
				t.Errorf("result = %+v", rv)
			}
			if !strings.Contains(rv.Message, "`"+tt.command+"`") || !strings.Contains(rv.Message, "a human") {
				t.Errorf("message %q does not name the command", rv.Message)
			}
			evs, err := f.st.Events(t.Context(), store.EventFilter{SessionKey: key, Kinds: []store.EventKind{store.KindAdmin}})
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(evs, func(e store.Event) bool { return e.Seq == rv.EventSeq })
			if i < 0 {
				t.Fatalf("no admin event %d in %+v", rv.EventSeq, evs)
			}
			e := evs[i]
			var data map[string]any
			if err := json.Unmarshal(e.Data, &data); err != nil {
				t.Fatal(err)
			}
			if e.Tool != tt.tool || e.RunID != before.ID || e.ToolUseID != "toolu_"+tt.action || data["request"] != tt.action || data["status"] != "requested" || data["performed"] != false {
				t.Errorf("event = %+v data %v", e, data)
			}
			if tt.action == "force-state" && data["target_state"] != "done" {
				t.Errorf("force-state request data = %v, want target_state done", data)
			}
		})
	}
	after := f.live(key)
	if after == nil || after.Status != store.StatusActive || after.State != "localizing" || after.Revision != before.Revision {
		t.Errorf("requests changed the run: before %+v after %+v", before, after)
	}
	if msg := f.fail(ToolForceState, stamp("s1", "state", "")); !strings.Contains(msg, "name the state") {
		t.Errorf("force_state without a state: %q", msg)
	}
}

func TestListWorkflows(t *testing.T) {
	f := newFixture(t, Options{})
	var lv control.ListView
	f.ok(ToolListWorkflows, stamp("s1"), &lv)
	if !slices.Contains(lv.Workflows, "bugfix") || !slices.Contains(lv.Workflows, "gate") || lv.Active != nil {
		t.Fatalf("list = %+v", lv)
	}
	for _, d := range lv.Details {
		if !d.AgentMayStart {
			t.Errorf("%s: not startable", d.Name)
		}
		if d.Name == "gate" && (d.Source != "project" || d.Path == "") {
			t.Errorf("gate entry = %+v", d)
		}
	}
	f.ok(ToolStart, stamp("s1", "name", "gate"), nil)
	f.ok(ToolListWorkflows, stamp("s1"), &lv)
	if lv.Active == nil || *lv.Active != "gate" {
		t.Errorf("active = %v, want gate", lv.Active)
	}
}

// TestCallsReadTheStore checks the server keeps no run state: a change
// made by another process (here, the runtime directly) shows in the next call.
func TestCallsReadTheStore(t *testing.T) {
	f := newFixture(t, Options{})
	const key = "claude-code:s1"
	f.ok(ToolStart, stamp("s1", "name", "bugfix"), nil)
	if _, err := f.rt.Transition(t.Context(), key, "LOCALIZED", nil, runtime.Actor{Kind: runtime.ActorAgent, Channel: "hook:claude-code"}); err != nil {
		t.Fatal(err)
	}
	var sv control.StateView
	f.ok(ToolGetState, stamp("s1"), &sv)
	if sv.State != "planning" {
		t.Errorf("state = %s, want planning", sv.State)
	}
}

func TestResolveSession(t *testing.T) {
	tests := []struct {
		stamp, env string
		trust      bool
		want       string
		src        Source
		err        error
	}{
		{"abc", "", false, "h:abc", SourceStamp, nil},
		{"abc", "env", true, "h:abc", SourceStamp, nil},
		{"", "env", true, "h:env", SourceEnv, nil},
		{"", "env", false, "", "", ErrNoSession},
		{"", "", true, "", "", ErrNoSession},
		{"a:b", "", false, "", "", ErrBadSession},
		{"", "../x", true, "", "", ErrBadSession},
		{strings.Repeat("a", 129), "", false, "", "", ErrBadSession},
		{"0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", "", false, "h:0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", SourceStamp, nil},
	}
	for _, tt := range tests {
		got, src, err := resolveSession("h", tt.stamp, tt.trust, tt.env)
		if got != tt.want || src != tt.src || !errors.Is(err, tt.err) {
			t.Errorf("resolveSession(%q, trust=%v, %q) = %q, %q, %v; want %q, %q, %v", tt.stamp, tt.trust, tt.env, got, src, err, tt.want, tt.src, tt.err)
		}
	}
}

// TestRunOverIOTransport runs the server over a pipe pair, as the stdio
// transport does, to check Run wiring.
func TestRunOverIOTransport(t *testing.T) {
	f := newFixture(t, Options{})
	srv, err := New(f.rt, f.st, Options{ProjectDir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, &mcp.IOTransport{Reader: sr, Writer: sw}) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "pipe", Version: "0"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolStart, Arguments: stamp("p1", "name", "bugfix")})
	if err != nil || res.IsError {
		t.Fatalf("start over pipes: %v %+v", err, res)
	}
	cs.Close()
	cancel()
	<-done
	if f.live("claude-code:p1") == nil {
		t.Error("no run for p1")
	}
}

func TestRefusalsOnTheWay(t *testing.T) {
	f := newFixture(t, Options{})
	const key = "claude-code:s1"
	f.ok(ToolStart, stamp("s1", "name", "bugfix"), nil)
	for _, ev := range []string{"LOCALIZED", "PLAN_READY", "IMPLEMENTED"} {
		f.ok(ToolTransition, stamp("s1", "event", ev), nil)
	}

	// A guard the agent cannot satisfy with its own data.
	msg := f.fail(ToolTransition, stamp("s1", "event", "TESTS_PASS", "data", map[string]any{"tests_passed": true}))
	for _, w := range []string{"transition refused", "tests_passed", "Valid events from 'testing'", "TESTS_FAIL → implementing", "TESTS_PASS → done (guarded)"} {
		if !strings.Contains(msg, w) {
			t.Errorf("guard message %q does not contain %q", msg, w)
		}
	}
	if r := f.live(key); r.State != "testing" {
		t.Errorf("guarded transition moved the run to %s", r.State)
	}

	// Arguments outside the schema are refused before the handler runs.
	if msg := f.fail(ToolLoadWorkflow, stamp("s1", "name", "bugfix", "resume", true)); !strings.Contains(msg, "resume") {
		t.Errorf("unknown argument: %q", msg)
	}

	// A paused run does not move.
	if err := f.rt.Pause(t.Context(), key, runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli"}); err != nil {
		t.Fatal(err)
	}
	msg = f.fail(ToolTransition, stamp("s1", "event", "TESTS_FAIL"))
	if !strings.Contains(msg, "paused by a human") || !strings.Contains(msg, "statewright resume "+key) {
		t.Errorf("paused: %q", msg)
	}
	var sv control.StateView
	f.ok(ToolGetState, stamp("s1"), &sv)
	if sv.Status != store.StatusPaused || sv.State != "testing" {
		t.Errorf("get_state of a paused run = %+v", sv)
	}

	// An unknown tool is a protocol error, not a tool error.
	if _, err := f.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "statewright_approve", Arguments: stamp("s1")}); err == nil {
		t.Error("calling an unknown tool succeeded")
	}
}

func TestCheckDenies(t *testing.T) {
	broken := errors.New("store replaced")
	f := newFixture(t, Options{Check: func(context.Context) error { return broken }})
	for tool, args := range map[string]map[string]any{ToolStart: stamp("s1", "name", "bugfix"), ToolGetState: stamp("s1"), ToolPause: stamp("s1")} {
		msg := f.fail(tool, args)
		if !strings.Contains(msg, "cannot trust its store") || !strings.Contains(msg, "store replaced") {
			t.Errorf("%s: %q", tool, msg)
		}
	}
	if runs, err := f.st.Runs(t.Context(), store.RunFilter{}); err != nil || len(runs) != 0 {
		t.Errorf("runs = %v, %v; want none", runs, err)
	}
}

func TestInterruptHandlerView(t *testing.T) {
	f := newFixture(t, Options{})
	const key = "claude-code:s1"
	f.ok(ToolStart, stamp("s1", "name", "gate"), nil)
	f.ok(ToolTransition, stamp("s1", "event", "UNLOCK"), nil)
	// The runtime fires the interrupt (as after an edit of .env).
	if _, err := f.rt.Transition(t.Context(), key, "INTERRUPT:env_edit", nil, runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}); err != nil {
		t.Fatal(err)
	}
	var sv control.StateView
	f.ok(ToolGetState, stamp("s1"), &sv)
	if sv.State != "env_check" || sv.InterruptHandler == nil || sv.InterruptHandler.Interrupt != "env_edit" || sv.InterruptHandler.ReturnState != "open" {
		t.Fatalf("get_state in the handler = %+v (handler %+v)", sv, sv.InterruptHandler)
	}
	var tr control.TransitionView
	f.ok(ToolTransition, stamp("s1", "event", "CHECKED"), &tr)
	if tr.To != "open" || f.live(key).State != "open" {
		t.Errorf("CHECKED = %+v", tr)
	}
	var back control.StateView
	f.ok(ToolGetState, stamp("s1"), &back)
	if back.State != "open" || back.InterruptHandler != nil {
		t.Errorf("after the return: state %s, handler %+v", back.State, back.InterruptHandler)
	}
}

// statewright_start of a workflow with a tool name no harness knows
// starts the run and returns the warning, with its did-you-mean, in the
// result and in the message the agent reads.
func TestStartReturnsWorkflowWarnings(t *testing.T) {
	f := newFixture(t, Options{})
	raed := `{"id": "raed", "initial": "a", "states": {
  "a": {"allowed_tools": ["Raed", "Grep"], "on": {"GO": "done"}},
  "done": {"type": "final"}}}`
	if err := os.WriteFile(filepath.Join(f.dir, ".statewright", "workflows", "raed.json"), []byte(raed), 0o644); err != nil {
		t.Fatal(err)
	}
	var sv control.StartView
	f.ok(ToolStart, stamp("s1", "name", "raed"), &sv)
	if len(sv.Warnings) != 1 || !strings.Contains(sv.Warnings[0], `did you mean "Read"?`) {
		t.Fatalf("start warnings = %q, want the unknown-tool warning", sv.Warnings)
	}
	if !strings.Contains(sv.Message, "warnings (tell the user)") || !strings.Contains(sv.Message, "Raed") {
		t.Errorf("start message %q does not name the warning", sv.Message)
	}
	if r := f.live("claude-code:s1"); r == nil || r.State != "a" {
		t.Errorf("the run did not start: %+v", r)
	}
	var plain control.StartView
	f.ok(ToolStart, stamp("s2", "name", "gate"), &plain)
	if len(plain.Warnings) != 0 || strings.Contains(plain.Message, "warnings") {
		t.Errorf("a clean workflow starts with warnings: %+v", plain)
	}
}
