package sandbox

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The phase's sandbox server (docs/sandbox.md, "One sandbox per phase").
//
// Starting bubblewrap costs more than the 5 ms budget on its own
// (bench/sandbox.txt), so a session's shell commands do not each get one.
// The first command of a (session, profile) starts one long-lived
// sandbox, the server: bubblewrap with the profile's mounts and
// namespaces, whose PID 1 is this package's Serve, listening on a unix
// socket it inherits. A keeper process outside (Keep) is bubblewrap's
// parent and lives as long as the harness, so the server dies with the
// harness (--die-with-parent) as a sandbox of one command does. Each later command of the same profile is sent to
// it by the launcher (the client, still one small process in the
// harness's shell): the client passes its stdin, stdout and stderr
// (SCM_RIGHTS), the script, its working directory and its environment
// (stripped of statewright's variables); the server forks `bash -c` inside
// the namespace set, in a session of its own, and answers the exit status
// and the directory the command ended in. The cost per command is the
// client's exec, one socket round trip and one fork+exec of bash inside.
//
// What keeps it a wall (the threat model):
//
//   - The sockets, the records and the locks live in ServerDir(root),
//     which every sandbox hides (an empty read-only tmpfs over it, mounts):
//     no sandboxed command, of any session or profile, can connect to a
//     server, so a narrower phase never reaches a wider profile's server.
//     The server checks its peer's uid (SO_PEERCRED) and that the request
//     names its own session and profile key.
//   - One server per session, living at most as long as the harness (its
//     keeper watches it) and 30 idle minutes: a command whose profile (its key: a hash of
//     the server's bubblewrap arguments and environment) differs from the
//     running server's stops that server first, and a hook stops it at the
//     first tool call decided in another phase (StopServerUnless) and at
//     the session's end. Stopping kills the server, PID 1 of the PID
//     namespace, so the kernel kills everything it started: background
//     commands do not keep a wider profile after a narrowing transition.
//   - The server holds nothing its commands lack: the same mounts,
//     namespaces, no capabilities and no_new_privs (bubblewrap's), plus a
//     listening socket that only reaches itself and the stdio of the
//     session's running commands. It is not dumpable (no ptrace, no
//     /proc/1/fd or environ for its commands) and, as PID 1 of its
//     namespace, the kernel drops signals its commands send it unless it
//     handles them (it drains them). A command that somehow killed it
//     would only end its own namespace.
//   - A command never gets a file descriptor of a directory from outside
//     (a directory from another mount namespace would lead out of the
//     sandbox): the working directory travels as a path, resolved inside,
//     and stdio that is a directory or a link is refused.
//   - Everything a command starts dies when it ends (its session is
//     killed), as with one bubblewrap per command, and when its client's
//     connection closes (the harness killed the client: a timeout,
//     Ctrl-C); a process that left its session (setsid) dies when any
//     command ends (endCommand: by kill(-1) when no other command runs,
//     else with every process stopped meanwhile) and with the server.
//   - Fail closed: when the server cannot be reached or started, or
//     refuses the command before starting it, the launcher runs the
//     command with its own bubblewrap (Exec), never unsandboxed.

// Files of the server directory.
const (
	serverFile = "server.json"
	// serverCwdFD is where the command's shell finds the pipe it writes its
	// final directory to (high, so that a script's own `exec 3>file` does
	// not receive it).
	serverCwdFD = 63
	// serverIdle is how long a server with no command running lives on.
	serverIdle = 30 * time.Minute
	maxRequest = 4 << 20
)

// serverSpec is server.json: how to start the server of a call's profile
// (PrepareCall writes it).
type serverSpec struct {
	Bwrap string   `json:"bwrap"`
	Args  []string `json:"args"`
	Env   []string `json:"env"`
	Phase string   `json:"phase"`
	// Watch is Profile.Watch: what the keeper runs beside the server.
	Watch []string `json:"watch,omitempty"`
}

// serverRecord is <session>.json in the server directory: the running
// server of a session.
type serverRecord struct {
	Key   string `json:"key"`
	Phase string `json:"phase"`
	PID   int    `json:"pid"`
	Start string `json:"start"`
}

// request is what a client sends, with its stdin, stdout and stderr.
type request struct {
	Key     string   `json:"key"`
	Session string   `json:"session"`
	Script  string   `json:"script"`
	Cwd     string   `json:"cwd"`
	Env     []string `json:"env"`
	// Argv, when set, is Script's words (callFile.Argv): the server
	// executes the program directly when it is sure bash would
	// (directCommand), else runs Script with bash.
	Argv []string `json:"argv,omitempty"`
	// Pipeline, when set, is Script's elements (callFile.Pipeline): the
	// server runs the programs itself when it is sure bash would and
	// every one's execve succeeded (startPipeline), else runs Script with
	// bash.
	Pipeline [][]string `json:"pipeline,omitempty"`
	// List, when set, is Script's items (callFile.List): the server runs
	// them itself as far as it is sure bash would, and the rest of the
	// list with bash (runList).
	List []ListItem `json:"list,omitempty"`
}

