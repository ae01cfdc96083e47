package shell

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"go/format"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var updateGit = flag.Bool("update-git", false, "regenerate git_options.go from the installed git")

// TestGitOptions reads every option of the installed git, subcommand by
// subcommand (parse-options' --git-completion-helper-all for the long
// names and which take a value, -h for the short letters and optional
// values, the man pages for the revision options log, diff, show and
// rev-list parse by hand), and checks that the committed table
// (git_options.go) knows each one: an option the table does not know
// counts as running code where the subcommand has dangerous options, so a
// missing one is a false block. With -update-git it rewrites the table.
func TestGitOptions(t *testing.T) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command(gitPath, args...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "LANG=C", "LC_ALL=C", "PATH=" + os.Getenv("PATH"),
			"GIT_PAGER=cat", "PAGER=cat", "GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)}
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	run("init", "-q", ".")
	version := strings.TrimSpace(strings.TrimPrefix(run("version"), "git version "))
	table, num := readGitOptions(t, run)
	if *updateGit {
		writeGitOptions(t, version, table, num)
		return
	}
	for key, entries := range table {
		gkey := key
		if key == "rev" {
			gkey = "log" // the revision and diff options are part of each rev-family grammar
		}
		g, ok := GrammarFor("git " + gkey)
		if !ok {
			t.Errorf("git %s %s has options; the table has no grammar for it", version, key)
			continue
		}
		g.index()
		for _, e := range entries {
			o := optEntry(e)
			for _, n := range o.Names {
				var got *Opt
				if len(n) == 1 {
					got = g.short[n[0]]
				} else {
					got = g.long[n]
				}
				if got == nil || got.neg {
					t.Errorf("git %s %s knows %s, the grammar does not", version, key, dashed(n))
					continue
				}
				if got.Arg == NoArg && o.Arg != NoArg {
					t.Errorf("git %s %s: %s takes a value, the grammar says it does not", version, key, dashed(n))
				}
			}
		}
		if num[key] && !g.Num {
			t.Errorf("git %s %s takes -NUM, the grammar does not", version, key)
		}
	}
}

func dashed(n string) string {
	if len(n) == 1 {
		return "-" + n
	}
	return "--" + n
}

// gitSubsubs are the subcommands whose own subcommands have options of
// their own.
var gitSubsubs = map[string][]string{
	"worktree":        {"add", "list", "lock", "move", "prune", "remove", "repair", "unlock"},
	"remote":          {"add", "rename", "remove", "set-head", "set-branches", "get-url", "set-url", "show", "prune", "update"},
	"stash":           {"list", "show", "drop", "pop", "apply", "branch", "push", "save", "clear", "create", "store"},
	"bundle":          {"create", "verify", "list-heads", "unbundle"},
	"notes":           {"list", "add", "copy", "append", "edit", "show", "merge", "remove", "prune", "get-ref"},
	"sparse-checkout": {"list", "init", "set", "add", "reapply", "disable"},
	"maintenance":     {"run", "start", "stop", "register", "unregister"},
	"reflog":          {"show", "expire", "delete", "exists"},
}

// gitNotQueried are subcommands whose option parser is not
// parse-options (scripts, their own parsers) or that start servers:
// asking them for --git-completion-helper-all may run them.
var gitNotQueried = map[string]bool{
	"bisect": true, "submodule": true, "filter-branch": true, "instaweb": true, "daemon": true,
	"web--browse": true, "credential": true, "send-email": true, "mergetool": true, "request-pull": true,
	"lfs": true, "fast-import": true, "difftool": true,
}

