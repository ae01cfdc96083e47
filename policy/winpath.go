package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/statewright-go/statewright/shell"
)

// Windows-shaped calls (docs/policy.md, "Windows paths"). A harness on
// Windows reports its working directory and the paths in a call in the
// Windows form: C:\Users\me\proj, .claude\settings.json, \\server\share\x.
// The law matches slash-form paths, so a call whose working directory or
// project is Windows-shaped has every path it names turned into one
// comparable slash form first, here, before any check sees it:
//
//	C:\Users\Me\Proj\.claude\settings.json  →  /c:/users/me/proj/.claude/settings.json
//	\\Server\Share\x                          →  /unc:/server/share/x
//
// lower-cased, because Windows compares names case-insensitively, with the
// trailing dots and spaces Windows strips removed, ".." applied lexically
// (as Win32 path normalisation does, never above the drive or share). A
// path that cannot be put in that form — a device path (\\.\, \\?\ other
// than a drive or UNC), a drive-relative path (C:foo), an alternate data
// stream (settings.json::$DATA), an 8.3 short name (CLAUDE~1), an
// administrative share or a loopback UNC path that aliases a local drive —
// is unknown, and the checks deny it.

// errWinPath is the PathInfo.Err of a path a Windows-shaped call names that
// cannot be normalised.
const errWinPath = "a Windows path that cannot be normalised"

// windowsAbs reports whether p is written as an absolute Windows path: a
// drive letter ("C:\", "C:/", or the drive-relative "C:") or a UNC or
// device path ("\\server\share", "\\?\C:\").
func windowsAbs(p string) bool {
	if len(p) >= 2 && isDriveLetter(p[0]) && p[1] == ':' {
		return true
	}
	return strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, `/\`) || strings.HasPrefix(p, `\/`)
}

// winSlash reports whether p is already in the slash form of a Windows path.
func winSlash(p string) bool {
	if len(p) >= 3 && p[0] == '/' && isDriveLetter(p[1]) && p[2] == ':' && (len(p) == 3 || p[3] == '/') {
		return true
	}
	return p == "/unc:" || strings.HasPrefix(p, "/unc:/")
}

func isDriveLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// SlashWindowsPath returns the comparable slash form of an absolute Windows
// path (see above), or an error saying why it has none. A path already in
// that form is returned cleaned.
func SlashWindowsPath(p string) (string, error) {
	return slashWindows(p, "")
}

// slashWindows is SlashWindowsPath; drive ("/c:") roots paths that start
// with a single separator (rooted on the current drive) and MSYS's
// "/c/..." and "/cygdrive/c/..." forms are taken as the drive they name.
func slashWindows(p, drive string) (string, error) {
	q := strings.ReplaceAll(p, `\`, "/")
	if strings.HasPrefix(q, "//?/") || strings.HasPrefix(q, "//./") || strings.HasPrefix(q, "/??/") {
		rest := q[4:]
		switch {
		case q[2] != '.' && len(rest) >= 3 && isDriveLetter(rest[0]) && rest[1] == ':' && rest[2] == '/':
			q = rest
		case q[2] != '.' && len(rest) >= 4 && strings.EqualFold(rest[:4], "unc/"):
			q = "//" + rest[4:]
		default:
			return "", errors.New("a device path")
		}
	}
	var root, rest string
	switch {
	case winSlash(q):
		if strings.HasPrefix(q, "/unc:") {
			parts := strings.SplitN(strings.TrimPrefix(q[len("/unc:"):], "/"), "/", 3)
			if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
				return "", errors.New("a UNC path without a server and share")
			}
			if err := uncNames(parts[0], parts[1]); err != nil {
				return "", err
			}
			root = "/unc:/" + strings.ToLower(parts[0]) + "/" + strings.ToLower(parts[1])
			if len(parts) == 3 {
				rest = parts[2]
			}
		} else {
			root, rest = strings.ToLower(q[:3]), strings.TrimPrefix(q[3:], "/")
		}
	case len(q) >= 2 && isDriveLetter(q[0]) && q[1] == ':':
		if len(q) == 2 || q[2] != '/' {
			return "", errors.New("a drive-relative path (relative to that drive's current directory)")
		}
		root, rest = "/"+strings.ToLower(q[:2]), q[3:]
	case strings.HasPrefix(q, "//"):
		parts := strings.SplitN(q[2:], "/", 3)
		if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
			return "", errors.New("a UNC path without a server and share")
		}
		server, share := strings.ToLower(parts[0]), strings.ToLower(parts[1])
		switch {
		case server == "localhost" || server == "." || server == "?" || server == "::1" || strings.HasPrefix(server, "127.") || strings.HasSuffix(share, "$"):
			return "", errors.New("a UNC path that may name a local drive (a loopback server or an administrative share)")
		case strings.ContainsAny(server+share, ":"):
			return "", errors.New("a UNC path with a colon in its server or share")
		}
		if err := uncNames(server, share); err != nil {
			return "", err
		}
		root = "/unc:/" + server + "/" + share
		if len(parts) == 3 {
			rest = parts[2]
		}
	case strings.HasPrefix(q, "/"):
		cs := strings.SplitN(q[1:], "/", 3)
		switch {
		case len(cs) >= 1 && len(cs[0]) == 1 && isDriveLetter(cs[0][0]):
			// MSYS (Git Bash): /c/Users/me is C:\Users\me.
			root = "/" + strings.ToLower(cs[0]) + ":"
			rest = strings.TrimPrefix(q[2:], "/")
		case len(cs) >= 2 && strings.EqualFold(cs[0], "cygdrive") && len(cs[1]) == 1 && isDriveLetter(cs[1][0]):
			root = "/" + strings.ToLower(cs[1]) + ":"
			if len(cs) == 3 {
				rest = cs[2]
			}
		case drive != "":
			root, rest = drive, q[1:]
		default:
			return "", errors.New("a path rooted on the current drive, which is not known")
		}
	default:
		return "", errors.New("not an absolute Windows path")
	}
	var out []string
	for _, c := range strings.Split(rest, "/") {
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			continue
		}
		c = strings.TrimRight(c, ". ")
		if c == "" {
			return "", errors.New("a name of only dots and spaces")
		}
		if err := winName(c); err != nil {
			return "", err
		}
		out = append(out, strings.ToLower(c))
	}
	if len(out) == 0 {
		return root, nil
	}
	return root + "/" + strings.Join(out, "/"), nil
}

// uncNames checks a UNC path's server and share: each names something,
// never "." or ".." (a path cleaned again would fold them into its root).
func uncNames(server, share string) error {
	if strings.TrimRight(server, ". ") == "" || strings.TrimRight(share, ". ") == "" {
		return errors.New("a UNC path whose server or share is only dots and spaces")
	}
	return nil
}

// winName checks one component of a Windows path for the spellings that
// reach another file than the name says.
func winName(c string) error {
	if strings.ContainsRune(c, ':') {
		return errors.New("an alternate data stream (a colon in a name)")
	}
	for i := 0; i+1 < len(c); i++ {
		if c[i] == '~' && '0' <= c[i+1] && c[i+1] <= '9' {
			return errors.New("an 8.3 short name (~N), which may stand for another name")
		}
	}
	for i := 0; i < len(c); i++ {
		if c[i] < 0x20 || strings.IndexByte(`<>"|`, c[i]) >= 0 {
			return errors.New("a character Windows does not allow in a name")
		}
	}
	return nil
}