// reply is one line the server sends back: Started once the command runs
// (or Error when it could not start), then Exit and Cwd when it ended.
type reply struct {
	Started bool   `json:"started,omitempty"`
	Error   string `json:"error,omitempty"`
	Exit    *int   `json:"exit,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
}

// writeServerSpec writes a call's server.json: the server of p (without
// the call's own writable directory, rw) when p can be served (a profile
// whose network goes through the proxy needs the launcher's proxy beside
// each command, so it is not).
func writeServerSpec(dir, rw string, a Availability, p *Profile) error {
	if p.Proxy != nil && !p.Network {
		return nil
	}
	sp := *p
	sp.Writable = nil
	for _, w := range p.Writable {
		if w != rw {
			sp.Writable = append(sp.Writable, w)
		}
	}
	args, err := mounts(&sp)
	if err != nil {
		return err
	}
	b, err := json.Marshal(serverSpec{Bwrap: a.Bwrap, Args: args, Env: profileEnv(p), Phase: p.Phase, Watch: p.Watch})
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, serverFile), b, 0o600)
}

// sessionPaths returns the server directory and the session's name in it
// for a call's directory (<root>/<session>/calls/<id>).
func sessionPaths(callDir string) (srv, sess string) {
	sessDir := filepath.Dir(filepath.Dir(callDir))
	return ServerDir(filepath.Dir(sessDir)), filepath.Base(sessDir)
}

// viaServer runs script through the call's profile server, starting it
// when needed. ran is false when the command did not start (no spec, no
// server, a refusal before the fork): the caller then runs it with its own
// bubblewrap.
func viaServer(callDir, script string, stderr io.Writer) (code int, ran bool) {
	raw, err := os.ReadFile(filepath.Join(callDir, serverFile))
	if err != nil {
		return 0, false
	}
	var sp serverSpec
	if json.Unmarshal(raw, &sp) != nil || !filepath.IsAbs(sp.Bwrap) {
		return 0, false
	}
	h := sha256.Sum256(raw)
	key := hex.EncodeToString(h[:12])
	srv, sess := sessionPaths(callDir)
	sock := sockPath(srv, sess, key)
	conn, err := dialServer(sock)
	if err != nil {
		if conn, err = startServer(srv, sess, key, &sp, filepath.Join(callDir, serverFile), sock); err != nil {
			return 0, false
		}
	}
	defer conn.Close()
	cwd, err := os.Getwd()
	if err != nil {
		return 0, false
	}
	fds, closeFDs := stdioFDs()
	defer closeFDs()
	// Signals wait from now on, and reach the command once it runs.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	br, err := sendRequest(conn, request{Key: key, Session: sess, Script: script, Cwd: cwd, Env: StripEnv(os.Environ())}, fds)
	if err != nil {
		return 0, false
	}
	var r reply
	if readReply(br, &r) != nil || !r.Started {
		return 0, false
	}
	// From here on the command runs: never again run it another way.
	go func() {
		for s := range sigs {
			if n, ok := s.(syscall.Signal); ok {
				fmt.Fprintf(conn, "{\"signal\":%d}\n", int(n))
			}
		}
	}()
	r = reply{}
	if err := readReply(br, &r); err != nil || r.Exit == nil {
		fmt.Fprintln(stderr, stoppedMessage)
		return 128 + int(syscall.SIGKILL), true
	}
	if r.Cwd != "" {
		_ = os.WriteFile(filepath.Join(callDir, "rw", "cwd"), []byte(r.Cwd+"\n"), 0o600)
	}
	return *r.Exit, true
}

// sendRequest sends a request with its stdin, stdout and stderr (fds) to
// a server and returns the reader of its replies.
func sendRequest(conn *net.UnixConn, rq request, fds []int) (*bufio.Reader, error) {
	req, err := json.Marshal(rq)
	if err != nil {
		return nil, err
	}
	msg := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(req)), uint32(len(req)))
	msg = append(msg, req...)
	if _, _, err := conn.WriteMsgUnix(msg, syscall.UnixRights(fds...), nil); err != nil {
		return nil, err
	}
	return bufio.NewReader(conn), nil
}

func readReply(br *bufio.Reader, r *reply) error {
	line, err := br.ReadBytes('\n')
	if err != nil {
		return err
	}
	return json.Unmarshal(line, r)
}

// stdioFDs returns the client's stdin, stdout and stderr to pass, with
// /dev/null for any that is closed.
func stdioFDs() ([]int, func()) {
	fds := []int{0, 1, 2}
	var opened []*os.File
	for i := range fds {
		if _, err := fcntl(i, syscall.F_GETFD); err != nil {
			if f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
				opened = append(opened, f)
				fds[i] = int(f.Fd())
			}
		}
	}
	return fds, func() {
		for _, f := range opened {
			f.Close()
		}
	}
}

func fcntl(fd, cmd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// sockPath is the socket of a session's server for a profile key: short,
// since a unix socket's path holds at most 107 bytes (the request names
// the whole key, which the server checks).
func sockPath(srv, sess, key string) string {
	return filepath.Join(srv, sess[:min(16, len(sess))]+"-"+key[:min(8, len(key))]+".sock")
}

func dialServer(sock string) (c *net.UnixConn, err error) {
	err = inSockDir(sock, func(name string) (err error) {
		c, err = net.DialUnix("unix", nil, &net.UnixAddr{Name: name, Net: "unix"})
		return err
	})
	return c, err
}

// inSockDir calls op with the socket's path, or, when that is longer than
// a socket's name may be, with its base name from its directory as the
// working directory (the launcher's; restored after).
func inSockDir(sock string, op func(name string) error) error {
	if len(sock) < 100 {
		return op(sock)
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := os.Chdir(filepath.Dir(sock)); err != nil {
		return err
	}
	defer os.Chdir(wd)
	return op(filepath.Base(sock))
}

// lockSession takes the session's lock in the server directory.
func lockSession(srv, sess string) (func(), error) {
	if err := os.MkdirAll(srv, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(srv, sess+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// startServer starts the session's server for key (stopping the one of
// another profile) unless another client just did, and connects to it.
func startServer(srv, sess, key string, sp *serverSpec, specPath, sock string) (*net.UnixConn, error) {
	unlock, err := lockSession(srv, sess)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if c, err := dialServer(sock); err == nil {
		return c, nil
	}
	stopLocked(srv, sess)
	_ = os.Remove(sock)
	var ln *net.UnixListener
	if err := inSockDir(sock, func(name string) (err error) {
		ln, err = net.ListenUnix("unix", &net.UnixAddr{Name: name, Net: "unix"})
		return err
	}); err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false)
	lf, err := ln.File()
	ln.Close()
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ir, iw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer ir.Close()
	reqf, err := startFast(srv, sess)
	if err != nil {
		iw.Close()
		return nil, err
	}
	defer reqf.Close()
	// Descriptors the harness left open must not live on in the keeper (a
	// harness waits for its pipes to close).
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		for _, e := range ents {
			if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
				syscall.CloseOnExec(fd)
			}
		}
	}
	// The keeper (Keep) starts bubblewrap as its child and lives as long as
	// the harness (this launcher's grandparent: the harness runs a shell,
	// which runs the launcher), so the sandbox dies with its parent as a
	// sandbox of one command does.
	cmd := exec.Command(exe, "sandbox", "keep", "--spec", specPath, "--key", key, "--session", sess,
		"--watch", strconv.Itoa(harnessPID()), "--requests", "5")
	cmd.Dir = "/"
	cmd.Env = keeperEnv(os.Environ())
	cmd.ExtraFiles = []*os.File{lf, iw, reqf}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		iw.Close()
		_ = os.Remove(sock)
		return nil, err
	}
	iw.Close()
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	done := make(chan error, 1)
	go func() { done <- json.NewDecoder(ir).Decode(&info) }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		err = errors.New("bubblewrap did not start")
	}
	if err != nil || info.ChildPID <= 0 {
		_ = cmd.Process.Kill()
		_ = os.Remove(sock)
		return nil, fmt.Errorf("sandbox server: %v", err)
	}
	go func() { _ = cmd.Wait() }() // reaped while this launcher lives
	_ = ir.Close()
	rec, _ := json.Marshal(serverRecord{Key: key, Phase: sp.Phase, PID: info.ChildPID, Start: procStart(info.ChildPID)})
	tmp := filepath.Join(srv, sess+".json.tmp")
	if err := os.WriteFile(tmp, rec, 0o600); err != nil || os.Rename(tmp, filepath.Join(srv, sess+".json")) != nil {
		_ = syscall.Kill(info.ChildPID, syscall.SIGKILL)
		_ = os.Remove(sock)
		return nil, errors.New("sandbox server: cannot record the server")
	}
	return dialServer(sock)
}

// keeperEnv is the keeper's environment: what the watcher it runs (the
// spec's Watch) needs to open the store as the hooks do (the home
// directory, XDG directories, libpq's PG* variables). bubblewrap and the
// server never get it: Keep gives them the spec's environment.
func keeperEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "USER", k == "LOGNAME", strings.HasPrefix(k, "XDG_"), strings.HasPrefix(k, "PG"):
			out = append(out, kv)
		}
	}
	return out
}

// harnessPID is the launcher's grandparent: the harness whose shell runs
// the launcher (1 when unknown, which never exits).
func harnessPID() int {
	if f := procStat(os.Getppid()); len(f) > 1 {
		if pid, err := strconv.Atoi(f[1]); err == nil && pid > 1 {
			return pid
		}
	}
	return 1
}

// Keep is the keeper of one sandbox server (`sandbox keep --spec FILE
// --key K --session S --watch PID`), outside the sandbox: it starts
// bubblewrap for the server with the listening socket it inherited at fd
// 3, bubblewrap's info (the server's PID) going to fd 4, and lives until
// the server ends or process PID (the harness) exits; bubblewrap runs with
// --die-with-parent, so the server and every command in it die with the
// keeper. It holds nothing the sandboxed commands can reach.
func Keep(args []string, stderr io.Writer) int {
	var spec, key, sess string
	watch, reqFD := 1, -1
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--requests":
			reqFD, _ = strconv.Atoi(args[i+1])
		case "--spec":
			spec = args[i+1]
		case "--key":
			key = args[i+1]
		case "--session":
			sess = args[i+1]
		case "--watch":
			watch, _ = strconv.Atoi(args[i+1])
		}
	}
	var reqf *os.File
	if reqFD > 2 {
		// The fast path's requests (fast_linux.go): never bubblewrap's.
		syscall.CloseOnExec(reqFD)
		reqf = os.NewFile(uintptr(reqFD), "requests")
	}
	raw, err := os.ReadFile(spec)
	var sp serverSpec
	if err == nil {
		err = json.Unmarshal(raw, &sp)
	}
	if err != nil || key == "" || sess == "" || !filepath.IsAbs(sp.Bwrap) {
		fmt.Fprintln(stderr, "statewright sandbox keep: usage: keep --spec FILE --key K --session S --watch PID", err)
		return 2
	}
	watchStart := procStart(watch)
	exe, err := os.Executable()
	if err != nil {
		return 126
	}
	ef, err := os.Open(exe)
	if err != nil {
		return 126
	}
	// The launcher's own binary runs the server inside through its file
	// descriptor: its path may not be visible there (a binary under /tmp).
	bargs := append(append([]string(nil), sp.Args...), "--info-fd", "4", "--chdir", "/", "--",
		"/proc/self/fd/5", "sandbox", "serve", "--fd", "3", "--key", key, "--session", sess)
	cmd := exec.Command(sp.Bwrap, bargs...)
	cmd.Env = sp.Env
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{os.NewFile(3, "listener"), os.NewFile(4, "info"), ef}
	if err := cmd.Start(); err != nil {
		return 126
	}
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	if w := startWatch(sp.Watch); w != nil {
		// It ends with the server (and with the keeper: Pdeathsig).
		defer func() { _ = w.Process.Kill(); _ = w.Wait() }()
	}
	fast := make(chan struct{})
	if reqf != nil {
		callDir := filepath.Dir(spec)
		srv, _ := sessionPaths(callDir)
		go func() { keepFast(reqf, srv, sess, key, filepath.Dir(callDir), done); close(fast) }()
	} else {
		close(fast)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			// The server ended: the fast path's requests in flight get
			// their answers first.
			<-fast
			return 0
		case <-tick.C:
			if watch > 1 && procStart(watch) != watchStart {
				// The harness is gone: so is the sandbox, and its fast
				// path. bubblewrap is killed here (the server with it,
				// --die-with-parent) rather than by the keeper's exit, so
				// that the fast path's commands in flight end first and
				// their keeper sweeps what they planted (fastKeeper.run):
				// a harness that crashed sends no SessionEnd to do it.
				if reqf != nil {
					callDir := filepath.Dir(spec)
					srv, _ := sessionPaths(callDir)
					unlinkFast(reqf, srv, sess)
				}
				_ = cmd.Process.Kill()
				<-done
				<-fast
				return 0
			}
		}
	}
}

