package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mkws(t *testing.T) (*Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\nthree\ntwo\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
	must(t, os.Symlink(outside, filepath.Join(dir, "out")))
	must(t, os.Symlink(filepath.Join(outside, "nothere"), filepath.Join(dir, "dangling")))
	must(t, os.Symlink("a.txt", filepath.Join(dir, "in")))
	ws, err := NewWorkspace(dir)
	must(t, err)
	return ws, outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	ws, outside := mkws(t)
	for _, tc := range []struct {
		path    string
		rel     string // "" when refused
		refused bool
	}{
		{path: "a.txt", rel: "a.txt"},
		{path: ".", rel: "."},
		{path: "", rel: "."},
		{path: "sub/new.txt", rel: "sub/new.txt"},
		{path: "in", rel: "a.txt"},
		{path: filepath.Join(ws.Root, "a.txt"), rel: "a.txt"},
		{path: "../x", refused: true},
		{path: "sub/../../x", refused: true},
		{path: outside + "/secret", refused: true},
		{path: "out/secret", refused: true},
		{path: "out/new", refused: true},
		{path: "dangling", refused: true},
		{path: "/etc/passwd", refused: true},
	} {
		_, rel, err := ws.Resolve(tc.path)
		if tc.refused {
			if !errors.Is(err, ErrOutside) {
				t.Errorf("Resolve(%q) = %q, %v; want ErrOutside", tc.path, rel, err)
			}
			continue
		}
		if err != nil || rel != tc.rel {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.path, rel, err, tc.rel)
		}
	}
}

func TestEditFile(t *testing.T) {
	ws, _ := mkws(t)
	s := &Set{WS: ws, Sandbox: &Sandbox{}}
	r := s.Exec(context.Background(), EditFile, Args{Path: "a.txt", OldString: "two", NewString: "2"})
	if !r.Failed || !strings.Contains(r.Output, "matches 2 times") {
		t.Fatalf("ambiguous edit: %+v", r)
	}
	r = s.Exec(context.Background(), EditFile, Args{Path: "a.txt", OldString: "zzz", NewString: "2"})
	if !r.Failed || !strings.Contains(r.Output, "not found") {
		t.Fatalf("missing edit: %+v", r)
	}
	r = s.Exec(context.Background(), EditFile, Args{Path: "a.txt", OldString: "one\ntwo", NewString: "one\n2"})
	if r.Failed || !strings.Contains(r.Output, "-two\n+2\n") {
		t.Fatalf("edit: %+v", r)
	}
	b, _ := os.ReadFile(filepath.Join(ws.Root, "a.txt"))
	if string(b) != "one\n2\nthree\ntwo\n" {
		t.Fatalf("file now %q", b)
	}
	r = s.Exec(context.Background(), ReadFile, Args{Path: "a.txt", StartLine: 2, EndLine: 3})
	if r.Failed || !strings.Contains(r.Output, "lines 2-3 of 4") || !strings.Contains(r.Output, "    2\t2\n    3\tthree\n") {
		t.Fatalf("read: %q", r.Output)
	}
	r = s.Exec(context.Background(), Grep, Args{Pattern: "^thr"})
	if r.Failed || strings.TrimSpace(r.Output) != "a.txt:3: three" {
		t.Fatalf("grep: %q", r.Output)
	}
}

func TestDiff(t *testing.T) {
	got := Diff("f", "a\nb\nc\nd\ne\n", "a\nb\nC\nd\ne\n")
	want := "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n a\n b\n-c\n+C\n d\n e\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// requireSandbox fails (not skips) when bubblewrap is unavailable and the
// environment says it must be there (CI installs it).
func requireSandbox(t *testing.T) Sandbox {
	t.Helper()
	sb := DetectSandbox(context.Background())
	if sb.Bwrap == "" {
		if os.Getenv("STATEWRIGHT_REQUIRE_SANDBOX") != "" {
			t.Fatalf("bubblewrap is required here: %s", sb.Why)
		}
		t.Skipf("no sandbox: %s", sb.Why)
	}
	return sb
}

func TestSandboxConfines(t *testing.T) {
	sb := requireSandbox(t)
	ws, outside := mkws(t)
	ctx := context.Background()
	r, err := sb.Run(ctx, ws, "echo hi > inside.txt && echo ok", Limits{})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("write inside: %+v %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(ws.Root, "inside.txt")); err != nil {
		t.Fatal("the write inside the workspace did not land")
	}
	r, err = sb.Run(ctx, ws, "echo pwned > "+filepath.Join(outside, "pwned"), Limits{})
	if err != nil || r.ExitCode == 0 {
		t.Fatalf("write outside succeeded: %+v %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "pwned")); err == nil {
		t.Fatal("a file was written outside the workspace")
	}
	r, _ = sb.Run(ctx, ws, "echo x > out/pwned2", Limits{})
	if _, err := os.Stat(filepath.Join(outside, "pwned2")); err == nil || r.ExitCode == 0 {
		t.Fatal("a write through a symlink left the workspace")
	}
	// No network: not even loopback is shared.
	r, _ = sb.Run(ctx, ws, "cat /proc/net/dev | grep -c : ", Limits{})
	if strings.TrimSpace(r.Output) != "1" {
		t.Fatalf("network interfaces in the sandbox: %q", r.Output)
	}
	// The runner's environment does not leak.
	t.Setenv("STATEWRIGHT_OPERATOR_TOKEN", "tok-123")
	r, _ = sb.Run(ctx, ws, "env", Limits{})
	if strings.Contains(r.Output, "tok-123") {
		t.Fatal("the operator token leaked into the command's environment")
	}
}

func TestRunLimits(t *testing.T) {
	ws, _ := mkws(t)
	for _, sb := range []Sandbox{{}, DetectSandbox(context.Background())} {
		r, err := sb.Run(context.Background(), ws, "sleep 30", Limits{Timeout: 200 * time.Millisecond})
		if err != nil || !r.TimedOut || r.ExitCode != 124 {
			t.Fatalf("%s: timeout: %+v %v", sb.String(), r, err)
		}
		r, err = sb.Run(context.Background(), ws, "head -c 100000 /dev/zero | tr '\\0' x; exit 3", Limits{OutputCap: 1000})
		if err != nil || r.ExitCode != 3 || len(r.Output) > 1100 || r.Truncated != 99000 {
			t.Fatalf("%s: cap: exit %d len %d cut %d %v", sb.String(), r.ExitCode, len(r.Output), r.Truncated, err)
		}
	}
}

// TestCallTimeoutWithoutSetLimit: a call's timeout_seconds applies when the
// set names no limit of its own (it used to be ignored, and the result said
// "timed out after 0s" had the default struck).
func TestCallTimeoutWithoutSetLimit(t *testing.T) {
	ws, _ := mkws(t)
	set := &Set{WS: ws, Sandbox: &Sandbox{}}
	r := set.Exec(context.Background(), RunCommand, Args{Command: "sleep 30", TimeoutSeconds: 1})
	if !strings.Contains(r.Output, "[timed out after 1s]") || r.ExitCode == nil || *r.ExitCode != 124 {
		t.Fatalf("result: %+v", r)
	}
}
