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
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// The call protocol. A hook that lets a shell call through under the
// sandbox prepares the call's directory outside the sandbox (PrepareCall):
// it writes the profile in force at the decision into profile.json and
// bubblewrap's arguments for it into bwrap.args, and rewrites the command
// to run `statewright-sandbox sandbox exec --call DIR -c CMD`
// (ShellCommand). The launcher (Exec) sends the command to the phase's
// server (server_linux.go); failing that, it reads the arguments, strips
// statewright's variables from the environment and runs bubblewrap, as its
// child with the phase's watcher beside it (follow_linux.go), or, with no
// watcher, by replacing itself with bubblewrap (bench/sandbox.txt).
// The harness's own shell, after the launcher returns, writes the exit
// status into DIR/status and cds to the directory the command ended in
// (DIR/rw/cwd). A launcher given an Observer (`statewright sandbox exec`,
// for test commands) instead runs bubblewrap as its child, hands the
// command's stdout through the observer outside the sandbox and writes
// what it saw into DIR/result.json. The sandboxed command cannot write DIR:
// only DIR/rw is writable inside. PostToolUse reads the result
// (ReadResult) for evidence and lessons, and removes the directory once
// the command has ended (its status is there).
//
// Layout, under Root (default $XDG_CACHE_HOME/statewright/sandbox):
//
//	cache/                   GOCACHE, GOMODCACHE, npm, pip, cargo, XDG cache
//	                         (shared by the sessions; never the user's own)
//	<session>/tmp/           mounted at /tmp
//	<session>/calls/<id>/    profile.json, bwrap.args, absent.json, status,
//	                         result.json (read-only inside)
//	<session>/quarantine/<id>/ what a command planted (Sweep)
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
	// Command is the agent's command as it asked for it (the harness
	// reports the rewritten one at PostToolUse).
	Command string `json:"command,omitempty"`
	// Argv is Command's words when it is one simple command of literal
	// words (shell.LiteralArgv): the phase's server may then execute the
	// program itself instead of `bash -c` (direct_linux.go).
	Argv []string `json:"argv,omitempty"`
	// Pipeline is Command's elements when it is a pipeline of two or more
	// simple commands of literal words (shell.LiteralPipeline): the
	// server may then run the programs without the inner bash
	// (pipe_linux.go).
	Pipeline [][]string `json:"pipeline,omitempty"`
	// List is Command's items when it is a list of literal pipelines
	// with simple redirections (shell.LiteralList) and neither Argv nor
	// Pipeline: the server may then run it without the inner bash
	// (list_linux.go).
	List []ListItem `json:"list,omitempty"`
}

// ListItem is one pipeline of a list the server may run without the
// inner bash (shell.ListItem, docs/sandbox.md "Direct exec of literal
// lists").
type ListItem struct {
	// Op joins it to what comes before: "" (the first), ";", "&&", "||".
	Op string `json:"op,omitempty"`
	// Offset is where the item starts in the command: the rest of the
	// list, which bash runs when the server cannot go on.
	Offset int       `json:"offset"`
	Cmds   []ListCmd `json:"cmds"`
}

// ListCmd is one simple command of a ListItem: a program, or the builtin
// true, false, : or cd, and its redirections in order.
type ListCmd struct {
	Argv   []string `json:"argv"`
	Redirs []Redir  `json:"redirs,omitempty"`
}

// Redir is one redirection (shell.Redir): Fd 0, 1 or 2; Op "<", ">",
// ">>", ">&" (Target "0", "1" or "2"), "&>" or "&>>".
type Redir struct {
	Fd     int    `json:"fd"`
	Op     string `json:"op"`
	Target string `json:"target"`
}

// callCommand is command.json: profile.json's Command and Argv alone (a
// profile.json is tens of kilobytes of JSON, whose decoding was a large
// part of the keeper's work per command).
type callCommand struct {
	Command  string     `json:"command"`
	Argv     []string   `json:"argv,omitempty"`
	Pipeline [][]string `json:"pipeline,omitempty"`
	List     []ListItem `json:"list,omitempty"`
}