// startWatch starts the spec's watcher (nil when there is none or it
// cannot start: the hooks still stop the server at their next decision).
func startWatch(argv []string) *exec.Cmd {
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) {
		return nil
	}
	w := exec.Command(argv[0], argv[1:]...)
	w.Dir = "/"
	w.Env = keeperEnv(os.Environ())
	w.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if w.Start() != nil {
		return nil
	}
	return w
}

// procStart is field 22 of /proc/PID/stat (the start time), which tells a
// recorded process from a later one with the same PID.
func procStart(pid int) string {
	f := procStat(pid)
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// procStat returns the fields of /proc/PID/stat after the command name
// (state first).
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// alive reports whether pid is still the process that started at start,
// and not yet a zombie.
func alive(pid int, start string) bool {
	f := procStat(pid)
	return len(f) > 19 && f[19] == start && !zombie(pid, f)
}

// zombie reports whether the process pid, whose /proc/PID/stat fields are
// f, is a zombie: state Z and no thread left. A process whose main thread
// exited alone (SYS_EXIT) is "Z" there too while its other threads run
// on; one scan that passed over "Z" processes let such a process outlive
// its command.
func zombie(pid int, f []string) bool {
	if len(f) == 0 || f[0] != "Z" {
		return false
	}
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	return err != nil || len(ents) <= 1
}

// stopLocked kills the session's recorded server (with everything it
// started) and removes its record and socket. The session's lock is held.
func stopLocked(srv, sess string) {
	recFile := filepath.Join(srv, sess+".json")
	b, err := os.ReadFile(recFile)
	if err != nil {
		return
	}
	var rec serverRecord
	if json.Unmarshal(b, &rec) == nil && rec.PID > 0 && rec.Start != "" && procStart(rec.PID) == rec.Start {
		// PID 1 of the server's PID namespace: when it dies the kernel
		// kills every process in the namespace.
		_ = syscall.Kill(rec.PID, syscall.SIGKILL)
		for i := 0; i < 200 && alive(rec.PID, rec.Start); i++ {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if rec.Key != "" {
		_ = os.Remove(sockPath(srv, sess, rec.Key))
	}
	_ = os.Remove(recFile)
}

// StopServer stops the sandbox server of session under root, and
// everything it runs (the session ended).
func StopServer(root, session string) {
	StopServerUnless(root, session, nil)
}

// StopServerUnless stops the session's sandbox server, and everything it
// runs, unless its profile is of phase *keep, and likewise the session's
// commands that run with a bubblewrap of their own (stopCommands): the
// hooks and the watcher call it with the phase in force, so that commands
// started in an earlier phase (a harness's background commands) do not
// outlive it.
func StopServerUnless(root, session string, keep *string) {
	srv := ServerDir(root)
	sess := filepath.Base(SessionDir(root, session))
	// The commands that run with a bubblewrap of their own follow the
	// phase as the server does (follow_linux.go).
	stopCommands(srv, sess, keep)
	rec := filepath.Join(srv, sess+".json")
	b, err := os.ReadFile(rec)
	if err != nil {
		return // no server: the common case, one failed open
	}
	var r serverRecord
	if keep != nil && json.Unmarshal(b, &r) == nil && r.Phase == *keep {
		return
	}
	unlock, err := lockSession(srv, sess)
	if err != nil {
		return
	}
	defer unlock()
	if keep != nil {
		if b, err := os.ReadFile(rec); err != nil || json.Unmarshal(b, &r) != nil || r.Phase == *keep {
			return
		}
	}
	stopLocked(srv, sess)
}

// server is Serve's state.
type server struct {
	key, session string
	env          []string

	// stops has a value when the reaper has seen a process stop (an
	// element of a pipeline at its exec: startPipeline).
	stops chan struct{}

	mu      sync.Mutex
	waiters map[int]*running
	// held are the sessions of the ended items of running lists
	// (runList): live for endCommand until their list ends, as the
	// inner bash's session would be.
	held   map[int]int
	active int
	last   time.Time
}

// running is one command the server forked; done is set (under mu) when
// its shell has been reaped, after which its PID may name another process.
type running struct {
	status chan syscall.WaitStatus
	done   bool
}

// Serve is the server inside the profile's sandbox (`sandbox serve --fd N
// --key K --session S`): it accepts clients on the listening socket it
// inherited at fd N and runs their commands until it is killed or idle.
func Serve(args []string, stderr io.Writer) int {
	var fd int
	s := &server{waiters: map[int]*running{}, held: map[int]int{}, last: time.Now(), stops: make(chan struct{}, 1)}
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--fd":
			fd, _ = strconv.Atoi(args[i+1])
		case "--key":
			s.key = args[i+1]
		case "--session":
			s.session = args[i+1]
		}
	}
	if fd < 3 || s.key == "" || s.session == "" {
		fmt.Fprintln(stderr, "statewright sandbox serve: usage: serve --fd N --key K --session S")
		return 2
	}
	// Not dumpable: the commands (same uid, same namespaces) cannot ptrace
	// the server or read its /proc entries. no_new_privs again (bubblewrap
	// set it).
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); e != 0 {
		fmt.Fprintln(stderr, "statewright sandbox serve: PR_SET_DUMPABLE:", e)
		return 126
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, 38 /* PR_SET_NO_NEW_PRIVS */, 1, 0, 0, 0, 0); e != 0 {
		fmt.Fprintln(stderr, "statewright sandbox serve: PR_SET_NO_NEW_PRIVS:", e)
		return 126
	}
	s.env = os.Environ()
	for _, f := range []int{4, 5} { // bubblewrap's info pipe and the binary
		if f != fd {
			syscall.Close(f)
		}
	}
	// Handled, not ignored: an ignored signal stays ignored in the
	// commands; a handled one is reset when they exec.
	drain := make(chan os.Signal, 8)
	signal.Notify(drain, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2,
		syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGPIPE)
	go func() {
		for range drain {
		}
	}()
	chld := make(chan os.Signal, 16)
	signal.Notify(chld, syscall.SIGCHLD)
	go s.reap(chld)
	f := os.NewFile(uintptr(fd), "listener")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		fmt.Fprintln(stderr, "statewright sandbox serve:", err)
		return 126
	}
	go s.idle()
	for {
		c, err := ln.Accept()
		if err != nil {
			return 126
		}
		go s.handle(c.(*net.UnixConn))
	}
}

