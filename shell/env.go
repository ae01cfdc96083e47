package shell

import (
	"path"
	"strings"
)

// This file decides which paths and filters disclose the environment of a
// process: /proc/PID/environ (and the process memory that holds it)
// reached by any spelling (globs, /dev/fd/.., /proc/self/root/...,
// /proc/thread-self), and jq's env and $ENV.

// environSamples are concrete paths a pattern is matched against: if a
// glob or a path with .. can name one of them, reading it reads an
// environment.
var environSamples = []string{
	"/proc/self/environ", "/proc/1/environ", "/proc/self/task/1/environ", "/proc/1/task/1/environ",
	"/proc/self/mem", "/proc/1/mem", "/proc/thread-self/environ",
}

// ReadsEnvironment reports whether reading p (a path as written, possibly
// a glob) may read a process's environment: /proc/*/environ, its memory,
// through any of the links that lead there (/dev/fd/.., /dev/stdin/..,
// /proc/self/root, /proc/self/cwd). Relative paths are not known to be in
// /proc and are not reported.
func ReadsEnvironment(p string) bool {
	if alt, ok := unanchored(p); ok {
		return ReadsEnvironment(alt)
	}
	n := normEnvPath(p)
	if n == "" {
		return false
	}
	if strings.HasPrefix(n, "/proc/") && (strings.HasSuffix(n, "/environ") || strings.HasSuffix(n, "/mem")) {
		return true
	}
	if !strings.ContainsAny(n, "*?[") {
		return false
	}
	for _, s := range environSamples {
		if globMatch(n, s) {
			return true
		}
	}
	return false
}

// ReadsEnvironmentTree reports whether a recursive read of directory p
// (grep -r, rg, tar c) may reach a process's environment: / and /proc and
// a process's own directory hold environ files.
func ReadsEnvironmentTree(p string) bool {
	if alt, ok := unanchored(p); ok {
		return ReadsEnvironmentTree(alt)
	}
	n := normEnvPath(p)
	if n == "" {
		return false
	}
	if n == "/" || n == "/proc" || n == "/dev" || n == "/dev/fd" {
		return true
	}
	for _, s := range environSamples {
		if strings.HasPrefix(s, n+"/") || strings.ContainsAny(n, "*?[") && globPrefix(n, s) {
			return true
		}
	}
	return false
}

// normEnvPath cleans p and rewrites the links that lead into /proc: a
// path it cannot follow (/proc/self/cwd/...) is reported as /proc/self/environ
// (anything could be there). It returns "" for relative paths.
func normEnvPath(p string) string {
	if p == "" {
		return ""
	}
	if !strings.HasPrefix(p, "/") {
		return ""
	}
	for i := 0; i < 8; i++ {
		q := p
		for _, r := range [][2]string{
			{"/dev/fd", "/proc/self/fd"}, {"/dev/stdin", "/proc/self/fd/0"}, {"/dev/stdout", "/proc/self/fd/1"},
			{"/dev/stderr", "/proc/self/fd/2"}, {"/proc/thread-self", "/proc/self/task/1"},
		} {
			if q == r[0] || strings.HasPrefix(q, r[0]+"/") {
				q = r[1] + q[len(r[0]):]
			}
		}
		// /proc/PID/fd/N/.. and /proc/PID/task/T/.. : cleaning handles ..
		q = path.Clean(q)
		// /proc/PID/root/X is X
		if strings.HasPrefix(q, "/proc/") {
			parts := strings.SplitN(q[len("/proc/"):], "/", 3)
			if len(parts) >= 2 && parts[1] == "root" {
				if len(parts) == 3 {
					q = "/" + parts[2]
				} else {
					q = "/"
				}
			} else if len(parts) == 3 && (parts[1] == "cwd" || parts[1] == "fd" && strings.Contains(parts[2], "/")) {
				return "/proc/self/environ" // a link we cannot follow
			}
		}
		if q == p {
			break
		}
		p = q
	}
	return p
}

