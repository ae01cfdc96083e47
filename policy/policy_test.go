package policy

import (
	"encoding/json"
	"flag"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/workflow"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

// loadLaw parses a workflow from testdata and compiles it.
func loadLaw(t testing.TB, rel string, opts Options) *Law {
	t.Helper()
	if name, ok := strings.CutPrefix(rel, "template:"); ok {
		def, err := workflow.LoadTemplate(name)
		if err != nil {
			t.Fatalf("template %s: %v", name, err)
		}
		l, err := Compile(def, opts)
		if err != nil {
			t.Fatalf("compile template %s: %v", name, err)
		}
		return l
	}
	data, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return compileSource(t, data, rel, opts)
}

// compileSource parses and compiles a workflow's text, named source.
func compileSource(t testing.TB, data []byte, source string, opts Options) *Law {
	t.Helper()
	def, _, err := workflow.Parse(data, workflow.ParseOptions{Source: source})
	if err != nil {
		t.Fatalf("parse %s: %v", source, err)
	}
	l, err := Compile(def, opts)
	if err != nil {
		t.Fatalf("compile %s: %v", source, err)
	}
	return l
}

// corpusOptions are the runtime-supplied protected paths the corpus assumes.
var corpusOptions = Options{ProtectedPaths: []string{"/home/u/.local/share/statewright/state.db", "/repo/workflows/dev.yaml", "/usr/local/bin/statewright"}}

// corpus yields every case file in testdata/corpus, parsed, by name.
func corpus(t *testing.T) iter.Seq2[string, *CaseFile] {
	files, err := filepath.Glob("testdata/corpus/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	return func(yield func(string, *CaseFile) bool) {
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := ParseCases(data)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if !yield(f, cf) {
				return
			}
		}
	}
}

// TestCorpus runs every case file in testdata/corpus against its workflow.
func TestCorpus(t *testing.T) {
	total := 0
	for f, cf := range corpus(t) {
		law := loadLaw(t, cf.Workflow, corpusOptions)
		base := strings.TrimSuffix(filepath.Base(f), ".yaml")
		for i := range cf.Cases {
			c := &cf.Cases[i]
			total++
			t.Run(base+"/"+c.Name, func(t *testing.T) {
				if _, bad := law.RunCase(c); len(bad) > 0 {
					t.Errorf("%s:%d: %s", f, c.Line, strings.Join(bad, "; "))
				}
			})
		}
	}
	if total < 100 {
		t.Errorf("corpus has %d cases, want at least 100", total)
	}
}

// TestGoldenReasons pins the wording of representative deny messages.
func TestGoldenReasons(t *testing.T) {
	law := loadLaw(t, "workflows/dev.yaml", corpusOptions)
	cases := []struct {
		name  string
		state string
		run   *RunState
		call  ToolCall
	}{
		{"tool-not-allowed", "planning", nil, ToolCall{Tool: "Edit", Input: json.RawMessage(`{"file_path":"src/a.go","old_string":"a","new_string":"b"}`)}},
		{"disallowed-tool", "implementing", nil, ToolCall{Tool: "WebFetch", Input: json.RawMessage(`{"url":"https://example.com"}`)}},
		{"approval-suggestion", "review", nil, ToolCall{Tool: "WebSearch", Input: json.RawMessage(`{"query":"x"}`)}},
		{"final-state", "done", nil, ToolCall{Tool: "Read", Input: json.RawMessage(`{"file_path":"a"}`)}},
		{"max-iterations", "planning", &RunState{Active: true, State: "planning", Iterations: 5}, ToolCall{Tool: "Read", Input: json.RawMessage(`{"file_path":"a"}`)}},
		{"max-edit-lines", "implementing", nil, ToolCall{Tool: "Write", Input: json.RawMessage(`{"file_path":"src/big.go","content":"` + strings.Repeat(`x\n`, 30) + `"}`)}},
		{"max-files", "implementing", &RunState{Active: true, State: "implementing", FilesEdited: []string{"src/a.go", "src/b.go", "src/c.go"}}, ToolCall{Tool: "Edit", Input: json.RawMessage(`{"file_path":"src/d.go","old_string":"a","new_string":"b"}`)}},
		{"path-scope", "implementing", nil, ToolCall{Tool: "Edit", Input: json.RawMessage(`{"file_path":"src/secrets/key.go","old_string":"a","new_string":"b"}`)}},
		{"self-protect-edit", "implementing", nil, ToolCall{Tool: "Edit", Input: json.RawMessage(`{"file_path":".claude/settings.json","old_string":"a","new_string":"b"}`)}},
		{"control-human-only", "implementing", nil, ToolCall{Tool: "mcp__statewright__statewright_deactivate", Input: json.RawMessage(`{}`)}},
		{"approval-pending", "review", &RunState{Active: true, State: "review", PendingApproval: &Approval{ID: "ap-1", To: "publishing"}}, ToolCall{Tool: "mcp__statewright__statewright_transition", Input: json.RawMessage(`{"event":"PUBLISH"}`)}},
		{"no-workflow", "", &RunState{}, ToolCall{Tool: "Read", Input: json.RawMessage(`{"file_path":"a"}`)}},
	}
	strict := loadLaw(t, "workflows/dev.yaml", Options{RequireWorkflow: true})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := c.run
			if run == nil {
				run = &RunState{Active: true, State: c.state}
			}
			l := law
			if c.name == "no-workflow" {
				l = strict
			}
			d := l.Decide(run, &c.call)
			if d.Verdict == Allow {
				t.Fatalf("allowed: %+v", d)
			}
			if string(d.Rule) != strings.TrimSuffix(c.name, "-suggestion") && !strings.HasPrefix(c.name, string(d.Rule)) && c.name != "approval-suggestion" {
				t.Errorf("rule %s, want %s", d.Rule, c.name)
			}
			golden(t, c.name, d.Reason+"\n")
		})
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("golden %s differs:\n got: %q\nwant: %q", p, got, want)
	}
}