// reap collects every child and orphan (the server is PID 1) and hands
// each command's status to its waiter.
func (s *server) reap(chld chan os.Signal) {
	for range chld {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
			if ws.Stopped() {
				// A pipeline's element stopped at its exec: the gate's
				// (startPipeline), which detaches it once it is stopped.
				select {
				case s.stops <- struct{}{}:
				default:
				}
				continue
			}
			s.mu.Lock()
			if r, ok := s.waiters[pid]; ok {
				r.done = true
				r.status <- ws
				delete(s.waiters, pid)
			}
			s.mu.Unlock()
		}
	}
}

// idle exits (ending the namespace) after serverIdle with no command.
func (s *server) idle() {
	for range time.Tick(time.Minute) {
		s.mu.Lock()
		done := s.active == 0 && time.Since(s.last) > serverIdle
		s.mu.Unlock()
		if done {
			os.Exit(0)
		}
	}
}

// clientSignals calls each for every signal the client forwards (a line
// {"signal": n}, 0 < n < 65), until the client goes away.
func clientSignals(c *net.UnixConn, each func(syscall.Signal)) {
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		var m struct{ Signal int }
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Signal > 0 && m.Signal < 65 {
			each(syscall.Signal(m.Signal))
		}
	}
}

// finished marks one command (or list) done: one fewer running, and the
// idle timer counts from now.
func (s *server) finished() {
	s.mu.Lock()
	s.active--
	s.last = time.Now()
	s.mu.Unlock()
}