// Files of a call's directory.
const (
	profileFile = "profile.json"
	// commandFile is the agent's command and its words alone (callCommand):
	// what the keeper reads per command, without decoding the profile.
	commandFile = "command.json"
	argsFile    = "bwrap.args"
	statusFile  = "status"
	resultFile  = "result.json"
	// absentFile lists the protected names the command could create
	// (Absent), as they were at the decision, when there are any: the
	// launcher checks them when the command ends (Sweep).
	absentFile = "absent.json"
	// cwdEnv names the file the inner shell records its final directory in.
	cwdEnv = "__sw_cwd_file"
)

// PrepareCall creates the session's directories and the call's, and writes
// the profile (which must name sessionDir's tmp and the call's RW, as
// policy.SandboxProfile does when given them), bubblewrap's arguments for
// it and the agent's command. A directory left by an earlier call with the
// same id is replaced. The profile's paths are resolved now, at the
// decision.
func PrepareCall(sessionDir, cacheDir, id string, a Availability, p *Profile, command string) (Call, error) {
	return PrepareCallArgv(sessionDir, cacheDir, id, a, p, command, nil)
}

// PrepareCallArgv is PrepareCall for a command whose words are argv when
// it is one simple command of literal words (shell.LiteralArgv; nil
// otherwise): the phase's server then runs the program without the inner
// bash, as that bash would (docs/sandbox.md, "Direct exec").
func PrepareCallArgv(sessionDir, cacheDir, id string, a Availability, p *Profile, command string, argv []string) (Call, error) {
	var elems [][]string
	if argv != nil {
		elems = [][]string{argv}
	}
	return PrepareCallPipeline(sessionDir, cacheDir, id, a, p, command, elems)
}

// PrepareCallPipeline is PrepareCall for a command whose elements are
// elems when it is a pipeline of simple commands of literal words
// (shell.LiteralPipeline; one element for a simple command, nil
// otherwise): the phase's server then runs the programs without the inner
// bash, as that bash would (docs/sandbox.md, "Direct exec" and "Direct
// exec of literal pipelines").
func PrepareCallPipeline(sessionDir, cacheDir, id string, a Availability, p *Profile, command string, elems [][]string) (Call, error) {
	return PrepareCallList(sessionDir, cacheDir, id, a, p, command, elems, nil)
}