// winCall reports whether a call is Windows-shaped: its working directory
// or project directory is a Windows path.
func winCall(call *ToolCall) bool {
	return call.win || winDir(call.Cwd) || winDir(call.ProjectDir)
}

// winDir is windowsAbs(p) || winSlash(p), with one look at p's first
// bytes (every path an edit resolves asks it of the call's directories).
// TestWinDir compares the two.
func winDir(p string) bool {
	if len(p) < 2 {
		return false
	}
	switch c := p[0]; {
	case c == '/':
		return p[1] == '\\' || winSlash(p)
	case c == '\\':
		return p[1] == '\\' || p[1] == '/'
	default:
		return isDriveLetter(c) && p[1] == ':'
	}
}

// slashCall returns a Windows-shaped call with its working and project
// directories in slash form, and the call unchanged otherwise. A directory
// that cannot be normalised is dropped: relative paths are then unknown
// (denied).
func slashCall(call *ToolCall) *ToolCall {
	if call.win || !winCall(call) {
		return call
	}
	c := *call
	c.win = true
	c.Cwd = slashDir(call.Cwd)
	c.ProjectDir = slashDir(call.ProjectDir)
	return &c
}

func slashDir(d string) string {
	if d == "" {
		return ""
	}
	s, err := slashWindows(d, "")
	if err != nil {
		return ""
	}
	return s
}

// winAbs is rawAbs for a Windows-shaped call: the slash form of p against
// the call's working directory, or p itself (relative, so unknown) when it
// has none.
func (l *Law) winAbs(call *ToolCall, p string) string {
	drive := ""
	if cwd := call.Cwd; winSlash(cwd) {
		drive = cwd
		if i := strings.IndexByte(cwd[1:], '/'); i >= 0 {
			drive = cwd[:i+1]
		}
		if strings.HasPrefix(cwd, "/unc:/") {
			drive = "" // the share, not a drive: a rooted path is unknown
		}
	}
	switch {
	case p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`):
		h := l.home()
		if !winSlash(h) {
			return winUnknown(p) // the home directory of this call's host is not known
		}
		p = h + "/" + p[min(len(p), 2):]
	case windowsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`):
	default:
		if call.Cwd == "" {
			return winUnknown(p)
		}
		p = call.Cwd + "/" + p
	}
	s, err := slashWindows(p, drive)
	if err != nil {
		return winUnknown(p)
	}
	return s
}

