//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// inspector runs @modelcontextprotocol/inspector-cli in CLI mode against
// target (a command and its arguments, or a URL) with the method's flags.
//
// inspector-cli 1.0.3 decides which package.json to import by testing
// "../package.json" against the working directory but imports it relative
// to its own module, so it must run in a directory whose parent holds a
// package.json; the file itself is not read.
func inspector(t *testing.T, env []string, args ...string) *Run {
	t.Helper()
	bin := MCPServerBinary(t, "mcp-inspector-cli")
	parent := t.TempDir()
	if err := os.WriteFile(filepath.Join(parent, "package.json"), []byte(`{"name":"cwd-marker"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := RunCommand(context.Background(), 90*time.Second, dir, append(os.Environ(), env...), bin, append([]string{"--cli"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGatewayInspectorCLI drives `statewright mcp` with the MCP Inspector's
// CLI as the client: it lists the phase's tools, and a write through the
// proxy in planning is refused and leaves the disk untouched.
func TestGatewayInspectorCLI(t *testing.T) {
	p := newGWProject(t)
	fs := MCPServerBinary(t, "mcp-server-filesystem")
	target := filepath.Join(p.dir, "src", "inspected.txt")
	gateway := []string{p.sw, "mcp", "--store", p.storePath, "--session", p.session, "--project-dir", p.dir,
		"--upstream", "fs=" + fs + " " + p.dir}
	env := []string{"XDG_CONFIG_HOME=" + p.cfg}

	r := inspector(t, env, append(gateway, "--method", "tools/list")...)
	out := string(r.Stdout)
	if r.ExitCode != 0 || !strings.Contains(out, `"name": "fs__read_text_file"`) || !strings.Contains(out, `"name": "statewright_transition"`) {
		t.Fatalf("inspector tools/list:\n%s", r)
	}
	if strings.Contains(out, `"name": "fs__write_file"`) {
		t.Fatalf("planning lists fs__write_file to the inspector:\n%s", out)
	}

	r = inspector(t, env, append(gateway, "--method", "tools/call", "--tool-name", "fs__write_file",
		"--tool-arg", "path="+target, "content=from the inspector")...)
	out = string(r.Stdout)
	if !strings.Contains(out, `"isError": true`) || !strings.Contains(out, "statewright denied fs__write_file") {
		t.Fatalf("inspector write_file in planning:\n%s", r)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("the write through the inspector reached the disk (%v)", err)
	}
	if got := p.run(t).State; got != "planning" {
		t.Fatalf("state %q, want planning", got)
	}
}
