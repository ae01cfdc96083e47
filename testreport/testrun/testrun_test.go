package testrun

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/statewright-go/statewright/testreport"
)

// goModule writes a module with two packages of tests into a temp dir.
func goModule(t *testing.T, failing bool) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("a/a_test.go", "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\nfunc TestB(t *testing.T) {}\n")
	body := "package b\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) {}\n"
	if failing {
		body = "package b\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) { t.Fatal(\"boom\") }\n"
	}
	write("b/b_test.go", body)
	return dir
}

func run(t *testing.T, dir, cmdline string) (testreport.Evidence, int, string) {
	t.Helper()
	argv := strings.Fields(cmdline)
	p, ok := testreport.New(argv, os.Environ(), testreport.Project{FS: os.DirFS(dir)})
	if !ok {
		t.Fatalf("%q is no test command", cmdline)
	}
	var out, errOut bytes.Buffer
	ev, code, err := Run(context.Background(), p, Options{Dir: dir, Stdout: &out, Stderr: &errOut, Env: append(os.Environ(), "GOFLAGS=-count=1")})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return ev, code, out.String() + errOut.String()
}

func TestRunGoTest(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain") // never counted: the Go tests need go anyway
	}
	dir := goModule(t, false)
	ev, code, out := run(t, dir, "go test ./...")
	if code != 0 || !ev.Passed || ev.Counts.Run != 3 || ev.Narrowed {
		t.Errorf("whole suite: code %d evidence %+v\n%s", code, ev, out)
	}
	if strings.Contains(out, `"Action"`) || !strings.Contains(out, "ok  \texample.com/m/a") {
		t.Errorf("the agent should see go test's text, got:\n%s", out)
	}

	ev, code, out = run(t, dir, "go test -run NoSuchTest ./...")
	if code != 0 || ev.Passed || ev.Counts.Run != 0 || !ev.Narrowed || ev.Reason != "no test ran" {
		t.Errorf("zero-test run: code %d evidence %+v\n%s", code, ev, out)
	}

	ev, _, _ = run(t, dir, "go test ./a")
	if !ev.Passed || !ev.Narrowed || ev.Counts.Run != 2 {
		t.Errorf("package subset: evidence %+v", ev)
	}

	dir = goModule(t, true)
	ev, code, out = run(t, dir, "go test ./...")
	if code == 0 || ev.Passed || ev.Counts.Failed != 1 || !strings.Contains(out, "boom") {
		t.Errorf("failing suite: code %d evidence %+v\n%s", code, ev, out)
	}
}

func TestRunWithoutReport(t *testing.T) {
	bin := t.TempDir()
	fake := filepath.Join(bin, "cargo")
	os.WriteFile(fake, []byte("#!/bin/sh\necho 'test result: ok. 3 passed; 0 failed'\n"), 0o755)
	p, _ := testreport.New([]string{fake, "test"}, nil, testreport.Project{})
	var out bytes.Buffer // one writer for both streams, as a launcher may pass
	w := &syncWriter{w: &out}
	ev, code, err := Run(context.Background(), p, Options{Stdout: w, Stderr: w})
	if err != nil || code != 0 || ev.Passed || !strings.Contains(ev.Reason, "stable toolchain") || !strings.Contains(out.String(), "3 passed") {
		t.Errorf("Run = %+v, %d, %v; output %q", ev, code, err, out.String())
	}
}

