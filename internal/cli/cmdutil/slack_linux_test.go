package cmdutil

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestWidenTimerSlack runs this test binary as a child that calls
// WidenTimerSlack: it must start twice in the same process (re-executed
// once), end with the wide slack, and not pass the marker on.
func TestWidenTimerSlack(t *testing.T) {
	if os.Getenv("STATEWRIGHT_TEST_SLACK_CHILD") != "" {
		fmt.Printf("start %d\n", os.Getpid())
		WidenTimerSlack()
		cur, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, 30, 0, 0) // PR_GET_TIMERSLACK
		fmt.Printf("slack %d %d marker=%q\n", cur, e, os.Getenv(slackExecEnv))
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWidenTimerSlack$")
	cmd.Env = append(os.Environ(), "STATEWRIGHT_TEST_SLACK_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	pid := cmd.Process.Pid
	starts := strings.Repeat(fmt.Sprintf("start %d\n", pid), 2)
	if cur, _, _ := syscall.RawSyscall(syscall.SYS_PRCTL, 30, 0, 0); cur >= LongLivedTimerSlack {
		starts = fmt.Sprintf("start %d\n", pid) // the child inherits a wide slack: nothing to do
	}
	want := starts + fmt.Sprintf("slack %d 0 marker=\"\"\n", LongLivedTimerSlack)
	if string(out) != want {
		t.Errorf("child printed\n%s\nwant\n%s", out, want)
	}
}
