package shell

import (
	"path"
	"strings"
)

// This file finds the test runner inside a test-runner command line and
// parses its arguments with the runner's grammar: output options are
// writes with targets, code-loading options are exec, options after "--"
// count, uploads and URLs are network.

// RunnerOptions returns, for a command that runs a known test runner, the
// runner's grammar name ("pytest", "go test", "jest", ...) and its
// arguments parsed as the runner parses them. Arguments a package
// manager's script receives after "--" (npm test -- ARGS) are parsed with
// the union of the JavaScript runners' grammars (gJSRunner). ok is false
// for other commands or runners without a grammar.
func (c *Command) RunnerOptions() (name string, p *ParsedArgs, ok bool) {
	ws := make([]word, len(c.Argv))
	off := len(c.Words) - len(c.Argv)
	for i, a := range c.Argv {
		w := word{val: a, lit: true}
		if off >= 0 && off+i < len(c.Words) && !c.Words[off+i].Literal {
			w = word{val: a, split: true, dash: true}
		}
		ws[i] = w
	}
	rs := runnerParts(ws, 0)
	if len(rs) == 0 {
		return "", nil, false
	}
	r := rs[len(rs)-1]
	if r.grammar == "" {
		return "", nil, false
	}
	g := grammars()[r.grammar]
	return r.grammar, g.parse(r.args), true
}

// runnerPart is one grammar's share of a runner's argv. cls is what the
// part does besides its options (a launcher that downloads the package it
// runs, vitest init installing packages).
type runnerPart struct {
	grammar string
	args    []word
	cls     Class
}

// jsRunnerBins are runners a JavaScript package manager runs from
// node_modules/.bin (pnpm jest, yarn vitest run).
var jsRunnerBins = map[string]bool{"jest": true, "vitest": true, "mocha": true, "jasmine": true, "ava": true, "karma": true}

// splitLauncher parses a launcher's own options (npx, uv run, bundle
// exec) with its grammar, which stops at the first operand: the program
// it runs. ok is false when a word that is not literal hides where the
// launcher's options end.
func splitLauncher(grammar string, args []word) (own, inner []word, ok bool) {
	g := grammars()[grammar]
	p := g.parse(args)
	if p.Hidden {
		return nil, nil, false
	}
	if len(p.Operands) == 0 {
		return args, nil, true
	}
	i := p.Operands[0].Index
	return args[:i], args[i:], true
}

// launched returns the parts of a launcher's argv: its own options, then
// the runner it runs (nil when that is not a test runner).
func launched(grammar string, args []word, cls Class, depth int) []runnerPart {
	own, inner, ok := splitLauncher(grammar, args)
	if !ok || len(inner) == 0 {
		return nil
	}
	rs := runnerParts(inner, depth+1)
	if rs == nil {
		return nil
	}
	return append([]runnerPart{{grammar: grammar, args: own, cls: cls}}, rs...)
}

