package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// CodexVersion is the Codex CLI version scripts/install-harnesses.sh pins
// and the Codex tests expect: the first version checked to run hooks for
// the shell (exec_command, reported as "Bash"), apply_patch and MCP tools,
// and to honour updatedInput with an allow on MCP calls.
const CodexVersion = "0.169.0"

// Runs in every go test (no build tag): the pin and the tests agree.
func TestInstallScriptPinsCodexVersion(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "scripts", "install-harnesses.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CODEX_VERSION=(\S+)$`).FindSubmatch(b)
	if m == nil || string(m[1]) != CodexVersion {
		t.Fatalf("install-harnesses.sh pins %q, e2e.CodexVersion is %q: keep them equal", m, CodexVersion)
	}
}
