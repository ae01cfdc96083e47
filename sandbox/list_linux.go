package sandbox

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Direct exec of literal lists (docs/sandbox.md). A call whose command is
// a list of literal pipelines with simple redirections (shell.LiteralList,
// decided by the hook and recorded in profile.json) is run by the server
// item by item, as the inner bash would run it: `&&`, `||` and `;` by the
// last status; each pipeline as a literal command or pipeline is
// (directCommand, startPipeline, behind the exec gate); its redirections
// opened by the server, inside the sandbox, left to right; true, false
// and : without a process; `cd DIR` as bash's cd changes the directory,
// $PWD and $OLDPWD. At the first item the server is not sure of (a
// program not found, an execve or a redirection that fails, a cd it does
// not reproduce), nothing of that item has run, and the rest of the list
// from that item goes to `bash -c` in the list's directory and
// environment, which runs it, prints its own errors and gives the
// command's status.

// listRun is one running list's state, under s.mu.
type listRun struct {
	// cur are the processes of the item running, and their waiters.
	cur     []int
	curCmds []*running
	// sig is the last signal the client forwarded; gone is set when the
	// client went away.
	sig  syscall.Signal
	gone bool
}

// killIfGone kills the sessions of the running item when the client has
// gone (called with s.mu held: by the client's reader when it goes, and
// by the forks, so that an item forked as it went dies too).
func (lr *listRun) killIfGone() {
	if !lr.gone {
		return
	}
	for i, pid := range lr.cur {
		if !lr.curCmds[i].done {
			killSession(pid)
		}
	}
}

// forked is called with s.mu held once an item's processes (or the
// fallback bash) are lr.cur: as killIfGone, and a signal the client
// forwarded after the list last looked (between items, none is pending)
// goes to the new processes, which bash's process group would have had.
func (lr *listRun) forked() {
	if lr.gone {
		lr.killIfGone()
		return
	}
	if lr.sig == 0 {
		return
	}
	for i, pid := range lr.cur {
		if !lr.curCmds[i].done {
			_ = syscall.Kill(-pid, lr.sig)
		}
	}
}

// listShell is the shell a list runs in: bash's at start-up, then as
// its cds leave it.
type listShell struct {
	bashShell
	// cwd is the directory, as bash's chdir named it.
	cwd string
	// moved is set once a cd changed it.
	moved bool
}

// setVar sets an exported variable of the shell.
func (sh *listShell) setVar(k, v string) {
	sh.vars[k] = v
	sh.exported = setEnv(sh.exported, k, v)
}

// setEnv returns env with k set to v (in place when it is there).
func setEnv(env []string, k, v string) []string {
	for i, kv := range env {
		if strings.HasPrefix(kv, k+"=") {
			env[i] = k + "=" + v
			return env
		}
	}
	return append(env, k+"="+v)
}

// cd changes the shell's directory as bash's `cd dir` (no option, no
// CDPATH) does when it succeeds by its first way: dir made absolute
// against $PWD, canonicalized with each `..` checked to follow a
// directory, the result a directory it may search; then OLDPWD is the
// old $PWD and PWD the new directory, both exported. ok is false when
// bash might do anything else (fail, print, or take another way).
func (sh *listShell) cd(dir string) bool {
	if _, set := sh.vars["CDPATH"]; set || dir == "" || dir[0] == '-' {
		return false
	}
	// bash's idea of its directory is $PWD canonicalized: only one that
	// is canonical already is taken.
	if cur, ok := canonPath(sh.pwd); !ok || cur != sh.pwd {
		return false
	}
	t := dir
	if !strings.HasPrefix(dir, "/") {
		t = strings.TrimSuffix(sh.pwd, "/") + "/" + dir
	}
	if strings.HasPrefix(t, "//") {
		return false // POSIX leaves a leading // to the system
	}
	tdir, ok := canonPath(t)
	if !ok || unix.Faccessat(unix.AT_FDCWD, tdir, unix.X_OK, unix.AT_EACCESS) != nil || !plainDir(tdir) {
		return false
	}
	old := sh.pwd
	sh.setVar("OLDPWD", old)
	sh.setVar("PWD", tdir)
	sh.pwd, sh.cwd, sh.moved = tdir, tdir, true
	return true
}