// winUnknown marks a path of a Windows-shaped call that has no slash form:
// it does not start with "/", so info reports it unknown (errWinPath).
func winUnknown(p string) string { return "?" + p }

// slashHost returns h with its Windows paths in slash form (h itself when
// it has none), or an error naming the first that has no slash form.
func slashHost(h *Host) (*Host, error) {
	if h == nil {
		return nil, nil
	}
	c := *h
	var err error
	one := func(p *string) {
		if err != nil || !windowsAbs(*p) {
			return
		}
		s, e := SlashWindowsPath(*p)
		if e != nil {
			err = fmt.Errorf("host path %s: %w", *p, e)
			return
		}
		*p = s
	}
	list := func(ps []string) []string {
		out := append([]string(nil), ps...)
		for i := range out {
			one(&out[i])
		}
		return out
	}
	for _, p := range []*string{&c.Home, &c.ConfigHome, &c.ProjectDir, &c.Store, &c.Binary, &c.EnvFile} {
		one(p)
	}
	c.GitDirs, c.Workflows, c.Protected, c.Secrets = list(h.GitDirs), list(h.Workflows), list(h.Protected), list(h.Secrets)
	return &c, err
}

// slashPaths is slashHost for Options.ProtectedPaths.
func slashPaths(ps []string) ([]string, error) {
	h, err := slashHost(&Host{Protected: ps})
	if err != nil {
		return nil, err
	}
	return h.Protected, nil
}

// slashPattern returns an absolute Windows path pattern of a workflow
// (allowed_paths "C:/work/src/**") in slash form, other patterns unchanged.
func slashPattern(p string) (string, error) {
	if !windowsAbs(p) {
		return p, nil
	}
	s, err := SlashWindowsPath(p)
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(p, "/") || strings.HasSuffix(p, `\`) {
		s += "/"
	}
	return s, nil
}

// winShellVariant returns a Windows-shaped shell call with every backslash
// in its command turned into a slash, or nil when the call is not one or
// its command has none. The shell analysis reads a command as bash does, where
// a backslash escapes (".claude\settings.json" is ".claudesettings.json");
// cmd.exe and PowerShell, which run the commands of harnesses on Windows,
// take it as a separator. Decide decides both readings and answers the
// stricter.
func winShellVariant(call *ToolCall) *ToolCall {
	if !call.win || !bytes.ContainsRune(call.Input, '\\') {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(call.Input, &m); err != nil {
		return nil
	}
	changed := false
	var slash func(v any) any
	slash = func(v any) any {
		switch x := v.(type) {
		case string:
			if strings.Contains(x, `\`) {
				changed = true
				return strings.ReplaceAll(x, `\`, "/")
			}
		case []any:
			for i := range x {
				x[i] = slash(x[i])
			}
		}
		return v
	}
	for _, k := range []string{"command", "cmd"} {
		if v, ok := m[k]; ok {
			m[k] = slash(v)
		}
	}
	if act, ok := m["action"].(map[string]any); ok {
		if v, ok := act["command"]; ok {
			act["command"] = slash(v)
		}
	}
	if !changed {
		return nil
	}
	in, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	c := *call
	c.Input = in
	return &c
}

// stricter reports whether a denies more than b (deny, then ask, then allow).
func stricter(a, b Decision) bool {
	rank := func(v Verdict) int {
		switch v {
		case Deny:
			return 2
		case Ask:
			return 1
		}
		return 0
	}
	return rank(a.Verdict) > rank(b.Verdict)
}

// winWordBlock is self-protection for the words of a shell command in a
// Windows-shaped call: cmd.exe and PowerShell builtins (type, copy,
// Get-Content) read and write the paths they are given, which the bash
// analysis does not know, so a word that names a secret, or that is an 8.3
// short name that may stand for one, is denied.
func (l *Law) winWordBlock(call *ToolCall, c *shell.Command) *block {
	if !call.win {
		return nil
	}
	for i, w := range c.Argv {
		if i == 0 && len(c.Argv) > 1 || w == "" || strings.ContainsAny(w, "$`\n") {
			continue
		}
		if j := strings.IndexByte(w, '='); strings.HasPrefix(w, "-") && j > 0 {
			w = w[j+1:]
		}
		r := l.resolve(call, w)
		if r.info.Err == errWinPath {
			if winName(path.Base(strings.ReplaceAll(w, `\`, "/"))) != nil && strings.Contains(w, "~") {
				return protectBlock("`%s` names %s, a Windows short name that may stand for a secret or a protected file; use the long name", commandText(c), clip(w, 60))
			}
			continue
		}
		var pbuf [2]string
		for _, p := range r.paths(&pbuf) {
			if what, ok := l.secretBy(p); ok {
				return protectBlock("`%s` names %s, which is a secret (%s): on Windows the shell's own commands may read it", commandText(c), clip(w, 60), what)
			}
		}
	}
	return nil
}
