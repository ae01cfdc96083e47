package testreport

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Runner names a test runner.
type Runner string

// The runners Plan recognises.
const (
	GoTest   Runner = "go test"
	Pytest   Runner = "pytest"
	Jest     Runner = "jest"
	Vitest   Runner = "vitest"
	NodeTest Runner = "node --test"
	Cargo    Runner = "cargo test"
)

// Format is the format of a structured test report.
type Format string

// Report formats Parse reads.
const (
	// FormatGoJSON is go test -json's event stream (test2json).
	FormatGoJSON Format = "go-json"
	// FormatJUnit is JUnit XML (pytest --junitxml, vitest, node's junit
	// reporter, jest-junit).
	FormatJUnit Format = "junit"
	// FormatJestJSON is jest --json's aggregated result.
	FormatJestJSON Format = "jest-json"
	// FormatLibtestJSON is Rust libtest's --format json event stream.
	FormatLibtestJSON Format = "libtest-json"
)

// Project is where a test command runs: the project's files, and the
// command's working directory inside them.
type Project struct {
	// FS holds the project's files, rooted at the project root. Nil means
	// no file is known: Plan then assumes the least (a narrowing it cannot
	// rule out counts).
	FS fs.FS
	// Dir is the working directory, slash-separated and relative to FS's
	// root ("" or "." for the root itself).
	Dir string
}

func (p Project) dir() string {
	if p.Dir == "" {
		return "."
	}
	return path.Clean(p.Dir)
}

func (p Project) read(name string) ([]byte, bool) {
	if p.FS == nil || !fs.ValidPath(name) {
		return nil, false
	}
	b, err := fs.ReadFile(p.FS, name)
	if err != nil || len(b) > maxConfigSize {
		return nil, false
	}
	return b, true
}

// maxConfigSize bounds a project file Plan reads (pytest.ini, package.json, ...).
const maxConfigSize = 1 << 20

// Plan is what a test command will do, worked out before it runs.
type Plan struct {
	// Runner is the test runner the command starts.
	Runner Runner
	// Format is the structured report Instrument makes the runner write;
	// "" when it cannot write one here (NoReport says why).
	Format Format
	// NoReport explains an empty Format.
	NoReport string
	// Narrowed is true when the run covers only part of the suite.
	Narrowed bool
	// NarrowedBy says what narrowed it, one entry per cause, naming where
	// the option came from ("argv -run TestX", "GOFLAGS -short",
	// "pytest.ini addopts -m 'not slow'").
	NarrowedBy []string
	// ListOnly is true when the command lists, collects or compiles tests
	// without running any (go test -list, pytest --co, cargo test --no-run).
	ListOnly bool
	// Verbose is true when the agent asked for verbose output; a renderer
	// of a report on stdout follows it.
	Verbose bool

	argv []string // the command as given
	inst instrumenter
}

// instrumenter returns the argv and extra environment that make the
// command also write its report at path.
type instrumenter func(argv []string, path string) (Instrumented, error)

// Instrumented is a command changed to also write a structured report.
type Instrumented struct {
	// Argv is the command to run instead.
	Argv []string
	// Env are NAME=value entries to add to the command's environment.
	Env []string
	// ReportOnStdout is true when the runner writes its report to stdout
	// (go test -json, libtest's JSON): the caller keeps stdout as the
	// report and shows the agent the text NewRenderer makes of it.
	ReportOnStdout bool
	// Render is true when ReportOnStdout holds and the agent did not ask
	// for the structured form itself (go test -json given by the agent is
	// shown as it is).
	Render bool
}

// Argv returns the command the plan is for (the package.json script's
// package manager command for npm test and the like).
func (p Plan) Argv() []string { return slices.Clone(p.argv) }

// narrow records a narrowing cause.
func (p *Plan) narrow(format string, args ...any) {
	p.Narrowed = true
	r := fmt.Sprintf(format, args...)
	if !slices.Contains(p.NarrowedBy, r) {
		p.NarrowedBy = append(p.NarrowedBy, r)
	}
}

