package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Direct exec (docs/sandbox.md, "Direct exec"). A call whose command is
// one simple command of literal words (shell.LiteralArgv, decided by the
// hook and recorded in profile.json) is run by the server with execve,
// without the inner `bash -c`, exactly as that bash would run it: the
// program found as bash finds it, with the environment bash would give it.
// Whatever directCommand is not sure of (and every execve that fails) goes
// to `bash -c` as before, so bash's own errors, messages and exit statuses
// (127, 126) are unchanged.

// bashOwnVars are the variables whose value in the environment bash
// changes, drops or acts on at start-up (its own variables, compgen -v of
// a bash started with no environment, and those it reads: BASH_ENV runs a
// file, SHELLOPTS and BASHOPTS set options, EXECIGNORE changes the
// lookup, an exported function may stand for the program). A command
// whose environment has one runs with bash (TestBashOwnVars checks the
// list against the installed bash). SHLVL, PWD, OLDPWD and _ are
// directEnv's.
var bashOwnVars = map[string]bool{
	"BASH": true, "BASHOPTS": true, "BASHPID": true, "BASH_ARGV0": true, "BASH_COMMAND": true,
	"BASH_EXECUTION_STRING": true, "BASH_SUBSHELL": true, "BASH_VERSINFO": true, "BASH_VERSION": true,
	"COMP_WORDBREAKS": true, "EPOCHREALTIME": true, "EPOCHSECONDS": true, "HISTCMD": true, "IFS": true,
	"LINENO": true, "OPTERR": true, "OPTIND": true, "PPID": true, "PS1": true, "PS2": true, "PS4": true,
	"RANDOM": true, "SECONDS": true, "SHELLOPTS": true, "SRANDOM": true,
	"BASH_XTRACEFD": true, "BASH_COMPAT": true,
	// Read at start-up or at the lookup.
	"BASH_ENV": true, "ENV": true, "POSIXLY_CORRECT": true, "EXECIGNORE": true,
}

// safeLCAll are the LC_ALL values bash sets without a warning on any
// system (a locale that is not installed makes it warn on stderr).
var safeLCAll = map[string]bool{"": true, "C": true, "POSIX": true, "C.UTF-8": true, "C.utf8": true}

// directCommand returns the program bash -c would execute for argv in
// directory cwd with environment env, and the environment bash would give
// it; ok is false whenever bash might do anything else (the caller then
// runs bash).
func directCommand(argv, env []string, cwd string) (path string, penv []string, ok bool) {
	sh, ok := startShell(env, cwd)
	if !ok {
		return "", nil, false
	}
	return sh.command(argv)
}

// bashShell is what `bash -c` makes of its environment at start-up.
type bashShell struct {
	// vars are the environment's variables.
	vars map[string]string
	// exported is the environment bash gives the programs it runs, but
	// `_` (the program's path).
	exported []string
	// pwd is $PWD.
	pwd string
}

// startShell returns the shell bash -c would be in directory cwd with
// environment env; ok is false whenever bash might do anything else.
func startShell(env []string, cwd string) (sh bashShell, ok bool) {
	if !filepath.IsAbs(cwd) {
		return sh, false
	}
	vars := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, found := strings.Cut(kv, "=")
		if !found || bashOwnVars[k] || strings.HasPrefix(k, "BASH_FUNC_") {
			return sh, false
		}
		if _, dup := vars[k]; dup {
			return sh, false
		}
		vars[k] = v
	}
	if lc, set := vars["LC_ALL"]; set && !safeLCAll[lc] {
		return sh, false
	}
	// What bash does to its environment at start-up, and to the
	// environment of what it runs.
	level := 1
	if s, set := vars["SHLVL"]; set && s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n >= 998 || strings.TrimLeft(s, "0123456789") != "" {
			return sh, false // bash's own arithmetic, or its warning
		}
		level = n + 1
	}
	pwd, set := vars["PWD"]
	if !set || !strings.HasPrefix(pwd, "/") || !sameFile(pwd, cwd) {
		pwd = cwd
	}
	penv := make([]string, 0, len(env)+4)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "SHLVL", "PWD", "_":
		case "OLDPWD":
			// Kept when it names a directory; else unset.
			old := vars[k]
			if old == "" {
				continue
			}
			if !filepath.IsAbs(old) {
				old = filepath.Join(cwd, old)
			}
			if fi, err := os.Stat(old); err == nil && fi.IsDir() {
				penv = append(penv, kv)
			}
		default:
			penv = append(penv, kv)
		}
	}
	penv = append(penv, "SHLVL="+strconv.Itoa(level), "PWD="+pwd)
	return bashShell{vars: vars, exported: penv, pwd: pwd}, true
}

// command returns the program the shell would execute for argv and its
// environment; ok is false when bash might do anything else.
func (sh bashShell) command(argv []string) (path string, penv []string, ok bool) {
	if len(argv) == 0 || argv[0] == "" {
		return "", nil, false
	}
	name := argv[0]
	if strings.IndexByte(name, '/') >= 0 {
		path = name
	} else if path, ok = lookPath(name, sh.vars); !ok {
		return "", nil, false
	}
	penv = make([]string, len(sh.exported), len(sh.exported)+1)
	copy(penv, sh.exported)
	return path, append(penv, "_="+path), true
}

// lookPath finds name in the PATH of vars as bash does: the first
// element holding an executable (eaccess X_OK) that is not a directory.
// ok is false when there is none, when PATH is unset and when an element
// is relative or empty (the current directory): bash's then.
func lookPath(name string, vars map[string]string) (string, bool) {
	p, set := vars["PATH"]
	if !set {
		return "", false
	}
	for _, dir := range strings.Split(p, ":") {
		if !strings.HasPrefix(dir, "/") {
			return "", false
		}
		full := dir + "/" + name
		if strings.HasSuffix(dir, "/") {
			full = dir + name
		}
		var st unix.Stat_t
		if unix.Stat(full, &st) != nil || st.Mode&unix.S_IFMT == unix.S_IFDIR {
			continue
		}
		if unix.Faccessat(unix.AT_FDCWD, full, unix.X_OK, unix.AT_EACCESS) == nil {
			return full, true
		}
	}
	return "", false
}

// sameFile reports whether a and b name the same file.
func sameFile(a, b string) bool {
	var x, y syscall.Stat_t
	return syscall.Stat(a, &x) == nil && syscall.Stat(b, &y) == nil && x.Dev == y.Dev && x.Ino == y.Ino
}
