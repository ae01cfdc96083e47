package testreport

import (
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/shell"
)

// jestValueOpts are jest options whose value may be the next word.
var jestValueOpts = map[string]bool{
	"-t": true, "--testNamePattern": true, "-c": true, "--config": true, "--testPathPattern": true,
	"--testPathPatterns": true, "--testPathIgnorePatterns": true, "--shard": true, "--changedSince": true,
	"-w": true, "--maxWorkers": true, "--outputFile": true, "--reporters": true, "--coverageDirectory": true,
	"--rootDir": true, "--roots": true, "--testMatch": true, "--testRegex": true, "--testTimeout": true,
	"--seed": true, "--env": true, "--testEnvironment": true, "--selectProjects": true,
	"--ignoreProjects": true, "--maxConcurrency": true, "--coverageProvider": true, "--cacheDirectory": true,
}

func planJest(p *Plan, argv []string, project Project) bool {
	p.Runner, p.Format = Jest, FormatJestJSON
	jestArgs(p, argv[1:], "argv")
	p.inst = func(argv []string, reportPath string) (Instrumented, error) {
		return Instrumented{Argv: append(argv, "--json", "--outputFile="+reportPath)}, nil
	}
	return true
}

func jestArgs(p *Plan, args []string, where string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			p.narrow("%s test path pattern %s", where, quoteArg(a))
			continue
		}
		opt, val, hasVal := strings.Cut(a, "=")
		if opt == "--findRelatedTests" {
			p.narrow("%s --findRelatedTests", where)
			return // the rest are file names
		}
		if !hasVal && jestValueOpts[opt] && i+1 < len(args) {
			i++
			val = args[i]
		}
		switch opt {
		case "-t", "--testNamePattern":
			if val != "" {
				p.narrow("%s %s %s", where, opt, quoteArg(val))
			}
		case "--testPathPattern", "--testPathPatterns", "--testPathIgnorePatterns", "--testMatch", "--testRegex", "--shard", "--selectProjects", "--ignoreProjects", "--changedSince":
			p.narrow("%s %s %s", where, opt, quoteArg(val))
		case "-o", "--onlyChanged", "--lastCommit", "-f", "--onlyFailures":
			p.narrow("%s %s", where, opt)
		case "--listTests", "--showConfig", "--clearCache", "--help", "-h", "--version", "-v":
			p.ListOnly = true
		case "--verbose":
			p.Verbose = true
		}
	}
}

// vitestValueOpts are vitest options whose value may be the next word.
var vitestValueOpts = map[string]bool{
	"-t": true, "--testNamePattern": true, "-c": true, "--config": true, "--shard": true, "--project": true,
	"--reporter": true, "--outputFile": true, "--dir": true, "--root": true, "-r": true, "--exclude": true,
	"--changed": false, "--environment": true, "--pool": true, "--maxWorkers": true, "--minWorkers": true,
	"--testTimeout": true, "--mode": true, "--retry": true, "--bail": true, "--sequence.seed": true,
}

func planVitest(p *Plan, argv []string, project Project) bool {
	p.Runner, p.Format = Vitest, FormatJUnit
	args := argv[1:]
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "run", "watch", "dev":
			args = args[1:]
		case "related":
			p.narrow("argv vitest related")
			args = args[1:]
		case "list":
			p.ListOnly = true
			args = args[1:]
		case "bench", "init":
			return false
		}
	}
	reporters := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			p.narrow("argv test filter %s", quoteArg(a))
			continue
		}
		opt, val, hasVal := strings.Cut(a, "=")
		if !hasVal && vitestValueOpts[opt] && i+1 < len(args) {
			i++
			val = args[i]
		}
		switch opt {
		case "-t", "--testNamePattern":
			if val != "" {
				p.narrow("argv %s %s", opt, quoteArg(val))
			}
		case "--shard", "--project", "--exclude", "--dir":
			p.narrow("argv %s %s", opt, quoteArg(val))
		case "--changed", "--related", "--onlyFailures":
			p.narrow("argv %s", opt)
		case "--reporter":
			reporters++
		case "--help", "-h", "--version", "-v":
			p.ListOnly = true
		}
	}
	p.inst = func(argv []string, reportPath string) (Instrumented, error) {
		if reporters == 0 {
			argv = append(argv, "--reporter=default")
		}
		return Instrumented{Argv: append(argv, "--reporter=junit", "--outputFile.junit="+reportPath)}, nil
	}
	return true
}

// nodeTestValueOpts are node's test options whose value may be the next word.
var nodeTestValueOpts = map[string]bool{
	"--test-name-pattern": true, "--test-skip-pattern": true, "--test-shard": true,
	"--test-reporter": true, "--test-reporter-destination": true, "--test-concurrency": true,
	"--test-timeout": true, "--import": true, "--require": true, "-r": true, "--loader": true,
	"--experimental-loader": true, "--conditions": true, "-C": true, "--env-file": true,
	"--test-coverage-include": true, "--test-coverage-exclude": true, "--test-isolation": true,
	"--test-global-setup": true,
}