// canonPath is bash's sh_canonpath(t, PATH_CHECKDOTDOT|PATH_CHECKEXISTS)
// for an absolute t not starting with //: `.` and empty components
// dropped, `..` removing the one before when what precedes it is a
// directory (else it fails), and the result a directory.
func canonPath(t string) (string, bool) {
	if !strings.HasPrefix(t, "/") || strings.HasPrefix(t, "//") {
		return "", false
	}
	parts := make([]string, 0, 8)
	for _, c := range strings.Split(t, "/") {
		switch c {
		case "", ".":
		case "..":
			if !isDir("/" + strings.Join(parts, "/")) {
				return "", false
			}
			if len(parts) > 0 {
				parts = parts[:len(parts)-1]
			}
		default:
			parts = append(parts, c)
		}
	}
	res := "/" + strings.Join(parts, "/")
	return res, isDir(res)
}

// plainDir reports whether dir is reached without a magic link and lies
// outside procfs: there the server, the sandbox's PID 1, would judge the
// cd as itself (/proc/1/cwd, which the command's processes may not
// follow; /proc/self, which is the server), so bash does it.
func plainDir(dir string) bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && fs.Type != unix.PROC_SUPER_MAGIC
}

// isDir reports whether p names a directory (following links).
func isDir(p string) bool {
	var st unix.Stat_t
	return unix.Stat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// devNull is /dev/null's device number (1, 3).
var devNull = unix.Mkdev(1, 3)

// openTarget opens a redirection's file as bash would, relative to dir,
// close-on-exec; ok is false when the open fails, and when the file is one
// the server's own open would not stand in for the command's: anything
// but a regular file or /dev/null (a FIFO, whose open blocks or wakes its
// other end; a terminal), anything reached through a magic link (/dev/fd/N
// and /proc/self/fd/N would be the server's) or on procfs (/proc/self is
// the server). The rest of the list then goes to bash, which opens it.
func openTarget(dir string, r Redir) (int, bool) {
	var flags uint64
	creat := false
	switch r.Op {
	case "<":
		flags = unix.O_RDONLY
	case ">", "&>":
		flags, creat = unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, true
	case ">>", "&>>":
		flags, creat = unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND, true
	default:
		return -1, false
	}
	path := r.Target
	if !strings.HasPrefix(path, "/") {
		path = dir + "/" + path
	}
	// Look before opening: a FIFO's open is not to be made twice.
	pfd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS})
	switch {
	case err == nil:
		ok := plainFile(pfd)
		unix.Close(pfd)
		if !ok {
			return -1, false
		}
	case err == unix.ENOENT && creat:
	default:
		return -1, false
	}
	how := unix.OpenHow{Flags: flags | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	if creat {
		how.Mode = 0o666
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &how)
	if err != nil {
		return -1, false
	}
	if !plainFile(fd) {
		unix.Close(fd)
		return -1, false
	}
	// O_NONBLOCK was for the open alone (and means nothing to a regular
	// file or /dev/null); the command gets bash's flags.
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		unix.Close(fd)
		return -1, false
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK); err != nil {
		unix.Close(fd)
		return -1, false
	}
	return fd, true
}

// plainFile reports whether fd is a regular file outside procfs, or
// /dev/null.
func plainFile(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		var fs unix.Statfs_t
		return unix.Fstatfs(fd, &fs) == nil && fs.Type != unix.PROC_SUPER_MAGIC
	case unix.S_IFCHR:
		return st.Rdev == devNull
	}
	return false
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// validList reports whether list is one the server can follow for
// script: items in order within it, known operators, commands with words.
func validList(list []ListItem, script string) bool {
	prev := -1
	for i, it := range list {
		if it.Offset <= prev || it.Offset > len(script) || len(it.Cmds) == 0 || (i == 0) != (it.Op == "") {
			return false
		}
		switch it.Op {
		case "", ";", "&&", "||":
		default:
			return false
		}
		for _, c := range it.Cmds {
			if len(c.Argv) == 0 || c.Argv[0] == "" {
				return false
			}
		}
		prev = it.Offset
	}
	return len(list) > 0
}

