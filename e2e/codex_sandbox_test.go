//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

// TestCodexSandbox finds out with the real Codex (0.169) whether its hooks
// honour updatedInput for the shell: with `init codex --sandbox`, the
// PreToolUse hook answers allow with the command rewritten to run under
// the launcher. Codex's own sandbox is off here (the e2e runs pass
// --dangerously-bypass-approvals-and-sandbox), so ours is the only one:
// the command sees the phase in its environment and the token directory
// empty.
func TestCodexSandbox(t *testing.T) {
	p := newCodexProject(t, "--sandbox")
	tokenDir := filepath.Join(p.home, ".config", "statewright")
	os.MkdirAll(tokenDir, 0o700)
	os.WriteFile(filepath.Join(tokenDir, "operator-token"), []byte("swop_codex_secret"), 0o600)
	srv := fakemodel.NewResponses(script(
		fakemodel.Call(tool("call_sb", "exec_command", map[string]any{"cmd": `echo "phase=$STATEWRIGHT_SANDBOX_PHASE"; ls -A ~/.con""fig/state""wright | wc -l`})),
		fakemodel.Say("Done."),
	), fakemodel.WithLog(t.Logf))
	r := p.run(t, srv, "Look around.", "")
	srv.Close()
	out := codexToolOutput(t, srv, "call_sb")
	t.Logf("codex told the model: %q", out)
	if !strings.Contains(out, "phase=localizing") {
		t.Fatalf("the shell command did not run under the launcher (Codex did not apply updatedInput to the shell?): %q\n%s", out, r)
	}
	if strings.Contains(out, "swop_codex_secret") {
		t.Fatal("the token reached the model")
	}
}