// readGitOptions builds the table from the installed git: "SUB" and
// "SUB SUBSUB" keys, and "rev" for the revision and diff options.
func readGitOptions(t *testing.T, run func(...string) string) (map[string][]string, map[string]bool) {
	table := map[string][]string{}
	num := map[string]bool{}
	var subs []string
	for s := range gitSub {
		subs = append(subs, s)
	}
	sort.Strings(subs)
	var keys [][]string
	for _, s := range subs {
		keys = append(keys, []string{s})
		for _, ss := range gitSubsubs[s] {
			keys = append(keys, []string{s, ss})
		}
	}
	for _, k := range keys {
		if gitNotQueried[k[0]] {
			continue
		}
		helper := run(append(append([]string{}, k...), "--git-completion-helper-all")...)
		if strings.Contains(helper, "usage:") || strings.Contains(helper, "fatal:") || strings.Contains(helper, "error:") ||
			strings.Contains(helper, "unknown option") || strings.TrimSpace(helper) == "" && !gitRevFamily[k[0]] {
			continue // not parse-options (a script, or its own parser)
		}
		help := run(append(append([]string{}, k...), "-h")...)
		entries, n := gitEntries(helper, help)
		key := strings.Join(k, " ")
		table[key] = entries
		num[key] = n
	}
	table["rev"] = gitRevOptions(t, run)
	return table, num
}

var (
	helpLine  = regexp.MustCompile(`^ {1,8}(-\S.*)$`)
	helpToken = regexp.MustCompile(`^(--?)(\[no-\])?([A-Za-z0-9][-A-Za-z0-9]*|[0-9])(.*)$`)
)

// gitEntries merges the completion helper's long names ("--name=" takes
// a value) with -h's short letters and optional values into grammar
// entries, the long name first.
func gitEntries(helper, help string) ([]string, bool) {
	type opt struct {
		names []string
		arg   string // "", "=" or "?"
	}
	var opts []*opt
	byName := map[string]*opt{}
	fields := strings.Fields(helper)
	for _, f := range fields {
		if f == "--" {
			break // what follows are the negated spellings
		}
		if !strings.HasPrefix(f, "--") {
			continue
		}
		name := strings.TrimPrefix(f, "--")
		o := &opt{}
		if n, ok := strings.CutSuffix(name, "="); ok {
			name, o.arg = n, "="
		}
		if byName[name] != nil {
			continue
		}
		o.names = []string{name}
		byName[name] = o
		opts = append(opts, o)
	}
	num := false
	for _, line := range strings.Split(help, "\n") {
		m := helpLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		head, _, _ := strings.Cut(m[1], "  ")
		var short, long string
		arg := ""
		for _, tok := range strings.Split(head, ", ") {
			if tok == "-NUM" || strings.HasPrefix(tok, "-<n") {
				num = true
				continue
			}
			tm := helpToken.FindStringSubmatch(tok)
			if tm == nil {
				continue
			}
			rest := tm[4]
			switch {
			case strings.HasPrefix(rest, "[="), strings.HasPrefix(rest, "[<"), strings.HasPrefix(rest, "["):
				arg = "?"
			case strings.HasPrefix(rest, " "), strings.HasPrefix(rest, "<"), strings.HasPrefix(rest, "="):
				arg = "="
			}
			if tm[1] == "-" && len(tm[3]) == 1 {
				short = tm[3]
			} else if tm[1] == "--" {
				long = tm[3]
				if tm[2] != "" && byName[long] == nil && byName["no-"+long] != nil {
					long = "no-" + long
				}
			}
		}
		switch {
		case long != "" && byName[long] != nil:
			o := byName[long]
			if short != "" {
				o.names = append(o.names, short)
			}
			if arg == "?" && o.arg == "" {
				o.arg = "?"
			}
		case long != "":
			o := &opt{names: []string{long}, arg: arg}
			if short != "" {
				o.names = append(o.names, short)
			}
			byName[long] = o
			opts = append(opts, o)
		case short != "":
			if byName[short] == nil {
				o := &opt{names: []string{short}, arg: arg}
				byName[short] = o
				opts = append(opts, o)
			}
		}
	}
	var out []string
	for _, o := range opts {
		names := append([]string{}, o.names...)
		names[0] += o.arg
		out = append(out, strings.Join(names, " "))
	}
	sort.Strings(out)
	return out, num
}

// gitRevShort are the short options of the revision and diff parsers,
// which neither -h nor the completion helper lists (git-rev-list(1),
// git-diff(1)): "=" takes a value attached or in the next word, "?" only
// attached.
var gitRevShort = []string{"n=", "i", "E", "F", "P", "g", "z", "p", "u", "s", "U?", "W", "M?", "C?", "B?", "D", "l=",
	"S=", "G=", "O=", "R", "a", "b", "w", "I=", "X?", "c", "m", "r", "t", "L=", "v"}

