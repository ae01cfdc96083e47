package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSpellingsAgree: an edit's input that gives its file, its content or
// its old or new text under two of the spellings the law reads, with
// different values, is denied. Each harness's tool reads one spelling
// (Claude Code's file_path, opencode's filePath and oldString, Pi's path),
// the law the first it finds: {"file_path":"src/ok.go","filePath":
// ".claude/settings.json"} was decided as a Write of src/ok.go, which
// opencode's write tool would not have written. The same value under two
// spellings is one reading, and allowed.
func TestSpellingsAgree(t *testing.T) {
	law := loadLaw(t, "workflows/dev.yaml", corpusOptions)
	run := &RunState{Active: true, State: "implementing"}
	many := strings.Repeat("line\n", 30)
	big := strings.Repeat("x", 2000) // read lazily (lazyMin)
	in := func(m map[string]any) string {
		b, _ := json.Marshal(m)
		return string(b)
	}
	for _, c := range []struct {
		name, h, tool, in string
		allow             bool
	}{
		{"file twice", "claude-code", "Write", in(map[string]any{"file_path": "/repo/src/ok.go", "filePath": "/repo/.claude/settings.json", "content": "x"}), false},
		{"file twice, opencode", "opencode", "write", in(map[string]any{"file_path": "/repo/src/ok.go", "filePath": "/repo/.claude/settings.json", "content": "x"}), false},
		{"file twice, pi", "pi", "write", in(map[string]any{"file_path": "/repo/src/ok.go", "path": "/repo/.claude/settings.json", "content": "x"}), false},
		{"file twice, large", "claude-code", "Write", in(map[string]any{"file_path": "/repo/src/ok.go", "filePath": "/repo/.claude/settings.json", "content": big}), false},
		{"file twice, edit", "opencode", "edit", in(map[string]any{"file_path": "/repo/src/ok.go", "filePath": "/repo/.claude/settings.json", "oldString": "a", "newString": "b"}), false},
		{"file twice, multiedit", "claude-code", "MultiEdit", in(map[string]any{"file_path": "/repo/src/ok.go", "filePath": "/repo/.claude/settings.json",
			"edits": []any{map[string]any{"old_string": "a", "new_string": "b"}}}), false},
		{"content twice", "opencode", "write", in(map[string]any{"filePath": "/repo/src/ok.go", "content": many, "contents": "x"}), false},
		{"content first", "claude-code", "Write", in(map[string]any{"file_path": "/repo/src/ok.go", "content": "x", "contents": many}), false},
		{"old and new twice", "opencode", "edit", in(map[string]any{"filePath": "/repo/src/ok.go", "old_string": "a", "new_string": "a",
			"oldString": "x", "newString": many}), false},
		{"notebook source twice", "claude-code", "NotebookEdit", in(map[string]any{"notebook_path": "/repo/src/n.ipynb", "new_source": "x", "content": many}), false},
		// One value under two spellings: one reading.
		{"file twice, same", "claude-code", "Write", in(map[string]any{"file_path": "/repo/src/ok.go", "filePath": "/repo/src/ok.go", "content": "x"}), true},
		{"file twice, same, escaped", "claude-code", "Write", `{"file_path":"/repo/src/ok.go","filePath":"/repo/src/\u006fk.go","content":"x"}`, true},
		{"file and a number", "claude-code", "Write", in(map[string]any{"file_path": "/repo/src/ok.go", "path": 3, "content": "x"}), true},
		{"one spelling", "opencode", "write", in(map[string]any{"filePath": "/repo/src/ok.go", "content": "x"}), true},
	} {
		for _, lazy := range []int{lazyMin, 0} {
			saved := lazyMin
			lazyMin = lazy
			d := law.Decide(run, &ToolCall{Harness: Harness(c.h), Tool: c.tool, Input: []byte(c.in), Cwd: "/repo", ProjectDir: "/repo"})
			lazyMin = saved
			if (d.Verdict == Allow) != c.allow {
				t.Errorf("%s (lazyMin %d): %s %s %.200s", c.name, lazy, d.Verdict, d.Rule, d.Reason)
			}
		}
	}
}