func (s *server) send(c *net.UnixConn, r reply) error {
	b, _ := json.Marshal(r)
	_, err := c.Write(append(b, '\n'))
	return err
}

// handle runs one client's command.
func (s *server) handle(c *net.UnixConn) {
	defer c.Close()
	if !s.peerOK(c) {
		return
	}
	files, req, err := readRequest(c)
	defer func() {
		for _, fd := range files {
			syscall.Close(fd)
		}
	}()
	if err == nil && (req.Key != s.key || req.Session != s.session) {
		err = errors.New("the request is for another session or profile")
	}
	if err != nil {
		_ = s.send(c, reply{Error: err.Error()})
		return
	}
	// Plain descriptors, not os.Files: the runtime's poller would cost
	// system calls of its own per command (readSmall).
	var cwdPipe [2]int
	if err := syscall.Pipe2(cwdPipe[:], syscall.O_CLOEXEC); err != nil {
		_ = s.send(c, reply{Error: err.Error()})
		return
	}
	pr, pw := cwdPipe[0], cwdPipe[1]
	defer syscall.Close(pr)
	fds := make([]uintptr, serverCwdFD+1)
	for i := range fds {
		fds[i] = ^uintptr(0)
	}
	for i, fd := range files {
		fds[i] = uintptr(fd)
	}
	fds[serverCwdFD] = uintptr(pw)
	if len(req.List) > 0 && len(req.Argv) == 0 && len(req.Pipeline) == 0 && validList(req.List, req.Script) {
		// A list of literal pipelines: the server's, item by item, as far
		// as it is sure (runList).
		if sh, ok := startShell(MergeEnv(StripEnv(req.Env), s.env), req.Cwd); ok {
			s.runList(c, req, listShell{bashShell: sh, cwd: req.Cwd}, fds, pr, pw)
			return
		}
	}
	var path string
	var argv, env []string
	direct := false
	if len(req.Argv) > 0 {
		path, env, direct = directCommand(req.Argv, MergeEnv(StripEnv(req.Env), s.env), req.Cwd)
		argv = req.Argv
	}
	var elems []directElem
	if len(req.Pipeline) > 1 {
		elems, direct = pipelineCommands(req.Pipeline, MergeEnv(StripEnv(req.Env), s.env), req.Cwd)
	}
	// pids are the processes the command is: its shell, its program, or
	// its pipeline's elements (each in a session of its own); the last
	// one's status is the command's.
	var pids []int
	s.mu.Lock()
	if direct && elems != nil {
		// The pipeline's programs, once every one's execve succeeded;
		// bash when one fails (it runs the others and prints its error).
		pids, direct = s.startPipeline(elems, req.Cwd, fds[:3])
	} else if direct {
		// The program itself, as bash -c would exec it (its stdio only);
		// bash when the exec fails (ENOEXEC, EACCES, …: bash's own error
		// or its script fallback).
		var pid int
		pid, err = syscall.ForkExec(path, argv, &syscall.ProcAttr{
			Dir: req.Cwd, Env: env, Files: fds[:3], Sys: &syscall.SysProcAttr{Setsid: true},
		})
		direct = err == nil
		if direct {
			pids = []int{pid}
		}
	}
	if !direct {
		env = MergeEnv(StripEnv(req.Env), append(append([]string(nil), s.env...), cwdEnv+"=/dev/fd/"+strconv.Itoa(serverCwdFD)))
		var pid int
		pid, err = syscall.ForkExec("/bin/bash", append([]string{"bash"}, shellArgs(req.Script)...), &syscall.ProcAttr{
			Dir: req.Cwd, Env: env, Files: fds, Sys: &syscall.SysProcAttr{Setsid: true},
		})
		if err == nil {
			pids = []int{pid}
		}
	}
	cmds := make([]*running, len(pids))
	if err == nil {
		for i, pid := range pids {
			cmds[i] = &running{status: make(chan syscall.WaitStatus, 1)}
			s.waiters[pid] = cmds[i]
		}
		s.active++
	}
	s.mu.Unlock()
	syscall.Close(pw)
	if err != nil {
		_ = s.send(c, reply{Error: fmt.Sprintf("cannot run the command in %s: %v", req.Cwd, err)})
		return
	}
	defer s.finished()
	go func() {
		// Signals from the client go to the command's process group; when
		// the client goes away (the harness killed it), so does the command.
		clientSignals(c, func(sig syscall.Signal) {
			for _, pid := range pids {
				_ = syscall.Kill(-pid, sig)
			}
		})
		// Until its shell is reaped the PID (and so the session id) is
		// still the command's.
		s.mu.Lock()
		for i, pid := range pids {
			if !cmds[i].done {
				killSession(pid)
			}
		}
		s.mu.Unlock()
	}()
	_ = s.send(c, reply{Started: true})
	// As bash, the command ends when every element of its pipeline has.
	var ws syscall.WaitStatus
	for _, cmd := range cmds {
		ws = <-cmd.status
	}
	s.endCommand() // what the command left running dies with it
	code := waitStatusCode(ws)
	cwd := readCwd(pr)
	if direct {
		// The directory it ran in, as the inner bash's `pwd -P` would say
		// (nothing when it is gone).
		if fi, err := os.Stat(req.Cwd); err == nil && fi.IsDir() {
			cwd = req.Cwd
		}
	}
	_ = s.send(c, reply{Exit: &code, Cwd: cwd})
}

