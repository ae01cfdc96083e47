package cursor

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store/sqlite"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const contractWorkflow = `{"id":"cursor-contract","initial":"planning","states":{
 "planning":{"allowed_tools":["Read","Grep","Bash"],"on":{"PLANNED":"coding"}},
 "coding":{"allowed_tools":["Read","Edit","Write","Bash"],"on":{"DONE":"done"}},
 "done":{"type":"final"}}}`

func render(a harness.Answer) string {
	return fmt.Sprintf("exit %d\n-- stdout --\n%s-- stderr --\n%s", a.Exit, a.Stdout, a.Stderr)
}

// checkCursorOutput enforces the documented output rules: exit 0 or 2
// only; stdout one JSON object; a deny exits 2 with permission deny; a gate
// always names a permission.
func checkCursorOutput(t *testing.T, name string, event Event, a harness.Answer) {
	t.Helper()
	if a.Exit != ExitOK && a.Exit != ExitBlock {
		t.Errorf("%s: exit %d is a hook failure", name, a.Exit)
	}
	var o map[string]any
	if err := json.Unmarshal(a.Stdout, &o); err != nil {
		t.Fatalf("%s: stdout %q is not a JSON object: %v", name, a.Stdout, err)
	}
	perm, _ := o["permission"].(string)
	if event.Gate() {
		switch {
		case perm != "allow" && perm != "deny" && perm != "ask":
			t.Errorf("%s: gate answered permission %q", name, perm)
		case (perm == "deny") != (a.Exit == ExitBlock):
			t.Errorf("%s: permission %q with exit %d", name, perm, a.Exit)
		case event == BeforeReadFile && len(o) != 1:
			t.Errorf("%s: beforeReadFile documents only permission: %s", name, a.Stdout)
		}
	} else if perm != "" || a.Exit != ExitOK {
		t.Errorf("%s: %s answered a permission or blocked: %s", name, event, render(a))
	}
}

// TestContractGolden runs every documented payload through Decode and
// Respond against a real runtime and store, and compares the answers with
// the golden files.
func TestContractGolden(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	wf := filepath.Join(dir, "wf.json")
	if err := os.WriteFile(wf, []byte(contractWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := runtime.New(st, runtime.Options{ProjectDir: "/repo"})
	if _, err := svc.Start(ctx, SessionKey("conv-1"), wf, runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}); err != nil {
		t.Fatal(err)
	}
	hook := &harness.Hook{Open: func(context.Context, string, ...string) (*runtime.Service, error) { return svc, nil }}
	ar, err := txtar.ParseFile(filepath.Join("testdata", "contract.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(ar.Files, func(i, j int) bool { return ar.Files[i].Name < ar.Files[j].Name })
	seen := map[Event]bool{}
	for _, f := range ar.Files {
		evName, _, _ := strings.Cut(f.Name, "/")
		event, err := ParseEvent(evName)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		seen[event] = true
		if _, err := Decode(event, f.Data); err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrWrongEvent) {
			t.Errorf("%s: error %v wraps neither ErrMalformed nor ErrWrongEvent", f.Name, err)
		}
		// Through the adapter's contract, as the hook runner calls it.
		a := Adapter.Respond(ctx, hook, event.Arg(), f.Data)
		name := strings.TrimSuffix(strings.ReplaceAll(f.Name, "/", "_"), ".json")
		checkCursorOutput(t, name, event, a)
		got := render(a)
		path := filepath.Join("testdata", "golden", name+".txt")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if got != string(want) {
			t.Errorf("%s:\n got:\n%s\nwant:\n%s", path, got, want)
		}
		// The names say what must happen.
		switch {
		case strings.HasSuffix(name, "_denied") || strings.Contains(name, "malformed") && event.Gate() ||
			strings.HasSuffix(name, "wrong_event") || strings.HasSuffix(name, "no_conversation") ||
			strings.HasSuffix(name, "tool_input_array") || strings.HasSuffix(name, "no_command") ||
			strings.HasSuffix(name, "bad_tool_input") || strings.HasSuffix(name, "no_path"):
			if a.Exit != ExitBlock {
				t.Errorf("%s: want a deny (exit 2), got %s", name, render(a))
			}
		case strings.HasSuffix(name, "_allowed") || strings.HasSuffix(name, "_deferred"):
			if a.Exit != ExitOK || !strings.Contains(string(a.Stdout), `"permission":"allow"`) {
				t.Errorf("%s: want an allow, got %s", name, render(a))
			}
		}
	}
	for _, e := range Events {
		if !seen[e] {
			t.Errorf("no payload for event %s", e)
		}
	}
	// Every gate decision is in the store's history, under the
	// conversation's session.
	evs, err := svc.History(ctx, SessionKey("conv-1"))
	if err != nil {
		t.Fatal(err)
	}
	decided := map[string]string{}
	for _, e := range evs {
		if e.ToolUseID != "" && e.Decision != "" {
			decided[e.ToolUseID] = e.Decision
		}
	}
	for id, want := range map[string]string{"tool_write_1": "deny", "tool_read_1": "allow", "tool_shell_2": "deny", "tool_ctl_1": "deny"} {
		if decided[id] != want {
			t.Errorf("history: %s = %q, want %q (all %v)", id, decided[id], want, decided)
		}
	}
}

func TestToolCallNames(t *testing.T) {
	for _, tt := range []struct {
		event Event
		in    Input
		tool  string
		ok    bool
	}{
		{PreToolUse, Input{ToolName: "Shell", ToolInput: json.RawMessage(`{"command":"ls"}`)}, "Shell", true},
		{PreToolUse, Input{ToolName: "MCP:github:create_issue", ToolInput: json.RawMessage(`{}`)}, "mcp__github__create_issue", true},
		{PreToolUse, Input{ToolName: "MCP:create_issue", ToolInput: json.RawMessage(`{}`)}, "", false},
		{BeforeMCPExecution, Input{ToolName: "q", ToolInput: json.RawMessage(`{}`), URL: "http://x"}, "mcp__unknown__q", true},
		{BeforeMCPExecution, Input{ToolName: "statewright_transition", ToolInput: json.RawMessage(`{}`), Command: "'/a b/statewright' mcp --store x"}, "mcp__unknown__statewright_transition", true},
		{BeforeMCPExecution, Input{ToolName: "statewright_transition", ToolInput: json.RawMessage(`{}`), Command: "/opt/bin/statewright mcp --store x"}, "mcp__statewright__statewright_transition", true},
		{BeforeMCPExecution, Input{ToolName: "statewright_transition", ToolInput: json.RawMessage(`{}`), Command: "/opt/bin/evil-statewright mcp"}, "mcp__unknown__statewright_transition", true},
		{BeforeShellExecution, Input{Command: "ls"}, "Shell", true},
		{BeforeReadFile, Input{FilePath: "/r/a"}, "Read", true},
		{Stop, Input{}, "", false},
	} {
		in := tt.in
		in.ConversationID = "c"
		tc, ok := ToolCall(tt.event, &in)
		if ok != tt.ok || ok && (tc.Call.Tool != tt.tool || tc.Session != "cursor:c" || tc.Call.Harness != policy.Cursor || tc.Call.ToolUseID == "") {
			t.Errorf("%s %+v: ToolCall = %+v, %v; want %q, %v", tt.event, tt.in, tc, ok, tt.tool, tt.ok)
		}
	}
	// Derived ids differ between calls and repeat for the same call.
	a := &Input{ConversationID: "c", GenerationID: "g"}
	if CallID(BeforeShellExecution, a, "Shell", []byte(`{"command":"a"}`)) == CallID(BeforeShellExecution, a, "Shell", []byte(`{"command":"b"}`)) ||
		CallID(BeforeShellExecution, a, "Shell", []byte(`{"command":"a"}`)) != CallID(BeforeShellExecution, a, "Shell", []byte(`{"command":"a"}`)) {
		t.Error("CallID is not a function of the call")
	}
}

// FuzzDecode checks that Decode never panics, that whatever it accepts
// satisfies the invariants the hook relies on, and that every answer keeps
// Cursor's documented output rules.
func FuzzDecode(f *testing.F) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "contract.txtar"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range ar.Files {
		ev, _, _ := strings.Cut(file.Name, "/")
		for i, e := range Events {
			if string(e) == ev {
				f.Add(uint8(i), file.Data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, ev uint8, data []byte) {
		event := Events[int(ev)%len(Events)]
		in, err := Decode(event, data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrWrongEvent) {
				t.Fatalf("error %v wraps neither ErrMalformed nor ErrWrongEvent", err)
			}
			checkCursorOutput(t, "failure", event, Failure(event, err.Error()))
			return
		}
		if decoding.ID("conversation_id", in.ConversationID) != nil {
			t.Fatalf("accepted bad conversation id %q", in.ConversationID)
		}
		if tc, ok := ToolCall(event, in); ok {
			var m map[string]any
			if json.Unmarshal(tc.Call.Input, &m) != nil || m == nil {
				t.Fatalf("tool input %s is not an object", tc.Call.Input)
			}
			if tc.Session != SessionKey(in.ConversationID) || tc.Call.ToolUseID == "" {
				t.Fatalf("ToolCall lost the identity: %+v", tc)
			}
		}
		if event.Gate() {
			for _, v := range []policy.Verdict{policy.Allow, policy.Deny, policy.Ask} {
				checkCursorOutput(t, "gate", event, GateAnswer(event, runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: v, Reason: "r"}}))
			}
		}
	})
}

// TestRequireSandboxDeniesShell: Cursor's hooks cannot rewrite a command,
// so with --require-sandbox every shell call is denied (exit 2), while
// other tools are decided as usual.
func TestRequireSandboxDeniesShell(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := runtime.New(st, runtime.Options{ProjectDir: "/repo"})
	hook := &harness.Hook{Open: func(context.Context, string, ...string) (*runtime.Service, error) { return svc, nil }}
	hook.RequireSandbox = true
	shell := []byte(`{"conversation_id":"conv-1","generation_id":"g","hook_event_name":"beforeShellExecution","command":"ls","cwd":"/repo","workspace_roots":["/repo"]}`)
	a := Adapter.Respond(ctx, hook, BeforeShellExecution.Arg(), shell)
	if a.Exit != 2 || !strings.Contains(string(a.Stdout)+a.Stderr, "--require-sandbox") {
		t.Errorf("shell under --require-sandbox: exit %d %s %s", a.Exit, a.Stdout, a.Stderr)
	}
	hook.RequireSandbox = false
	if a := Adapter.Respond(ctx, hook, BeforeShellExecution.Arg(), shell); a.Exit != 0 {
		t.Errorf("shell without --require-sandbox (dormant): exit %d %s %s", a.Exit, a.Stdout, a.Stderr)
	}
}
