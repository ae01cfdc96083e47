package runtime

import (
	"slices"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/policy"
)

// TestDecideSandboxProfile: a call the adapter runs sandboxed gets the
// profile of the phase it was decided in; a replay gets it again; a deny
// and a dormant session are handled; the decision event records it.
func TestDecideSandboxProfile(t *testing.T) {
	f := newFixture(t, Options{})
	env := &policy.SandboxEnv{ProjectDir: f.dir, Home: "/home/u", Store: f.path}

	// Dormant: the project writable, network open, protected and hidden
	// paths in force.
	c := f.call("s", "t0", "Bash", map[string]any{"command": "ls"})
	c.Sandbox, c.Call.Sandboxed = env, true
	r := f.decide(c)
	if r.Verdict != policy.Allow || r.Sandbox == nil || r.Sandbox.Phase != "" || !r.Sandbox.Network ||
		!slices.Contains(r.Sandbox.Writable, f.dir) || !slices.Contains(r.Sandbox.Hidden, f.path) {
		t.Fatalf("dormant: %+v %+v", r.Decision, r.Sandbox)
	}

	f.start("s")
	c = f.call("s", "t1", "Bash", map[string]any{"command": "go test ./..."})
	c.Sandbox, c.Call.Sandboxed = env, true
	r = f.decide(c)
	if r.Verdict != policy.Allow || r.Sandbox == nil || r.Sandbox.Phase != "plan" || r.Sandbox.Network {
		t.Fatalf("plan: %+v %+v", r.Decision, r.Sandbox)
	}
	if !slices.Contains(r.Sandbox.ReadOnly, f.dir+"/.claude") || !slices.Contains(r.Sandbox.Hidden, f.path+"-wal") {
		t.Errorf("profile lacks protected or hidden paths: %+v", r.Sandbox)
	}
	again := f.decide(c)
	if !again.Replayed || again.Sandbox == nil || again.Sandbox.Phase != "plan" {
		t.Errorf("replay: %+v %+v", again.Decision, again.Sandbox)
	}
	evs := f.events("s", "decision")
	if len(evs) == 0 || !strings.Contains(string(evs[len(evs)-1].Data), `"sandboxed":true`) {
		t.Errorf("decision event does not record sandboxed")
	}

	// Denied calls carry no profile; unsandboxed calls neither.
	d := f.call("s", "t2", "Bash", map[string]any{"command": "curl https://example.com"})
	d.Sandbox, d.Call.Sandboxed = env, true
	if r := f.decide(d); r.Verdict != policy.Deny || r.Sandbox != nil {
		t.Errorf("deny: %+v %+v", r.Decision, r.Sandbox)
	}
	if r := f.decide(f.call("s", "t3", "Bash", map[string]any{"command": "ls"})); r.Sandbox != nil {
		t.Errorf("unsandboxed call got a profile: %+v", r.Sandbox)
	}
}
