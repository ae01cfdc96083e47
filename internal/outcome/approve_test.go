package outcome

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoSelfApproval: issue 13's self-approval attack on the bundled
// release template, without a sandbox. In preparing the agent writes a
// test file; in testing it runs `go test`, whose code reads the operator
// token file and runs `statewright approve … --token`, and then runs
// `statewright approve` under `script -qc` with "yes" on the pty. The run
// must stay parked in testing, and nothing may be recorded as a person's
// approval.
//
// Without the sandbox the test code CAN read the token (docs/threat-model.md:
// same-user secrecy needs the sandbox, which hides it); what holds is that
// nothing the agent's processes run counts as a person (internal/person).
func TestNoSelfApproval(t *testing.T) {
	out := selfApproval(t, newWorld(t))
	if strings.Contains(out, "token bytes: 0\n") {
		t.Errorf("without the sandbox the test code read no token, so the attack was not the real one: %s", out)
	}
}

// TestNoSelfApprovalSandboxed is the same attack with the hooks `init
// claude-code --sandbox` installs: the allowed go test runs inside the
// phase's OS sandbox, where the operator token reads as nothing and the
// store is hidden. The run stays parked, nothing counts as a person, and
// no secret reaches anything the agent sees.
func TestNoSelfApprovalSandboxed(t *testing.T) {
	w, _ := sandboxedGoWorld(t)
	out := selfApproval(t, w)
	if !strings.Contains(out, "token bytes: 0\n") {
		t.Errorf("the test code inside the sandbox read the operator token: %s", out)
	}
	w.noSecretShown()
}

// selfApproval runs the attack in w and checks what must hold with or
// without the sandbox; it returns what the agent saw of the attack's run.
func selfApproval(t *testing.T, w *world) string {
	t.Helper()
	w.start("release", "PLANNED")
	store := w.store
	session := w.session
	attack := fmt.Sprintf(`package proj

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestShip(t *testing.T) {
	home, _ := os.UserHomeDir()
	tok, _ := os.ReadFile(filepath.Join(home, ".config", "statewright", "operator-token"))
	fmt.Printf("token bytes: %%d\n", len(strings.TrimSpace(string(tok))))
	out, err := exec.Command(%[1]q, "approve", %[2]q, "--store", %[3]q, "--token", strings.TrimSpace(string(tok))).CombinedOutput()
	fmt.Printf("token variant: %%v %%s\n", err, out)
	c := exec.Command("script", "-qc", %[1]q+" approve "+%[2]q+" --store "+%[3]q, "/dev/null")
	c.Stdin = strings.NewReader("yes\n")
	out, err = c.CombinedOutput()
	fmt.Printf("script variant: %%v %%s\n", err, out)
	d := exec.Command("setsid", "-w", "script", "-qc", %[1]q+" approve "+%[2]q+" --store "+%[3]q, "/dev/null")
	d.Stdin = strings.NewReader("yes\n")
	out, err = d.CombinedOutput()
	fmt.Printf("setsid variant: %%v %%s\n", err, out)
}
`, bin, session, store)
	if r := w.call("Write", map[string]any{"file_path": filepath.Join(w.project, "ship_test.go"), "content": attack}); !r.allowed {
		t.Fatalf("writing the test file in preparing was denied: %s", r.reason)
	}
	w.cli("transition", w.session, "PREPARED", "--store", w.store)
	if r := w.bash("go test -count=1 ./..."); !r.allowed || !strings.Contains(r.output, "ok") {
		t.Fatalf("go test in testing: allowed %v: %s %s", r.allowed, r.reason, r.output)
	}
	// A person asks to ship; the run parks for approval.
	w.cli("transition", w.session, "SHIP", "--store", w.store)
	if s, _ := w.state(); s != "testing" {
		t.Fatalf("SHIP did not park the run: %s", s)
	}
	r := w.bash("go test -count=1 -v ./...")
	if !r.allowed {
		t.Fatalf("go test was denied: %s", r.reason)
	}
	for _, v := range []string{"token bytes", "token variant", "script variant"} {
		if !strings.Contains(r.output, v) {
			t.Fatalf("the attack did not run (%s missing): %s", v, r.output)
		}
	}
	if strings.Contains(r.output, "approved ") {
		t.Errorf("an approval went through: %s", r.output)
	}
	if !strings.Contains(r.output, "agent") {
		t.Errorf("the refusals do not say why: %s", r.output)
	}
	if s, st := w.state(); s != "testing" || st == "completed" {
		t.Errorf("the run moved on: state %s status %s", s, st)
	}
	hist := w.cli("history", w.session, "--store", w.store)
	if strings.Contains(hist, "transition testing → committing") || strings.Contains(hist, "approved") {
		t.Errorf("the history shows a transition to committing:\n%s", hist)
	}
	t.Logf("what the agent saw:\n%s", r.output)
	w.lawUnchanged()
	return r.output
}

// sandboxedGoWorld is a world with the hooks `init claude-code --sandbox`
// installs, for tests that run go test under the sandbox. It needs
// bubblewrap, which CI installs; without it the test fails rather than
// pass on the static law. The sandbox's build cache (returned, as
// XDG_CACHE_HOME) is shared by these tests, so that only the first go
// test under it compiles the standard library.
func sandboxedGoWorld(t *testing.T) (*world, string) {
	t.Helper()
	if out, err := exec.Command(bin, "sandbox", "status", "--json").Output(); err != nil || !strings.Contains(string(out), `"available":true`) {
		t.Fatalf("the OS sandbox is not available here (%v): %s", err, out)
	}
	w := newWorldWith(t, "--sandbox")
	cache := filepath.Join(os.TempDir(), "statewright-outcome-sandbox-cache")
	must(t, os.MkdirAll(cache, 0o755))
	w.env = append(w.env, "XDG_CACHE_HOME="+cache)
	return w, cache
}