// splitDashDash splits args at the first literal "--".
func splitDashDash(args []word) (before, after []word, found bool) {
	for i, a := range args {
		if a.lit && a.val == "--" {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
}

// verbAt returns the index of the first operand after options parsed with
// the named grammar (npm's options before its verb), or -1.
func verbAt(grammar string, args []word) int {
	g := grammars()[grammar]
	p := g.parse(args)
	if len(p.Operands) == 0 || p.Hidden && p.Operands[0].Index > 0 {
		return -1
	}
	return p.Operands[0].Index
}

// isTestScript reports a package.json script name that runs tests: test,
// test:unit, test-e2e.
func isTestScript(s string) bool {
	return s == "test" || s == "tests" || strings.HasPrefix(s, "test:") || strings.HasPrefix(s, "test-")
}

// runnerParts splits a test-runner argv (program first) into the parts
// each grammar parses: npm's options and the script's ARGS after "--";
// cargo test's options and libtest's after "--"; a launcher's options and
// the runner it launches. It returns nil when argv is not a test run the
// analysis models.
func runnerParts(ws []word, depth int) []runnerPart {
	if len(ws) == 0 || depth > 4 || !ws[0].lit || !trustedRunner(ws[0].val) {
		return nil
	}
	name := lookupName(path.Base(ws[0].val))
	args := ws[1:]
	first := func(a []word) string {
		if len(a) > 0 && a[0].lit {
			return a[0].val
		}
		return ""
	}
	switch name {
	case "pytest", "py.test", "jest", "mocha", "prove", "bats", "nosetests", "behave", "busted", "jasmine", "ava",
		"rspec", "phpunit", "pest", "ctest":
		if name == "py.test" {
			name = "pytest"
		}
		return []runnerPart{{grammar: name, args: args}}
	case "vitest":
		switch first(args) {
		case "run", "watch", "bench", "related", "list", "dev":
			args = args[1:]
		case "init":
			return []runnerPart{{grammar: "vitest", args: args[1:], cls: ClassPackageInstall | ClassNetwork | ClassWrite}}
		}
		return []runnerPart{{grammar: "vitest", args: args}}
	case "karma":
		switch first(args) {
		case "start", "":
			if len(args) > 0 {
				args = args[1:]
			}
			var cls Class
			if c := first(args); c != "" && !strings.HasPrefix(c, "-") && outsideProject(c) {
				cls = ClassExec // a configuration from outside the project
			}
			return []runnerPart{{grammar: "karma", args: args, cls: cls}}
		case "run":
			return []runnerPart{{grammar: "karma", args: args[1:], cls: ClassNetwork}} // asks a running server
		}
		return nil
	case "python", "pypy":
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !a.lit {
				return nil
			}
			mod, rest := "", []word(nil)
			switch {
			case a.val == "-m" && i+1 < len(args) && args[i+1].lit:
				mod, rest = args[i+1].val, args[i+2:]
			case strings.HasPrefix(a.val, "-m") && len(a.val) > 2:
				mod, rest = a.val[2:], args[i+1:]
			case a.val == "-W" || a.val == "-X" || a.val == "--check-hash-based-pycs":
				i++
				continue
			case strings.HasPrefix(a.val, "-") && a.val != "-":
				continue
			default:
				return nil // a script, -c, stdin
			}
			own := []runnerPart{{grammar: "python", args: args[:i]}}
			switch mod {
			case "pytest":
				return append(own, runnerPart{grammar: "pytest", args: rest})
			case "unittest":
				if first(rest) == "discover" {
					rest = rest[1:]
				}
				return append(own, runnerPart{grammar: "unittest", args: rest})
			}
			return nil
		}
	case "node":
		if grammars()["node"].parse(args).Has("test") {
			return []runnerPart{{grammar: "node", args: args}}
		}
	case "go":
		var global []word
		for len(args) > 1 && args[0].lit && args[0].val == "-C" {
			global, args = append(global, args[:2]...), args[2:]
		}
		if v := first(args); v == "test" || v == "vet" {
			return []runnerPart{{grammar: "go " + v, args: append(global, args[1:]...)}}
		}
	case "cargo":
		var global []word
		var cls Class
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !a.lit {
				return nil
			}
			switch {
			case a.val == "nextest":
				rest := args[i+1:]
				if first(rest) != "run" && first(rest) != "r" {
					return nil
				}
				own, lib, _ := splitDashDash(rest[1:])
				if len(lib) > 0 {
					cls |= ClassExec | ClassUnknown // arguments for the test binaries
				}
				return []runnerPart{{grammar: "cargo nextest", args: append(global, own...), cls: cls}}
			case a.val == "test" || a.val == "t":
				own, lib, found := splitDashDash(args[i+1:])
				own = append(global, own...)
				if found {
					return []runnerPart{{grammar: "cargo test", args: own, cls: cls}, {grammar: "libtest", args: lib}}
				}
				return []runnerPart{{grammar: "cargo test", args: own, cls: cls}}
			case strings.HasPrefix(a.val, "+"):
				if strings.ContainsAny(a.val, "/\\") {
					cls |= ClassExec // a toolchain at a path
				}
			case a.val == "--config" || a.val == "-Z" || a.val == "-C" || a.val == "--color" || a.val == "--manifest-path":
				if i+1 < len(args) {
					global = append(global, args[i], args[i+1])
				}
				i++
			case strings.HasPrefix(a.val, "-"):
				global = append(global, a)
			default:
				return nil
			}
		}
	case "npm":
		i := verbAt("npm", args)
		if i < 0 {
			return nil
		}
		own, verb, rest := args[:i], first(args[i:]), args[i+1:]
		switch verb {
		case "test", "t", "tst":
		case "run", "run-script", "rum", "urn":
			if !isTestScript(first(rest)) {
				return nil
			}
			rest = rest[1:]
		case "exec", "x":
			rs := launched("npx", rest, 0, depth)
			if rs == nil {
				return nil
			}
			return append([]runnerPart{{grammar: "npm", args: own}}, rs...)
		default:
			return nil
		}
		before, after, found := splitDashDash(rest)
		parts := []runnerPart{{grammar: "npm", args: append(append([]word{}, own...), before...)}}
		if found {
			parts = append(parts, runnerPart{grammar: gJSRunner, args: after})
		}
		return parts
	case "pnpm", "yarn", "bun":
		i := verbAt("npm", args)
		if i < 0 {
			return nil
		}
		own, verb, rest := args[:i], first(args[i:]), args[i+1:]
		ownPart := runnerPart{grammar: "npm", args: own}
		switch {
		case name == "bun" && verb == "test":
			return []runnerPart{ownPart, {grammar: "bun test", args: rest}}
		case verb == "test" || verb == "t" && name == "pnpm":
		case verb == "run" || verb == "run-script":
			if !isTestScript(first(rest)) {
				return nil
			}
			rest = rest[1:]
		case isTestScript(verb) && name != "bun":
		case verb == "exec" || verb == "dlx" || name == "bun" && verb == "x":
			var cls Class
			if verb == "dlx" || verb == "x" {
				cls = ClassNetwork // downloads the package it runs
			}
			rs := launched("npx", rest, cls, depth)
			if rs == nil {
				return nil
			}
			return append([]runnerPart{ownPart}, rs...)
		case jsRunnerBins[verb] && name != "bun":
			rs := runnerParts(args[i:], depth+1)
			if rs == nil {
				return nil
			}
			return append([]runnerPart{ownPart}, rs...)
		default:
			return nil
		}
		// yarn and pnpm pass what follows the script name to it
		_, after, found := splitDashDash(rest)
		if !found {
			after = rest
		}
		return []runnerPart{ownPart, {grammar: gJSRunner, args: after}}
	case "npx", "bunx", "pnpx":
		return launched("npx", args, 0, depth)
	case "uv", "poetry", "pipenv", "pdm", "hatch":
		for i, a := range args {
			if !a.lit {
				return nil
			}
			if a.val == "run" {
				rs := launched(name+" run", append(append([]word{}, args[:i]...), args[i+1:]...), 0, depth)
				return rs
			}
			if !strings.HasPrefix(a.val, "-") {
				return nil
			}
		}
	case "bundle":
		if first(args) == "exec" {
			return launched("bundle exec", args[1:], 0, depth)
		}
	case "tox":
		var cls Class
		switch first(args) {
		case "run", "r", "run-parallel", "p", "legacy", "le":
			args = args[1:]
		case "exec", "e":
			args, cls = args[1:], ClassExec
		}
		// what follows -- goes to the environment's test command, most
		// often pytest: its options count
		for i, a := range args {
			if a.lit && a.val == "--" {
				return []runnerPart{{grammar: "tox", args: args[:i], cls: cls}, {grammar: "pytest", args: args[i+1:]}}
			}
			if !a.lit && a.dash {
				return []runnerPart{{grammar: "tox", args: args[:i], cls: cls}, {grammar: "pytest", args: args[i:]}}
			}
		}
		return []runnerPart{{grammar: "tox", args: args, cls: cls}}
	case "nox":
		before, after, found := splitDashDash(args)
		if found {
			return []runnerPart{{grammar: "nox", args: before}, {grammar: "pytest", args: after}}
		}
		return []runnerPart{{grammar: "nox", args: args}}
	case "deno":
		if first(args) == "test" {
			return []runnerPart{{grammar: "deno test", args: args[1:]}}
		}
	case "dotnet":
		if first(args) == "test" {
			before, after, found := splitDashDash(args[1:])
			var cls Class
			if found && len(after) > 0 {
				cls = ClassExec | ClassUnknown // run settings given on the command line
			}
			return []runnerPart{{grammar: "dotnet test", args: before, cls: cls}}
		}
	case "make", "gmake":
		if makeTargetsTest(args) {
			return []runnerPart{{grammar: "make", args: args}}
		}
	case "mvn", "mvnw":
		if mavenGoalsTest(args) {
			return []runnerPart{{grammar: "mvn", args: args}}
		}
	case "gradle", "gradlew":
		if gradleTasksTest(args) {
			return []runnerPart{{grammar: "gradle", args: args}}
		}
	case "mix", "swift", "rake", "just", "bazel", "meson", "ninja", "sbt", "lein":
		if first(args) == "test" {
			return []runnerPart{{grammar: name + " test", args: args[1:]}}
		}
	case "php":
		if first(args) == "artisan" && len(args) > 1 && args[1].lit && args[1].val == "test" {
			return []runnerPart{{grammar: "artisan test", args: args[2:]}}
		}
	}
	return nil
}

