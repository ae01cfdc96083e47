package person

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The test binary doubles as the command under check:
//
//	<test binary> person-check REGISTRY tty|token
//
// prints "person" or the refusal.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "person-check" {
		if err := Check(os.Args[2], os.Args[3] == "tty"); err != nil {
			os.Stdout.WriteString("refused: " + err.Error() + "\n")
		} else {
			os.Stdout.WriteString("person\n")
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func register(t *testing.T, dir string, pid int) {
	t.Helper()
	p, err := readProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(pid)+"-"+strconv.FormatUint(p.start, 10)), []byte(p.comm), 0o600); err != nil {
		t.Fatal(err)
	}
}

func check(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// TestAgentDescendantsAreRefused: with this test process registered as a
// harness, its children are the agent: directly, under script's pty, and
// detached with setsid.
func TestAgentDescendantsAreRefused(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	reg := t.TempDir()
	self, _ := os.Executable()
	if out := check(t, self, "person-check", reg, "token"); !strings.Contains(out, "person") {
		t.Fatalf("without a registered harness: %s", out)
	}
	register(t, reg, os.Getpid())
	if out := check(t, self, "person-check", reg, "token"); !strings.Contains(out, "refused") || !strings.Contains(out, "harness") {
		t.Errorf("a child of the harness passed: %s", out)
	}
	if _, err := exec.LookPath("script"); err == nil {
		out := check(t, "script", "-qc", self+" person-check "+reg+" tty", "/dev/null")
		if !strings.Contains(out, "refused") {
			t.Errorf("under script -qc: %s", out)
		}
	}
	if _, err := exec.LookPath("setsid"); err == nil {
		// setsid -f forks: the checked process is re-parented to init
		// after the harness started.
		outf := filepath.Join(t.TempDir(), "out")
		check(t, "setsid", "-f", "sh", "-c", self+" person-check "+reg+" token > "+outf)
		var out []byte
		for i := 0; i < 200 && len(out) == 0; i++ {
			out, _ = os.ReadFile(outf)
			if len(out) == 0 {
				exec.Command("sleep", "0.05").Run()
			}
		}
		if !strings.Contains(string(out), "refused") {
			t.Errorf("detached with setsid -f: %q", out)
		}
	}
}

// TestOtherProcessesAreNotTheAgent: a registered harness that is not an
// ancestor (a sibling started later) does not make this process the agent.
func TestOtherProcessesAreNotTheAgent(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	reg := t.TempDir()
	sib := exec.Command("sleep", "30")
	if err := sib.Start(); err != nil {
		t.Fatal(err)
	}
	defer sib.Process.Kill()
	register(t, reg, sib.Process.Pid)
	if err := Check(reg, false); err != nil {
		t.Errorf("a process outside the harness's tree was refused: %v", err)
	}
	// A dead harness's entry is stale and removed.
	sib.Process.Kill()
	sib.Wait()
	if hs := liveHarnesses(reg); len(hs) != 0 {
		t.Errorf("a dead harness is still live: %+v", hs)
	}
}

func TestPtsNumber(t *testing.T) {
	for _, tt := range []struct {
		nr   uint64
		n    int
		isPt bool
	}{{136<<8 | 3, 3, true}, {137<<8 | 1, 257, true}, {4<<8 | 1, 0, false}, {0, 0, false}} {
		n, ok := ptsNumber(tt.nr)
		if n != tt.n || ok != tt.isPt {
			t.Errorf("ptsNumber(%d) = %d %v", tt.nr, n, ok)
		}
	}
}
