package policy

import (
	"strings"
	"testing"
)

// TestMCPNestedPaths: an MCP tool's path arguments are checked at any
// depth, as its server reads them: a secret or protected path inside an
// object or a list ({"paths":[...]}, {"files":[{"path":...}]}) was not
// checked, only the top-level strings, so a phase that allows the tool
// let it read ~/.ssh or write the harness's settings.
func TestMCPNestedPaths(t *testing.T) {
	law := compileSource(t, []byte(`{"id":"m","initial":"w","states":{
 "w":{"allowed_tools":["mcp__x__*"],"on":{"D":"d"}},"d":{"type":"final"}}}`), "m.json", corpusOptions)
	run := &RunState{Active: true, State: "w"}
	deep := `"/home/u/.ssh/id_rsa"`
	for i := 0; i < 40; i++ {
		deep = `{"a":[` + deep + `]}`
	}
	for _, c := range []struct {
		tool, in string
		allow    bool
	}{
		{"mcp__x__read_things", `{"path":"/home/u/.ssh/id_rsa"}`, false},
		{"mcp__x__read_things", `{"paths":["/repo/src/a.go","/home/u/.ssh/id_rsa"]}`, false},
		{"mcp__x__read_things", `{"opts":{"path":"/home/u/.ssh/id_rsa"}}`, false},
		{"mcp__x__read_things", `{"opts":` + deep + `}`, false},
		{"mcp__x__write_file", `{"path":"/repo/.claude/settings.json"}`, false},
		{"mcp__x__write_file", `{"files":[{"path":"/repo/.claude/settings.json","content":"x"}]}`, false},
		{"mcp__x__write_file", `{"files":[{"path":"/repo/src/a.go","content":"x"}]}`, true},
		{"mcp__x__read_things", `{"paths":["/repo/src/a.go"],"opts":{"n":1,"list":[true,null,"plain words"]}}`, true},
	} {
		d := law.Decide(run, &ToolCall{Tool: c.tool, Input: []byte(c.in), Cwd: "/repo", ProjectDir: "/repo"})
		if (d.Verdict == Allow) != c.allow {
			t.Errorf("%s %.80s: %s %s %.160s", c.tool, c.in, d.Verdict, d.Rule, d.Reason)
		}
		if !c.allow && d.Verdict != Allow && !strings.Contains(string(d.Rule), "self-protect") && d.Rule != RuleBadInput {
			t.Errorf("%s %.80s: denied by %s, want self-protection", c.tool, c.in, d.Rule)
		}
	}
}

// TestMCPWriteishNames: an MCP tool whose name says it changes files is
// checked against the protected trees with every string argument. The
// words were write, edit, create, move, rename, delete, remove, patch,
// put, copy, upload, save: update_file, append_file, replace_in_file,
// insert_text, mkdir, touch, chmod, truncate, overwrite, modify_file,
// symlink and apply_diff were not, and each was allowed to name the
// harness's settings.
func TestMCPWriteishNames(t *testing.T) {
	law := compileSource(t, []byte(`{"id":"m","initial":"w","states":{
 "w":{"allowed_tools":["mcp__x__*"],"on":{"D":"d"}},"d":{"type":"final"}}}`), "m.json", corpusOptions)
	run := &RunState{Active: true, State: "w"}
	for _, name := range []string{"update_file", "append_file", "replace_in_file", "insert_text", "mkdir", "make_directory", "touch", "chmod",
		"truncate", "overwrite", "modify_file", "symlink", "apply_diff", "write_file"} {
		d := law.Decide(run, &ToolCall{Tool: "mcp__x__" + name, Input: []byte(`{"path":"/repo/.claude/settings.json","text":"x"}`), Cwd: "/repo", ProjectDir: "/repo"})
		if d.Verdict == Allow {
			t.Errorf("%s of the settings: allowed", name)
		}
	}
	d := law.Decide(run, &ToolCall{Tool: "mcp__x__search", Input: []byte(`{"query":"/repo/.claude/settings.json"}`), Cwd: "/repo", ProjectDir: "/repo"})
	if d.Verdict != Allow {
		t.Errorf("a search naming the settings: %s %s", d.Verdict, d.Reason)
	}
}

