package sandbox

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The fast path of the phase's sandbox (docs/sandbox.md, "The fast path").
//
// A command the phase's server runs needs no process of statewright's in
// the harness's shell: the rewritten command (ShellCommand) is bash
// builtins. It writes its exported variables (`export -p`) into a file of
// the server directory, a one-line request (its $BASHPID, the time, the
// call's id) into the session's request FIFO, and reads the answer from
// the call's reply FIFO (both in the server directory, hidden in every
// sandbox). The keeper of the session's server (Keep, outside the
// sandbox, started with the server) reads the request, takes the shell's
// stdin, stdout and stderr (the copies the rewritten command holds at fds
// 5, 6 and 7) with pidfd_getfd, and sends the command to the server as a
// launcher would (the same request, SCM_RIGHTS). It answers "a" when it
// takes the request, then the exit status, or "x" when the command did not
// start (the harness's shell then runs the launcher: the per-command path,
// never no sandbox). The bash of the rewritten command forwards INT, TERM,
// HUP and QUIT (a trap writes them to the FIFO); when the shell dies (the
// harness killed it) the keeper closes the server's connection and the
// server kills the command, as for a killed launcher.

// Fds at which the rewritten command holds copies of its stdin, stdout and
// stderr while the keeper takes them (its own 0, 1 and 2 move while a
// builtin's output is redirected).
const fastStdio = 5

// fastMaxAge is how old a request may be when the keeper takes it: the
// shell waits 30 s for the keeper's "a" and then runs the launcher, so a
// request found later must not run too.
const fastMaxAge = 10 * time.Second

// reqPath is the session's request FIFO, replyPath and envPath a call's
// reply FIFO and variables, in the server directory.
func reqPath(srv, sess string) string       { return filepath.Join(srv, sess+".req") }
func replyPath(srv, sess, id string) string { return filepath.Join(srv, sess+"."+id+".reply") }
func envPath(srv, sess, id string) string   { return filepath.Join(srv, sess+"."+id+".env") }

// prepareFast creates the call's reply FIFO (PrepareCall).
func prepareFast(c Call) error {
	srv, sess := sessionPaths(c.Dir)
	p := replyPath(srv, sess, filepath.Base(c.Dir))
	_ = os.Remove(p)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

// removeFast removes the call's files in the server directory.
func removeFast(c Call) {
	srv, sess := sessionPaths(c.Dir)
	id := filepath.Base(c.Dir)
	_ = os.Remove(replyPath(srv, sess, id))
	_ = os.Remove(envPath(srv, sess, id))
}

// fastShell is the part of the rewritten command that sends it to the
// phase's server (ShellCommand): it sets __sw_rc to the exit status when
// the server ran it, and leaves it empty otherwise. Bash only ($BASHPID,
// $EPOCHREALTIME, read -t -u); other shells skip it. The FIFOs are opened
// read-write, which never blocks: a FIFO whose keeper was killed costs a
// 30 s wait for the "a", then the launcher, never a hang.
func fastShell(c Call) string {
	srv, sess := sessionPaths(c.Dir)
	id := filepath.Base(c.Dir)
	req := Quote(reqPath(srv, sess))
	wait := func(v string, timeout string) string {
		// A trapped signal interrupts read (status 128+n): read again.
		return "while :; do IFS= read -r " + timeout + "-u 9 " + v + "; case $? in 129|130|131|143) continue;; esac; break; done"
	}
	// The command's status: read in turns of half a second, the parts
	// joined. A signal that lands after bash last looked for traps and
	// before read(2) blocks interrupts nothing: its trap (which forwards it
	// to the command) would wait for the command's end, and the command
	// would never see it. A turn that times out (status 142) runs it.
	// (One command: it follows an &&.)
	waitRC := "{ __sw_rc=; while :; do __sw_p=; IFS= read -r -t 0.5 -u 9 __sw_p; __sw_c=$?; __sw_rc=$__sw_rc$__sw_p; [ $__sw_c -gt 128 ] && continue; break; done; }"
	return `__sw_rc=; if [ -n "${BASHPID-}" ] && [ -n "${EPOCHREALTIME-}" ] && [ -p ` + req + ` ]; then ` +
		`__sw_s() { printf 's %s %s\n' ` + id + ` "$1" 1<> ` + req + `; } 2>/dev/null; ` +
		`trap '__sw_s INT' INT; trap '__sw_s TERM' TERM; trap '__sw_s HUP' HUP; trap '__sw_s QUIT' QUIT; ` +
		`{ export -p >| ` + Quote(envPath(srv, sess, id)) + ` && printf 'r %s %s %s\n' "$BASHPID" "$EPOCHREALTIME" ` + id + ` 1<> ` + req +
		` && __sw_a= && ` + wait("__sw_a", "-t 30 ") + ` && [ "$__sw_a" = a ] && ` + waitRC + `; } 9<> ` + Quote(replyPath(srv, sess, id)) +
		` 5<&0 6>&1 7>&2; trap - INT TERM HUP QUIT; fi; `
}

// fastKeeper answers the fast path's requests for one server (Keep).
type fastKeeper struct {
	srv, sess, key string
	calls          string // <root>/<session>/calls
	pidNS          string // the keeper's PID namespace (/proc/self/ns/pid)
	wg             sync.WaitGroup

	mu       sync.Mutex
	inflight map[string]chan syscall.Signal
}

// serve reads requests from the FIFO until it fails.
func (k *fastKeeper) serve(req *os.File) {
	br := bufio.NewReader(req)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 4 && f[0] == "r" && isCallID(f[3]):
			pid, err := strconv.Atoi(f[1])
			if err != nil || pid <= 1 {
				continue
			}
			k.mu.Lock()
			if _, busy := k.inflight[f[3]]; busy {
				k.mu.Unlock()
				continue
			}
			sigs := make(chan syscall.Signal, 4)
			k.inflight[f[3]] = sigs
			k.mu.Unlock()
			k.wg.Add(1)
			go func() {
				defer k.wg.Done()
				k.run(pid, f[2], f[3], sigs)
				k.mu.Lock()
				delete(k.inflight, f[3])
				k.mu.Unlock()
			}()
		case len(f) == 3 && f[0] == "s":
			sig, ok := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP, "QUIT": syscall.SIGQUIT}[f[2]]
			k.mu.Lock()
			if ch := k.inflight[f[1]]; ch != nil && ok {
				select {
				case ch <- sig:
				default:
				}
			}
			k.mu.Unlock()
		}
	}
}

