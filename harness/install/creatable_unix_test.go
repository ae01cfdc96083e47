//go:build linux || darwin

package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCanCreate checks what init --dry-run may promise: a store below a
// directory that exists and is writable, however deep; not one below a
// regular file.
func TestCanCreate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, err string
	}{
		{filepath.Join(dir, "state.db"), ""},
		{filepath.Join(dir, "a", "b", "state.db"), ""},
		{filepath.Join(file, "state.db"), "is not a directory"},
	} {
		err := canCreate(tt.path)
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("canCreate(%s) = %v, want %q", tt.path, err, tt.err)
		}
	}
}

// TestCanCreateReadOnly checks a directory this user may not write to:
// init --dry-run must not promise a store inside it. Root may write
// anywhere, so as root TestCanCreateUnprivileged runs it as nobody.
func TestCanCreateReadOnly(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root writes anywhere: TestCanCreateUnprivileged runs this as nobody")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := canCreate(filepath.Join(dir, "sub", "state.db")); err == nil || !strings.Contains(err.Error(), "is not writable") {
		t.Errorf("canCreate below a read-only directory = %v, want not writable", err)
	}
}

// TestCanCreateUnprivileged runs TestCanCreateReadOnly as nobody when this
// test runs as root (the sandbox tests' way).
func TestCanCreateUnprivileged(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("already unprivileged: TestCanCreateReadOnly ran as this user")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "install-unprivileged")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "install.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestCanCreateReadOnly$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir, "HOME=" + dir, "LANG=C"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestCanCreateReadOnly ") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}