// TestHarnessAliases checks every harness's table maps its raw names to the
// canonical tool a Claude-style workflow lists.
func TestHarnessAliases(t *testing.T) {
	tests := []struct {
		h         Harness
		raw, want string
		k         kind
	}{
		{ClaudeCode, "Read", "Read", kRead}, {ClaudeCode, "Bash", "Bash", kBash}, {ClaudeCode, "MultiEdit", "MultiEdit", kMultiEdit},
		{ClaudeCode, "NotebookEdit", "NotebookEdit", kNotebookEdit}, {ClaudeCode, "TodoWrite", "TodoWrite", kMeta},
		{ClaudeCode, "Task", "Task", kTask}, {ClaudeCode, "mcp__statewright__statewright_transition", "transition", kControl},
		{ClaudeCode, "mcp__statewright__get_state", "get_state", kControl},
		{ClaudeCode, "mcp__evil_statewright__transition", "mcp__evil_statewright__transition", kOther},
		{ClaudeCode, "mcp__statewrightx__transition", "mcp__statewrightx__transition", kOther},
		{ClaudeCode, "statewright_transition", "statewright_transition", kOther},
		{Codex, "shell", "Bash", kBash}, {Codex, "exec_command", "Bash", kBash}, {Codex, "local_shell", "Bash", kBash},
		{Codex, "Bash", "Bash", kBash}, {Codex, "apply_patch", "Edit", kApplyPatch}, {Codex, "write_stdin", "Bash", kWriteStdin},
		{Codex, "update_plan", "update_plan", kMeta}, {Codex, "read_file", "Read", kRead},
		{Codex, "shell_command", "Bash", kBash}, {Codex, "view_image", "Read", kRead}, {Codex, "get_goal", "get_goal", kMeta},
		{Codex, "request_user_input", "request_user_input", kMeta}, {Codex, "wait_agent", "Task", kTask},
		{Codex, "mcp__statewright__statewright_transition", "transition", kControl},
		{Codex, "mcp__other__statewright_transition", "mcp__other__statewright_transition", kOther},
		{Cursor, "Shell", "Bash", kBash}, {Cursor, "StrReplace", "Edit", kEdit}, {Cursor, "Delete", "Edit", kDelete},
		{Cursor, "ReadFile", "Read", kRead}, {Cursor, "SearchCodebase", "Grep", kGrep},
		{OpenCode, "bash", "Bash", kBash}, {OpenCode, "edit", "Edit", kEdit}, {OpenCode, "patch", "Edit", kApplyPatch},
		{OpenCode, "todowrite", "todowrite", kMeta}, {OpenCode, "statewright_transition", "transition", kControl},
		{OpenCode, "statewright_statewright_transition", "transition", kControl},
		{Pi, "bash", "Bash", kBash}, {Pi, "find", "Glob", kGlob}, {Pi, "ls", "LS", kLS}, {Pi, "write", "Write", kWrite},
		{Pi, "statewright_get_state", "get_state", kControl},
	}
	for _, tt := range tests {
		got := lookupTool(tt.h, tt.raw)
		if got.canon != tt.want || got.kind != tt.k {
			t.Errorf("%s %s: got (%s, %d), want (%s, %d)", tt.h, tt.raw, got.canon, got.kind, tt.want, tt.k)
		}
	}
}