// PrepareCallList is PrepareCallPipeline for a command that may instead be
// a list of literal pipelines with simple redirections (list, from
// shell.LiteralList; used only when elems is nil): the phase's server then
// runs it without the inner bash as far as it is sure bash would do the
// same, and hands the rest to bash (docs/sandbox.md, "Direct exec of
// literal lists").
func PrepareCallList(sessionDir, cacheDir, id string, a Availability, p *Profile, command string, elems [][]string, list []ListItem) (Call, error) {
	if len(elems) > 0 {
		list = nil
	}
	var argv []string
	var pipeline [][]string
	switch {
	case len(elems) == 1:
		argv = elems[0]
	case len(elems) > 1:
		pipeline = elems
	}
	c := CallDir(sessionDir, id)
	if !a.OK() {
		return Call{}, fmt.Errorf("%w: %s", ErrUnavailable, a.Why)
	}
	if err := PrepareSession(sessionDir, cacheDir); err != nil {
		return Call{}, err
	}
	if err := os.RemoveAll(c.Dir); err != nil {
		return Call{}, fmt.Errorf("sandbox: %w", err)
	}
	if err := os.MkdirAll(c.RW, 0o700); err != nil {
		return Call{}, fmt.Errorf("sandbox: %w", err)
	}
	b, err := json.Marshal(callFile{Profile: *p, Bwrap: a.Bwrap, Command: command, Argv: argv, Pipeline: pipeline, List: list})
	if err != nil {
		return Call{}, fmt.Errorf("sandbox: %w", err)
	}
	if err := os.WriteFile(filepath.Join(c.Dir, profileFile), b, 0o600); err != nil {
		return Call{}, fmt.Errorf("sandbox: %w", err)
	}
	if b, err = json.Marshal(callCommand{Command: command, Argv: argv, Pipeline: pipeline, List: list}); err != nil {
		return Call{}, fmt.Errorf("sandbox: %w", err)
	}
	if err := os.WriteFile(filepath.Join(c.Dir, commandFile), b, 0o600); err != nil {
		return Call{}, fmt.Errorf("sandbox: %w", err)
	}
	if absent := Absent(p); len(absent) > 0 {
		b, _ := json.Marshal(absent)
		if err := os.WriteFile(filepath.Join(c.Dir, absentFile), b, 0o600); err != nil {
			return Call{}, fmt.Errorf("sandbox: %w", err)
		}
	}
	args, err := mounts(p)
	if err != nil {
		return Call{}, err
	}
	var buf bytes.Buffer
	buf.WriteString(a.Bwrap)
	buf.WriteByte(0)
	env := append(profileEnv(p), cwdEnv+"="+filepath.Join(c.RW, "cwd"))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	for _, s := range args {
		if strings.IndexByte(s, 0) >= 0 {
			return Call{}, fmt.Errorf("sandbox: a NUL byte in the profile (%q)", s)
		}
		buf.WriteString(s)
		buf.WriteByte(0)
	}
	if err := os.WriteFile(filepath.Join(c.Dir, argsFile), buf.Bytes(), 0o600); err != nil {
		return Call{}, fmt.Errorf("sandbox: %w", err)
	}
	if err := writeServerSpec(c.Dir, c.RW, a, p); err != nil {
		return Call{}, err
	}
	if err := prepareFast(c); err != nil {
		return Call{}, err
	}
	return c, nil
}

