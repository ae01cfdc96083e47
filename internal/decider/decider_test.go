//go:build linux

package decider_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/statewright-go/statewright/internal/decider"
	"github.com/statewright-go/statewright/internal/hookwire"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	_ "github.com/statewright-go/statewright/store/backends"
)

// These tests run the real binaries: statewright (the decider, and the
// full binary the client falls back to) and statewright-hook, installed by
// a real `statewright init claude-code`, and drive the hook commands init
// wrote through sh -c, as Claude Code runs them.

var built struct{ dir, bin, client string }

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "fake-decider" {
		os.Exit(fakeDecider(os.Args[2]))
	}
	dir, err := os.MkdirTemp("", "decider-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	built.dir = dir
	built.bin, built.client = filepath.Join(dir, "statewright"), filepath.Join(dir, "statewright-hook")
	for _, b := range [][2]string{{built.bin, "../../cmd/statewright"}, {built.client, "../../cmd/statewright-hook"}} {
		if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", b[1], err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The workflow: Read, Grep and Bash (with Exec) in "reading"; Write only
// in "writing".
const workflow = `{
  "id": "decider-test",
  "initial": "reading",
  "states": {
    "reading": {"allowed_tools": ["Read", "Grep", "Bash", "Exec"], "on": {"WRITE": "writing"}},
    "writing": {"allowed_tools": ["Read", "Write", "Bash"], "on": {"DONE": "done"}},
    "done": {"type": "final"}
  }
}`

const session = "decider-test-session"

// install is one user's install: its own home (key, decider, store), a
// project set up by init, and a run in "reading".
type install struct {
	t                            *testing.T
	root, bin, client            string
	home, project, store, config string
	env                          []string
	hooks                        map[string]string // event → command init wrote
	seq                          int
}

func newInstall(t *testing.T, initArgs ...string) *install {
	t.Helper()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	in := &install{t: t, root: root, bin: filepath.Join(root, "bin", "statewright"), client: filepath.Join(root, "bin", "statewright-hook"),
		home: filepath.Join(root, "home"), project: filepath.Join(root, "project")}
	in.config = filepath.Join(in.home, ".config")
	in.store = filepath.Join(in.home, ".local", "state", "statewright", "state.db")
	for _, d := range []string{filepath.Dir(in.bin), in.home, in.project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, built.bin, in.bin)
	copyFile(t, built.client, in.client)
	in.env = append(cleanEnv(), "HOME="+in.home, "XDG_CONFIG_HOME="+in.config,
		"XDG_STATE_HOME="+filepath.Join(in.home, ".local", "state"), "XDG_CACHE_HOME="+filepath.Join(in.home, ".cache"))
	t.Cleanup(in.stopDeciders)
	args := append([]string{"init", "claude-code", "--project", in.project, "--store", in.store, "--no-mcp"}, initArgs...)
	if out, err := in.command(in.bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	in.readHooks()
	if !strings.HasPrefix(in.hooks["PreToolUse"], "'"+in.client+"' hook claude-code pre-tool-use ") {
		t.Fatalf("init did not write the thin client's command: %s", in.hooks["PreToolUse"])
	}
	wf := filepath.Join(root, "workflow.json")
	if err := os.WriteFile(wf, []byte(workflow), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), in.store, store.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := runtime.New(st, runtime.Options{ProjectDir: in.project})
	if _, err := svc.Start(context.Background(), "claude-code:"+session, wf, runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli"}); err != nil {
		t.Fatal(err)
	}
	return in
}

// cleanEnv is the test's environment without what would point an install
// elsewhere.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "STATEWRIGHT_") || strings.HasPrefix(k, "CLAUDE") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func (in *install) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = in.env
	cmd.Dir = in.project
	return cmd
}

func (in *install) readHooks() {
	raw, err := os.ReadFile(filepath.Join(in.project, ".claude", "settings.local.json"))
	if err != nil {
		raw, err = os.ReadFile(filepath.Join(in.project, ".claude", "settings.json"))
	}
	if err != nil {
		in.t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		in.t.Fatal(err)
	}
	in.hooks = map[string]string{}
	for ev, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				in.hooks[ev] = h.Command
			}
		}
	}
}