// TestReadSpellingsAgree: a read's input that names its file under two
// spellings with different values is denied (opencode's read reads
// filePath, the law checked file_path for secrets), and a resource read of
// a file: URI is checked as a Read of its path (Claude Code's
// ReadMcpResourceTool, the gateway's resources/read: a secret was read).
func TestReadSpellingsAgree(t *testing.T) {
	law := loadLaw(t, "workflows/dev.yaml", corpusOptions)
	run := &RunState{Active: true, State: "implementing"}
	for _, c := range []struct {
		name, h, tool, in string
		allow             bool
	}{
		{"read twice", "opencode", "read", `{"file_path":"/repo/src/ok.go","filePath":"/home/u/.ssh/id_rsa"}`, false},
		{"read twice, claude", "claude-code", "Read", `{"file_path":"/repo/src/ok.go","path":"/repo/.env"}`, false},
		{"read twice, same", "opencode", "read", `{"file_path":"/repo/src/ok.go","filePath":"/repo/src/ok.go"}`, true},
		{"read once", "opencode", "read", `{"filePath":"/repo/src/ok.go"}`, true},
		{"grep twice", "claude-code", "Grep", `{"pattern":"x","path":"/repo/src","dir_path":"/home/u/.ssh"}`, false},
		{"resource of a secret", "claude-code", "ReadMcpResourceTool", `{"server":"fs","uri":"file:///home/u/.ssh/id_rsa"}`, false},
		{"resource of .env", "claude-code", "ReadMcpResourceTool", `{"server":"fs","uri":"FILE:///repo/.env"}`, false},
		{"resource of a secret, escaped", "claude-code", "ReadMcpResourceTool", `{"server":"fs","uri":"file:///home/u/%2essh/id_rsa"}`, false},
		{"resource of a secret, host", "claude-code", "ReadMcpResourceTool", `{"server":"fs","uri":"file://localhost/home/u/.ssh/id_rsa"}`, false},
		{"fetch of a secret, escaped", "claude-code", "WebFetch", `{"url":"file:///home/u/%2essh/id_rsa","prompt":"x"}`, false},
		{"resource of a file", "claude-code", "ReadMcpResourceTool", `{"server":"fs","uri":"file:///repo/src/ok.go"}`, true},
		{"resource not a file", "claude-code", "ReadMcpResourceTool", `{"server":"fs","uri":"test://notes"}`, true},
	} {
		d := law.Decide(run, &ToolCall{Harness: Harness(c.h), Tool: c.tool, Input: []byte(c.in), Cwd: "/repo", ProjectDir: "/repo"})
		if (d.Verdict == Allow) != c.allow {
			t.Errorf("%s: %s %s %.200s", c.name, d.Verdict, d.Rule, d.Reason)
		}
	}
}

// TestPatchSpellingsAgree: a patch given under two of the keys the law
// reads a patch from (Codex's input, opencode's patchText, ...) with
// different texts is denied: the law read the first, the harness's tool
// its own.
func TestPatchSpellingsAgree(t *testing.T) {
	law := loadLaw(t, "workflows/dev.yaml", corpusOptions)
	run := &RunState{Active: true, State: "implementing"}
	ok := "*** Begin Patch\n*** Add File: src/ok.go\n+x\n*** End Patch\n"
	evil := "*** Begin Patch\n*** Add File: .claude/settings.json\n+x\n*** End Patch\n"
	for _, c := range []struct {
		name, h, tool string
		in            map[string]any
		allow         bool
	}{
		{"codex input and patchText", "codex", "apply_patch", map[string]any{"input": ok, "patchText": evil}, false},
		{"opencode patchText and patch", "opencode", "patch", map[string]any{"patch": ok, "patchText": evil}, false},
		{"input and an argv", "codex", "apply_patch", map[string]any{"input": ok, "command": []any{"apply_patch", evil}}, false},
		{"one patch twice", "codex", "apply_patch", map[string]any{"input": ok, "patchText": ok}, true},
		{"one patch", "codex", "apply_patch", map[string]any{"input": ok}, true},
	} {
		b, _ := json.Marshal(c.in)
		d := law.Decide(run, &ToolCall{Harness: Harness(c.h), Tool: c.tool, Input: b, Cwd: "/repo", ProjectDir: "/repo"})
		if (d.Verdict == Allow) != c.allow {
			t.Errorf("%s: %s %s %.200s", c.name, d.Verdict, d.Rule, d.Reason)
		}
	}
}