func isCallID(s string) bool {
	if len(s) != 24 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// run runs one request: the shell pid's call id.
func (k *fastKeeper) run(pid int, ts, id string, sigs chan syscall.Signal) {
	// A reader on the reply FIFO is the shell still waiting; a FIFO, not a
	// file some other request created in its place.
	// Plain system calls, not an os.File: the answers are a few bytes, and
	// the runtime's poller costs system calls of its own (readSmall).
	rf, err := syscall.Open(replyPath(k.srv, k.sess, id), syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer syscall.Close(rf)
	var rst syscall.Stat_t
	if syscall.Fstat(rf, &rst) != nil || rst.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return
	}
	answer := func(s string) { _, _ = syscall.Write(rf, []byte(s+"\n")) }
	sec, err := strconv.ParseFloat(strings.Replace(ts, ",", ".", 1), 64)
	if age := time.Since(time.Unix(0, int64(sec*1e9))); err != nil || age > fastMaxAge || age < -fastMaxAge {
		answer("x")
		return
	}
	answer("a")
	callDir := filepath.Join(k.calls, id)
	envFile := envPath(k.srv, k.sess, id)
	rq, fds, pidfd, err := k.request(pid, callDir, envFile)
	_ = os.Remove(envFile)
	var pf *os.File
	if pidfd >= 0 {
		// Non-blocking: the runtime's poller waits for the shell's exit
		// (a goroutine blocked in poll(2) kept the runtime's monitor
		// waking up, which cost more CPU than the rest of the request).
		pf = os.NewFile(uintptr(pidfd), "pidfd")
		defer pf.Close()
	}
	defer func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}()
	if err != nil || pf == nil {
		answer("x")
		return
	}
	conn, err := dialServer(sockPath(k.srv, k.sess, k.key))
	if err != nil {
		answer("x")
		return
	}
	defer conn.Close()
	br, err := sendRequest(conn, rq, fds)
	if err != nil {
		answer("x")
		return
	}
	var r reply
	if readReply(br, &r) != nil || !r.Started {
		answer("x")
		return
	}
	// From here on the command runs: never "x" again.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case s := <-sigs:
				fmt.Fprintf(conn, "{\"signal\":%d}\n", int(s))
			case <-stop:
				return
			}
		}
	}()
	go watchExit(pf, stop, func() { conn.Close() })
	r = reply{}
	err = readReply(br, &r)
	// The command and everything it started have ended: what it planted
	// goes now, as the launcher does (Main, Sweep).
	stderr := func(msg string) { _, _ = syscall.Write(fds[2], []byte(msg+"\n")) }
	if msg := (Call{Dir: callDir}).Sweep(); msg != "" {
		stderr(msg)
	}
	if err != nil || r.Exit == nil {
		stderr(stoppedMessage)
		answer(strconv.Itoa(128 + int(syscall.SIGKILL)))
		return
	}
	if r.Cwd != "" {
		_ = writeSmall(filepath.Join(callDir, "rw", "cwd"), []byte(r.Cwd+"\n"), 0o600)
	}
	answer(strconv.Itoa(*r.Exit))
}

