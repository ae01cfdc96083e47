package testreport

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/shell"
)

var pythonName = regexp.MustCompile(`^python(\d+(\.\d+)*)?$|^pypy\d*$`)

// isPytest recognises pytest, py.test, pytest-3 and python -m pytest.
func isPytest(argv []string) bool {
	b := path.Base(argv[0])
	if b == "pytest" || b == "py.test" || strings.HasPrefix(b, "pytest-") {
		return true
	}
	return pythonName.MatchString(b) && len(argv) >= 3 && argv[1] == "-m" && argv[2] == "pytest"
}

// isUnittest recognises python -m unittest.
func isUnittest(argv []string) bool {
	return pythonName.MatchString(path.Base(argv[0])) && len(argv) >= 3 && argv[1] == "-m" && argv[2] == "unittest"
}

// pytestListOnly are pytest options (canonical names in pytest's grammar,
// or as written for ones it does not know) that make pytest run no test.
var pytestListOnly = []string{"collect-only", "fixtures", "fixtures-per-test", "markers", "h", "V",
	"setup-plan", "setup-only"}

// pytestOpt applies one pytest option, parsed with pytest's grammar, to
// the plan. fromConfig is true for addopts read from an ini file: there
// --ignore and paths define the project's suite rather than narrow it.
func pytestOpt(p *Plan, where string, o shell.ParsedOption, fromConfig bool) {
	val := o.Value.Value
	if !o.Known {
		if slices.Contains(pytestListOnly, strings.TrimLeft(spelled(o), "-")) {
			p.ListOnly = true
		}
		// pytest refuses an option it does not know unless a plugin
		// defines it, and a plugin's option may select tests.
		p.unknownOption(where, o)
		return
	}
	switch o.Name {
	case "k", "m":
		if strings.TrimSpace(val) != "" {
			p.narrow("%s -%s %s", where, o.Name, quoteArg(val))
		}
	case "lf":
		p.narrow("%s %s (only the tests that failed last time)", where, spelled(o))
	case "sw", "sw-skip":
		p.narrow("%s %s (resumes from the last failure)", where, spelled(o))
	case "looponfail":
		p.narrow("%s %s (reruns the failing tests)", where, spelled(o))
	case "deselect":
		p.narrow("%s --deselect %s", where, quoteArg(val))
	case "ignore", "ignore-glob":
		if !fromConfig {
			p.narrow("%s %s %s", where, spelled(o), quoteArg(val))
		}
	case "pyargs":
		p.narrow("%s --pyargs", where)
	case "picked", "testmon":
		p.narrow("%s %s (only the tests of changed files)", where, spelled(o))
	case "benchmark-only", "benchmark-skip":
		p.narrow("%s %s", where, spelled(o))
	case "v":
		p.Verbose = true
	default:
		if slices.Contains(pytestListOnly, o.Name) {
			p.ListOnly = true
		}
	}
}

// pytestArgs reads pytest arguments with pytest's grammar, applying the
// options, and returns the positional arguments, the -o/--override-ini
// values and the -c file.
func pytestArgs(p *Plan, args []string, where string, fromConfig bool) (pos, overrides []string, config string) {
	pa := parseArgs("pytest", args)
	for _, o := range pa.Options {
		switch {
		case o.Known && (o.Name == "o" || o.Name == "override-ini"):
			overrides = append(overrides, o.Value.Value)
		case o.Known && (o.Name == "c" || o.Name == "config-file"):
			config = o.Value.Value
		}
		pytestOpt(p, where, o, fromConfig)
	}
	for _, a := range operands(pa) {
		if strings.HasPrefix(a, "@") {
			// argparse's fromfile prefix: pytest reads more arguments
			// from the file.
			p.narrow("%s %s (pytest reads more arguments from that file)", where, quoteArg(a))
			continue
		}
		pos = append(pos, a)
	}
	return pos, overrides, config
}

