package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// The call protocol. A hook that lets a shell call through under the
// sandbox prepares the call's directory outside the sandbox (PrepareCall):
// it writes the profile in force at the decision into profile.json and
// rewrites the command to run `statewright sandbox exec --call DIR -c CMD`
// (ShellCommand). The launcher (Launch) reads the profile, runs the command
// under bubblewrap and writes result.json (exit status, what the sandbox
// refused) into the same directory, which the sandboxed command cannot
// write: only DIR/rw is writable inside, and it carries the final working
// directory back to the harness's shell. PostToolUse reads the result
// (ReadResult) for evidence and lessons, and removes the directory.
//
// Layout, under Root (default $XDG_CACHE_HOME/statewright/sandbox):
//
//	cache/                   GOCACHE, GOMODCACHE, npm, pip, cargo, XDG cache
//	                         (shared by the sessions; never the user's own)
//	<session>/tmp/           mounted at /tmp
//	<session>/calls/<id>/    profile.json, result.json (read-only inside)
//	<session>/calls/<id>/rw/ the final working directory (writable inside)

// CacheDirs are the per-session cache directories policy.SandboxProfile
// points the tools at; PrepareCall creates them.
var CacheDirs = []string{"go-build", "gomod", "npm", "pip", "cargo", "xdg"}

// DefaultRoot returns the directory that holds per-session sandbox
// directories: $XDG_CACHE_HOME/statewright/sandbox, else
// ~/.cache/statewright/sandbox.
func DefaultRoot() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("sandbox: no cache directory for the per-session directories: %w", err)
	}
	return filepath.Join(d, "statewright", "sandbox"), nil
}

// SessionDir returns a session's directory under root. The session key is
// hashed: it comes from the harness and may hold any character.
func SessionDir(root, session string) string {
	h := sha256.Sum256([]byte(session))
	return filepath.Join(root, hex.EncodeToString(h[:12]))
}

// Call is one prepared sandboxed call.
type Call struct {
	// Dir holds profile.json and result.json; read-only inside.
	Dir string
	// RW is the call's writable directory inside the sandbox.
	RW string
}

// CallDir returns the directory of call id in a session directory. Ids
// are hashed too (tool_use_id is the harness's).
func CallDir(sessionDir, id string) Call {
	h := sha256.Sum256([]byte(id))
	d := filepath.Join(sessionDir, "calls", hex.EncodeToString(h[:12]))
	return Call{Dir: d, RW: filepath.Join(d, "rw")}
}

// callFile is profile.json: the profile in force at the decision.
type callFile struct {
	Profile Profile `json:"profile"`
	// Bwrap is bubblewrap's path as the hook found it.
	Bwrap string `json:"bwrap,omitempty"`
}

// PrepareCall creates the session's directories and the call's, and writes
// the profile (which must name sessionDir's tmp and the call's RW, as
// policy.SandboxProfile does when given them). A directory left by an
// earlier call with the same id is replaced.
func PrepareCall(sessionDir, cacheDir, id string, a Availability, p *Profile) (Call, error) {
	c := CallDir(sessionDir, id)
	if err := PrepareSession(sessionDir, cacheDir); err != nil {
		return Call{}, err
	}
	if err := os.RemoveAll(c.Dir); err != nil {
		return Call{}, fmt.Errorf("sandbox: %w", err)
	}
	if err := os.MkdirAll(c.RW, 0o700); err != nil {
		return Call{}, fmt.Errorf("sandbox: %w", err)
	}
	b, err := json.Marshal(callFile{Profile: *p, Bwrap: a.Bwrap})
	if err != nil {
		return Call{}, fmt.Errorf("sandbox: %w", err)
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "profile.json"), b, 0o600); err != nil {
		return Call{}, fmt.Errorf("sandbox: %w", err)
	}
	return c, nil
}

