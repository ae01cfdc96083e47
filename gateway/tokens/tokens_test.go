package tokens

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCreateVerifyRevoke(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "tokens.json")
	f := Open(path)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	if _, err := f.Verify("swa_nothing"); !errors.Is(err, ErrBadToken) {
		t.Fatalf("verify on a missing file: %v, want ErrBadToken", err)
	}
	agent, at, err := f.Create(Agent, "laptop", "", now)
	if err != nil {
		t.Fatal(err)
	}
	op, ot, err := f.Create(Operator, "me", "", now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(agent, "swa_") || !strings.HasPrefix(op, "swo_") {
		t.Fatalf("prefixes: %q %q", agent, op)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), agent) || strings.Contains(string(b), op) {
		t.Fatal("the token file holds a token in clear")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}

	// A second File (another process) sees both.
	g := Open(path)
	for _, c := range []struct {
		tok  string
		role Role
		id   string
	}{{agent, Agent, at.ID}, {op, Operator, ot.ID}} {
		got, err := g.Verify(c.tok)
		if err != nil || got.Role != c.role || got.ID != c.id {
			t.Fatalf("verify %s: %+v %v", c.role, got, err)
		}
	}
	for _, bad := range []string{"", "  ", agent + "x", strings.ToUpper(agent), "swa_" + strings.Repeat("0", 64)} {
		if _, err := g.Verify(bad); err == nil {
			t.Fatalf("verify %q passed", bad)
		}
	}
	if ok, _ := g.HasOperator(); !ok {
		t.Fatal("HasOperator false")
	}

	// Revoke through f; g notices without being told.
	if _, err := f.Revoke(ot.ID, now); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Verify(op); !errors.Is(err, ErrBadToken) {
		t.Fatalf("revoked token verified: %v", err)
	}
	if ok, _ := g.HasOperator(); ok {
		t.Fatal("HasOperator after revoke")
	}
	if _, err := f.Revoke("tok_nope", now); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoke unknown: %v", err)
	}
	ts, err := g.List()
	if err != nil || len(ts) != 2 || !ts[1].Revoked() || ts[0].Revoked() {
		t.Fatalf("list: %+v %v", ts, err)
	}
}

func TestBindOnlyAgents(t *testing.T) {
	f := Open(filepath.Join(t.TempDir(), "tokens.json"))
	if _, _, err := f.Create(Operator, "", "claude-code:x", time.Now()); err == nil {
		t.Fatal("operator token bound to a session")
	}
	sec, tok, err := f.Create(Agent, "", "claude-code:x", time.Now())
	if err != nil || tok.Session != "claude-code:x" {
		t.Fatal(err)
	}
	got, err := f.Verify(sec)
	if err != nil || got.Session != "claude-code:x" {
		t.Fatalf("%+v %v", got, err)
	}
}

func TestCorruptFileFailsClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path).Verify("swa_x"); err == nil || errors.Is(err, ErrBadToken) {
		t.Fatalf("corrupt file: %v, want a read error", err)
	}
}

func TestParseRole(t *testing.T) {
	for in, want := range map[string]Role{"agent": Agent, "Operator": Operator, " agent ": Agent, "hook": Hook} {
		if got, err := ParseRole(in); err != nil || got != want {
			t.Errorf("ParseRole(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseRole("admin"); err == nil {
		t.Error("admin accepted")
	}
}

// TestVerifySeesEveryChange holds Verify's stat outside the lock to
// refresh's definition: a handle that only verifies sees every change
// another handle (another process) makes, as soon as that change is made.
// After a revocation returns, no Verify that starts later lets the token
// in, however many verify at once; a file that stops being a token file
// fails every Verify (the caller denies), and a removed file holds no
// tokens.
func TestVerifySeesEveryChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	f, g := Open(path), Open(path)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for round := 0; round < 20; round++ {
		tok, tt, err := f.Create(Hook, "h", "", now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Verify(tok); err != nil {
			t.Fatalf("round %d: a new token: %v", round, err)
		}
		var revoked atomic.Bool
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					after := revoked.Load()
					_, err := g.Verify(tok)
					if after && err == nil {
						errs <- "a token revoked before Verify started was let in"
						return
					}
					if err != nil && !errors.Is(err, ErrBadToken) {
						errs <- err.Error()
						return
					}
				}
			}()
		}
		if _, err := f.Revoke(tt.ID, now); err != nil {
			t.Fatal(err)
		}
		revoked.Store(true)
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatalf("round %d: %s", round, e)
		}
		if _, err := g.Verify(tok); !errors.Is(err, ErrBadToken) {
			t.Fatalf("round %d: after the revocation: %v", round, err)
		}
	}
	live, _, err := f.Create(Hook, "live", "", now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Verify(live); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Verify(live); err == nil || errors.Is(err, ErrBadToken) {
		t.Fatalf("a file that is no token file: %v, want a read error", err)
	}
	if _, err := g.Verify(live); err == nil {
		t.Fatal("a file that is no token file: the second Verify let the token in")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Verify(live); !errors.Is(err, ErrBadToken) {
		t.Fatalf("a removed file: %v, want ErrBadToken", err)
	}
}
