package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/testreport"
	"github.com/statewright-go/statewright/testreport/testrun"
)

// Sandbox says how commands run: under package sandbox's bubblewrap
// profile when one is available, directly in the workspace otherwise.
type Sandbox struct {
	// Bwrap is the bubblewrap binary when commands run under it, "" when
	// they run directly in the workspace.
	Bwrap string
	// Why says why there is no sandbox (empty when there is one).
	Why string
	// Writable are further directories commands may write (a cache of the
	// runner's own); used by the default profile only.
	Writable []string
	// ReadOnly are paths inside the workspace commands must not write
	// (.statewright, a store file kept in the workspace); used by the
	// default profile only.
	ReadOnly []string
	// Hidden are paths commands must not see (the store, tokens), in every
	// profile.
	Hidden []string
}

// String is "bwrap" or "none: <why>".
func (s *Sandbox) String() string {
	if s.Bwrap != "" {
		return "bwrap"
	}
	return "none: " + s.Why
}

// DetectSandbox reports whether commands can run under bubblewrap here
// (sandbox.Detect); without it, Why says what failed.
func DetectSandbox(context.Context) Sandbox {
	a := sandbox.Detect()
	if !a.OK() {
		return Sandbox{Why: a.Why}
	}
	return Sandbox{Bwrap: a.Bwrap}
}

// availability is s as package sandbox sees it.
func (s *Sandbox) availability() sandbox.Availability {
	if s.Bwrap == "" {
		return sandbox.Availability{Why: s.Why}
	}
	return sandbox.Availability{Bwrap: s.Bwrap}
}

// defaultProfile is the profile of a command run without a phase's
// (the eval's own test run, tools used outside a run): the workspace and
// Writable writable, ReadOnly and the protected trees read-only, Hidden
// hidden, no network.
func (s *Sandbox) defaultProfile(ws *Workspace) *sandbox.Profile {
	p := &sandbox.Profile{Visible: []string{ws.Root}, Hidden: s.Hidden}
	p.Writable = append([]string{ws.Root}, s.Writable...)
	p.ReadOnly = append(append([]string{}, s.ReadOnly...), policy.ProtectedTrees(ws.Root, "")...)
	return p
}

// CommandResult is what a command did.
type CommandResult struct {
	ExitCode int
	// Output is stdout and stderr interleaved, capped (the middle is cut).
	Output   string
	TimedOut bool
	// Stopped says the command was killed because the run left the phase
	// it was decided in (ctx was cancelled with ErrPhaseLeft).
	Stopped bool
	// Truncated is the number of bytes cut from the middle.
	Truncated int
	// Test is the structured evidence of a plain test command (go test,
	// pytest, ...), which RunIn makes write its report; nil otherwise.
	Test *testreport.Evidence
}

// ErrPhaseLeft is the cause with which the runner cancels a command's
// context when the run leaves the phase the command was decided in (a
// person's transition elsewhere): RunIn kills the command, and its
// sandbox with everything in it, as a transition stops the phase's
// sandbox of a hook-routed harness (docs/sandbox.md).
var ErrPhaseLeft = errors.New("the run left the phase this command was decided in")

// Limits bound a command.
type Limits struct {
	Timeout   time.Duration // default 120s
	OutputCap int           // bytes kept, default 16 KiB
}

// withDefaults fills the zero fields with their defaults.
func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = 120 * time.Second
	}
	if l.OutputCap <= 0 {
		l.OutputCap = 16 << 10
	}
	return l
}