func planPytest(p *Plan, argv, env []string, project Project) bool {
	p.Runner, p.Format = Pytest, FormatJUnit
	at := 1
	if pythonName.MatchString(path.Base(argv[0])) {
		at = 3 // python -m pytest
	}
	dir := project.dir()
	pos, overrides, configFile := pytestArgs(p, argv[at:], "argv", false)
	if v, ok := envValue(env, "PYTEST_ADDOPTS"); ok {
		envPos, envOver, envConf := pytestArgs(p, splitShellWords(v), "PYTEST_ADDOPTS", false)
		pos = append(pos, envPos...)
		overrides = append(overrides, envOver...)
		if configFile == "" {
			configFile = envConf
		}
	}
	cfg := findPytestConfig(project, dir, configFile)
	addopts, haveAddopts := cfg.addopts, cfg.found && cfg.addopts != ""
	for _, o := range overrides {
		if k, v, ok := strings.Cut(o, "="); ok && strings.TrimSpace(k) == "addopts" {
			addopts, haveAddopts = v, true
			cfg.name = "-o addopts"
		}
	}
	if haveAddopts {
		cpos, _, _ := pytestArgs(p, splitShellWords(addopts), cfg.name+" addopts", true)
		_ = cpos // paths in addopts define the suite
	}
	for _, a := range pos {
		switch {
		case strings.Contains(a, "::"):
			p.narrow("argv selects test %s", a)
		case a == "." || path.Clean(path.Join(dir, a)) == path.Clean(dir) && !strings.HasPrefix(a, ".."):
		case slices.ContainsFunc(cfg.testpaths, func(t string) bool { return path.Clean(path.Join(dir, a)) == path.Clean(path.Join(cfg.dir, t)) }):
		default:
			p.narrow("argv path subset %s", a)
		}
	}
	p.inst = func(argv []string, reportPath string) (Instrumented, error) {
		return Instrumented{Argv: append(argv, "--junitxml="+reportPath, "-o", "junit_family=xunit2")}, nil
	}
	return true
}

// pytestConfig is the ini file pytest would use.
type pytestConfig struct {
	found     bool
	name      string // file name for messages ("pytest.ini", "pyproject.toml", ...)
	dir       string // its directory (the rootdir)
	addopts   string
	testpaths []string
}

// findPytestConfig finds pytest's configuration the way pytest does: from
// the working directory upward, the first pytest.ini, pyproject.toml with
// [tool.pytest.ini_options] (or [tool.pytest]), tox.ini with [pytest], or
// setup.cfg with [tool:pytest]; -c names a file directly.
func findPytestConfig(project Project, dir, configFile string) pytestConfig {
	if configFile != "" {
		name := path.Join(dir, configFile)
		if b, ok := project.read(name); ok {
			return readPytestConfig(path.Base(name), path.Dir(name), b)
		}
		return pytestConfig{}
	}
	for d := dir; ; d = path.Dir(d) {
		for _, f := range []string{"pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"} {
			if b, ok := project.read(path.Join(d, f)); ok {
				if c := readPytestConfig(f, d, b); c.found {
					return c
				}
			}
		}
		if d == "." || strings.HasPrefix(d, "..") || d == "/" {
			return pytestConfig{}
		}
	}
}

// readPytestConfig reads addopts and testpaths from one candidate file;
// found is false when the file holds no pytest section (pytest.ini always
// counts, even empty).
func readPytestConfig(name, dir string, b []byte) pytestConfig {
	c := pytestConfig{name: name, dir: dir}
	var vals map[string]string
	var list map[string][]string
	switch name {
	case "pyproject.toml":
		var ok bool
		vals, list, ok = PyprojectPytestOptions(b)
		if !ok {
			return c
		}
	default:
		section := "pytest"
		if name == "setup.cfg" {
			section = "tool:pytest"
		}
		sections := ParseINI(b)
		s, ok := sections[section]
		if !ok {
			if name == "pytest.ini" || name == ".pytest.ini" {
				c.found = true // pytest.ini wins even without a [pytest] section
			}
			return c
		}
		vals = s
	}
	c.found = true
	c.addopts = vals["addopts"]
	if l, ok := list["addopts"]; ok {
		c.addopts = joinShellWords(l)
	}
	c.testpaths = strings.Fields(vals["testpaths"])
	if l, ok := list["testpaths"]; ok {
		c.testpaths = l
	}
	return c
}

// splitShellWords splits an option string the way pytest does (shlex):
// whitespace separates words, single and double quotes group, a backslash
// escapes outside single quotes.
func splitShellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

func joinShellWords(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'"'"'`) + "'"
	}
	return strings.Join(q, " ")
}