// request builds the server's request for the shell pid's call in
// callDir: the call must be for this keeper's profile (its server.json),
// the shell must be a process of this user outside every sandbox (in the
// keeper's PID namespace), and its stdio is taken from fds 5, 6 and 7.
func (k *fastKeeper) request(pid int, callDir, envFile string) (request, []int, int, error) {
	var rq request
	raw, err := readSmall(filepath.Join(callDir, serverFile))
	if err != nil {
		return rq, nil, -1, err
	}
	if h := sha256.Sum256(raw); hex.EncodeToString(h[:12]) != k.key {
		return rq, nil, -1, errors.New("another profile")
	}
	var cf callCommand
	if b, err := readSmall(filepath.Join(callDir, commandFile)); err != nil || json.Unmarshal(b, &cf) != nil || cf.Command == "" {
		return rq, nil, -1, errors.New("no command")
	}
	proc := "/proc/" + strconv.Itoa(pid)
	var st syscall.Stat_t
	if err := syscall.Stat(proc, &st); err != nil || st.Uid != uint32(os.Getuid()) {
		return rq, nil, -1, errors.New("not this user's process")
	}
	theirs, err := os.Readlink(proc + "/ns/pid")
	if k.pidNS == "" || err != nil || k.pidNS != theirs {
		return rq, nil, -1, errors.New("a process in another PID namespace")
	}
	pidfd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return rq, nil, -1, err
	}
	fds := make([]int, 0, 3)
	for i := 0; i < 3; i++ {
		fd, err := unix.PidfdGetfd(pidfd, fastStdio+i, 0)
		if err != nil {
			return rq, fds, pidfd, err
		}
		fds = append(fds, fd)
	}
	cwd, err := os.Readlink(proc + "/cwd")
	if err != nil || !filepath.IsAbs(cwd) {
		return rq, fds, pidfd, errors.New("no working directory")
	}
	b, err := readSmall(envFile)
	if err != nil {
		return rq, fds, pidfd, err
	}
	env, err := ParseExports(string(b))
	if err != nil {
		return rq, fds, pidfd, err
	}
	// The shell is still the requester: the pid was not reused meanwhile.
	if err := unix.PidfdSendSignal(pidfd, 0, nil, 0); err != nil {
		return rq, fds, pidfd, err
	}
	return request{Key: k.key, Session: k.sess, Script: cf.Command, Argv: cf.Argv, Pipeline: cf.Pipeline, List: cf.List, Cwd: cwd, Env: StripEnv(env)}, fds, pidfd, nil
}

// watchExit calls gone when the process of the pidfd pf exits, unless
// stop is closed first.
func watchExit(pf *os.File, stop chan struct{}, gone func()) {
	rc, err := pf.SyscallConn()
	if err != nil {
		return
	}
	exited := make(chan struct{})
	go func() {
		waited := false
		err := rc.Read(func(uintptr) bool {
			// Called once at once, then again when the pidfd is readable:
			// the process exited.
			if !waited {
				waited = true
				return false
			}
			return true
		})
		if err == nil {
			close(exited)
		}
	}()
	select {
	case <-exited:
		gone()
	case <-stop:
	}
}

// startFast creates the session's request FIFO for a new server (the
// session's lock is held) and returns it open for the keeper.
func startFast(srv, sess string) (*os.File, error) {
	p := reqPath(srv, sess)
	_ = os.Remove(p)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		return nil, err
	}
	return os.OpenFile(p, os.O_RDWR, 0)
}

// keepFast serves the fast path's requests from req (fd N of the keeper)
// while the server runs; stopped is closed when it ended. It then removes
// the FIFO (unless a newer server's replaced it), answers what is still
// queued and waits for the requests in flight.
func keepFast(req *os.File, srv, sess, key, calls string, stopped chan struct{}) {
	k := &fastKeeper{srv: srv, sess: sess, key: key, calls: calls, inflight: map[string]chan syscall.Signal{}}
	k.pidNS, _ = os.Readlink("/proc/self/ns/pid")
	go k.serve(req)
	<-stopped
	unlinkFast(req, srv, sess)
	// A shell that found the FIFO before it went still gets an answer ("x":
	// the server is gone).
	time.Sleep(300 * time.Millisecond)
	k.wg.Wait()
}

