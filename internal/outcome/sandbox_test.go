package outcome

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sandboxedImplementing is the bundled bugfix template's implementing
// phase with the hooks installed by `init claude-code --sandbox`: every
// Bash call runs under the phase's OS profile, and the phase lets Exec
// (python3 -c) run there (sandbox.exec). It needs bubblewrap, which CI
// installs; without it the test fails rather than pass on the static law.
func sandboxedImplementing(t *testing.T) *world {
	t.Helper()
	if out, err := exec.Command(bin, "sandbox", "status", "--json").Output(); err != nil || !strings.Contains(string(out), `"available":true`) {
		t.Fatalf("the OS sandbox is not available here (%v): %s", err, out)
	}
	w := newWorldWith(t, "--sandbox")
	w.write(".vscode/tasks.json", "{}\n")
	w.snapshot = w.hashLaw()
	w.start("bugfix", "LOCALIZED", "PLAN_READY")
	if s, _ := w.state(); s != "implementing" {
		t.Fatalf("state %s, want implementing", s)
	}
	return w
}

// TestSandboxHoldsAgainstAgentCode: code the agent runs in a sandboxed
// phase (python3 -c, spelled so the static law sees no protected name)
// cannot move a protected tree's parent aside and put its own in its
// place (.git holding .git/config and .git/hooks, .vscode holding
// tasks.json), cannot redirect git to another configuration
// (.git/commondir), and cannot read a secret file of the project (.env);
// ordinary work in the same phase still runs.
func TestSandboxHoldsAgainstAgentCode(t *testing.T) {
	w := sandboxedImplementing(t)
	py := func(code string) result { return w.bash("python3 -c " + shellQuote(code)) }
	attacks := []struct {
		name string
		code string
	}{
		{"rename .git aside and plant a new one", `import os; g='.g'+'it'; os.rename(g, 'g2'); os.makedirs(g+'/hooks'); open(g+'/config','w').write('[core]\n\tfsmonitor = touch pwned\n'); print('swapped')`},
		{"rename .vscode aside", `import os; v='.vs'+'code'; os.rename(v, 'v2'); os.makedirs(v); open(v+'/tasks.json','w').write('{"x":1}'); print('swapped')`},
		{"git commondir", `g='.g'+'it'; open(g+'/common'+'dir','w').write('../evil\n'); print('planted')`},
		{"remove .git", `import shutil; shutil.rmtree('.g'+'it'); print('removed')`},
	}
	for _, a := range attacks {
		r := py(a.code)
		if r.allowed && (strings.Contains(r.output, "swapped") || strings.Contains(r.output, "planted") || strings.Contains(r.output, "removed")) {
			t.Errorf("%s: it ran to the end: %s", a.name, clip(r.output))
		}
	}
	if _, err := os.Lstat(filepath.Join(w.project, ".git", "commondir")); err == nil {
		t.Errorf(".git/commondir was planted")
	}
	if r := w.call("Write", map[string]any{"file_path": filepath.Join(w.project, ".git", "commondir"), "content": "../evil\n"}); r.allowed {
		t.Errorf("the Write tool planted .git/commondir")
	}
	if fi, err := os.Stat(filepath.Join(w.project, ".git", "objects")); err != nil || !fi.IsDir() {
		t.Errorf(".git is not the repository any more: %v", err)
	}
	for _, d := range []string{"g2", "v2"} {
		if _, err := os.Lstat(filepath.Join(w.project, d)); err == nil {
			t.Errorf("%s exists: a protected tree's parent was moved", d)
		}
	}
	// A secret file of the project, read by code the static law cannot see into.
	r := py(`print(open('.e'+'nv').read())`)
	if r.allowed && strings.Contains(r.output, "envsecret-1c2d") {
		t.Errorf("the .env secret reached the agent: %s", clip(r.output))
	}
	w.lawUnchanged()
	if b, err := os.ReadFile(filepath.Join(w.project, ".vscode", "tasks.json")); err != nil || string(b) != "{}\n" {
		t.Errorf(".vscode/tasks.json changed: %q %v", b, err)
	}

	// Ordinary work in the same phase still succeeds.
	if r := py(`open('notes.txt','w').write('ok'); print('wrote')`); !r.allowed || !strings.Contains(r.output, "wrote") {
		t.Errorf("an ordinary python3 write failed: %s %s", r.reason, r.output)
	}
	if r := w.bash("mkdir -p pkg/sub && git status --short"); !r.allowed || !strings.Contains(r.output, "notes.txt") {
		t.Errorf("git status in the sandbox failed: %s %s", r.reason, r.output)
	}
	if r := w.bash("go vet ./..."); !r.allowed || strings.Contains(r.output, "rror") {
		t.Errorf("go vet in the sandbox failed: %s %s", r.reason, r.output)
	}
	w.noSecretShown()
}

// shellQuote quotes s as one shell word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