// answer is what a hook process did.
type answer struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// denied reports whether a PreToolUse answer denies, in Claude Code's
// convention (exit 2, or a JSON deny).
func (a answer) denied() bool {
	return a.code == 2 || strings.Contains(a.stdout, `"permissionDecision":"deny"`)
}

func (a answer) allowed() bool { return a.code == 0 && !a.denied() }

// hook runs the command init wrote for event, through sh -c.
func (in *install) hook(event string, input []byte) answer {
	in.t.Helper()
	c := in.hooks[event]
	if c == "" {
		in.t.Fatalf("init wrote no %s hook", event)
	}
	return in.run(in.command("/bin/sh", "-c", c), input)
}

// direct runs the full binary with the same arguments: the hook as it
// was before the thin client, deciding in process.
func (in *install) direct(event string, input []byte) answer {
	in.t.Helper()
	c, _, _ := strings.Cut(in.hooks[event], " || ")
	var argv []string
	for _, f := range strings.Fields(c) {
		argv = append(argv, strings.Trim(f, "'"))
	}
	return in.run(in.command(in.bin, argv[1:]...), input)
}

func (in *install) run(cmd *exec.Cmd, input []byte) answer {
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	a := answer{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		a.code = ee.ExitCode()
	} else if err != nil {
		in.t.Fatal(err)
	}
	return a
}

// pre is a PreToolUse input with a fresh tool_use_id.
func (in *install) pre(tool string, toolInput map[string]any) []byte {
	in.seq++
	b, _ := json.Marshal(map[string]any{"session_id": session, "transcript_path": filepath.Join(in.root, "t.jsonl"), "cwd": in.project,
		"permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": toolInput,
		"tool_use_id": fmt.Sprintf("toolu_%03d", in.seq)})
	return b
}

func (in *install) read() []byte {
	return in.pre("Read", map[string]any{"file_path": filepath.Join(in.project, "main.go")})
}

func (in *install) write() []byte {
	return in.pre("Write", map[string]any{"file_path": filepath.Join(in.project, "main.go"), "content": "x"})
}

func (in *install) dir() string { return hookwire.Dir(func(k string) string { return in.getenv(k) }) }

func (in *install) getenv(k string) string {
	for _, kv := range in.env {
		if a, b, ok := strings.Cut(kv, "="); ok && a == k {
			return b
		}
	}
	return ""
}

func (in *install) paths() hookwire.Paths { return hookwire.PathsFor(in.dir(), in.bin) }

// status is the decider's status, nil when none answers.
func (in *install) status() *decider.Status {
	st, err := decider.StatusOf(in.dir(), in.bin)
	if err != nil {
		return nil
	}
	return st
}

// waitDecider waits for a decider to answer, other than not (0: any).
func (in *install) waitDecider(not int) *decider.Status {
	in.t.Helper()
	for range 300 {
		if st := in.status(); st != nil && st.Pid != not {
			return st
		}
		time.Sleep(50 * time.Millisecond)
	}
	in.t.Fatalf("no decider (other than pid %d) answers within 15s; log:\n%s", not, in.log())
	return nil
}

func (in *install) log() string {
	b, _ := os.ReadFile(in.paths().Log)
	return string(b)
}

