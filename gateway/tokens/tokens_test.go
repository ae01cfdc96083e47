package tokens

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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