func (s *server) peerOK(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return false
	}
	return cred.Uid == uint32(os.Getuid())
}

// requestBufs are readRequest's buffers: a fresh 64 KiB per command cost
// page faults (~40 us each on the VM measured).
var requestBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// readRequest reads a client's request and the three file descriptors
// that come with it (stdin, stdout, stderr). A directory or a link among
// them is refused: opened outside the sandbox's mount namespace, it would
// lead out of it.
func readRequest(c *net.UnixConn) ([]int, request, error) {
	var req request
	bp := requestBufs.Get().(*[]byte)
	defer requestBufs.Put(bp)
	buf := *bp
	oob := make([]byte, syscall.CmsgSpace(4*4))
	n, oobn, flags, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, req, err
	}
	var files []int
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, req, err
	}
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		files = append(files, fds...)
	}
	if flags&syscall.MSG_CTRUNC != 0 || len(files) != 3 {
		return files, req, errors.New("a request passes exactly stdin, stdout and stderr")
	}
	for _, fd := range files {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return files, req, err
		}
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR, syscall.S_IFLNK:
			return files, req, errors.New("a directory or a link cannot be a command's stdio")
		}
	}
	if n < 4 {
		return files, req, errors.New("short request")
	}
	size := int(binary.BigEndian.Uint32(buf))
	if size > maxRequest {
		return files, req, errors.New("request too large")
	}
	var body []byte
	if size <= n-4 {
		body = buf[4 : 4+size] // the whole request came at once: the usual case
	} else {
		body = make([]byte, size)
		got := copy(body, buf[4:n])
		if _, err := io.ReadFull(c, body[got:]); err != nil {
			return files, req, err
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return files, req, err
	}
	if !filepath.IsAbs(req.Cwd) {
		return files, req, errors.New("the working directory is not absolute")
	}
	return files, req, nil
}