// commandEnv is the environment commands get: nothing of the runner's
// (no tokens, no API keys) but what tools need to run.
func commandEnv(home string) []string {
	env := []string{
		"PATH=" + envOr("PATH", "/usr/local/bin:/usr/bin:/bin"),
		"HOME=" + home,
		"TMPDIR=/tmp",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"GOTOOLCHAIN=local",
		"GOPROXY=off",
		"GOFLAGS=-mod=mod",
		"PYTHONDONTWRITEBYTECODE=1",
		"NO_COLOR=1",
		"CI=1",
	}
	for _, k := range []string{"GOMODCACHE", "GOROOT"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	if c := GoBuildCache(); c != "" {
		env = append(env, "GOCACHE="+c)
	}
	return env
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// headTail keeps the first and last halves of out within max bytes.
func headTail(out []byte, max int) (string, int) {
	if len(out) <= max {
		return string(out), 0
	}
	half := max / 2
	cut := len(out) - 2*half
	return string(out[:half]) + fmt.Sprintf("\n… [%d bytes cut] …\n", cut) + string(out[len(out)-half:]), cut
}

// Run runs command with bash in the workspace, under the default profile
// when there is a sandbox.
func (s *Sandbox) Run(ctx context.Context, ws *Workspace, command string, lim Limits) (CommandResult, error) {
	return s.RunIn(ctx, ws, nil, command, lim)
}

// RunIn runs command with bash in the workspace under prof, the profile of
// the phase the call was decided in (nil: the default profile), when there
// is a sandbox; directly in the workspace when there is none.
func (s *Sandbox) RunIn(ctx context.Context, ws *Workspace, prof *sandbox.Profile, command string, lim Limits) (CommandResult, error) {
	lim = lim.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	// A plain test command also writes its structured report, into a
	// directory the sandbox lets it write: the evidence comes from it.
	reportDir, err := os.MkdirTemp("", "statewright-agent-report-")
	if err != nil {
		return CommandResult{}, fmt.Errorf("run: %w", err)
	}
	defer os.RemoveAll(reportDir)
	tw, isTest, err := testrun.PrepareScript(command, commandEnv("/tmp"), testreport.Project{FS: os.DirFS(ws.Root)}, reportDir)
	if err != nil {
		return CommandResult{}, fmt.Errorf("run: %w", err)
	}
	if isTest {
		command = tw.Script
	}
	var cmd *exec.Cmd
	if s.Bwrap != "" {
		if prof == nil {
			prof = s.defaultProfile(ws)
		} else {
			p := *prof
			p.Hidden = append(append([]string{}, p.Hidden...), s.Hidden...)
			prof = &p
		}
		if isTest {
			p := *prof
			p.Writable = append(append([]string{}, p.Writable...), reportDir)
			prof = &p
		}
		for _, d := range s.Writable {
			if d != "" {
				_ = os.MkdirAll(d, 0o755)
			}
		}
		var err error
		// The command's context ends when it has run: that stops the
		// network proxy a profile with a domain list starts.
		cctx, stop := context.WithCancel(context.Background())
		defer stop()
		cmd, err = sandbox.Command(cctx, s.availability(), prof, ws.Root, []string{"/bin/bash", "-c", command}, commandEnv("/tmp"))
		if err != nil {
			return CommandResult{}, fmt.Errorf("run: %w", err)
		}
	} else {
		home, err := os.MkdirTemp("", "statewright-agent-home-")
		if err != nil {
			return CommandResult{}, fmt.Errorf("run: %w", err)
		}
		defer os.RemoveAll(home)
		cmd = exec.Command("/bin/bash", "-c", command)
		cmd.Dir = ws.Root
		cmd.Env = commandEnv(home)
	}
	setProcessGroup(cmd)
	var buf bytes.Buffer
	shared := testrun.SharedWriter(&buf)
	cmd.Stdout, cmd.Stderr = shared, shared
	var testOut io.WriteCloser
	if isTest {
		testOut = tw.Stdout(shared)
		cmd.Stdout = testOut
	}
	cmd.Stdin = nil
	if err := cmd.Start(); err != nil {
		return CommandResult{}, fmt.Errorf("run: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	timedOut, stopped := false, false
	select {
	case werr = <-done:
	case <-ctx.Done():
		stopped = errors.Is(context.Cause(ctx), ErrPhaseLeft)
		timedOut = !stopped
		killProcessGroup(cmd)
		werr = <-done
	}
	if testOut != nil {
		testOut.Close()
	}
	res := CommandResult{TimedOut: timedOut, Stopped: stopped}
	res.Output, res.Truncated = headTail(buf.Bytes(), lim.OutputCap)
	var ee *exec.ExitError
	switch {
	case stopped:
		res.ExitCode = 128 + 9
	case timedOut:
		res.ExitCode = 124
	case werr == nil:
	case errors.As(werr, &ee):
		res.ExitCode = ee.ExitCode()
		if res.ExitCode < 0 {
			res.ExitCode = 128 + 9
		}
	default:
		return CommandResult{}, fmt.Errorf("run: %w", werr)
	}
	if isTest {
		ev := tw.Finish(res.ExitCode)
		res.Test = &ev
	}
	return res, nil
}

// GoBuildCache returns the Go build cache directory a sandboxed `go test`
// may write: $GOCACHE, else the user cache's go-build ("" when unknown).
func GoBuildCache() string {
	if v := os.Getenv("GOCACHE"); v != "" && v != "off" {
		return v
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "go-build")
	}
	return ""
}