func TestChangedLines(t *testing.T) {
	tests := []struct {
		old, new string
		want     int
	}{
		{"", "", 0}, {"a", "a", 0}, {"a", "b", 1}, {"a\nb", "a\nb\nc", 1}, {"", "x\ny\nz\n", 3},
		{"a\nb\nc\n", "", 3}, {"a\nb\nc", "a\nX\nc", 1}, {"a\r\nb\r\n", "a\nb\n", 0},
		{"1\n2\n3\n4\n5", "1\n5", 3}, {"", "x", 1}, {"x", "", 1}, {"a\rb", "a\rc", 1}, {"a\n", "a", 0},
		{strings.Repeat("x", 200), strings.Repeat("x", 199) + "y", 1},
	}
	for _, tt := range tests {
		if got := changedLines(tt.old, tt.new); got != tt.want {
			t.Errorf("changedLines(%q, %q) = %d, want %d", tt.old, tt.new, got, tt.want)
		}
	}
}

func TestParsePatch(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		files []string
		lines int
	}{
		{"codex update", "*** Begin Patch\n*** Update File: src/a.go\n@@ func x\n-a\n-b\n+c\n ctx\n*** End Patch\n", []string{"src/a.go"}, 2},
		{"codex add and delete", "*** Begin Patch\n*** Add File: n.txt\n+1\n+2\n+3\n*** Delete File: old.txt\n*** End Patch", []string{"n.txt", "old.txt"}, 3},
		{"codex move", "*** Begin Patch\n*** Update File: a.go\n*** Move to: b.go\n@@\n-x\n+y\n*** End Patch", []string{"a.go", "b.go"}, 1},
		{"unified", "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n-a\n+b\n@@ -9 +9,3 @@\n+c\n+d\n", []string{"x.go"}, 3},
		{"unified new file", "--- /dev/null\n+++ b/new.go\n@@ -0,0 +1 @@\n+x\n", []string{"new.go"}, 1},
		{"unified deleted file", "--- a/gone.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", []string{"gone.go"}, 1},
	}
	for _, tt := range tests {
		files, lines := parsePatch(tt.patch)
		if strings.Join(files, ",") != strings.Join(tt.files, ",") || lines != tt.lines {
			t.Errorf("%s: got %v %d, want %v %d", tt.name, files, lines, tt.files, tt.lines)
		}
	}
}