// TestMCPRelativeSecrets: an MCP tool's relative path arguments are checked
// as its server reads them, against the working directory (the reference
// filesystem server, like most, resolves a relative path there). Only
// strings beginning /, ~, ./, ../ or file:// were taken for paths, so
// {"path":".env"} or {"paths":["src/../.env"]} read the project's secrets
// in a phase that allows the tool.
func TestMCPRelativeSecrets(t *testing.T) {
	law := compileSource(t, []byte(`{"id":"m","initial":"w","states":{
 "w":{"allowed_tools":["mcp__x__*"],"on":{"D":"d"}},"d":{"type":"final"}}}`), "m.json", corpusOptions)
	run := &RunState{Active: true, State: "w"}
	checkMCPCases(t, law, run, "/repo", "/repo", []mcpCase{
		{"mcp__x__read_text_file", `{"path":".env"}`, false},
		{"mcp__x__read_text_file", `{"path":"config/.env.production"}`, false},
		{"mcp__x__read_text_file", `{"path":"src/../.env"}`, false},
		{"mcp__x__read_multiple_files", `{"paths":["src/a.go",".env"]}`, false},
		{"mcp__x__read_text_file", `{"path":"certs/server.pem"}`, false},
		{"mcp__x__read_text_file", `{"opts":{"file":"src/../../home/u/.ssh/id_rsa"}}`, false},
		{"mcp__x__read_text_file", `{"path":"src/a.go"}`, true},
		{"mcp__x__read_text_file", `{"path":".env.example"}`, true},
		{"mcp__x__echo", `{"message":"hello, world","n":2}`, true},
	})
}

// TestMCPRelativeToProject: an MCP server resolves a relative path against
// its own working directory, the project (where the harness started it),
// not the harness shell's, which follows the agent's cd. From
// /home/u/proj/src, {"path":"../../.ssh/id_rsa"} read as the hook's cwd
// has it is /home/u/.ssh/id_rsa, and {"path":"../.ssh/id_rsa"} is
// /home/u/proj/.ssh/id_rsa; the server, in /home/u/proj, reads ~/.ssh for
// the second: checked against both directories, both are denied.
func TestMCPRelativeToProject(t *testing.T) {
	law := compileSource(t, []byte(`{"id":"m","initial":"w","states":{
 "w":{"allowed_tools":["mcp__x__*"],"on":{"D":"d"}},"d":{"type":"final"}}}`), "m.json",
		Options{Host: &Host{Home: "/home/u", ProjectDir: "/home/u/proj"}})
	run := &RunState{Active: true, State: "w"}
	checkMCPCases(t, law, run, "/home/u/proj/src", "/home/u/proj", []mcpCase{
		{"mcp__x__read_text_file", `{"path":"../../.ssh/id_rsa"}`, false},
		{"mcp__x__read_text_file", `{"path":"../.ssh/id_rsa"}`, false},
		{"mcp__x__read_multiple_files", `{"paths":["a.go","../.aws/credentials"]}`, false},
		{"mcp__x__write_file", `{"path":"../.bashrc","content":"x"}`, false},
		{"mcp__x__read_text_file", `{"path":"../README.md"}`, true},
		{"mcp__x__read_text_file", `{"path":"a.go"}`, true},
	})
}

// TestMCPRelativeAnywhere: an MCP server may resolve a relative path
// against a directory of its own that is neither the call's working
// directory nor the project (the reference filesystem server resolves it
// against its first allowed directory). A relative argument whose names
// say it is a secret wherever it lies (.ssh, .aws, .gnupg, ... below any
// directory) is denied: with the server's allowed directory /home,
// {"path":"u/.ssh/id_rsa"} reads /home/u/.ssh/id_rsa.
func TestMCPRelativeAnywhere(t *testing.T) {
	law := compileSource(t, []byte(`{"id":"m","initial":"w","states":{
 "w":{"allowed_tools":["mcp__x__*"],"on":{"D":"d"}},"d":{"type":"final"}}}`), "m.json",
		Options{Host: &Host{Home: "/home/u", ProjectDir: "/home/u/proj"}})
	run := &RunState{Active: true, State: "w"}
	checkMCPCases(t, law, run, "/home/u/proj", "/home/u/proj", []mcpCase{
		{"mcp__x__read_text_file", `{"path":"u/.ssh/id_rsa"}`, false},
		{"mcp__x__read_multiple_files", `{"paths":["a.go","u/.aws/credentials"]}`, false},
		{"mcp__x__read_text_file", `{"path":"x/../u/.gnupg/private-keys-v1.d/k.key"}`, false},
		{"mcp__x__read_text_file", `{"path":"u/proj/src/a.go"}`, true},
		{"mcp__x__read_text_file", `{"path":"u/.ssh.example"}`, true},
		{"mcp__x__echo", `{"message":"hello, world"}`, true},
	})
}

// mcpCase is an MCP tool call and whether the law allows it.
type mcpCase struct {
	tool, in string
	allow    bool
}

// checkMCPCases decides each case's call in run, with the working and
// project directories given, and reports each verdict that is not the
// case's.
func checkMCPCases(t *testing.T, law *Law, run *RunState, cwd, project string, cases []mcpCase) {
	t.Helper()
	for _, c := range cases {
		d := law.Decide(run, &ToolCall{Tool: c.tool, Input: []byte(c.in), Cwd: cwd, ProjectDir: project})
		if (d.Verdict == Allow) != c.allow {
			t.Errorf("%s %.80s: %s %s %.160s", c.tool, c.in, d.Verdict, d.Rule, d.Reason)
		}
	}
}
