package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Sandbox says how commands run.
type Sandbox struct {
	// Bwrap is the bubblewrap binary when commands run under it, "" when
	// they run directly in the workspace.
	Bwrap string
	// Why says why there is no sandbox (empty when there is one).
	Why string
	// Writable are further directories commands may write (build caches such
	// as GOCACHE); everything outside the workspace and these is read-only.
	Writable []string
	// ReadOnly are paths inside the workspace commands must not write
	// (.statewright, a store file kept in the workspace).
	ReadOnly []string
}

// String is "bwrap" or "none: <why>".
func (s *Sandbox) String() string {
	if s.Bwrap != "" {
		return "bwrap"
	}
	return "none: " + s.Why
}

// bwrapBase are the arguments every sandboxed command gets: the whole
// filesystem read-only, fresh /dev, /proc and /tmp, every namespace
// unshared (no network), killed with the runner, in a new session (no
// terminal injection).
var bwrapBase = []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
	"--unshare-all", "--die-with-parent", "--new-session"}

// DetectSandbox finds bubblewrap and checks that the kernel lets it create
// its namespaces (unprivileged user namespaces may be disabled, or a
// container may forbid them). Without it, Why says what failed.
func DetectSandbox(ctx context.Context) Sandbox {
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		return Sandbox{Why: "bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)"}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	args := append(append([]string{}, bwrapBase...), "--", "/bin/sh", "-c", "exit 0")
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bw, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return Sandbox{Why: "bubblewrap cannot create namespaces here: " + msg}
	}
	return Sandbox{Bwrap: bw}
}

// CommandResult is what a command did.
type CommandResult struct {
	ExitCode int
	// Output is stdout and stderr interleaved, capped (the middle is cut).
	Output   string
	TimedOut bool
	// Truncated is the number of bytes cut from the middle.
	Truncated int
}

// Limits bound a command.
type Limits struct {
	Timeout   time.Duration // default 120s
	OutputCap int           // bytes kept, default 16 KiB
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

// Run runs command with bash in the workspace, under the sandbox when
// there is one.
func (s *Sandbox) Run(ctx context.Context, ws *Workspace, command string, lim Limits) (CommandResult, error) {
	if lim.Timeout <= 0 {
		lim.Timeout = 120 * time.Second
	}
	if lim.OutputCap <= 0 {
		lim.OutputCap = 16 << 10
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	var cmd *exec.Cmd
	if s.Bwrap != "" {
		args := append([]string{}, bwrapBase...)
		args = append(args, "--bind", ws.Root, ws.Root)
		for _, d := range s.Writable {
			if d == "" {
				continue
			}
			if err := os.MkdirAll(d, 0o755); err == nil {
				args = append(args, "--bind", d, d)
			}
		}
		for _, p := range s.ReadOnly {
			if _, err := os.Lstat(p); err == nil {
				args = append(args, "--ro-bind", p, p)
			}
		}
		args = append(args, "--chdir", ws.Root, "--", "/bin/bash", "-c", command)
		cmd = exec.Command(s.Bwrap, args...)
		cmd.Env = commandEnv("/tmp")
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
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.Stdin = nil
	if err := cmd.Start(); err != nil {
		return CommandResult{}, fmt.Errorf("run: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	timedOut := false
	select {
	case werr = <-done:
	case <-ctx.Done():
		timedOut = true
		killProcessGroup(cmd)
		werr = <-done
	}
	res := CommandResult{TimedOut: timedOut}
	res.Output, res.Truncated = headTail(buf.Bytes(), lim.OutputCap)
	var ee *exec.ExitError
	switch {
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
