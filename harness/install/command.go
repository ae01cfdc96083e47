package install

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/statewright-go/statewright/internal/hookwire"
)

// Shq quotes s for a POSIX shell.
func Shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// HookArgs returns the flags every hook command carries: the store, its
// id, the deadline and the operator's choices.
func (p *Plan) HookArgs() []string {
	args := []string{"--store", p.Store, "--store-id", p.StoreID, "--deadline", p.Deadline.String()}
	if p.RequireWorkflow {
		args = append(args, "--require-workflow")
	}
	if p.DefaultWorkflow != "" {
		args = append(args, "--default-workflow", p.DefaultWorkflow)
	}
	if p.AuditOnly {
		args = append(args, "--audit-only")
	}
	if p.RequireSandbox {
		args = append(args, "--require-sandbox")
	} else if p.Sandbox {
		args = append(args, "--sandbox")
	}
	if p.ScopeToProject {
		args = append(args, "--project", p.Project)
	}
	return args
}

// HookCommand returns the shell command line of the hook for event (its
// command-line spelling): the thin client (HookBinary) by absolute path,
// "hook HARNESS EVENT", the flags. A gate (an event whose hook can block the call) ends
// in a wrapper that turns whatever makes the hook fail (exit 127 for a
// missing binary, a signal, a crash) into exit 2, the harness's deny; a
// deny the hook gave itself passes through without a second message.
// Other events have no wrapper: exit 2 would erase a prompt or keep a Stop
// looping, so they fail open. label names the event in the wrapper's
// message.
func (p *Plan) HookCommand(event string, gate bool, label string) string {
	var b strings.Builder
	b.WriteString(Shq(p.hookBinary()) + " hook " + p.Harness + " " + event)
	b.WriteString(" --store " + Shq(p.Store) + " --store-id " + Shq(p.StoreID) + " --deadline " + p.Deadline.String())
	if p.RequireWorkflow {
		b.WriteString(" --require-workflow")
	}
	if p.DefaultWorkflow != "" {
		b.WriteString(" --default-workflow " + Shq(p.DefaultWorkflow))
	}
	if p.AuditOnly {
		b.WriteString(" --audit-only")
	}
	if p.RequireSandbox {
		b.WriteString(" --require-sandbox")
	} else if p.Sandbox {
		b.WriteString(" --sandbox")
	}
	if p.ScopeToProject {
		b.WriteString(" --project " + Shq(p.Project))
	}
	if gate {
		b.WriteString(` || { c=$?; [ "$c" -eq 2 ] || echo "statewright: the ` + label +
			` hook failed (exit $c: missing binary, crash or signal); the call is denied (fail closed)" >&2; exit 2; }`)
	}
	return b.String()
}

// IsOurHook reports whether a hook command line is one init wrote for
// this harness (by any binary path or name): the quoted binary, then
// "hook HARNESS EVENT".
func (p *Plan) IsOurHook(command string) bool { return IsHookOf(p.Harness, command) }

// IsHookOf reports whether a hook command line is one init wrote for the
// named harness.
func IsHookOf(harness, command string) bool {
	re := regexp.MustCompile(`^'[^']*' hook ` + regexp.QuoteMeta(harness) + ` [a-z-]+( |$)`)
	return re.MatchString(command)
}

// hookBinary is what hook commands run: HookBinary, else Binary.
func (p *Plan) hookBinary() string {
	if p.HookBinary != "" {
		return p.HookBinary
	}
	return p.Binary
}

// HookArgv returns the argv prefix of a hook run by a plugin: the thin
// client (or the binary), "hook", the harness.
func (p *Plan) HookArgv() []string { return []string{p.hookBinary(), "hook", p.Harness} }

// SplitCommand splits the leading simple command of a hook command line
// into words (single and double quotes, backslashes), stopping at the
// first unquoted operator (||, &&, ;, |): for a command init wrote, the
// binary, "hook", the harness, the event and the flags.
func SplitCommand(s string) []string {
	var (
		words []string
		cur   strings.Builder
		in    bool
	)
	flush := func() {
		if in {
			words = append(words, cur.String())
			cur.Reset()
			in = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == '|' || c == '&' || c == ';':
			flush()
			return words
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	flush()
	return words
}

// HookFlags reads the flags of a hook command line (SplitCommand's words,
// or a plugin's argv): --name VALUE, --name=VALUE, or --name alone ("").
func HookFlags(args []string) map[string]string {
	flags := map[string]string{}
	for i := 0; i < len(args); i++ {
		f, ok := strings.CutPrefix(args[i], "--")
		if !ok {
			continue
		}
		if k, v, ok := strings.Cut(f, "="); ok {
			flags[k] = v
		} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			flags[f] = args[i+1]
			i++
		} else {
			flags[f] = ""
		}
	}
	return flags
}

// WrapsFailClosed reports whether a gate's command line ends in init's
// wrapper, which turns a missing binary, a crash or a signal into exit 2.
func WrapsFailClosed(command string) bool {
	return strings.Contains(command, "||") && strings.Contains(command, "exit 2")
}

// FullBinary returns the full statewright binary a hook command runs: for
// the thin hook client, the "statewright" beside it, which it hands over
// to (cmd/statewright-hook); for any other binary, that binary.
func FullBinary(bin string) string {
	base := filepath.Base(bin)
	ext := filepath.Ext(base)
	if strings.TrimSuffix(base, ext) != hookwire.ClientName {
		return bin
	}
	dir := filepath.Dir(bin)
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		dir = filepath.Dir(r)
	}
	return filepath.Join(dir, "statewright"+ext)
}

// SameInstall reports whether full (a full binary) is the binary the hook
// binary hook hands over to: the same file as FullBinary(hook).
func SameInstall(full, hook string) bool {
	f := FullBinary(hook)
	if full == f {
		return true
	}
	a, err1 := os.Stat(full)
	b, err2 := os.Stat(f)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// Within reports whether dir is root or below it, on real paths where
// they resolve.
func Within(dir, root string) bool {
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	rel, err := filepath.Rel(real(root), real(dir))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