// gitRevOptions reads the revision and diff options log, show, diff and
// rev-list accept: the diff options from the completion helper of git
// rev-list, the revision options from git-rev-list(1) and git-log(1).
func gitRevOptions(t *testing.T, run func(...string) string) []string {
	seen := map[string]string{}
	// where the sources disagree on whether an option takes a value, it
	// takes one only attached: a value in the next word that git does not
	// take would hide the option there
	add := func(name, arg string) {
		prev, ok := seen[name]
		switch {
		case !ok:
			seen[name] = arg
		case prev != arg:
			seen[name] = "?"
		}
	}
	for _, f := range strings.Fields(run("rev-list", "--git-completion-helper-all")) {
		if f == "--" {
			break
		}
		if n, ok := strings.CutPrefix(f, "--"); ok {
			if n2, ok := strings.CutSuffix(n, "="); ok {
				add(n2, "=")
			} else {
				add(n, "")
			}
		}
	}
	manTok := regexp.MustCompile(`^--(\[no-\])?([a-z0-9][-a-z0-9]*)(.*)$`)
	for _, page := range []string{"git-rev-list", "git-log", "git-show", "git-diff", "git-diff-tree"} {
		text, err := readManPage(page)
		if err != nil {
			t.Logf("no man page %s: %v (its revision options are not read)", page, err)
			continue
		}
		lines := strings.Split(text, "\n")
		for i := 0; i+1 < len(lines); i++ {
			if lines[i] != ".PP" {
				continue
			}
			l := lines[i+1]
			if !strings.HasPrefix(l, `\-`) {
				continue
			}
			l = strings.NewReplacer(`\-`, "-", `\&`, "", `\fB`, "", `\fR`, "", `\fI`, "", `\(aq`, "'").Replace(l)
			for _, tok := range strings.Split(l, ", ") {
				tok = strings.TrimSpace(tok)
				m := manTok.FindStringSubmatch(tok)
				if m == nil {
					continue
				}
				arg := ""
				switch rest := m[3]; {
				case strings.HasPrefix(rest, "[="), strings.HasPrefix(rest, "["):
					arg = "?"
				case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, " <"):
					arg = "="
				}
				add(m[2], arg)
				if m[1] != "" {
					add("no-"+m[2], "")
				}
			}
		}
	}
	var out []string
	for n, a := range seen {
		out = append(out, n+a)
	}
	out = append(out, gitRevShort...)
	sort.Strings(out)
	return out
}

func readManPage(name string) (string, error) {
	for _, dir := range []string{"/usr/share/man/man1", "/usr/local/share/man/man1"} {
		f, err := os.Open(filepath.Join(dir, name+".1.gz"))
		if err != nil {
			continue
		}
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			return "", err
		}
		b, err := io.ReadAll(z)
		return string(b), err
	}
	return "", os.ErrNotExist
}

// writeGitOptions writes git_options.go.
func writeGitOptions(t *testing.T, version string, table map[string][]string, num map[string]bool) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by go test -run TestGitOptions -update-git ./shell from git %s; DO NOT EDIT.\n\n", version)
	b.WriteString("package shell\n\n")
	fmt.Fprintf(&b, "// gitOptionsVersion is the git the option table was read from.\nconst gitOptionsVersion = %q\n\n", version)
	b.WriteString("// gitOptionTable lists each git subcommand's options (grammar entries,\n// see G): parse-options' own, and under \"rev\" the revision and diff\n// options of log, diff, show and rev-list.\nvar gitOptionTable = map[string][]string{\n")
	var keys []string
	for k := range table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "\t%q: {", k)
		for i, e := range table[k] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", e)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n\n// gitNumOptions are the subcommands that take -NUM.\nvar gitNumOptions = map[string]bool{")
	first := true
	for _, k := range keys {
		if num[k] {
			if !first {
				b.WriteString(", ")
			}
			first = false
			fmt.Fprintf(&b, "%q: true", k)
		}
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("git_options.go", src, 0o644); err != nil {
		t.Fatal(err)
	}
}
