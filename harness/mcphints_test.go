package harness

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/statewright-go/statewright/gateway"
	"github.com/statewright-go/statewright/policy"
)

// TestMCPHints: a hook reads the annotations `statewright trust` recorded
// for the project's gateway configuration, by the tool's namespaced name,
// and nothing once the configuration changed.
func TestMCPHints(t *testing.T) {
	project, cfgHome := t.TempDir(), t.TempDir()
	cfg := filepath.Join(project, gateway.ConfigFile)
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	src := []byte("upstreams:\n  - name: fs\n    command: /bin/true\n")
	if err := os.WriteFile(cfg, src, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": cfgHome}
	h := &Hook{Getenv: func(k string) string { return env[k] }}
	path, _ := gateway.TrustPathFor(h.Env)
	if _, err := gateway.OpenTrust(path).TrustTools(cfg, gateway.ConfigHash(src), "me", time.Now(),
		map[string]policy.ToolHints{"fs__read_text_file": {ReadOnly: true}}); err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]bool{
		"mcp__gw__fs__read_text_file": true, "mcp__other__fs__read_text_file": true,
		"mcp__gw__fs__write_file": false, "fs__read_text_file": false, "Read": false, "mcp__gw": false,
	} {
		if got := h.MCPHints(project, tool); (got != nil && got.ReadOnly) != want {
			t.Errorf("MCPHints(%s) = %+v, want read-only %v", tool, got, want)
		}
	}
	if err := os.WriteFile(cfg, append(src, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := h.MCPHints(project, "mcp__gw__fs__read_text_file"); got != nil {
		t.Errorf("after a change to the configuration: %+v, want none", got)
	}
}