// stopDeciders stops whatever decider this install started.
func (in *install) stopDeciders() {
	if st := in.status(); st != nil {
		syscall.Kill(st.Pid, syscall.SIGCONT)
		syscall.Kill(st.Pid, syscall.SIGKILL)
	}
	for _, pid := range deciderPids(in.dir()) {
		syscall.Kill(pid, syscall.SIGCONT)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// deciderPids lists the processes running `decider serve --dir dir`.
func deciderPids(dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), "\x00decider\x00serve\x00--dir\x00"+dir+"\x00") {
			out = append(out, pid)
		}
	}
	return out
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func (in *install) calls(t *testing.T) int {
	t.Helper()
	st, err := store.Open(context.Background(), in.store, store.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := st.LiveRun(context.Background(), "claude-code:"+session)
	if err != nil {
		t.Fatal(err)
	}
	calls, err := st.Calls(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	return len(calls)
}

// TestSameAnswers: the decider answers every event exactly as the full
// binary answers it in process (differential, on two identical installs),
// including the sandbox rewrite of an allowed shell call.
func TestSameAnswers(t *testing.T) {
	for _, mode := range [][]string{nil, {"--sandbox"}} {
		t.Run(strings.Join(append([]string{"init"}, mode...), " "), func(t *testing.T) {
			viaDecider, inProcess := newInstall(t, mode...), newInstall(t, mode...)
			// The first hook starts the decider; wait for it so that the
			// rest go through it.
			viaDecider.hook("PreToolUse", viaDecider.read())
			inProcess.seq++
			viaDecider.waitDecider(0)
			steps := []struct {
				event string
				input func(*install) []byte
			}{
				{"SessionStart", func(in *install) []byte { return in.event("SessionStart", map[string]any{"source": "startup"}) }},
				{"UserPromptSubmit", func(in *install) []byte { return in.event("UserPromptSubmit", map[string]any{"prompt": "fix it"}) }},
				{"PreToolUse", (*install).read},
				{"PreToolUse", (*install).write},
				{"PreToolUse", func(in *install) []byte { return in.pre("Bash", map[string]any{"command": "ls -la"}) }},
				{"PreToolUse", func(in *install) []byte { return in.pre("Bash", map[string]any{"command": "echo hi > out.txt"}) }},
				{"PreToolUse", func(in *install) []byte {
					return in.pre("Write", map[string]any{"file_path": filepath.Join(in.project, ".claude", "settings.json"), "content": "{}"})
				}},
				{"PreToolUse", func(in *install) []byte {
					return in.pre("mcp__statewright__statewright_get_state", map[string]any{})
				}},
				{"PostToolUse", func(in *install) []byte {
					return in.event("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls -la"},
						"tool_response": map[string]any{"stdout": "x", "exit_code": 0}, "tool_use_id": fmt.Sprintf("toolu_%03d", 4)})
				}},
				{"Stop", func(in *install) []byte { return in.event("Stop", map[string]any{"stop_hook_active": false}) }},
			}
			rewrites := 0
			for i, s := range steps {
				a := viaDecider.hook(s.event, s.input(viaDecider))
				b := inProcess.direct(s.event, s.input(inProcess))
				na, nb := normalize(a, viaDecider), normalize(b, inProcess)
				if na != nb {
					t.Errorf("step %d (%s): the decider answered\n%s\nin process:\n%s", i, s.event, na, nb)
				}
				if strings.Contains(a.stdout, "updatedInput") && strings.Contains(a.stdout, " sandbox exec ") {
					rewrites++
				}
			}
			if sandboxed := len(mode) > 0; sandboxed != (rewrites > 0) {
				t.Errorf("%d shell calls rewritten to run under the sandbox launcher (init %v)", rewrites, mode)
			}
			if st := viaDecider.status(); st == nil || st.Requests < int64(len(steps)) {
				t.Errorf("the decider served %v, want every step", st)
			}
		})
	}
}