// readCwd returns the first line the command's shell wrote to its cwd
// pipe (without waiting: children it left may hold the pipe open).
func readCwd(fd int) string {
	if syscall.SetNonblock(fd, true) != nil {
		return ""
	}
	b := make([]byte, 4096)
	n, err := syscall.Read(fd, b)
	if err != nil || n <= 0 {
		return ""
	}
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	if !filepath.IsAbs(line) {
		return ""
	}
	return line
}

// endCommand kills, when a command's shell has been reaped, every
// process of the sandbox that is in no running command's session: what
// the command left running in its session (&, nohup) and what left a
// session (setsid, a daemon), the ended command's or an earlier one's.
// They are dead when it returns, before the command's end is answered:
// the launcher or the keeper then sweeps what they planted (Sweep), and
// nothing of theirs writes after it.
//
// Signals sent one PID at a time can be outrun: a process that forks and
// exits in a loop (a fork "hopper") has a child the scan did not list
// when its parent's SIGKILL lands, and lives on (it did against the scan
// of /proc this replaced). The kernel's signals to many processes
// (kill(-1), a process group) reach a child that a fork in progress
// makes. A process whose main thread exited alone shows "Z" in /proc
// while its other threads run: it is not taken for a zombie (zombie). So with no other command running the server, PID 1, kills
// every other process of its namespace with kill(-1, SIGKILL); with
// others running it stops them all with kill(-1, SIGSTOP) (a stopped
// process forks nothing), kills the processes outside the running
// commands' sessions while nothing runs, and continues the rest
// (kill(-1, SIGCONT)). s.mu is held throughout, so no command starts
// meanwhile.
func (s *server) endCommand() {
	s.mu.Lock()
	defer s.mu.Unlock()
	self := strconv.Itoa(os.Getpid())
	if len(s.waiters) == 0 && len(s.held) == 0 {
		_ = syscall.Kill(-1, syscall.SIGKILL)
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			if len(s.strays(self, nil)) == 0 {
				return
			}
		}
		return
	}
	live := map[string]bool{self: true}
	for pid := range s.waiters {
		live[strconv.Itoa(pid)] = true
	}
	for pid := range s.held {
		live[strconv.Itoa(pid)] = true
	}
	_ = syscall.Kill(-1, syscall.SIGSTOP)
	var killed [][2]string
	seen := map[[2]string]bool{}
	// A fork in progress at the SIGSTOP completes with a stopped child:
	// scan again until a scan finds nothing new.
	for pass := 0; pass < 10; pass++ {
		found := false
		for _, p := range s.strays(self, live) {
			if seen[p] {
				continue
			}
			seen[p], found = true, true
			pid, _ := strconv.Atoi(p[0])
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, p)
		}
		if !found {
			break
		}
	}
	_ = syscall.Kill(-1, syscall.SIGCONT)
	waitDead(killed)
}