// runList runs a list for client c (handle's, from the fork on): stdio
// are the client's descriptors, fds the inner bash's (with the cwd pipe
// pw at serverCwdFD), pr the pipe's reading end.
func (s *server) runList(c *net.UnixConn, req request, sh listShell, fds []uintptr, pr, pw int) {
	defer syscall.Close(pw)
	lr := &listRun{}
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
	defer s.finished()
	go func() {
		// Signals from the client go to the running item's process
		// groups (and stop the list as they stop bash); when the client
		// goes away, so does the list.
		clientSignals(c, func(sig syscall.Signal) {
			s.mu.Lock()
			lr.sig = sig
			for _, pid := range lr.cur {
				_ = syscall.Kill(-pid, sig)
			}
			s.mu.Unlock()
		})
		s.mu.Lock()
		lr.gone = true
		lr.killIfGone()
		s.mu.Unlock()
	}()
	var stdio [3]uintptr
	copy(stdio[:], fds[:3])
	started := false
	start := func() {
		if !started {
			started = true
			_ = s.send(c, reply{Started: true})
		}
	}
	var held []int // the sessions of the items that ended
	status, rest, ran := 0, -1, false
	for _, it := range req.List {
		if it.Op == "&&" && status != 0 || it.Op == "||" && status == 0 {
			continue
		}
		s.mu.Lock()
		stop, sig := lr.gone, lr.sig
		s.mu.Unlock()
		if stop {
			break
		}
		if sig != 0 {
			status = 128 + int(sig)
			break
		}
		code, pids, ok := s.runItem(lr, &sh, it, stdio, start)
		if !ok {
			rest = it.Offset
			if !ran {
				rest = 0
			}
			break
		}
		ran = true
		start()
		held = append(held, pids...) // held since their fork (runItem)
		s.mu.Lock()
		sig = lr.sig
		s.mu.Unlock()
		status = waitStatusCode(code)
		if sig != 0 && !(sig == syscall.SIGINT && len(pids) > 0 && !(code.Signaled() && code.Signal() == syscall.SIGINT)) {
			// bash dies of the signal, but of an INT its child survived.
			if !code.Signaled() {
				status = 128 + int(sig)
			}
			break
		}
		s.mu.Lock()
		lr.sig = 0
		s.mu.Unlock()
	}
	fellBack := false
	if rest >= 0 {
		// The rest of the list from the item the server is not sure of:
		// bash's, on the same lines (its messages name them).
		script := strings.Repeat("\n", strings.Count(req.Script[:rest], "\n")) + req.Script[rest:]
		env := MergeEnv(StripEnv(req.Env), append(append([]string(nil), s.env...), cwdEnv+"=/dev/fd/"+strconv.Itoa(serverCwdFD)))
		if sh.moved {
			env = setEnv(setEnv(env, "OLDPWD", sh.vars["OLDPWD"]), "PWD", sh.pwd)
		}
		cmd := &running{status: make(chan syscall.WaitStatus, 1)}
		s.mu.Lock()
		pid, err := syscall.ForkExec("/bin/bash", append([]string{"bash"}, shellArgs(script)...), &syscall.ProcAttr{
			Dir: sh.cwd, Env: env, Files: fds, Sys: &syscall.SysProcAttr{Setsid: true},
		})
		if err == nil {
			s.waiters[pid] = cmd
			lr.cur, lr.curCmds = []int{pid}, []*running{cmd}
			lr.forked()
		}
		s.mu.Unlock()
		switch {
		case err != nil && !started:
			_ = s.send(c, reply{Error: fmt.Sprintf("cannot run the command in %s: %v", sh.cwd, err)})
			return
		case err != nil:
			fmt.Fprintf(fdWriter(stdio[2]), "statewright: cannot run the rest of the command in %s: %v\n", sh.cwd, err)
			status = 126
		default:
			start()
			status = waitStatusCode(<-cmd.status)
			fellBack = true
		}
		s.mu.Lock()
		lr.cur, lr.curCmds = nil, nil
		s.mu.Unlock()
	}
	start()
	s.mu.Lock()
	for _, pid := range held {
		if s.held[pid]--; s.held[pid] <= 0 {
			delete(s.held, pid)
		}
	}
	s.mu.Unlock()
	s.endCommand() // what the command left running dies with it
	cwd := ""
	if fellBack {
		cwd = readCwd(pr)
	} else if p, err := filepath.EvalSymlinks(sh.cwd); err == nil && isDir(p) {
		// The directory it ended in, as the inner bash's `pwd -P` says.
		cwd = p
	}
	_ = s.send(c, reply{Exit: &status, Cwd: cwd})
}