// event is a hook input for a non-tool event.
func (in *install) event(name string, fields map[string]any) []byte {
	m := map[string]any{"session_id": session, "transcript_path": filepath.Join(in.root, "t.jsonl"), "cwd": in.project,
		"permission_mode": "default", "hook_event_name": name}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

var runID = regexp.MustCompile(`run_[0-9a-zA-Z]+`)

func normalize(a answer, in *install) string {
	s := fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", a.code, a.stdout, a.stderr)
	s = strings.ReplaceAll(s, in.root, "$ROOT")
	s = strings.ReplaceAll(s, strings.ToLower(in.root), "$ROOT") // the law shows fences lower-cased
	return runID.ReplaceAllString(s, "run_X")
}

// TestDeciderDown: with no decider (a dead socket left behind), and with
// none able to start (the socket's name taken by a directory), every hook
// is still answered, by the full binary, as it would be in process.
func TestDeciderDown(t *testing.T) {
	in := newInstall(t)
	p := in.paths()
	os.MkdirAll(p.Dir, 0o700)
	// A socket file nobody listens on.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: p.Socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if a := in.hook("PreToolUse", in.write()); !a.denied() {
		t.Errorf("dead socket: the Write was not denied: %+v", a)
	}
	if a := in.hook("PreToolUse", in.read()); !a.allowed() {
		t.Errorf("dead socket: the Read was not allowed: %+v", a)
	}
	in.waitDecider(0) // a hook started one

	// Down for good: no decider can bind its socket.
	in.stopDeciders()
	for range 100 {
		if len(deciderPids(in.dir())) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	os.Remove(p.Socket)
	if err := os.MkdirAll(filepath.Join(p.Socket, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	before := in.calls(t)
	for range 3 {
		if a := in.hook("PreToolUse", in.write()); !a.denied() {
			t.Errorf("no decider: the Write was not denied: %+v", a)
		}
		if a := in.hook("PreToolUse", in.read()); !a.allowed() {
			t.Errorf("no decider: the Read was not allowed: %+v", a)
		}
	}
	if got := in.calls(t) - before; got != 6 {
		t.Errorf("%d calls recorded, want 6", got)
	}
	if in.status() != nil {
		t.Error("a decider answers on a socket that is a directory")
	}
	if _, err := os.Stat(p.Fail); err != nil {
		t.Errorf("the failed start left no mark (clients would retry on every hook): %v; log:\n%s", err, in.log())
	}
}

// TestDeciderHung: a decider that stops answering (SIGSTOP) costs the
// hook its handshake time, not the call: the full binary decides within
// the deadline, and a new decider replaces the hung one.
func TestDeciderHung(t *testing.T) {
	in := newInstall(t)
	in.hook("PreToolUse", in.read())
	old := in.waitDecider(0)
	if err := syscall.Kill(old.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(old.Pid, syscall.SIGCONT)
	a := in.hook("PreToolUse", in.write())
	if !a.denied() {
		t.Errorf("hung decider: the Write was not denied: %+v", a)
	}
	if a.elapsed > 10*time.Second {
		t.Errorf("hung decider: answered after %v, past the harness's 10s timeout (it would fail open)", a.elapsed)
	}
	if a := in.hook("PreToolUse", in.read()); !a.allowed() {
		t.Errorf("hung decider: the Read was not allowed: %+v", a)
	}
	fresh := in.waitDecider(old.Pid)
	for range 100 {
		if !alive(old.Pid) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if alive(old.Pid) {
		t.Errorf("the hung decider (pid %d) still runs beside its replacement (pid %d)", old.Pid, fresh.Pid)
	}
	if a := in.hook("PreToolUse", in.write()); !a.denied() {
		t.Errorf("after the replacement: the Write was not denied: %+v", a)
	}
}

// TestDeciderImpersonated: an agent process (same user, no key) puts a
// fake decider at the socket that allows everything. The client refuses
// it (it cannot prove the key), the full binary denies the Write, and a
// real decider takes the socket back. A fake client is refused the other
// way round: nothing it sends is recorded.
func TestDeciderImpersonated(t *testing.T) {
	in := newInstall(t)
	p := in.paths()
	os.MkdirAll(p.Dir, 0o700)
	fake := exec.Command(os.Args[0], "fake-decider", p.Socket)
	fake.Stderr = os.Stderr
	ready, err := fake.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { fake.Process.Kill(); fake.Wait() }()
	if _, err := ready.Read(make([]byte, 1)); err != nil {
		t.Fatal("the fake decider did not start")
	}
	before := in.calls(t)
	if a := in.hook("PreToolUse", in.write()); !a.denied() {
		t.Errorf("fake decider: the Write was not denied: %+v", a)
	}
	if got := in.calls(t) - before; got != 1 {
		t.Errorf("%d calls recorded for the denied Write, want 1 (decided by the real law)", got)
	}
	real := in.waitDecider(0)
	if real.Binary != in.bin {
		t.Errorf("the decider now answering runs %s", real.Binary)
	}
	if a := in.hook("PreToolUse", in.write()); !a.denied() {
		t.Errorf("after the takeover: the Write was not denied: %+v", a)
	}

	// A fake client: it connects, but signs its request with a key of its
	// own. The decider answers nothing and records nothing.
	before = in.calls(t)
	c, err := hookwire.Dial(p.Socket, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetTimeout(5 * time.Second)
	s, _, err := hookwire.Handshake(c, bytes.Repeat([]byte{7}, hookwire.KeySize), nil)
	if !errors.Is(err, hookwire.ErrBadMAC) {
		t.Fatalf("a client without the key accepted the decider's hello: %v", err)
	}
	_ = s
	raw := (&hookwire.Request{Op: hookwire.OpHook, Args: []string{"hook", "claude-code", "post-tool-use"}, Input: in.write()}).Marshal()
	hookwire.WriteFrame(c, hookwire.KindRequest, make([]byte, 32), raw)
	if _, err := hookwire.ReadFrame(c, hookwire.KindAnswer); err == nil {
		t.Error("the decider answered a request signed without the key")
	}
	if got := in.calls(t) - before; got != 0 {
		t.Errorf("%d calls recorded from a client without the key", got)
	}
}

// fakeDecider listens at sock and answers every connection with a hello
// and an "allow" it cannot sign with the install's key.
func fakeDecider(sock string) int {
	os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Stdout.Write([]byte{1})
	for {
		c, err := ln.Accept()
		if err != nil {
			return 0
		}
		go func() {
			defer c.Close()
			key := bytes.Repeat([]byte{9}, hookwire.KeySize)
			id, _ := hookwire.StatIdentity(os.Args[0])
			s, err := hookwire.Accept(c, key, id, os.Getpid())
			if err != nil {
				return
			}
			s.ReadRequest() // fails: the client signed with the real key
			s.WriteAnswer(&hookwire.Answer{Stdout: []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`)})
		}()
	}
}

// TestStaleDecider: the binary is upgraded in place while a decider of
// the old one runs. The client refuses the old decider (its identity no
// longer matches the binary on disk), the full binary answers, and a
// decider of the new binary replaces the old one, which exits.
func TestStaleDecider(t *testing.T) {
	in := newInstall(t)
	in.hook("PreToolUse", in.read())
	old := in.waitDecider(0)
	// The upgrade: a new file (another size and inode) renamed over it.
	b, err := os.ReadFile(in.bin)
	if err != nil {
		t.Fatal(err)
	}
	tmp := in.bin + ".new"
	if err := os.WriteFile(tmp, append(b, "upgrade"...), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, in.bin); err != nil {
		t.Fatal(err)
	}
	if _, hello, err := decider.Ask(in.dir(), in.bin, hookwire.OpStatus); !errors.Is(err, hookwire.ErrStale) || hello.Pid != old.Pid {
		t.Fatalf("the old decider is not seen as stale: %v (pid %d)", err, hello.Pid)
	}
	if a := in.hook("PreToolUse", in.write()); !a.denied() {
		t.Errorf("stale decider: the Write was not denied: %+v", a)
	}
	if a := in.hook("PreToolUse", in.read()); !a.allowed() {
		t.Errorf("stale decider: the Read was not allowed: %+v", a)
	}
	fresh := in.waitDecider(old.Pid)
	id, _ := hookwire.StatIdentity(in.bin)
	if _, hello, err := decider.Ask(in.dir(), in.bin, hookwire.OpStatus); err != nil || hello.Identity != id {
		t.Errorf("the new decider (pid %d) does not run the new binary: %v", fresh.Pid, err)
	}
	for range 100 {
		if !alive(old.Pid) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if alive(old.Pid) {
		t.Errorf("the stale decider (pid %d) still runs", old.Pid)
	}
}

// TestStoreLocked: while another process holds the store's write lock,
// the decider answers the hook with a deny in Claude Code's convention,
// within the hook's deadline, and the hook after the lock is released is
// decided normally.
func TestStoreLocked(t *testing.T) {
	in := newInstall(t, "--deadline", "2s", "--timeout", "5")
	in.hook("PreToolUse", in.read())
	in.waitDecider(0)
	served := in.status().Requests

	db, err := sql.Open("sqlite", in.store)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	a := in.hook("PreToolUse", in.read())
	if !a.denied() {
		t.Errorf("locked store: the Read was not denied: %+v", a)
	}
	if a.elapsed > 5*time.Second {
		t.Errorf("locked store: answered after %v, past the 5s harness timeout init wrote (it would fail open)", a.elapsed)
	}
	if st := in.status(); st == nil || st.Requests <= served {
		t.Errorf("the locked-store hook did not go through the decider: %+v", st)
	}
	conn.ExecContext(context.Background(), "ROLLBACK")
	conn.Close()
	if a := in.hook("PreToolUse", in.read()); !a.allowed() {
		t.Errorf("after the lock: the Read was not allowed: %+v", a)
	}
}

// TestSocketDirHidden: the static law keeps the decider's directory (its
// socket and key) away from the agent's tools.
func TestSocketDirHidden(t *testing.T) {
	in := newInstall(t)
	key := hookwire.KeyPath(in.dir())
	for _, input := range [][]byte{
		in.pre("Read", map[string]any{"file_path": key}),
		in.pre("Bash", map[string]any{"command": "cat " + key}),
		in.pre("Bash", map[string]any{"command": "nc -U " + in.paths().Socket}),
		in.pre("Bash", map[string]any{"command": in.client + " hook claude-code post-tool-use"}),
	} {
		if a := in.hook("PreToolUse", input); !a.denied() {
			t.Errorf("not denied: %s\n%+v", input, a)
		}
	}
}

// TestSocketHiddenInSandbox: code the agent runs under the OS sandbox
// (init --sandbox; the decider rewrites the shell call) cannot see the
// decider's directory, its socket or its key; the same code run without
// the rewrite can (so the check can fail).
func TestSocketHiddenInSandbox(t *testing.T) {
	in := newInstall(t, "--sandbox")
	in.hook("PreToolUse", in.read())
	in.waitDecider(0)
	probe := `python3 -c "import os;d=os.path.join(os.environ['HOME'],'.con'+'fig','state'+'wright','decider');print(sorted(os.listdir(d)) if os.path.isdir(d) else 'ABSENT')"`
	a := in.hook("PreToolUse", in.pre("Bash", map[string]any{"command": probe}))
	var out struct {
		HookSpecificOutput struct {
			PermissionDecision string         `json:"permissionDecision"`
			UpdatedInput       map[string]any `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(a.stdout), &out); err != nil || out.HookSpecificOutput.PermissionDecision != "allow" {
		t.Fatalf("the probe was not allowed: %+v %v", a, err)
	}
	cmd, _ := out.HookSpecificOutput.UpdatedInput["command"].(string)
	if !strings.Contains(cmd, " sandbox exec ") {
		t.Fatalf("the probe was not rewritten to run in the sandbox: %q", cmd)
	}
	ran := in.run(in.command("/bin/bash", "-c", cmd), nil)
	if strings.Contains(ran.stdout, "key") || strings.Contains(ran.stdout, ".sock") {
		t.Errorf("inside the sandbox the decider's directory shows: %+v", ran)
	}
	if !strings.Contains(ran.stdout, "ABSENT") && !strings.Contains(ran.stdout, "[]") {
		t.Errorf("the sandboxed probe did not run: %+v", ran)
	}
	t.Logf("sandboxed: %q", ran.stdout)
	plain := in.run(in.command("/bin/bash", "-c", probe), nil)
	if !strings.Contains(plain.stdout, "'key'") {
		t.Errorf("without the sandbox the probe does not see the key either (the test proves nothing): %+v", plain)
	}
}

// TestOneShotRefused: the decider acts on a one-shot request (a hook in
// one round trip) only once, and only when it was made for the socket
// file it listens on: a request a fake listener took at the socket path
// (made for that listener's file) and a replayed request are refused, and
// nothing is recorded for them.
func TestOneShotRefused(t *testing.T) {
	in := newInstall(t)
	in.hook("PreToolUse", in.read())
	in.waitDecider(0)
	p := in.paths()
	key, err := hookwire.ReadKey(p.Key)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := hookwire.StatIdentity(in.bin)
	sock, err := hookwire.StatIdentity(p.Socket)
	if err != nil {
		t.Fatal(err)
	}
	c, _, _ := strings.Cut(in.hooks["PreToolUse"], " || ")
	var args []string
	for _, f := range strings.Fields(c)[1:] {
		args = append(args, strings.Trim(f, "'"))
	}
	req := &hookwire.Request{Op: hookwire.OpHook, Args: args, Env: in.env, Dir: in.project, Umask: 0o22, Input: in.write(), Budget: 5 * time.Second}
	// frame is the request as the client sends it, for the socket file
	// sockID; send sends frame on a new connection and returns the answer.
	frame := func(sockID hookwire.Identity) []byte {
		var b bytes.Buffer
		if _, err := hookwire.SendOneShot(&b, key, want, sockID, req, time.Now()); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	send := func(f []byte) *hookwire.Answer {
		t.Helper()
		conn, err := hookwire.Dial(p.Socket, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetTimeout(10 * time.Second)
		if _, err := conn.Write(f); err != nil {
			t.Fatal(err)
		}
		if _, err := hookwire.ReadFrame(conn, hookwire.KindDeciderHello); err != nil {
			t.Fatalf("no hello: %v", err)
		}
		b, err := hookwire.ReadFrame(conn, hookwire.KindAnswer)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		a, err := hookwire.UnmarshalAnswer(b[32:])
		if err != nil {
			t.Fatal(err)
		}
		return a
	}

	before := in.calls(t)
	if a := send(frame(hookwire.Identity{Dev: sock.Dev, Ino: sock.Ino + 1})); a.Refused == "" {
		t.Errorf("a request made for another socket file was answered: %+v", a)
	}
	if got := in.calls(t) - before; got != 0 {
		t.Errorf("%d calls recorded for a request made for another socket file", got)
	}
	f := frame(sock)
	if a := send(f); a.Refused != "" || !strings.Contains(string(a.Stdout), "deny") {
		t.Fatalf("the request was not decided: %+v", a)
	}
	after := in.calls(t)
	if after-before != 1 {
		t.Errorf("%d calls recorded for the request, want 1", after-before)
	}
	if a := send(f); a.Refused == "" {
		t.Errorf("a replayed request was answered: %+v", a)
	}
	if got := in.calls(t) - after; got != 0 {
		t.Errorf("%d calls recorded for a replayed request", got)
	}
}