func planNode(p *Plan, argv []string, project Project) bool {
	if !slices.Contains(argv[1:], "--test") {
		return false
	}
	p.Runner, p.Format = NodeTest, FormatJUnit
	reporters, dests := 0, 0
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			if strings.ContainsAny(a, "*?{[") || !strings.Contains(path.Base(a), ".") {
				continue // a glob or a directory: the suite's own layout
			}
			p.narrow("argv names test file %s", a)
			continue
		}
		opt, val, hasVal := strings.Cut(a, "=")
		if !hasVal && nodeTestValueOpts[opt] && i+1 < len(argv) {
			i++
			val = argv[i]
		}
		switch opt {
		case "--test-name-pattern", "--test-skip-pattern", "--test-shard":
			p.narrow("argv %s %s", opt, quoteArg(val))
		case "--test-only":
			p.narrow("argv --test-only")
		case "--test-reporter":
			reporters++
		case "--test-reporter-destination":
			dests++
		}
	}
	p.inst = func(argv []string, reportPath string) (Instrumented, error) {
		add := []string{}
		switch {
		case reporters == 0 && dests == 0:
			add = append(add, "--test-reporter=spec", "--test-reporter-destination=stdout")
		case reporters == 1 && dests == 0:
			add = append(add, "--test-reporter-destination=stdout")
		}
		add = append(add, "--test-reporter=junit", "--test-reporter-destination="+reportPath)
		out := append([]string{argv[0]}, add...)
		return Instrumented{Argv: append(out, argv[1:]...)}, nil
	}
	if reporters != dests && !(reporters == 1 && dests == 0) {
		p.Format, p.NoReport, p.inst = "", "node --test: reporters and destinations do not pair up", nil
	}
	return true
}

// planScript plans npm/yarn/pnpm/bun test: the package.json "test" script,
// with the arguments the package manager passes on.
func planScript(p *Plan, argv, env []string, project Project) bool {
	pm := path.Base(argv[0])
	i := 1
	if i < len(argv) && (argv[i] == "run" || argv[i] == "run-script") {
		i++
	}
	if i >= len(argv) || !(argv[i] == "test" || (pm == "npm" && argv[i] == "t" && i == 1)) {
		return false
	}
	if pm == "bun" && i == 1 {
		return false // `bun test` is bun's own runner
	}
	extra := argv[i+1:]
	if pm == "npm" {
		if k := slices.Index(extra, "--"); k >= 0 {
			extra = extra[k+1:]
		} else {
			extra = nil // npm keeps its own options
		}
	} else if len(extra) > 0 && extra[0] == "--" {
		extra = extra[1:]
	}
	b, ok := project.read(path.Join(project.dir(), "package.json"))
	if !ok {
		return false
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal(b, &pkg) != nil || pkg.Scripts["test"] == "" {
		return false
	}
	a, err := shell.Analyze(pkg.Scripts["test"])
	if err != nil || len(a.Commands) == 0 {
		return false
	}
	last := a.Commands[len(a.Commands)-1]
	if last.Dynamic || len(last.Argv) == 0 {
		return false
	}
	inner := append(slices.Clone(last.Argv), extra...)
	sub, ok := New(inner, env, project)
	if !ok {
		return false
	}
	*p = sub
	for k, r := range p.NarrowedBy {
		p.NarrowedBy[k] = strings.Replace(r, "argv", "package.json test script (or its arguments)", 1)
	}
	// Instrument by passing the runner's options through the package
	// manager, which appends them to the script's last command.
	subInst := sub.inst
	p.argv = argv
	if subInst == nil {
		return true
	}
	p.inst = func(argv []string, reportPath string) (Instrumented, error) {
		in, err := subInst(slices.Clone(inner), reportPath)
		if err != nil {
			return in, err
		}
		if !slices.Equal(in.Argv[:len(inner)], inner) {
			// The runner's options go in front (node --test): the package
			// manager cannot put them there.
			return Instrumented{}, errNoPassThrough
		}
		added := in.Argv[len(inner):]
		out := slices.Clone(argv)
		if pm == "npm" && !slices.Contains(argv, "--") {
			out = append(out, "--")
		}
		in.Argv = append(out, added...)
		return in, nil
	}
	if sub.Runner == NodeTest || sub.Runner == GoTest {
		// node takes its reporter options before the files; go test takes
		// -json after "test": neither can be appended by the package manager.
		p.Format, p.NoReport, p.inst = "", "the test script's runner ("+string(sub.Runner)+") takes its report options where "+pm+" cannot add them; run the runner directly", nil
	}
	return true
}

type planError string

func (e planError) Error() string { return string(e) }

const errNoPassThrough = planError("testreport: the package manager cannot pass the report options to the runner")