func TestTokenizeEntry(t *testing.T) {
	tests := []struct {
		in   string
		want string // words joined by "|", or "ERR"
	}{
		{"pytest", "pytest"}, {"go test", "go|test"}, {"  npm   test ", "npm|test"},
		{"node --test 'tests/smoke test.mjs'", "node|--test|tests/smoke test.mjs"},
		{"PYTHONPATH=. pytest", "PYTHONPATH=.|pytest"},
		{"", "ERR"}, {"pytest; rm", "ERR"}, {"a | b", "ERR"}, {"x $(y)", "ERR"}, {"'open", "ERR"},
	}
	for _, tt := range tests {
		toks, err := tokenizeEntry(tt.in)
		got := strings.Join(toks, "|")
		if err != nil {
			got = "ERR"
		}
		if got != tt.want {
			t.Errorf("tokenizeEntry(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestProtectedPaths(t *testing.T) {
	law := loadLaw(t, "workflows/dev.yaml", corpusOptions)
	tests := []struct {
		path string
		want bool
	}{
		{"/repo/.statewright/state.db", true}, {".statewright", true}, {"/home/u/.claude/settings.json", true},
		{"/repo/.claude/settings.local.json", true}, {"/repo/.CLAUDE/Settings.json", true}, {"/repo/.mcp.json", true},
		{"/home/u/.codex/config.toml", true}, {"/repo/.cursor/hooks.json", true}, {"/repo/.opencode/plugins/x.ts", true},
		{"/home/u/.pi/agent/settings.json", true}, {"/home/u/.bashrc", true}, {"~/.zshrc", true},
		{"/repo/.git/config", true}, {"/repo/.git/hooks/pre-commit", true}, {"/repo/.git/hooks", true},
		{"/home/u/.local/share/statewright/state.db", true}, {"/repo/workflows/dev.yaml", true},
		{"/usr/local/bin/statewright", true},
		{"/repo/.claude/agents/x.md", true}, {"/repo/.claude", true}, {"/home/u/.gitconfig", true},
		{"/home/u/.config/git/config", true}, {"/repo/.git/modules/sub/config", true}, {"/repo/.cursor/rules/a.mdc", true},
		{"/repo/src/main.go", false}, {"/repo/.git/HEAD", false}, {"/repo/.claudeignore", false},
		{"/repo/docs/bashrc.md", false}, {"/repo/.gitignore", false},
	}
	for _, tt := range tests {
		if got := law.isProtected(tt.path); got != tt.want {
			t.Errorf("isProtected(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestVerdictJSON(t *testing.T) {
	for _, v := range []Verdict{Allow, Deny, Ask} {
		b, _ := json.Marshal(v)
		var back Verdict
		if err := json.Unmarshal(b, &back); err != nil || back != v {
			t.Errorf("round trip %v: %s %v %v", v, b, back, err)
		}
	}
	if _, err := ParseVerdict("maybe"); err == nil {
		t.Error("ParseVerdict(maybe) succeeded")
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tt := range []struct{ name, yaml string }{
		{"bad allowed_paths", "id: x\ninitial: a\nstates:\n  a:\n    allowed_paths: ['src/[']\n"},
		{"empty allowed_commands entry", "id: x\ninitial: a\nstates:\n  a:\n    allowed_commands: ['']\n"},
		{"operator in allowed_commands", "id: x\ninitial: a\nstates:\n  a:\n    allowed_commands: ['pytest; rm -rf /']\n"},
	} {
		def, _, err := workflow.Parse([]byte(tt.yaml), workflow.ParseOptions{})
		if err != nil {
			t.Fatalf("%s: parse: %v", tt.name, err)
		}
		if _, err := Compile(def, Options{}); err == nil {
			t.Errorf("%s: Compile succeeded", tt.name)
		}
	}
}

// TestDocsListEveryRule keeps docs/policy.md's rule table complete.
func TestDocsListEveryRule(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "policy.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range AllRules {
		if !strings.Contains(string(doc), "| `"+string(r)+"` |") {
			t.Errorf("docs/policy.md does not list rule %s", r)
		}
	}
	for _, h := range Harnesses {
		if !strings.Contains(string(doc), "### "+string(h)+"\n") {
			t.Errorf("docs/policy.md has no alias table for %s", h)
		}
	}
}

func TestRawString(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{`{"file_path":"/repo/src/main.go"}`, "/repo/src/main.go", true},
		{` { "limit": 3, "file_path" : "/a" } `, "/a", true},
		{`{"x":{"file_path":"/nested"},"path":"/top"}`, "/top", true},
		{`{"x":["file_path","/no"],"file_path":"/yes"}`, "/yes", true},
		{`{"note":"a\"b","file_path":"/after-escape"}`, "/after-escape", true},
		{`{"path":"/second","file_path":"/second"}`, "/second", true},
		// Two of the keys with different values: the caller decodes (a
		// harness's tool reads one of them, the checks must see both).
		{`{"path":"/second","file_path":"/first"}`, "", false},
		{`{"file_path":"/x/\u006fperator-token"}`, "", false},
		{`{"file_path":3}`, "", false},
		{`{}`, "", false},
		{`[1]`, "", false},
		{`{"file_path":"/unterminated}`, "", false},
	} {
		got, ok := rawString([]byte(tt.in), "file_path", "path")
		if got != tt.want || ok != tt.ok {
			t.Errorf("rawString(%s) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestDecideFailsClosed: a nil call or a broken definition denies instead of
// panicking.
func TestDecideFailsClosed(t *testing.T) {
	law := loadLaw(t, "workflows/dev.yaml", corpusOptions)
	d := law.Decide(&RunState{Active: true, State: "planning"}, nil)
	if d.Verdict != Deny || d.Rule != RuleInternal {
		t.Errorf("nil call: %v %s", d.Verdict, d.Rule)
	}
	broken := &workflow.Definition{ID: "b", Initial: "a", States: map[string]*workflow.State{
		"a": {AllowedTools: []string{"Read"}, On: map[string]*workflow.Transition{"GO": {Kind: workflow.TransitionFork}}},
	}}
	bl := MustCompile(broken, Options{})
	d = bl.Decide(&RunState{Active: true, State: "a"}, &ToolCall{Tool: "Edit", Input: json.RawMessage(`{"file_path":"a","old_string":"x","new_string":"y"}`)})
	if d.Verdict != Deny {
		t.Errorf("broken definition: %v %s", d.Verdict, d.Rule)
	}
}