// unlinkFast removes the session's request FIFO if it is still req (a
// newer server's replaces it).
func unlinkFast(req *os.File, srv, sess string) {
	var a, b syscall.Stat_t
	if syscall.Fstat(int(req.Fd()), &a) == nil && syscall.Stat(reqPath(srv, sess), &b) == nil && a.Ino == b.Ino && a.Dev == b.Dev {
		_ = os.Remove(reqPath(srv, sess))
	}
}

// ParseExports returns the variables `export -p` printed (bash's
// `declare -x NAME="value"` or `NAME=$'…'`, or `export NAME=…` in POSIX
// mode), as NAME=value; exported names without a value are left out.
func ParseExports(s string) ([]string, error) {
	var env []string
	for len(s) > 0 {
		line := s
		array := false
		switch {
		case strings.HasPrefix(s, "declare "):
			s = s[len("declare "):]
			i := strings.IndexByte(s, ' ')
			if i < 0 || !strings.HasPrefix(s, "-") {
				return nil, errors.New("export -p: bad declare")
			}
			// An array is not exported (bash leaves it out of the
			// environment).
			array = strings.ContainsAny(s[:i], "aA")
			s = s[i+1:]
		case strings.HasPrefix(s, "export "):
			s = s[len("export "):]
		default:
			return nil, fmt.Errorf("export -p: unexpected %.20q", line)
		}
		n := 0
		for n < len(s) && (s[n] == '_' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || n > 0 && s[n] >= '0' && s[n] <= '9') {
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("export -p: no name in %.20q", line)
		}
		name := s[:n]
		s = s[n:]
		if len(s) > 0 && s[0] == '\n' {
			s = s[1:]
			continue
		}
		if s == "" {
			break
		}
		if s[0] != '=' {
			return nil, fmt.Errorf("export -p: unexpected %.20q", line)
		}
		s = s[1:]
		v, rest, err := shellWord(s)
		if err != nil {
			return nil, err
		}
		if !array {
			env = append(env, name+"="+v)
		}
		s = rest
		if len(s) > 0 {
			if s[0] != '\n' {
				return nil, fmt.Errorf("export -p: unexpected %.20q", s)
			}
			s = s[1:]
		}
	}
	return env, nil
}

// shellWord reads one value as export -p quotes it: "…", $'…', '…' or
// bare, up to the end of the line.
func shellWord(s string) (string, string, error) {
	var b strings.Builder
	for len(s) > 0 && s[0] != '\n' {
		switch {
		case s[0] == '"':
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return "", "", errors.New("export -p: unterminated \"")
			}
			s = s[i+1:]
		case strings.HasPrefix(s, "$'"):
			i := 2
			for ; i < len(s) && s[i] != '\''; i++ {
				if s[i] != '\\' || i+1 >= len(s) {
					b.WriteByte(s[i])
					continue
				}
				i++
				switch c := s[i]; c {
				case 'a':
					b.WriteByte(7)
				case 'b':
					b.WriteByte(8)
				case 'e', 'E':
					b.WriteByte(27)
				case 'f':
					b.WriteByte(12)
				case 'n':
					b.WriteByte('\n')
				case 'r':
					b.WriteByte('\r')
				case 't':
					b.WriteByte('\t')
				case 'v':
					b.WriteByte(11)
				case 'x':
					j := i + 1
					for j < len(s) && j < i+3 && isHex(s[j]) {
						j++
					}
					v, _ := strconv.ParseUint(s[i+1:j], 16, 8)
					b.WriteByte(byte(v))
					i = j - 1
				case '0', '1', '2', '3', '4', '5', '6', '7':
					j := i
					for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
						j++
					}
					v, _ := strconv.ParseUint(s[i:j], 8, 16)
					b.WriteByte(byte(v))
					i = j - 1
				default:
					b.WriteByte(c)
				}
			}
			if i >= len(s) {
				return "", "", errors.New("export -p: unterminated $'")
			}
			s = s[i+1:]
		case s[0] == '\'':
			i := strings.IndexByte(s[1:], '\'')
			if i < 0 {
				return "", "", errors.New("export -p: unterminated '")
			}
			b.WriteString(s[1 : 1+i])
			s = s[i+2:]
		case s[0] == '\\' && len(s) > 1:
			b.WriteByte(s[1])
			s = s[2:]
		default:
			b.WriteByte(s[0])
			s = s[1:]
		}
	}
	return b.String(), s, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