// PrepareSession creates a session's tmp directory and the cache
// directories under cacheDir ("" for sessionDir/cache).
func PrepareSession(sessionDir, cacheDir string) error {
	if cacheDir == "" {
		cacheDir = filepath.Join(sessionDir, "cache")
	}
	dirs := []string{filepath.Join(sessionDir, "tmp")}
	for _, d := range CacheDirs {
		dirs = append(dirs, filepath.Join(cacheDir, d))
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	return nil
}

// SharedCache returns the cache directory every session under root shares.
func SharedCache(root string) string { return filepath.Join(root, "cache") }

// Quote quotes s as one word for a POSIX shell.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellCommand returns the command a harness's shell runs instead of the
// agent's command: the launcher (bin, an absolute path) running command
// under the call's profile, then, in the harness's own shell, a cd to the
// directory the command ended in (so that `cd` carries over between calls
// as it does unsandboxed), and the command's exit status.
func ShellCommand(bin string, c Call, command string) string {
	bin = LauncherFor(bin)
	cwd := Quote(filepath.Join(c.RW, "cwd"))
	return Quote(bin) + " sandbox exec --call " + Quote(c.Dir) + " -c " + Quote(command) +
		"; __sw_rc=$?; { IFS= read -r __sw_d < " + cwd + " && cd -- \"$__sw_d\"; } 2>/dev/null; (exit $__sw_rc)"
}

// Result is what the launcher recorded about a call, outside the sandbox.
type Result struct {
	// ExitCode is the command's exit status (128+n for a signal).
	ExitCode int `json:"exit_code"`
	// Phase is the profile's phase.
	Phase string `json:"phase,omitempty"`
	// Refused are paths the sandbox refused to write (read-only file
	// system) or that were missing because hidden, as the command's
	// errors named them, for the lesson PostToolUse adds.
	Refused []string `json:"refused,omitempty"`
	// NetRefused are the hosts the network proxy refused.
	NetRefused []string `json:"net_refused,omitempty"`
}

// ReadResult reads the launcher's result for a call; ok is false when the
// launcher did not run (or did not finish).
func ReadResult(c Call) (Result, bool) {
	b, err := os.ReadFile(filepath.Join(c.Dir, "result.json"))
	if err != nil {
		return Result{}, false
	}
	var r Result
	if json.Unmarshal(b, &r) != nil {
		return Result{}, false
	}
	return r, true
}

// Remove deletes a call's directory.
func (c Call) Remove() error { return os.RemoveAll(c.Dir) }

// Launch is the launcher: it runs script (a shell command, with -c) or
// argv under the profile the call's directory holds, in the current
// directory, with the caller's environment stripped of statewright's
// variables, and returns the exit status to exit with. It never runs the
// command unsandboxed: a missing profile or a bubblewrap that fails is an
// error (exit 126 with the reason on stderr).
func Launch(callDir string, script string, argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "statewright sandbox:", err)
		return 126
	}
	b, err := os.ReadFile(filepath.Join(callDir, "profile.json"))
	if err != nil {
		return fail(fmt.Errorf("no profile for this call (%w); the command did not run", err))
	}
	var cf callFile
	if err := json.Unmarshal(b, &cf); err != nil {
		return fail(fmt.Errorf("bad profile for this call (%w); the command did not run", err))
	}
	c := Call{Dir: callDir, RW: filepath.Join(callDir, "rw")}
	p := cf.Profile
	dir, err := os.Getwd()
	if err != nil {
		return fail(err)
	}
	if strings.HasPrefix(dir+"/", "/tmp/") {
		p.Visible = append(p.Visible, dir)
	}
	if script != "" {
		// Record where the command ends up, for ShellCommand's cd.
		argv = []string{"/bin/bash", "-c", `trap 'pwd -P 2>/dev/null >| "$__sw_cwd_file"' EXIT` + "\n" + script}
	}
	if len(argv) == 0 {
		return fail(errors.New("no command"))
	}
	bw := cf.Bwrap
	if bw == "" {
		if bw, err = exec.LookPath("bwrap"); err != nil {
			return fail(fmt.Errorf("bubblewrap is not installed; the command did not run"))
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	binds, prefix, proxy, stopNet, err := netSetup(&p, exe, stderr)
	if err != nil {
		return fail(err)
	}
	defer stopNet()
	bargs, err := args(&p, dir, append(prefix, argv...), binds)
	if err != nil {
		return fail(err)
	}
	env := MergeEnv(StripEnv(os.Environ()), profileEnv(&p))
	if script != "" {
		env = append(env, "__sw_cwd_file="+filepath.Join(c.RW, "cwd"))
	}
	cmd := exec.Command(bw, bargs...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout = stdin, stdout
	scan := &refusalScanner{w: stderr}
	cmd.Stderr = scan
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	code := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	default:
		return fail(err)
	}
	scan.flush()
	r := Result{ExitCode: code, Phase: p.Phase, Refused: scan.refused()}
	if proxy != nil {
		r.NetRefused = proxy.Denied()
	}
	if rb, err := json.Marshal(r); err == nil {
		_ = os.WriteFile(filepath.Join(callDir, "result.json"), rb, 0o600)
	}
	return code
}

// Main is the launcher's command line: args are what follows "exec"
// (--call DIR, then -c SCRIPT or -- ARGV...). It returns the exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var callDir, script string
	var argv []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--call" && i+1 < len(args):
			i++
			callDir = args[i]
		case a == "-c" && i+1 < len(args):
			i++
			script = args[i]
		case a == "--":
			argv = args[i+1:]
			i = len(args)
		default:
			fmt.Fprintf(stderr, "statewright sandbox exec: unexpected argument %q (usage: sandbox exec --call DIR (-c SCRIPT | -- ARGV...))\n", a)
			return 2
		}
	}
	if callDir == "" || (script == "") == (len(argv) == 0) {
		fmt.Fprintln(stderr, "statewright sandbox exec: usage: sandbox exec --call DIR (-c SCRIPT | -- ARGV...)")
		return 2
	}
	return Launch(callDir, script, argv, stdin, stdout, stderr)
}

