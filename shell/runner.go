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

// runnerPart is one grammar's share of a runner's argv.
type runnerPart struct {
	grammar string
	args    []word
}

// runnerParts splits a test-runner argv (program first) into the parts
// each grammar parses: npm's options and the script's ARGS after "--";
// cargo test's options and libtest's after "--". It returns nil when the
// runner has no grammar.
func runnerParts(ws []word, depth int) []runnerPart {
	if len(ws) == 0 || depth > 4 || !ws[0].lit {
		return nil
	}
	name := lookupName(path.Base(ws[0].val))
	args := ws[1:]
	switch name {
	case "pytest", "py.test", "jest", "vitest", "mocha":
		if name == "py.test" {
			name = "pytest"
		}
		if name == "vitest" && len(args) > 0 && args[0].lit {
			switch args[0].val {
			case "run", "watch", "bench", "related", "list", "dev":
				args = args[1:]
			}
		}
		return []runnerPart{{name, args}}
	case "python", "pypy":
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !a.lit {
				return nil
			}
			if a.val == "-i" || strings.HasPrefix(a.val, "-") && !strings.HasPrefix(a.val, "--") && strings.ContainsRune(a.val[1:], 'i') && a.val != "-m" {
				return []runnerPart{{"", ws}} // -i: a prompt reads code from stdin after the run
			}
			if a.val == "-m" && i+1 < len(args) && args[i+1].lit {
				if args[i+1].val == "pytest" {
					return []runnerPart{{"pytest", args[i+2:]}}
				}
				return nil
			}
			if a.val == "-W" || a.val == "-X" {
				i++
			}
		}
	case "node":
		return []runnerPart{{"node", args}}
	case "go":
		for len(args) > 1 && args[0].lit && args[0].val == "-C" {
			args = args[2:]
		}
		if len(args) > 0 && args[0].lit && (args[0].val == "test" || args[0].val == "vet") {
			return []runnerPart{{"go " + args[0].val, args[1:]}}
		}
	case "cargo":
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !a.lit {
				return nil
			}
			switch {
			case a.val == "test" || a.val == "t":
				rest := args[i+1:]
				for j, r := range rest {
					if r.lit && r.val == "--" {
						return []runnerPart{{"cargo test", rest[:j]}, {"libtest", rest[j+1:]}}
					}
				}
				return []runnerPart{{"cargo test", rest}}
			case a.val == "--config" || a.val == "-Z" || a.val == "-C" || a.val == "--color" || a.val == "--manifest-path":
				return nil // global options with effects: the old checks apply
			case strings.HasPrefix(a.val, "-") || strings.HasPrefix(a.val, "+"):
			default:
				return nil
			}
		}
	case "npm", "pnpm", "yarn", "bun":
		var own []word
		for i := 0; i < len(args); i++ {
			a := args[i]
			if a.lit && a.val == "--" {
				return []runnerPart{{"npm", own}, {gJSRunner, args[i+1:]}}
			}
			if name == "bun" && a.lit && a.val == "test" && len(own) == 0 {
				return []runnerPart{{"bun test", args[i+1:]}}
			}
			if name != "npm" && a.lit && (a.val == "test" || a.val == "t") {
				// yarn and pnpm pass what follows the script name to it
				return []runnerPart{{"npm", own}, {gJSRunner, args[i+1:]}}
			}
			own = append(own, a)
		}
		return []runnerPart{{"npm", own}}
	case "npx", "bunx", "pnpx":
		i := 0
		for i < len(args) && args[i].lit && strings.HasPrefix(args[i].val, "-") {
			i++
		}
		return runnerParts(args[i:], depth+1)
	case "uv", "poetry", "pipenv", "pdm", "hatch":
		i := 0
		for i < len(args) && args[i].lit && strings.HasPrefix(args[i].val, "-") {
			i++
		}
		if i < len(args) && args[i].lit && args[i].val == "run" {
			j := i + 1
			for j < len(args) && args[j].lit && strings.HasPrefix(args[j].val, "-") {
				j++
			}
			return runnerParts(args[j:], depth+1)
		}
	case "bundle":
		if len(args) > 0 && args[0].lit && args[0].val == "exec" {
			return runnerParts(args[1:], depth+1)
		}
	case "tox", "nox":
		// what follows -- goes to the environment's test command, most
		// often pytest: its options count
		own := append([]word{ws[0]}, args...)
		for i, a := range args {
			if a.lit && a.val == "--" {
				return []runnerPart{{"", own[:i+1]}, {"pytest", args[i+1:]}}
			}
			if !a.lit && a.dash {
				return []runnerPart{{"", own[:i+1]}, {"pytest", args[i:]}}
			}
		}
		return nil
	case "deno":
		if len(args) > 0 && args[0].lit && args[0].val == "test" {
			return []runnerPart{{"deno test", args[1:]}}
		}
	case "rspec", "phpunit", "ctest":
		return []runnerPart{{name, args}}
	case "dotnet":
		if len(args) > 0 && args[0].lit && args[0].val == "test" {
			return []runnerPart{{"dotnet test", args[1:]}}
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
		if r.grammar == "" {
			// the runner's own options, without a grammar: the older checks
			if argv := literal(r.args); testRunnerExec(argv) {
				x.add(ClassExec)
			}
			continue
		}
		g := grammars()[r.grammar]
		p := g.parse(r.args)
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
