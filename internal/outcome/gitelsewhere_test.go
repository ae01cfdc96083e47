package outcome

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitIntoARepositoryTheAgentWrote is the outcome test of git pointed at
// a repository the agent wrote, without the OS sandbox: in bugfix
// `implementing` (Write and Bash, no Exec) the agent writes, with ordinary
// file writes, a repository whose configuration runs a program at `git
// status` (core.fsmonitor), then runs git there through -C, a cd, or
// --git-dir. Each is denied as Exec and the program never runs; git in the
// project's own repository still runs.
func TestGitIntoARepositoryTheAgentWrote(t *testing.T) {
	w := implementing(t)
	w.run("git", "add", "-A")
	w.run("git", "commit", "-qm", "base")
	pwned := filepath.Join(w.project, "PWNED")
	for _, f := range []struct{ path, content string }{
		{"vendored/gd/HEAD", "ref: refs/heads/main\n"},
		{"vendored/gd/config", "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch " + pwned + "; false\"\n"},
		{"vendored/gd/objects/info/keep", ""},
		{"vendored/gd/refs/heads/keep", ""},
		{"vendored/.git", "gitdir: gd\n"},
	} {
		if r := w.call("Write", map[string]any{"file_path": w.abs(f.path), "content": f.content}); !r.allowed {
			t.Fatalf("writing %s was denied: %s", f.path, r.reason)
		}
	}
	w.bashDenied("implementing",
		"git -C vendored status",
		"cd vendored && git status",
		"git --git-dir=vendored/.git status",
		"git -C vendored/gd log",
	)
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the repository's core.fsmonitor ran")
	}
	for _, r := range w.outputs {
		if strings.Contains(r, "another repository than the project's") {
			goto taught
		}
	}
	t.Error("no deny said why (git in another repository)")
taught:
	w.bashAllowed("git status", "git -C . log --oneline -1", "git diff --stat", "cd "+w.project+" && git status")
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the repository's core.fsmonitor ran from the project's own git")
	}
}
