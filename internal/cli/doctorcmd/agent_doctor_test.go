package doctorcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/sandbox"
)

// TestHookSandboxFinding: doctor's sandbox line says what the install
// really does. Cursor's hooks cannot route a shell command through the
// sandbox, so for Cursor --sandbox is reported as doing nothing (not as
// "every Bash call runs under the phase's OS sandbox"), and the advice is
// --require-sandbox, never `init cursor --sandbox`.
func TestHookSandboxFinding(t *testing.T) {
	bw := sandbox.Availability{Bwrap: "/usr/bin/bwrap"}
	none := sandbox.Availability{Why: "bubblewrap (bwrap) is not installed"}
	tests := []struct {
		name          string
		a             sandbox.Availability
		harness       string
		require, on   bool
		level         string
		want, wantNot []string
	}{
		{"claude default", bw, "claude-code", false, false, "warn", []string{"statewright init claude-code --sandbox"}, nil},
		{"claude sandbox", bw, "claude-code", false, true, "ok", []string{"every Bash call runs under"}, nil},
		{"claude require", bw, "claude-code", true, false, "ok", []string{"every Bash call runs under"}, nil},
		{"claude none", none, "claude-code", false, true, "warn", []string{"no OS sandbox is available"}, nil},
		{"claude none require", none, "claude-code", true, false, "ok", []string{"denies every shell call"}, nil},
		{"cursor default", bw, "cursor", false, false, "warn", []string{"cannot rewrite a command", "--require-sandbox"}, []string{"init cursor --sandbox", "every Bash call runs under"}},
		{"cursor sandbox", bw, "cursor", false, true, "warn", []string{"--sandbox changes nothing", "run unsandboxed"}, []string{"every Bash call runs under"}},
		{"cursor require", bw, "cursor", true, false, "ok", []string{"--require-sandbox denies every shell call", "cannot rewrite"}, []string{"every Bash call runs under"}},
		{"cursor none", none, "cursor", false, false, "warn", []string{"no OS sandbox is available"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			level, msg := hookSandboxFinding(tt.a, tt.harness, tt.require, tt.on)
			if level != tt.level {
				t.Errorf("level %q, want %q (%s)", level, tt.level, msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(msg, w) {
					t.Errorf("%q says %q", msg, w)
				}
			}
		})
	}
}

// TestGatewaySandboxFinding: doctor finds the project's gateways in
// .mcp.json (statewright mcp with upstreams, from the command line or the
// project's gateway.yaml) and says whether their upstream servers run
// under the OS sandbox, and what to add when they do not.
func TestGatewaySandboxFinding(t *testing.T) {
	dir := t.TempDir()
	mcp := `{"mcpServers": {
  "statewright": {"command": "/bin/statewright", "args": ["mcp", "--store", "/s.db"]},
  "gw": {"command": "/bin/statewright", "args": ["mcp", "--upstream", "fs=npx x", "--sandbox"]},
  "plain": {"command": "/bin/statewright", "args": ["mcp", "--upstream", "fs=npx x"]},
  "strict": {"command": "/bin/statewright", "args": ["mcp", "--upstream=fs=npx x", "--require-sandbox"]},
  "off": {"command": "/bin/statewright", "args": ["mcp", "--upstream", "fs=npx x", "--sandbox=false"]},
  "other": {"command": "npx", "args": ["-y", "some-server", "--upstream"]}}}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(mcp), 0o644); err != nil {
		t.Fatal(err)
	}
	servers := gatewayServers(dir)
	var names []string
	for _, s := range servers {
		names = append(names, s.name)
	}
	if got := strings.Join(names, ","); got != "gw,off,plain,strict" {
		t.Fatalf("gateways %q, want gw,off,plain,strict", got)
	}
	bw := sandbox.Availability{Bwrap: "/usr/bin/bwrap"}
	none := sandbox.Availability{Why: "bubblewrap (bwrap) is not installed"}
	tests := []struct {
		a     sandbox.Availability
		s     gatewayServer
		level string
		want  string
	}{
		{bw, servers[0], "ok", "run under the OS sandbox, one process per session and phase"},
		{bw, servers[1], "warn", `add "--sandbox"`},
		{bw, servers[2], "warn", `add "--sandbox"`},
		{bw, servers[3], "ok", "run under the OS sandbox"},
		{none, servers[0], "warn", "no OS sandbox here (bubblewrap (bwrap) is not installed), so its upstream servers run unsandboxed"},
		{none, servers[3], "ok", "--require-sandbox refuses to start its upstream servers"},
	}
	for _, tt := range tests {
		level, msg := gatewaySandboxFinding(tt.a, tt.s)
		if level != tt.level || !strings.Contains(msg, tt.want) || !strings.Contains(msg, `"`+tt.s.name+`"`) {
			t.Errorf("%s with %s: %s %q, want %s and %q", tt.s.name, tt.a, level, msg, tt.level, tt.want)
		}
	}
	// The project's gateway.yaml makes a plain `statewright mcp` a gateway.
	if err := os.MkdirAll(filepath.Join(dir, ".statewright"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".statewright", "gateway.yaml"), []byte("upstreams: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := len(gatewayServers(dir)); got != 5 {
		t.Errorf("with a gateway.yaml, %d gateways, want 5 (statewright's own server too)", got)
	}
}