// LauncherFor returns the launcher a hook's rewritten command runs for the
// statewright binary bin: statewright-sandbox next to it when present (a
// small binary: bench/sandbox.txt), else bin itself.
func LauncherFor(bin string) string {
	slim := filepath.Join(filepath.Dir(bin), "statewright-sandbox")
	if fi, err := os.Stat(slim); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return slim
	}
	return bin
}

// refusalScanner passes stderr through and notes the paths that errors
// report as on a read-only file system.
type refusalScanner struct {
	w    io.Writer
	mu   sync.Mutex
	line bytes.Buffer
	seen []string
}

func (s *refusalScanner) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) < 20 && s.line.Len() < 64<<10 {
		s.line.Write(b)
		for {
			i := bytes.IndexByte(s.line.Bytes(), '\n')
			if i < 0 {
				break
			}
			s.note(string(s.line.Next(i + 1)))
		}
	}
	return s.w.Write(b)
}

func (s *refusalScanner) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.line.Len() > 0 {
		s.note(s.line.String())
		s.line.Reset()
	}
}

func (s *refusalScanner) note(line string) {
	if p := RefusedPath(line); p != "" && len(s.seen) < 20 {
		for _, q := range s.seen {
			if q == p {
				return
			}
		}
		s.seen = append(s.seen, p)
	}
}

// RefusedPath returns the path an error line reports as on a read-only
// file system ("" when the line reports no such thing): a quoted path
// (python's "[Errno 30] Read-only file system: 'x'", coreutils' "cannot
// touch 'x'"), else the last ": "-separated field before the message
// (bash's "line 1: x: Read-only file system", Go's "open x: read-only file
// system").
func RefusedPath(line string) string {
	line = strings.TrimRight(line, "\r\n")
	i := strings.Index(strings.ToLower(line), "read-only file system")
	if i < 0 {
		return ""
	}
	for _, q := range []string{"'", "\"", "`"} {
		if a := strings.Index(line, q); a >= 0 {
			if b := strings.Index(line[a+1:], q); b > 0 {
				return line[a+1 : a+1+b]
			}
		}
	}
	before := strings.TrimSuffix(strings.TrimSpace(line[:i]), ":")
	if j := strings.LastIndex(before, ": "); j >= 0 {
		before = before[j+2:]
	}
	for _, op := range []string{"open ", "mkdir ", "remove ", "rename ", "create "} {
		before = strings.TrimPrefix(before, op)
	}
	if before == "" || strings.ContainsAny(before, " \t") {
		return ""
	}
	return before
}

func (s *refusalScanner) refused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen
}
