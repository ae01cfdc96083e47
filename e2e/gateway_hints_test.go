//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hintsWorkflow lets trusted read-only MCP tools into its read phase
// (mcp_read_only_hints) and names the filesystem server's writing tool
// where it may run; the server's destructiveHint then needs Destructive.
const hintsWorkflow = `{
  "id": "gw-hints",
  "initial": "reading",
  "mcp_read_only_hints": true,
  "states": {
    "reading": {"allowed_tools": ["Read"], "on": {"WRITE": "writing"}},
    "writing": {"allowed_tools": ["Read", "Write", "fs__write_file"], "on": {"CLEAN": "cleaning"}},
    "cleaning": {"allowed_tools": ["Read", "Write", "Destructive", "fs__write_file"], "on": {"DONE": "done"}},
    "done": {"type": "final"}
  }
}`

// TestGatewayAnnotationsFilesystem: the real MCP filesystem server behind
// the gateway, its tools decided by their own names (map: none), so only
// its annotations say what they do. `statewright trust` snapshots them;
// then the read phase offers and runs the readOnlyHint tools it never
// names, a phase that names write_file without Destructive neither lists
// it nor lets it write (destructiveHint), and one with Destructive does.
func TestGatewayAnnotationsFilesystem(t *testing.T) {
	p := newGWProject(t)
	fs := MCPServerBinary(t, "mcp-server-filesystem")
	wf := filepath.Join(t.TempDir(), "gw-hints.json")
	if err := os.WriteFile(wf, []byte(hintsWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	p.session = "hints"
	p.cli(t, "start", wf, "--session", p.session)
	cfg := "upstreams:\n  - name: fs\n    command: " + fs + "\n    args: [" + p.dir + "]\n    map: none\n"
	if err := os.MkdirAll(filepath.Join(p.dir, ".statewright"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, ".statewright", "gateway.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out := p.cli(t, "trust", "--yes")
	if !strings.Contains(out, "recorded the annotations of") {
		t.Fatalf("trust recorded no annotations:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(p.cfg, "statewright", "trusted-gateways.json"))
	if err != nil || !strings.Contains(string(b), `"fs__read_text_file": {`) || !strings.Contains(string(b), `"read_only": true`) {
		t.Fatalf("trust record: %v\n%s", err, b)
	}
	gc := p.connect(t)

	names := gc.toolNames(t)
	for _, want := range []string{"fs__read_text_file", "fs__list_directory"} {
		if !names[want] {
			t.Errorf("reading: %s (readOnlyHint) not listed; got %v", want, names)
		}
	}
	if names["fs__write_file"] {
		t.Error("reading lists fs__write_file")
	}
	res := gc.call(t, "fs__read_text_file", map[string]any{"path": filepath.Join(p.dir, "src", "main.txt")})
	if res.IsError || !strings.Contains(resultText(res), "two") {
		t.Fatalf("read in reading: %s", resultText(res))
	}
	target := filepath.Join(p.dir, "src", "new.txt")
	res = gc.call(t, "fs__write_file", map[string]any{"path": target, "content": "x\n"})
	if !res.IsError || !strings.Contains(resultText(res), "denied") {
		t.Fatalf("write in reading: %s", resultText(res))
	}

	drain(gc.changed)
	if res = gc.call(t, "statewright_transition", map[string]any{"event": "WRITE"}); res.IsError {
		t.Fatalf("transition: %s", resultText(res))
	}
	gc.waitChanged(t, "WRITE")
	if names = gc.toolNames(t); names["fs__write_file"] {
		t.Error("writing lists fs__write_file, which its destructiveHint keeps out without Destructive")
	}
	res = gc.call(t, "fs__write_file", map[string]any{"path": target, "content": "x\n"})
	if !res.IsError || !strings.Contains(resultText(res), "destructiveHint") || !strings.Contains(resultText(res), "Destructive") {
		t.Fatalf("write in writing: isError=%v %s", res.IsError, resultText(res))
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("the denied write reached the disk: %v", err)
	}

	drain(gc.changed)
	if res = gc.call(t, "statewright_transition", map[string]any{"event": "CLEAN"}); res.IsError {
		t.Fatalf("transition: %s", resultText(res))
	}
	gc.waitChanged(t, "CLEAN")
	if names = gc.toolNames(t); !names["fs__write_file"] {
		t.Errorf("cleaning: fs__write_file not listed; got %v", names)
	}
	if res = gc.call(t, "fs__write_file", map[string]any{"path": target, "content": "x\n"}); res.IsError {
		t.Fatalf("write in cleaning: %s", resultText(res))
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "x\n" {
		t.Fatalf("after the write in cleaning: %q, %v", b, err)
	}
}
