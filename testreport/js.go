package testreport

import (
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/shell"
)

func planJest(p *Plan, argv []string, project Project) bool {
	p.Runner, p.Format = Jest, FormatJestJSON
	jestArgs(p, argv[1:], "argv")
	p.inst = func(argv []string, reportPath string) (Instrumented, error) {
		return Instrumented{Argv: append(argv, "--json", "--outputFile="+reportPath)}, nil
	}
	return true
}

// jestArgs reads jest's arguments with its grammar (yargs: --testNamePattern,
// --test-name-pattern and -t are one option).
func jestArgs(p *Plan, args []string, where string) {
	pa := parseArgs("jest", args)
	for _, o := range pa.Options {
		if !o.Known {
			p.unknownOption(where, o)
			continue
		}
		p.optionalValueTaken("jest", where, o)
		val := o.Value.Value
		switch o.Name {
		case "t":
			if val != "" {
				p.narrow("%s %s %s", where, spelled(o), quoteArg(val))
			}
		case "testPathPattern", "testPathPatterns", "testPathIgnorePatterns", "testMatch", "testRegex", "shard",
			"selectProjects", "ignoreProjects", "changedSince":
			p.narrow("%s %s %s", where, spelled(o), quoteArg(val))
		case "o", "lastCommit", "findRelatedTests":
			p.narrow("%s %s", where, spelled(o))
		case "listTests", "showConfig", "clearCache", "h", "v":
			p.ListOnly = true
		case "verbose":
			p.Verbose = true
		}
	}
	for _, a := range operands(pa) {
		p.narrow("%s test path pattern %s", where, quoteArg(a))
	}
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
	pa := parseArgs("vitest", args)
	for _, o := range pa.Options {
		if !o.Known {
			p.unknownOption("argv", o)
			continue
		}
		p.optionalValueTaken("vitest", "argv", o)
		val := o.Value.Value
		switch o.Name {
		case "t":
			if val != "" {
				p.narrow("argv %s %s", spelled(o), quoteArg(val))
			}
		case "shard", "project", "exclude", "dir", "r":
			p.narrow("argv %s %s", spelled(o), quoteArg(val))
		case "changed", "related":
			p.narrow("argv %s", spelled(o))
		case "reporter":
			reporters++
		case "h", "v":
			p.ListOnly = true
		}
	}
	for _, a := range operands(pa) {
		p.narrow("argv test filter %s", quoteArg(a))
	}
	p.inst = func(argv []string, reportPath string) (Instrumented, error) {
		if reporters == 0 {
			argv = append(argv, "--reporter=default")
		}
		return Instrumented{Argv: append(argv, "--reporter=junit", "--outputFile.junit="+reportPath)}, nil
	}
	return true
}

// nodeTestOpt applies one of node's options (from argv or NODE_OPTIONS)
// to a node --test plan.
func nodeTestOpt(p *Plan, where string, o shell.ParsedOption) {
	if !o.Known {
		p.unknownOption(where, o)
		return
	}
	switch o.Name {
	case "test-name-pattern", "test-skip-pattern", "test-shard":
		p.narrow("%s %s %s", where, spelled(o), quoteArg(o.Value.Value))
	case "test-only":
		p.narrow("%s %s", where, spelled(o))
	}
}

func planNode(p *Plan, argv, env []string, project Project) bool {
	if !slices.Contains(argv[1:], "--test") {
		return false
	}
	p.Runner, p.Format = NodeTest, FormatJUnit
	reporters, dests := 0, 0
	pa := parseArgs("node", argv[1:])
	for _, o := range pa.Options {
		switch {
		case o.Known && o.Name == "test-reporter":
			reporters++
		case o.Known && o.Name == "test-reporter-destination":
			dests++
		}
		nodeTestOpt(p, "argv", o)
	}
	for _, a := range operands(pa) {
		if strings.ContainsAny(a, "*?{[") || !strings.Contains(path.Base(a), ".") {
			continue // a glob or a directory: the suite's own layout
		}
		p.narrow("argv names test file %s", a)
	}
	if v, ok := envValue(env, "NODE_OPTIONS"); ok {
		// node reads its test runner's options from NODE_OPTIONS too.
		for _, o := range parseArgs("node", splitShellWords(v)).Options {
			if o.Known && (o.Name == "test-reporter" || o.Name == "test-reporter-destination") {
				continue // the report options argv gives come after these
			}
			nodeTestOpt(p, "NODE_OPTIONS", o)
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
