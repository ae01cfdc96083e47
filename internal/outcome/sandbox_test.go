package outcome

import (
	"net"
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
	return sandboxedImplementingAt(t, "proj")
}

// sandboxedImplementingAt is sandboxedImplementing with the project at
// rel under the home directory (newWorldAt).
func sandboxedImplementingAt(t *testing.T, rel string) *world {
	t.Helper()
	w := sandboxedWorldAt(t, rel)
	w.start("bugfix", "LOCALIZED", "PLAN_READY")
	if s, _ := w.state(); s != "implementing" {
		t.Fatalf("state %s, want implementing", s)
	}
	return w
}

// sandboxedWorldAt is a world installed with `init claude-code --sandbox`,
// with a service socket in XDG_RUNTIME_DIR and the person's files, and no
// run yet.
func sandboxedWorldAt(t *testing.T, rel string) *world {
	t.Helper()
	return sandboxedWorldStore(t, rel, "")
}

// sandboxedWorldStore is sandboxedWorldAt with the store at location store
// (newWorldStore).
func sandboxedWorldStore(t *testing.T, rel, store string) *world {
	t.Helper()
	if out, err := exec.Command(bin, "sandbox", "status", "--json").Output(); err != nil || !strings.Contains(string(out), `"available":true`) {
		t.Fatalf("the OS sandbox is not available here (%v): %s", err, out)
	}
	// The user's runtime directory, with a service's socket in it (a short
	// path: unix socket names are limited to 108 bytes).
	xrd, err := os.MkdirTemp("", "xrd")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(xrd) })
	ln, err := net.Listen("unix", filepath.Join(xrd, "bus"))
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	t.Setenv("XDG_RUNTIME_DIR", xrd)
	w := newWorldStore(t, rel, store, "--sandbox")
	w.runtimeSock = ln
	w.write(".vscode/tasks.json", "{}\n")
	w.write(filepath.Join(w.home, ".npmrc"), "//registry.npmjs.org/:_authToken=npmsecret-77aa\n")
	w.snapshot = w.hashLaw()
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
	// A credential file of the home directory, by code and by a plain read.
	if r := py(`import os; print(open(os.path.expanduser('~/.n'+'pmrc')).read())`); r.allowed && strings.Contains(r.output, "npmsecret-77aa") {
		t.Errorf("~/.npmrc's token reached the agent: %s", clip(r.output))
	}
	if r := w.bash("cat ~/.npmrc"); r.allowed {
		t.Errorf("cat ~/.npmrc was allowed: %s", clip(r.output))
	}
	// The sandbox's own records: a forged availability.json saying "no
	// sandbox here" would make every later command, go test included, run
	// unsandboxed.
	avail := filepath.Join(w.home, ".cache", "statewright", "sandbox", "availability.json")
	before, _ := os.ReadFile(avail)
	forged := `{"avail":{"why":"forged"}}`
	if r := w.call("Write", map[string]any{"file_path": avail, "content": forged}); r.allowed {
		t.Errorf("the Write tool rewrote the sandbox's availability record")
	}
	if r := w.bash("printf '" + forged + "' > ~/.cache/statewright/sandbox/availability.json"); r.allowed {
		t.Errorf("a shell write rewrote the sandbox's availability record")
	}
	if after, _ := os.ReadFile(avail); string(after) != string(before) {
		t.Errorf("availability.json changed: %s", after)
	}
	// A service socket in the user's runtime directory (D-Bus and
	// systemd --user live there): a program it starts runs unconfined.
	connected := make(chan struct{}, 1)
	go func() {
		for {
			c, err := w.runtimeSock.Accept()
			if err != nil {
				return
			}
			c.Close()
			select {
			case connected <- struct{}{}:
			default:
			}
		}
	}()
	sock := w.runtimeSock.Addr().String()
	if r := py(`import socket; s=socket.socket(socket.AF_UNIX); s.connect('` + sock + `'); print('connected')`); r.allowed && strings.Contains(r.output, "connected") {
		t.Errorf("a sandboxed command reached a service socket in XDG_RUNTIME_DIR: %s", clip(r.output))
	}
	select {
	case <-connected:
		t.Errorf("the service socket accepted a connection from the sandbox")
	default:
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
