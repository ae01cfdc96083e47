//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

// TestPluginSandbox drives the real opencode and Pi with the plugin `init
// --sandbox` installs: the plugin replaces the bash tool's command with
// the launcher's, so in an implementing phase a python3 write to
// .claude/settings.json fails on disk and the operator token reads as
// nothing, while an ordinary shell write lands.
func TestPluginSandbox(t *testing.T) {
	for _, h := range []string{"opencode", "pi"} {
		t.Run(h, func(t *testing.T) {
			p := newPluginProjectWith(t, h, sandboxWorkflow, "--sandbox")
			os.MkdirAll(p.path(".claude"), 0o755)
			settings := []byte(`{"keep": true}`)
			os.WriteFile(p.path(".claude/settings.json"), settings, 0o644)
			tokenDir := filepath.Join(p.home, ".config", "statewright")
			os.MkdirAll(tokenDir, 0o700)
			const token = "swop_e2e_plugin_secret"
			os.WriteFile(filepath.Join(tokenDir, "operator-token"), []byte(token), 0o600)

			pyWrite := `python3 -c 'import os; open(os.path.join(".cla"+"ude", "settings.json"), "w").write("{}")'`
			pyToken := `python3 -c 'import os; d = os.path.expanduser("~/.con" + "fig/state" + "wright"); print("entries:", os.listdir(d))'`
			srv := fakemodel.NewChatCompletions(chatScript(
				fakemodel.Call(tool("call_py", "bash", map[string]any{"command": pyWrite, "description": "write settings"})),
				fakemodel.Call(tool("call_tok", "bash", map[string]any{"command": pyToken, "description": "read the token"})),
				fakemodel.Call(tool("call_ok", "bash", map[string]any{"command": "echo landed > ok.txt && cat ok.txt", "description": "write ok"})),
				fakemodel.Say("Done."),
			), fakemodel.WithLog(t.Logf))
			defer srv.Close()
			var r *Run
			if h == "opencode" {
				r = p.opencodeRun(t, srv)
			} else {
				r = p.piRun(t, srv)
			}
			if b, _ := os.ReadFile(p.path(".claude/settings.json")); string(b) != string(settings) {
				t.Errorf(".claude/settings.json = %q: the sandbox did not keep it read-only\n%s", b, r)
			}
			if res := mustResult(t, srv, "call_py", r); !strings.Contains(res.Content, "Read-only file system") {
				t.Errorf("python3 write: %q; want the sandbox's read-only error", res.Content)
			}
			if res := mustResult(t, srv, "call_tok", r); !strings.Contains(res.Content, "entries: []") {
				t.Errorf("token read: %q; want an empty directory", res.Content)
			}
			for _, req := range srv.MainRequests() {
				if strings.Contains(string(req.Body), token) {
					t.Fatalf("the operator token reached the model")
				}
			}
			if b, _ := os.ReadFile(p.path("ok.txt")); string(b) != "landed\n" {
				t.Errorf("ok.txt = %q: the ordinary shell write did not land\n%s", b, r)
			}
		})
	}
}
