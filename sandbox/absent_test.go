package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPlantedNames: the read-only names that do not exist inside a
// writable tree are recorded with the call; those a command creates are
// found afterwards and moved out of the person's tree. Names inside a
// read-only or hidden tree, and names that exist, are not recorded.
func TestPlantedNames(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "p")
	git := filepath.Join(project, ".git")
	for _, d := range []string{filepath.Join(git, "hooks"), filepath.Join(root, "ro"), filepath.Join(project, "secret")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(git, "config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &Profile{
		Writable: []string{project},
		ReadOnly: []string{filepath.Join(git, "config"), filepath.Join(git, "hooks"), filepath.Join(git, "commondir"),
			filepath.Join(project, ".mcp.json"), filepath.Join(project, ".codex"), filepath.Join(root, "ro", "x"),
			filepath.Join(project, "secret", "y"), filepath.Join(project, "gone", "deeper")},
		Hidden: []string{filepath.Join(project, "secret")},
	}
	want := []string{filepath.Join(git, "commondir"), filepath.Join(project, ".mcp.json"), filepath.Join(project, ".codex"), filepath.Join(project, "gone", "deeper")}
	got := Absent(p)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Absent = %q, want %q", got, want)
	}

	session := filepath.Join(root, "session")
	c, err := PrepareCall(session, "", "call-1", Availability{Bwrap: "/usr/bin/bwrap"}, p, "true")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Planted(); len(got) != 0 {
		t.Errorf("planted before the command: %q", got)
	}
	// What a command does inside the writable project.
	if err := os.WriteFile(filepath.Join(git, "commondir"), []byte("..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(project, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".codex", "config.toml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	planted := c.Planted()
	slices.Sort(planted)
	if w := []string{filepath.Join(project, ".codex"), filepath.Join(git, "commondir")}; !slices.Equal(planted, w) {
		t.Fatalf("Planted = %q, want %q", planted, w)
	}
	moved, failed := Quarantine(session, "call-1", planted)
	if len(failed) > 0 {
		t.Errorf("not moved: %q", failed)
	}
	for _, p := range planted {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
		dst := moved[p]
		if _, err := os.Lstat(dst); dst == "" || err != nil {
			t.Errorf("%s was not kept for a person to look at (%q, %v)", p, dst, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(git, "config")); err != nil || string(b) != "[core]\n" {
		t.Errorf("an existing name was touched: %q %v", b, err)
	}
	if got := c.Planted(); len(got) != 0 {
		t.Errorf("planted after the quarantine: %q", got)
	}
}

// TestSweepSession: at the session's end, the calls whose directories are
// left (their end never reported, their launcher killed) are swept.
func TestSweepSession(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "p")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	commondir := filepath.Join(project, ".git", "commondir")
	p := &Profile{Writable: []string{project}, ReadOnly: []string{commondir}}
	session := filepath.Join(root, "session")
	c, err := PrepareCall(session, "", "call-1", Availability{Bwrap: "/usr/bin/bwrap"}, p, "true")
	if err != nil {
		t.Fatal(err)
	}
	if got := SweepSession(session); len(got) != 0 {
		t.Errorf("swept before anything was planted: %q", got)
	}
	if err := os.WriteFile(commondir, []byte("..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := SweepSession(session); len(got) != 1 || !strings.Contains(got[0], commondir) {
		t.Errorf("SweepSession = %q", got)
	}
	if _, err := os.Lstat(commondir); err == nil {
		t.Error("the planted name is still there")
	}
	if _, err := os.Lstat(filepath.Join(session, "quarantine", filepath.Base(c.Dir), strings.TrimPrefix(commondir, "/"))); err != nil {
		t.Errorf("not kept in the quarantine: %v", err)
	}
}
