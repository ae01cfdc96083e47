// Package e2e runs the real coding-agent harnesses (Claude Code, Codex,
// opencode, Pi; Cursor has no offline client) and the servers
// offline against internal/fakemodel and asserts what they did on disk and
// what they told the model.
//
// The tests carry the build tag e2e and need the harnesses installed by
// scripts/install-harnesses.sh:
//
//	bash scripts/install-harnesses.sh
//	go test -tags e2e ./e2e/...
//
// Without the tag this package holds only these helpers. With the tag and no
// harness installed, the tests fail and say how to install it. See
// docs/e2e.md for the environment, flags and harness behaviour they rely on.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// ClaudeCodeVersion is the Claude Code version scripts/install-harnesses.sh
// pins and the tests expect.
const ClaudeCodeVersion = "2.1.332"

// ClaudeBinaryEnv names the environment variable that overrides where the
// Claude Code binary is looked for.
const ClaudeBinaryEnv = "STATEWRIGHT_CLAUDE"

// RepoRoot returns the repository root: the nearest directory above this
// source file holding go.mod.
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("e2e: cannot locate source file")
	}
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("e2e: go.mod not found above " + filepath.Dir(file))
		}
		dir = parent
	}
}

// ClaudeBinary returns the absolute path of the Claude Code binary: the one
// named by $STATEWRIGHT_CLAUDE, else the one scripts/install-harnesses.sh
// installs under the repository's .harnesses prefix (or
// $STATEWRIGHT_HARNESS_PREFIX). The error says how to install it.
func ClaudeBinary() (string, error) {
	if p := os.Getenv(ClaudeBinaryEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("e2e: $%s=%s: %w", ClaudeBinaryEnv, p, err)
		}
		return filepath.Abs(p)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	prefix := os.Getenv("STATEWRIGHT_HARNESS_PREFIX")
	if prefix == "" {
		prefix = filepath.Join(root, ".harnesses")
	}
	p := filepath.Join(prefix, "node_modules", ".bin", "claude")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("e2e: Claude Code is not installed at %s: run `bash scripts/install-harnesses.sh` "+
			"(needs npm and the npm registry), or set $%s to a claude %s binary", p, ClaudeBinaryEnv, ClaudeCodeVersion)
	}
	return p, nil
}

// ClaudeHome makes dir a HOME in which Claude Code starts without
// onboarding: it writes ~/.claude.json with onboarding done and, for each
// project directory, the trust dialog accepted, and makes ~/tmp, which
// ClaudeEnv uses as TMPDIR. Keep dir short: Claude Code puts Unix sockets
// under $TMPDIR/cc-socks, and socket paths are limited to 107 bytes.
func ClaudeHome(dir string, projects ...string) error {
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o700); err != nil {
		return err
	}
	proj := map[string]any{}
	for _, p := range projects {
		proj[p] = map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}
	}
	cfg := map[string]any{
		"hasCompletedOnboarding":        true,
		"lastOnboardingVersion":         ClaudeCodeVersion,
		"bypassPermissionsModeAccepted": true,
		"projects":                      proj,
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ".claude.json"), b, 0o600)
}

// ClaudeEnv returns a complete environment for running Claude Code offline
// against a fake Anthropic server at baseURL, with home (prepared by
// ClaudeHome) as HOME and home/tmp as TMPDIR, so the run leaves nothing in
// /tmp. It does not inherit the caller's environment (which may hold a real
// API key or the variables of a Claude Code session the tests run inside)
// beyond PATH and LANG. extra entries ("K=V") are appended and win.
func ClaudeEnv(home, baseURL string, extra ...string) []string {
	env := []string{
		"HOME=" + home,
		"PATH=" + envOr("PATH", "/usr/local/bin:/usr/bin:/bin"),
		"LANG=" + envOr("LANG", "C.UTF-8"),
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"ANTHROPIC_BASE_URL=" + baseURL,
		"ANTHROPIC_API_KEY=fakemodel",
		// No update checks, telemetry, error reports, feature-flag fetches
		// or other calls to Anthropic's hosts.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_BUG_COMMAND=1",
		"DISABLE_NON_ESSENTIAL_MODEL_CALLS=1",
		"CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1",
		// Root may use bypassPermissions only inside a sandbox.
		"IS_SANDBOX=1",
	}
	return append(env, extra...)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// Run is one finished harness process.
type Run struct {
	Args           []string
	Stdout, Stderr []byte
	Elapsed        time.Duration
	// ExitCode is the process's exit code, -1 if it was killed.
	ExitCode int
	// TimedOut reports whether the deadline killed it.
	TimedOut bool
}

// RunCommand runs bin with args in dir with env, in a process group of its
// own. When timeout passes, the whole group is killed (so no hook or MCP
// server the harness started outlives the test); stray members of the group
// are killed on a normal exit too. The error is set only when the process
// could not be started.
func RunCommand(ctx context.Context, timeout time.Duration, dir string, env []string, bin string, args ...string) (*Run, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return killProcessGroup(cmd) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	err := cmd.Wait()
	// Whatever the outcome, nothing of the group may survive.
	_ = killProcessGroup(cmd)
	r := &Run{Args: args, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Elapsed: time.Since(start),
		ExitCode: cmd.ProcessState.ExitCode(), TimedOut: ctx.Err() != nil}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) && !r.TimedOut {
		return r, err
	}
	return r, nil
}

// Events parses stream-json output (one JSON object per line), skipping
// lines that are not JSON objects.
func (r *Run) Events() []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(r.Stdout))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev != nil {
			out = append(out, ev)
		}
	}
	return out
}

// Result returns the stream's final "result" event, or nil.
func (r *Run) Result() map[string]any {
	var last map[string]any
	for _, ev := range r.Events() {
		if ev["type"] == "result" {
			last = ev
		}
	}
	return last
}

// String describes the run for failure messages.
func (r *Run) String() string {
	return fmt.Sprintf("claude %s\nexit=%d timed_out=%v elapsed=%v\n--- stdout\n%s\n--- stderr\n%s",
		strings.Join(r.Args, " "), r.ExitCode, r.TimedOut, r.Elapsed.Round(time.Millisecond), tail(r.Stdout), tail(r.Stderr))
}

func tail(b []byte) string {
	const max = 8000
	if len(b) > max {
		return "…" + string(b[len(b)-max:])
	}
	return string(b)
}