// strays lists (PID, start time) of the processes of the sandbox, other
// than self and zombies, whose session is not in live (nil: every one).
func (s *server) strays(self string, live map[string]bool) [][2]string {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out [][2]string
	for _, e := range ents {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' || name == self {
			continue
		}
		pid, _ := strconv.Atoi(name)
		if f := procStat(pid); len(f) > 19 && !live[f[3]] && !zombie(pid, f) {
			out = append(out, [2]string{name, f[19]})
		}
	}
	return out
}

// waitDead waits, at most a second in all, until the processes (PID,
// start time) are gone or zombies.
func waitDead(procs [][2]string) {
	deadline := time.Now().Add(time.Second)
	for _, p := range procs {
		pid, _ := strconv.Atoi(p[0])
		for alive(pid, p[1]) && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// killSession kills the process group and then every process left in the
// session of the command whose shell was sid (it started it with setsid):
// what a command leaves running dies with it, as it does with one
// bubblewrap per command. A process that left the session (setsid) is
// endCommand's.
func killSession(sid int) {
	_ = syscall.Kill(-sid, syscall.SIGKILL)
	self := strconv.Itoa(os.Getpid())
	want := strconv.Itoa(sid)
	var killed [][2]string
	defer func() { waitDead(killed) }()
	for pass := 0; pass < 10; pass++ {
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		found := false
		for _, e := range ents {
			name := e.Name()
			if name == self || name[0] < '0' || name[0] > '9' {
				continue
			}
			pid, _ := strconv.Atoi(name)
			if f := procStat(pid); len(f) > 19 && f[3] == want && !zombie(pid, f) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				killed = append(killed, [2]string{name, f[19]})
				found = true
			}
		}
		if !found {
			return
		}
	}
}