// Instrument returns the command to run so that the runner also writes its
// structured report at reportPath, keeping what the agent sees: the same
// tests, the same output (a report on stdout is rendered back to text).
// It fails when the plan has no report format.
func (p Plan) Instrument(reportPath string) (Instrumented, error) {
	if p.Format == "" || p.inst == nil {
		why := p.NoReport
		if why == "" {
			why = "no structured report for this command"
		}
		return Instrumented{}, fmt.Errorf("testreport: %s", why)
	}
	if reportPath == "" {
		return Instrumented{}, fmt.Errorf("testreport: empty report path")
	}
	return p.inst(slices.Clone(p.argv), reportPath)
}

// New works out what argv (a single simple command, after the shell
// analysis has unwrapped env/timeout/... wrappers) will do when run with
// env (NAME=value entries: the command's own assignments and the
// environment it inherits) in project. ok is false when argv starts no
// test runner this package knows.
func New(argv, env []string, project Project) (p Plan, ok bool) {
	argv, launcher := stripLauncher(argv)
	if len(argv) == 0 {
		return Plan{}, false
	}
	prog := path.Base(argv[0])
	p.argv = argv
	switch {
	case prog == "go":
		ok = planGo(&p, argv, env, project)
	case isUnittest(argv):
		ok = planUnittest(&p, argv)
	case isPytest(argv):
		ok = planPytest(&p, argv, env, project)
	case prog == "jest":
		ok = planJest(&p, argv, project)
	case prog == "vitest":
		ok = planVitest(&p, argv, project)
	case prog == "node" || prog == "nodejs":
		ok = planNode(&p, argv, env, project)
	case prog == "cargo":
		ok = planCargo(&p, argv, env, project)
	case prog == "npm" || prog == "yarn" || prog == "pnpm" || prog == "bun":
		if launcher != "" {
			return Plan{}, false
		}
		ok = planScript(&p, argv, env, project)
	}
	if !ok {
		return Plan{}, false
	}
	if launcher != "" {
		// Put the launcher back in front of the instrumented command.
		inner := p.inst
		pre := strings.Fields(launcher)
		if inner != nil {
			p.inst = func(argv []string, path string) (Instrumented, error) {
				in, err := inner(argv, path)
				in.Argv = append(slices.Clone(pre), in.Argv...)
				return in, err
			}
		}
	}
	return p, true
}

// stripLauncher removes a package launcher in front of a runner (npx jest,
// uv run pytest, poetry run pytest, bundle exec ...), returning the rest and
// the launcher words ("" when none).
func stripLauncher(argv []string) ([]string, string) {
	if len(argv) < 2 {
		return argv, ""
	}
	prog := path.Base(argv[0])
	switch prog {
	case "npx", "bunx", "pnpx":
		i := 1
		for i < len(argv) && (argv[i] == "--yes" || argv[i] == "-y" || argv[i] == "--no-install" || argv[i] == "--no") {
			i++
		}
		if i < len(argv) {
			return argv[i:], strings.Join(argv[:i], " ")
		}
	case "uv", "poetry", "pipenv", "pdm", "hatch", "pnpm":
		if argv[1] == "run" || (prog == "pnpm" && argv[1] == "exec") {
			if len(argv) > 2 && !strings.HasPrefix(argv[2], "-") && !isScriptRunner(prog, argv[2]) {
				return argv[2:], strings.Join(argv[:2], " ")
			}
		}
	case "yarn":
		if b := path.Base(argv[1]); b == "jest" || b == "vitest" {
			return argv[1:], "yarn"
		}
	}
	return argv, ""
}

// isScriptRunner reports that `pnpm run test` runs a package.json script,
// not a program named test.
func isScriptRunner(prog, name string) bool { return prog == "pnpm" && name == "test" }

// envValue returns the last value of NAME in env.
func envValue(env []string, name string) (string, bool) {
	val, found := "", false
	for _, e := range env {
		if k, v, ok := strings.Cut(e, "="); ok && k == name {
			val, found = v, true
		}
	}
	return val, found
}

// flagName splits "-run=X" / "--run=X" into ("run", "X", true) and "-v"
// into ("v", "", false).
func flagName(a string) (name, val string, hasVal bool) {
	a = strings.TrimLeft(a, "-")
	name, val, hasVal = strings.Cut(a, "=")
	return name, val, hasVal
}

// quoteArg renders an option value for a NarrowedBy message.
func quoteArg(s string) string {
	if s == "" || strings.ContainsAny(s, " \t'\"") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}