// runnerOptions applies the grammars of the runner's parts; it reports
// false when the runner has no grammar (the older checks then apply).
func (x *cmdCtx) runnerOptions() bool {
	parts := runnerParts(x.args, 0)
	if parts == nil {
		return false
	}
	for _, r := range parts {
		x.add(r.cls)
		if r.cls&(ClassWrite|ClassModify) != 0 {
			x.writeDyn("files written by " + r.grammar)
		}
		g := grammars()[r.grammar]
		p := g.parse(r.args)
		x.runnerOperands(r.grammar, g, p)
		outdir := ""
		if r.grammar == "go test" {
			for _, o := range p.Values("outputdir", "test.outputdir") {
				if o.Literal {
					outdir = o.Value
				} else {
					outdir = "\x00"
				}
			}
		}
		if outdir != "" {
			x.goTestOutputs(g, p, outdir)
		} else {
			x.applyOptions(g, p)
		}
		if r.grammar == "go test" {
			if p.Has("c") && !p.Has("o") {
				x.add(ClassWrite)
				x.writeDyn("*.test")
			}
			if len(p.Passed) > 0 {
				pg := grammars()["go test -args"]
				pp := pg.parse(p.passed())
				if outdir != "" {
					x.goTestOutputs(pg, pp, outdir)
				} else {
					x.applyOptions(pg, pp)
				}
			}
		}
		for _, o := range p.ops() {
			if o.lit && strings.Contains(o.val, "://") {
				x.add(ClassNetwork) // a test path given as a URL
			}
			if r.grammar == "go test" || r.grammar == "go vet" {
				if o.lit && strings.Contains(o.val, "@") {
					x.add(ClassNetwork) // a module query
				}
			}
		}
	}
	return true
}