// PrepareSession creates a session's tmp directory and the cache
// directories under cacheDir ("" for sessionDir/cache).
func PrepareSession(sessionDir, cacheDir string) error {
	if cacheDir == "" {
		cacheDir = filepath.Join(sessionDir, "cache")
	}
	dirs := []string{filepath.Join(sessionDir, "tmp"), ServerDir(filepath.Dir(sessionDir))}
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

// ServerDir returns the directory under root that holds the sandbox
// servers' sockets, records and locks (server_linux.go): hidden in every
// sandbox.
func ServerDir(root string) string { return filepath.Join(root, "srv") }

// SharedCache returns the cache directory every session under root shares.
func SharedCache(root string) string { return filepath.Join(root, "cache") }

// Quote quotes s as one word for a POSIX shell.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellCommand returns the command a harness's shell runs instead of the
// agent's command: the launcher (an absolute path: LauncherFor's; the slim
// launcher links the test observer too)
// running command under the call's profile; then, in the harness's own
// shell, outside the sandbox, the exit status written into the call's
// directory, a cd to the directory the command ended in (so that `cd`
// carries over between calls as it does unsandboxed), and the command's
// exit status (a function's return: `(exit N)` would fork a subshell). It
// is POSIX shell: bash, zsh and dash run it alike.
func ShellCommand(launcher string, c Call, command string) string {
	cwd := Quote(filepath.Join(c.RW, "cwd"))
	return fastShell(c) + "case $__sw_rc in ''|*[!0-9]*) " + Quote(launcher) + " sandbox exec --call " + Quote(c.Dir) + " -c " + Quote(command) +
		"; __sw_rc=$?;; esac; { printf '%s\\n' \"$__sw_rc\" >| " + Quote(filepath.Join(c.Dir, statusFile)) + "; } 2>/dev/null" +
		"; { IFS= read -r __sw_d < " + cwd + " && cd -- \"$__sw_d\"; } 2>/dev/null; __sw_x() { return \"$1\"; }; __sw_x \"$__sw_rc\""
}

// Result is what was recorded about a call outside the sandbox.
type Result struct {
	// ExitCode is the command's exit status (128+n for a signal), as the
	// harness's shell saw the launcher exit.
	ExitCode int `json:"exit_code"`
	// Phase is the profile's phase.
	Phase string `json:"phase,omitempty"`
	// Command is the agent's command as it asked for it.
	Command string `json:"command,omitempty"`
	// Observed is what the launcher's Observer recorded (Finish), as JSON;
	// nil when no observer watched the command.
	Observed json.RawMessage `json:"observed,omitempty"`
	// NetRefused are the hosts the network proxy refused.
	NetRefused []string `json:"net_refused,omitempty"`
}

// ReadResult reads what was recorded about a call; ok is false when the
// command did not finish through the rewritten command (no status).
func ReadResult(c Call) (Result, bool) {
	b, err := os.ReadFile(filepath.Join(c.Dir, statusFile))
	if err != nil {
		return Result{}, false
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return Result{}, false
	}
	r := Result{ExitCode: code}
	var cf callFile
	if b, err := os.ReadFile(filepath.Join(c.Dir, profileFile)); err == nil && json.Unmarshal(b, &cf) == nil {
		r.Phase, r.Command = cf.Profile.Phase, cf.Command
	}
	var lr launchResult
	if b, err := os.ReadFile(filepath.Join(c.Dir, resultFile)); err == nil && json.Unmarshal(b, &lr) == nil {
		r.Observed, r.NetRefused = lr.Observed, lr.NetRefused
	}
	return r, true
}

// launchResult is result.json, written by Launch.
type launchResult struct {
	ExitCode   int             `json:"exit_code"`
	Observed   json.RawMessage `json:"observed,omitempty"`
	NetRefused []string        `json:"net_refused,omitempty"`
}

// Remove deletes a call's directory.
func (c Call) Remove() error {
	removeFast(c)
	return os.RemoveAll(c.Dir)
}

// Unserve keeps a prepared call off the phase's sandbox server: its
// command runs with a bubblewrap of its own (a test command the launcher
// observes).
func (c Call) Unserve() error {
	if err := os.Remove(filepath.Join(c.Dir, "server.json")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

// An Observer watches one command the launcher runs: the launcher runs
// Script instead of the agent's script, sends the command's stdout through
// Stdout (outside the sandbox, where the command cannot reach it) and
// records what Finish returns in result.json. Test evidence is the use:
// package testreport/testrun parses the runner's report from the stream.
type Observer interface {
	Script() string
	Stdout(w io.Writer) io.WriteCloser
	Finish(exitCode int) any
}

// ObserveFunc returns the Observer for a call (nil: run it unobserved).
// env is the environment the command runs with.
type ObserveFunc func(c Call, script string, env []string) Observer

// maxArgs bounds bwrap.args.
const maxArgs = 1 << 20

// launchArgs returns bubblewrap's argv (its path first) for the call in
// the current directory, with extra read-only binds and a prefix to the
// command (the network proxy's: netSetup).
func launchArgs(callDir, script string, argv []string, extra [][2]string, prefix []string) ([]string, error) {
	f, err := os.Open(filepath.Join(callDir, argsFile))
	if err != nil {
		return nil, fmt.Errorf("no profile for this call (%w); the command did not run", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxArgs+1))
	if err != nil || len(b) > maxArgs || len(b) == 0 || b[len(b)-1] != 0 {
		return nil, fmt.Errorf("bad profile for this call; the command did not run")
	}
	args := strings.Split(string(b[:len(b)-1]), "\x00")
	if !filepath.IsAbs(args[0]) {
		return nil, fmt.Errorf("bad profile for this call (bubblewrap's path %q); the command did not run", args[0])
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	args = append(appendExtra(args, extra), "--chdir", dir, "--")
	args = append(args, prefix...)
	if script != "" {
		return append(append(args, "/bin/bash"), shellArgs(script)...), nil
	}
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	return append(args, argv...), nil
}

// shellArgs are the arguments after bash's name that run script and,
// when it exits, record the directory it ended in (for ShellCommand's cd)
// in the file $__sw_cwd_file names.
func shellArgs(script string) []string {
	return []string{"-c", `trap 'pwd -P 2>/dev/null >| "$` + cwdEnv + `"' EXIT` + "\n" + script}
}

// Exec is the launcher's usual path. A script goes to the sandbox server
// of the call's profile (server_linux.go), started if none runs: the
// launcher waits for it and exits with its status. When the server cannot
// take the command, and for argv, the launcher replaces itself with
// bubblewrap running the command under the call's profile, in the current
// directory, with the environment stripped of statewright's variables. It
// returns only when that fails (exit 126 with the reason): it never runs
// the command unsandboxed. A profile with a watcher, and a call that could
// plant a name of the law (absent.json), run bubblewrap as the launcher's
// child instead (Launch), so that the launcher runs the watcher beside the
// command (followPhase) and outlives it to sweep (Main).
func Exec(callDir, script string, argv []string, stderr io.Writer) int {
	if script != "" {
		if code, ran := viaServer(callDir, script, stderr); ran {
			return code
		}
	}
	cf, err := readCallFile(callDir)
	if err != nil {
		return launchFailed(stderr, err)
	}
	if len(cf.Profile.Watch) > 0 {
		// The launcher waits, to run the phase's watcher beside the
		// command: a transition made anywhere stops it (followPhase).
		return Launch(callDir, script, argv, nil, os.Stdin, os.Stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(callDir, absentFile)); err == nil {
		// The command could plant a name of the law: the launcher waits
		// for it, to take that out when it ends (Main, Sweep).
		return Launch(callDir, script, argv, nil, os.Stdin, os.Stdout, stderr)
	}
	args, err := launchArgs(callDir, script, argv, nil, nil)
	if err != nil {
		return launchFailed(stderr, err)
	}
	// The hooks' next decision in another phase kills it (followPhase).
	registerSelf(callDir, &cf.Profile)
	// The variables are stripped here, before bubblewrap starts: what
	// --unsetenv removes stays readable in /proc/1/environ of the
	// sandbox's first process.
	err = syscall.Exec(args[0], args, StripEnv(os.Environ()))
	return launchFailed(stderr, fmt.Errorf("bubblewrap (%s): %w; the command did not run", args[0], err))
}

// stoppedMessage is what a command killed by a stop of its phase's
// sandbox (the run left the phase, the session ended) tells the agent on
// its stderr.
const stoppedMessage = "statewright sandbox: the phase's sandbox stopped while the command ran (the phase changed or the session ended); the command was killed"

func launchFailed(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "statewright sandbox:", err)
	return 126
}

// Launch runs script (or argv) like Exec, but as the launcher's child, for
// what needs a process outside the sandbox while the command runs: obs
// (nil for none), which sees its stdout there, and the network proxy of a
// profile whose hosts go through it. It records the exit status, what obs
// saw and the hosts the proxy refused in result.json, and returns the exit
// status to exit with.
func Launch(callDir, script string, argv []string, obs Observer, stdin io.Reader, stdout, stderr io.Writer) int {
	if obs != nil && script != "" {
		if s := obs.Script(); s != "" {
			script = s
		}
	}
	cf, err := readCallFile(callDir)
	if err != nil {
		return launchFailed(stderr, err)
	}
	exe, err := os.Executable()
	if err != nil {
		return launchFailed(stderr, err)
	}
	binds, prefix, proxy, stopNet, err := netSetup(&cf.Profile, exe, stderr)
	if err != nil {
		return launchFailed(stderr, err)
	}
	defer stopNet()
	args, err := launchArgs(callDir, script, argv, binds, prefix)
	if err != nil {
		return launchFailed(stderr, err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = StripEnv(os.Environ())
	var out io.WriteCloser = nopWriteCloser{stdout}
	if obs != nil {
		out = obs.Stdout(stdout)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, out, stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		out.Close()
		return launchFailed(stderr, err)
	}
	// It follows the phase: a stop of the phase's sandboxes (the run left
	// the phase) kills it, as it kills the phase's server.
	follow := followPhase(callDir, &cf.Profile, cmd.Process.Pid)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	stopped := follow()
	out.Close()
	code, ok := ExitStatus(err)
	if !ok {
		return launchFailed(stderr, err)
	}
	if stopped {
		fmt.Fprintln(stderr, stoppedMessage)
	}
	r := launchResult{ExitCode: code}
	if obs != nil {
		if b, err := json.Marshal(obs.Finish(code)); err == nil {
			r.Observed = b
		}
	}
	if proxy != nil {
		r.NetRefused = proxy.Denied()
	}
	if rb, err := json.Marshal(r); err == nil {
		_ = os.WriteFile(filepath.Join(callDir, resultFile), rb, 0o600)
	}
	return code
}

// Main is the launcher's command line: args are what follows "exec"
// (--call DIR, then -c SCRIPT or -- ARGV...). observe (nil for none) may
// watch the call (Launch); else the launcher becomes bubblewrap (Exec).
// It returns the exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, observe ObserveFunc) int {
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
	var obs Observer
	if observe != nil && script != "" {
		obs = observe(Call{Dir: callDir, RW: filepath.Join(callDir, "rw")}, script, StripEnv(os.Environ()))
	}
	var code int
	if obs != nil || needsProxy(callDir) {
		code = Launch(callDir, script, argv, obs, stdin, stdout, stderr)
	} else {
		code = Exec(callDir, script, argv, stderr)
	}
	// The command and everything it started have ended (its session, the
	// processes that left it, or its whole sandbox): what it planted goes
	// now, before the harness sees the result, whether or not the harness
	// ever reports the call's end (docs/sandbox.md, "Planted names").
	if msg := (Call{Dir: callDir}).Sweep(); msg != "" {
		fmt.Fprintln(stderr, msg)
	}
	return code
}

// readCallFile reads a call's profile.json.
func readCallFile(callDir string) (callFile, error) {
	var cf callFile
	b, err := os.ReadFile(filepath.Join(callDir, profileFile))
	if err != nil {
		return cf, fmt.Errorf("no profile for this call (%w); the command did not run", err)
	}
	if err := json.Unmarshal(b, &cf); err != nil {
		return cf, fmt.Errorf("bad profile for this call (%w); the command did not run", err)
	}
	return cf, nil
}

// needsProxy reports whether the call's network goes through the proxy,
// which the launcher runs on the host while the command runs (an
// unreadable profile: Exec fails closed on it).
func needsProxy(callDir string) bool {
	cf, err := readCallFile(callDir)
	return err == nil && cf.Profile.Proxy != nil && !cf.Profile.Network
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

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

// RefusedPaths returns the paths that error lines in out report as on a
// read-only file system (RefusedPath), at most max, without repeats: the
// harness's report of a command's output, for the lesson PostToolUse adds
// (DECISIONS 11). The output is the command's own, so a command can make
// up a path here; it only changes the lesson.
func RefusedPaths(out string, max int) []string {
	var seen []string
	for _, line := range strings.Split(out, "\n") {
		if len(seen) >= max {
			break
		}
		if p := RefusedPath(line); p != "" && !slices.Contains(seen, p) {
			seen = append(seen, p)
		}
	}
	return seen
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

// ExitStatus is the shell's exit status of a command whose Wait (or Run)
// returned err: 0, its exit code, or 128 plus the signal that killed it.
// ok is false when err says the command did not run to an exit.
func ExitStatus(err error) (code int, ok bool) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, true
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
			return waitStatusCode(ws), true
		}
		return ee.ExitCode(), true
	}
	return 0, false
}

// waitStatusCode is the shell's exit status for a wait status: the exit
// code, or 128 plus the signal that killed the process.
func waitStatusCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