// TestShellSpellingsAgree: a shell call that gives its command as both
// command and cmd (Codex's exec_command reads cmd), with different
// values, is denied: the law analysed command.
func TestShellSpellingsAgree(t *testing.T) {
	law := loadLaw(t, "workflows/dev.yaml", corpusOptions)
	run := &RunState{Active: true, State: "implementing"}
	for _, c := range []struct {
		name, h, tool, in string
		allow             bool
	}{
		{"command and cmd", "codex", "exec_command", `{"command":"ls","cmd":"rm -rf /repo/.git"}`, false},
		{"argv and cmd", "codex", "exec_command", `{"command":["bash","-lc","ls"],"cmd":"rm -rf /repo/.git"}`, false},
		{"claude command and cmd", "claude-code", "Bash", `{"command":"ls","cmd":"rm -rf /repo/.git"}`, false},
		{"one command twice", "codex", "exec_command", `{"command":"ls","cmd":"ls"}`, true},
		{"cmd alone", "codex", "exec_command", `{"cmd":"ls"}`, true},
	} {
		d := law.Decide(run, &ToolCall{Harness: Harness(c.h), Tool: c.tool, Input: []byte(c.in), Cwd: "/repo", ProjectDir: "/repo"})
		if (d.Verdict == Allow) != c.allow {
			t.Errorf("%s: %s %s %.200s", c.name, d.Verdict, d.Rule, d.Reason)
		}
	}
}

// TestFetchSpellingsAgree: a fetch that names its URL as both url and
// uri, differently, names no host allowed_domains can check: the law
// checked url, a tool reading uri fetches the other.
func TestFetchSpellingsAgree(t *testing.T) {
	law := loadLaw(t, "workflows/permissions.yaml", corpusOptions)
	run := &RunState{Active: true, State: "fetching"}
	for _, c := range []struct {
		in    string
		allow bool
	}{
		{`{"url":"https://github.com/x","uri":"https://evil.example/x","prompt":"p"}`, false},
		{`{"url":"https://github.com/x","uri":"https://github.com/x","prompt":"p"}`, true},
		{`{"url":"https://github.com/x","prompt":"p"}`, true},
		{`{"url":"https://evil.example/x","prompt":"p"}`, false},
	} {
		d := law.Decide(run, &ToolCall{Tool: "WebFetch", Input: []byte(c.in), Cwd: "/repo", ProjectDir: "/repo"})
		if (d.Verdict == Allow) != c.allow {
			t.Errorf("%s: %s %s %.200s", c.in, d.Verdict, d.Rule, d.Reason)
		}
	}
	// Without allowed_domains: a file: URL under either name is a read.
	open := compileSource(t, []byte(`{"id":"o","initial":"w","states":{
 "w":{"allowed_tools":["WebFetch","Network"],"on":{"D":"d"}},"d":{"type":"final"}}}`), "o.json", corpusOptions)
	for _, c := range []struct {
		in    string
		allow bool
	}{
		{`{"url":"https://github.com/x","uri":"file:///home/u/.ssh/id_rsa","prompt":"p"}`, false},
		{`{"url":"file:///home/u/.ssh/id_rsa","prompt":"p"}`, false},
		{`{"url":"https://github.com/x","prompt":"p"}`, true},
	} {
		d := open.Decide(&RunState{Active: true, State: "w"}, &ToolCall{Tool: "WebFetch", Input: []byte(c.in), Cwd: "/repo", ProjectDir: "/repo"})
		if (d.Verdict == Allow) != c.allow {
			t.Errorf("%s: %s %s %.200s", c.in, d.Verdict, d.Rule, d.Reason)
		}
	}
}