// goTestOutputs applies go test's options when -outputdir places the
// profiles: relative profile paths are written under it.
func (x *cmdCtx) goTestOutputs(g *Grammar, p *ParsedArgs, outdir string) {
	for i, o := range p.Options {
		if !o.Known || o.Eff&EffWrite == 0 || o.Name == "o" || !o.HasValue {
			continue
		}
		v := o.Path
		if outdir == "\x00" {
			v = Arg{Value: "-outputdir " + v.Value, Literal: false}
		} else if v.Literal && !strings.HasPrefix(v.Value, "/") {
			v.Value = joinPath(outdir, v.Value)
		}
		p.Options[i].Path = v
	}
	x.applyOptions(g, p)
}

// runnerOperands checks what a runner's operands do besides naming tests:
// make's and rake's VAR=value overrides, a test path outside the project
// for runners that take a project directory.
func (x *cmdCtx) runnerOperands(grammar string, g *Grammar, p *ParsedArgs) {
	for _, o := range p.Operands {
		if !o.Literal {
			continue
		}
		switch grammar {
		case "make", "rake test":
			if strings.Contains(o.Value, "=") {
				if e, _ := checkSafeAssign(o.Value); e != 0 {
					x.add(ClassExec) // the override may name a program or inject into a recipe
				}
			}
		case "just test":
			x.add(ClassExec | ClassUnknown) // recipe arguments are spliced into its shell text
		}
	}
}
