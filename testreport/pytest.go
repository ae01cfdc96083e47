package testreport

import (
	"path"
	"regexp"
	"slices"
	"strings"
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

// pytestValueOpts are pytest options (core and common plugins) whose value
// may be the next word.
var pytestValueOpts = map[string]bool{
	"-k": true, "-m": true, "-c": true, "-p": true, "-o": true, "-W": true, "-r": true, "-n": true,
	"--rootdir": true, "--basetemp": true, "--confcutdir": true, "--deselect": true, "--ignore": true,
	"--ignore-glob": true, "--junitxml": true, "--junit-xml": true, "--junit-prefix": true,
	"--maxfail": true, "--tb": true, "--durations": true, "--durations-min": true, "--log-level": true,
	"--log-file": true, "--log-file-level": true, "--log-format": true, "--log-date-format": true,
	"--log-cli-level": true, "--cov": true, "--cov-report": true, "--cov-config": true,
	"--cov-fail-under": true, "--timeout": true, "--dist": true, "--import-mode": true,
	"--capture": true, "--override-ini": true, "--config-file": true, "--color": true,
	"--code-highlight": true, "--doctest-glob": true, "--html": true, "--report-log": true,
	"--json-report-file": true, "-x": false, "--maxprocesses": true, "--numprocesses": true,
	"--randomly-seed": true, "--reruns": true, "--count": true, "--cache-dir": true,
	"--pyargs": false, "--lfnf": true, "--last-failed-no-failures": true, "--verbosity": true,
	"--deselect-file": true, "--tx": true, "--rsyncdir": true, "--benchmark-json": true,
}

// pytestNoTests are options that make pytest run no test.
var pytestNoTests = []string{"--co", "--collect-only", "--collectonly", "--fixtures", "--funcargs",
	"--fixtures-per-test", "--markers", "--help", "-h", "--version", "-V", "--setup-plan", "--setup-only"}

// pytestOpt applies one pytest option to the plan. fromConfig is true for
// addopts read from an ini file: there --ignore and paths define the
// project's suite rather than narrow it.
func pytestOpt(p *Plan, where, opt, val string, fromConfig bool) {
	switch opt {
	case "-k":
		if strings.TrimSpace(val) != "" {
			p.narrow("%s -k %s", where, quoteArg(val))
		}
	case "-m":
		if strings.TrimSpace(val) != "" {
			p.narrow("%s -m %s", where, quoteArg(val))
		}
	case "--lf", "--last-failed":
		p.narrow("%s %s (only the tests that failed last time)", where, opt)
	case "--sw", "--stepwise", "--sw-skip", "--stepwise-skip":
		p.narrow("%s %s (resumes from the last failure)", where, opt)
	case "--deselect":
		p.narrow("%s --deselect %s", where, quoteArg(val))
	case "--ignore", "--ignore-glob":
		if !fromConfig {
			p.narrow("%s %s %s", where, opt, quoteArg(val))
		}
	case "--pyargs":
		p.narrow("%s --pyargs", where)
	case "-v", "--verbose", "-vv", "-vvv":
		p.Verbose = true
	default:
		if slices.Contains(pytestNoTests, opt) {
			p.ListOnly = true
		}
	}
}

// pytestArgs walks pytest arguments, applying options, and returns the
// positional arguments, the -o/--override-ini values and the -c file.
func pytestArgs(p *Plan, args []string, where string, fromConfig bool) (pos, overrides []string, config string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		opt, val, hasVal := a, "", false
		if strings.HasPrefix(a, "--") {
			opt, val, hasVal = strings.Cut(a, "=")
		} else if len(a) > 2 && pytestValueOpts[a[:2]] {
			opt, val, hasVal = a[:2], a[2:], true // -kexpr, -m"not slow"
		}
		if !hasVal && pytestValueOpts[opt] && i+1 < len(args) {
			i++
			val, hasVal = args[i], true
		}
		switch opt {
		case "-o", "--override-ini":
			overrides = append(overrides, val)
		case "-c", "--config-file":
			config = val
		}
		pytestOpt(p, where, opt, val, fromConfig)
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