// runItem runs one item of a list in the shell sh and waits for it,
// calling started once its processes run (the client forwards signals and
// watches its harness from then on). It returns its status and the
// processes it was; ok is false when the server is not sure of it, and
// then nothing of it ran.
func (s *server) runItem(lr *listRun, sh *listShell, it ListItem, stdio [3]uintptr, started func()) (ws syscall.WaitStatus, pids []int, ok bool) {
	if len(it.Cmds) == 1 {
		c := it.Cmds[0]
		switch c.Argv[0] {
		case "true", ":", "false":
			opened, ok := sh.openRedirs(&directElem{redirs: c.Redirs})
			closeAll(opened)
			if !ok {
				return 0, nil, false
			}
			if c.Argv[0] == "false" {
				return syscall.WaitStatus(1 << 8), nil, true
			}
			return 0, nil, true
		case "cd":
			if len(c.Argv) != 2 || len(c.Redirs) > 0 || !sh.cd(c.Argv[1]) {
				return 0, nil, false
			}
			return 0, nil, true
		}
	}
	elems := make([]directElem, len(it.Cmds))
	var opened []int
	defer func() { closeAll(opened) }()
	for i, c := range it.Cmds {
		if shellBuiltin(c.Argv[0]) {
			return 0, nil, false
		}
		path, env, ok := sh.command(c.Argv)
		if !ok {
			return 0, nil, false
		}
		elems[i] = directElem{path: path, argv: c.Argv, env: env, redirs: c.Redirs}
	}
	// The redirections, in order, element by element (bash opens them in
	// each element's process; those of a pipeline concurrently).
	if len(elems) == 1 {
		o, ok := sh.openRedirs(&elems[0])
		opened = o
		if !ok {
			return 0, nil, false
		}
		files := applyOps(stdio, elems[0].ops)
		cmd := &running{status: make(chan syscall.WaitStatus, 1)}
		s.mu.Lock()
		pid, err := syscall.ForkExec(elems[0].path, elems[0].argv, &syscall.ProcAttr{
			Dir: sh.cwd, Env: elems[0].env, Files: files[:], Sys: &syscall.SysProcAttr{Setsid: true},
		})
		if err == nil {
			s.waiters[pid] = cmd
			s.held[pid]++
			lr.cur, lr.curCmds = []int{pid}, []*running{cmd}
			lr.forked()
		}
		s.mu.Unlock()
		if err != nil {
			return 0, nil, false // bash's: its error, its status
		}
		closeAll(opened)
		opened = nil
		started()
		ws = <-cmd.status
		s.mu.Lock()
		lr.cur, lr.curCmds = nil, nil
		s.mu.Unlock()
		return ws, []int{pid}, true
	}
	for i := range elems {
		o, ok := sh.openRedirs(&elems[i])
		opened = append(opened, o...)
		if !ok {
			return 0, nil, false
		}
	}
	s.mu.Lock()
	pids, ok = s.startPipeline(elems, sh.cwd, stdio[:])
	cmds := make([]*running, len(pids))
	for i, pid := range pids {
		cmds[i] = &running{status: make(chan syscall.WaitStatus, 1)}
		s.waiters[pid] = cmds[i]
		s.held[pid]++
	}
	lr.cur, lr.curCmds = pids, cmds
	lr.forked()
	s.mu.Unlock()
	if !ok {
		return 0, nil, false
	}
	closeAll(opened)
	opened = nil
	started()
	for _, cmd := range cmds {
		ws = <-cmd.status
	}
	s.mu.Lock()
	lr.cur, lr.curCmds = nil, nil
	s.mu.Unlock()
	return ws, pids, true
}

// shellBuiltin reports whether name is one of the list's builtins, which
// run only as a pipeline of one.
func shellBuiltin(name string) bool {
	switch name {
	case "true", "false", ":", "cd":
		return true
	}
	return false
}

// openRedirs opens e's redirection files, in order, into e.ops (applied
// after the pipeline's pipes, as bash applies them); it returns the files
// opened, and ok false when one fails.
func (sh *listShell) openRedirs(e *directElem) (opened []int, ok bool) {
	for _, r := range e.redirs {
		switch {
		case r.Fd < 0 || r.Fd > 2:
			return opened, false
		case r.Op == ">&":
			if len(r.Target) != 1 || r.Target[0] < '0' || r.Target[0] > '2' {
				return opened, false
			}
			e.ops = append(e.ops, fdOp{fd: r.Fd, file: -1, dup: int(r.Target[0] - '0')})
		default:
			fd, ok := openTarget(sh.cwd, r)
			if !ok {
				return opened, false
			}
			opened = append(opened, fd)
			e.ops = append(e.ops, fdOp{fd: r.Fd, file: fd})
			if r.Op == "&>" || r.Op == "&>>" {
				e.ops = append(e.ops, fdOp{fd: 2, file: -1, dup: 1})
			}
		}
	}
	return opened, true
}

// fdOp is one redirection of a pipeline's element: descriptor fd becomes
// file (when >= 0) or a copy of descriptor dup.
type fdOp struct {
	fd, file, dup int
}

// applyOps returns stdio with ops applied in order.
func applyOps(stdio [3]uintptr, ops []fdOp) [3]uintptr {
	for _, o := range ops {
		if o.file >= 0 {
			stdio[o.fd] = uintptr(o.file)
		} else {
			stdio[o.fd] = stdio[o.dup]
		}
	}
	return stdio
}

// fdWriter writes to a descriptor the server does not own.
type fdWriter uintptr

func (w fdWriter) Write(b []byte) (int, error) {
	return syscall.Write(int(w), b)
}