// A runner that writes no report (here: a fake "go" that only prints)
// never passes, whatever it prints.
func TestRunForgedOutput(t *testing.T) {
	bin := t.TempDir()
	fake := filepath.Join(bin, "go")
	os.WriteFile(fake, []byte("#!/bin/sh\necho 'ok  \texample.com/m\t0.1s'\necho '--- PASS: TestX (0.00s)'\n"), 0o755)
	p, _ := testreport.New([]string{fake, "test", "./..."}, nil, testreport.Project{})
	ev, code, err := Run(context.Background(), p, Options{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	if err != nil || code != 0 || ev.Passed {
		t.Errorf("forged output: %+v, %d, %v", ev, code, err)
	}
}

// syncWriter is one writer for stdout and stderr: exec copies each stream
// in its own goroutine.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func TestPrepareScript(t *testing.T) {
	for _, tc := range []struct {
		script string
		ok     bool
		want   string // with REPORT for the report path
	}{
		{"go test ./...", true, "go test -json ./..."},
		{"GOFLAGS=-count=1 go test -v ./...", true, "GOFLAGS='-count=1' go test -json -v ./..."},
		{"timeout 60 go test ./...", true, "timeout 60 go test -json ./..."},
		{`pytest -k "a and b"`, true, "pytest -k 'a and b' '--junitxml=REPORT' -o 'junit_family=xunit2'"},
		{"cargo test", true, "cargo test"}, // a plan without a report: unchanged
		{"go test ./... | tee log", false, ""},
		{"go test ./... 2>&1", false, ""},
		{"go test $PKGS", false, ""},
		{"go test ./... && echo ok", false, ""},
		{"! go test ./...", false, ""},
		{"go test ./... &", false, ""},
		{"ls -la", false, ""},
		{"sudo go test ./...", false, ""},
		{"if then (", false, ""},
	} {
		t.Run(tc.script, func(t *testing.T) {
			w, ok, err := PrepareScript(tc.script, nil, testreport.Project{}, t.TempDir())
			if err != nil || ok != tc.ok {
				t.Fatalf("PrepareScript = %v, %v", ok, err)
			}
			if !ok {
				return
			}
			want := strings.ReplaceAll(tc.want, "REPORT", w.report)
			if w.Script != want {
				t.Errorf("script = %q, want %q", w.Script, want)
			}
			w.Finish(0)
		})
	}
}

// python -m unittest has no reporter: the driver counts its TestResult.
func TestRunUnittest(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3") // the Go suite does not need python
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "test_x.py"), []byte("import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self): pass\n    def test_b(self): pass\n    @unittest.skip('no')\n    def test_c(self): pass\n"), 0o644)
	for _, tc := range []struct {
		args   string
		passed bool
		run    int
		narrow bool
		out    string
	}{
		{"-m unittest -q", true, 2, false, "OK (skipped=1)"},
		{"-m unittest -q -k nosuch", false, 0, true, "Ran 0 tests"},
		{"-m unittest test_x.T.test_a", true, 1, true, "Ran 1 test"},
	} {
		argv := append([]string{py}, strings.Fields(tc.args)...)
		p, ok := testreport.New(argv, nil, testreport.Project{})
		if !ok {
			t.Fatalf("%q not planned", tc.args)
		}
		var out, errOut bytes.Buffer
		ev, _, err := Run(context.Background(), p, Options{Dir: dir, Stdout: &out, Stderr: &errOut})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Passed != tc.passed || ev.Counts.Run != tc.run || ev.Narrowed != tc.narrow || !strings.Contains(errOut.String(), tc.out) {
			t.Errorf("%s: evidence %+v\nstderr: %s", tc.args, ev, errOut.String())
		}
	}
	os.WriteFile(filepath.Join(dir, "test_y.py"), []byte("import unittest\n\nclass U(unittest.TestCase):\n    def test_fail(self): self.assertEqual(1, 2)\n"), 0o644)
	p, _ := testreport.New([]string{py, "-m", "unittest"}, nil, testreport.Project{})
	ev, code, _ := Run(context.Background(), p, Options{Dir: dir, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	if ev.Passed || code != 1 || ev.Counts.Failed != 1 || ev.Counts.Run != 3 {
		t.Errorf("failing suite: %+v code %d", ev, code)
	}
}

// The hook path's call protocol: mark, run through RunCall, read back.
func TestCallProtocol(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain")
	}
	dir := goModule(t, false)
	callDir := filepath.Join(t.TempDir(), "call")
	if !IsTestCommand("go test ./...") || IsTestCommand("go test ./... | tee x") || IsTestCommand("ls") {
		t.Fatal("IsTestCommand")
	}
	if err := MarkCall(callDir, dir, "go test ./..."); err != nil {
		t.Fatal(err)
	}
	if got := Command("/bin/sw", callDir, "go test './a b'"); !strings.HasPrefix(got, "'/bin/sw' testrun --call '") || !strings.HasSuffix(got, ` -c 'go test '\''./a b'\'''`) {
		t.Errorf("Command = %s", got)
	}
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	var out, errOut bytes.Buffer
	t.Setenv("GOFLAGS", "-count=1 -short")
	code := RunCall(callDir, "go test ./...", nil, &out, &errOut)
	cmd, ev, marked := ReadCall(callDir)
	if code != 0 || !marked || cmd != "go test ./..." || ev == nil || !ev.Passed || ev.Counts.Run != 3 || !ev.Narrowed || ev.NarrowedBy[0] != "GOFLAGS -short" {
		t.Errorf("RunCall = %d, %q, %+v\n%s%s", code, cmd, ev, out.String(), errOut.String())
	}
	if strings.Contains(out.String(), `"Action"`) {
		t.Errorf("the agent saw the JSON stream:\n%s", out.String())
	}
}