// globMatch reports whether the glob pattern pat matches s component by
// component (a * does not cross /).
func globMatch(pat, s string) bool {
	pp := strings.Split(pat, "/")
	sp := strings.Split(s, "/")
	if len(pp) != len(sp) {
		return false
	}
	for i := range pp {
		if ok, err := path.Match(pp[i], sp[i]); !ok || err != nil {
			if err != nil {
				return true // a pattern we cannot read: assume it may match
			}
			return false
		}
	}
	return true
}

// globPrefix reports whether the glob pattern pat may name a directory
// above s.
func globPrefix(pat, s string) bool {
	pp := strings.Split(pat, "/")
	sp := strings.Split(s, "/")
	if len(pp) >= len(sp) {
		return false
	}
	return globMatch(pat, strings.Join(sp[:len(pp)], "/"))
}

// jqEnv scans a jq filter for env, $ENV and $__loc__-free references to
// them: it returns the variable names read by field (env.HOME,
// $ENV["HOME"]) and whether the whole environment may be read.
func jqEnv(filter string) (names []string, dumps bool) {
	for i := 0; i < len(filter); i++ {
		var rest string
		switch {
		case filter[i] == '$' && strings.HasPrefix(skipJqSpace(filter[i+1:]), "ENV") &&
			!isWordByte(at(skipJqSpace(filter[i+1:]), 3)):
			rest = skipJqSpace(filter[i+1:])[3:] // jq 1.6 reads "$ ENV" as $ENV
		case strings.HasPrefix(filter[i:], "env") && !isWordByte(at(filter, i+3)) &&
			(i == 0 || !isWordByte(filter[i-1]) && filter[i-1] != '.' && filter[i-1] != '$'):
			rest = filter[i+3:]
			if strings.HasPrefix(skipJqSpace(rest), "(") {
				continue // env(NAME) is yq's function (jq's env takes no argument); yqEnv reads it
			}
		default:
			continue
		}
		rest = strings.TrimLeft(rest, " \t\n")
		if n, ok := jqField(rest); ok {
			names = append(names, n)
			continue
		}
		dumps = true
	}
	return names, dumps
}

// skipJqSpace skips whitespace and # comments.
func skipJqSpace(s string) string {
	for {
		t := strings.TrimLeft(s, " \t\r\n")
		if strings.HasPrefix(t, "#") {
			if nl := strings.IndexByte(t, '\n'); nl >= 0 {
				s = t[nl+1:]
				continue
			}
			return ""
		}
		return t
	}
}

func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// jqField reads .NAME, ."NAME" or ["NAME"] at the start of s.
func jqField(s string) (string, bool) {
	switch {
	case strings.HasPrefix(s, "[\""):
		end := strings.Index(s[2:], "\"]")
		if end < 0 || strings.ContainsAny(s[2:2+end], "\\(") {
			return "", false
		}
		return s[2 : 2+end], isName(s[2 : 2+end])
	case strings.HasPrefix(s, ".\""):
		end := strings.IndexByte(s[2:], '"')
		if end < 0 {
			return "", false
		}
		return s[2 : 2+end], isName(s[2 : 2+end])
	case strings.HasPrefix(s, "."):
		j := 1
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		if j == 1 || j < len(s) && s[j] == '[' {
			return "", false
		}
		return s[1:j], isName(s[1:j])
	}
	return "", false
}

// unanchored turns a path whose directory is not known statically into the
// absolute path it may reach: ~/../../proc/self/environ and
// ../../proc/self/environ climb to / from a home or a working directory
// of any depth, so what follows the ".." run is taken from /.
func unanchored(p string) (string, bool) {
	rest := p
	switch {
	case strings.HasPrefix(rest, "~"):
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return "", false
		}
		rest = rest[i+1:]
	case strings.HasPrefix(rest, "/"):
		return "", false
	}
	climbed := false
	for {
		switch {
		case strings.HasPrefix(rest, "../"):
			rest, climbed = rest[3:], true
		case strings.HasPrefix(rest, "./"):
			rest = rest[2:]
		case strings.HasPrefix(rest, "/"):
			rest = rest[1:]
		default:
			if !climbed {
				return "", false
			}
			return "/" + rest, true
		}
	}
}
