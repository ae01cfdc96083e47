package testreport

import (
	"path"
	"slices"
	"strings"
)

func planCargo(p *Plan, argv, env []string, project Project) bool {
	i := 1
	nightly := false
	if i < len(argv) && strings.HasPrefix(argv[i], "+") {
		nightly = strings.HasPrefix(argv[i], "+nightly")
		i++
	}
	if i >= len(argv) || (argv[i] != "test" && argv[i] != "t") {
		return false
	}
	p.Runner = Cargo
	testAt := i
	rest := argv[testAt+1:]
	var binArgs []string
	if k := slices.Index(rest, "--"); k >= 0 {
		rest, binArgs = rest[:k], rest[k+1:]
	}
	ca := parseArgs("cargo test", rest)
	for _, o := range ca.Options {
		if !o.Known {
			p.unknownOption("argv", o)
			continue
		}
		val := o.Value.Value
		switch o.Name {
		case "p":
			if cargoWorkspace(project) {
				p.narrow("argv %s %s (one package of the workspace)", spelled(o), val)
			}
		case "exclude":
			p.narrow("argv --exclude %s (a package of the workspace left out)", val)
		case "lib", "bins", "tests", "examples", "benches", "doc":
			p.narrow("argv %s (only some targets)", spelled(o))
		case "bin", "test", "example", "bench":
			p.narrow("argv %s %s (only some targets)", spelled(o), val)
		case "no-run", "h":
			p.ListOnly = true
		case "v":
			p.Verbose = true
		}
	}
	for _, a := range operands(ca) {
		p.narrow("argv test name filter %s", quoteArg(a))
	}
	userFormat := false
	la := parseArgs("libtest", binArgs)
	for _, o := range la.Options {
		if !o.Known {
			// a custom test harness reads options libtest does not have
			p.unknownOption("argv --", o)
			continue
		}
		switch o.Name {
		case "skip":
			p.narrow("argv --skip %s", quoteArg(o.Value.Value))
		case "ignored":
			p.narrow("argv --ignored (only the ignored tests)")
		case "bench":
			p.narrow("argv -- --bench (benchmarks instead of tests)")
		case "exclude-should-panic":
			p.narrow("argv --exclude-should-panic")
		case "exact":
			// narrows only with a filter, which is reported itself
		case "list", "h":
			p.ListOnly = true
		case "format":
			userFormat = true
		case "nocapture", "show-output":
			p.Verbose = true
		}
	}
	for _, a := range operands(la) {
		p.narrow("argv test name filter %s", quoteArg(a))
	}
	if _, ok := envValue(env, "RUSTC_BOOTSTRAP"); ok {
		nightly = true
	}
	if !nightly {
		if b, ok := project.read(path.Join(project.dir(), "rust-toolchain.toml")); ok && strings.Contains(string(b), "nightly") {
			nightly = true
		} else if b, ok := project.read(path.Join(project.dir(), "rust-toolchain")); ok && strings.Contains(string(b), "nightly") {
			nightly = true
		}
	}
	switch {
	case userFormat:
		p.NoReport = "the command chooses libtest's --format itself"
	case !nightly:
		p.NoReport = "cargo test on a stable toolchain writes no structured report (libtest's JSON needs -Z unstable-options: a nightly toolchain or RUSTC_BOOTSTRAP=1)"
	default:
		p.Format = FormatLibtestJSON
		p.inst = func(argv []string, _ string) (Instrumented, error) {
			if !slices.Contains(argv[testAt+1:], "--") {
				argv = append(argv, "--")
			}
			return Instrumented{Argv: append(argv, "-Z", "unstable-options", "--format", "json"), ReportOnStdout: true, Render: true}, nil
		}
	}
	return true
}

// cargoWorkspace reports whether the project's Cargo.toml declares a
// workspace (so -p selects part of it). Without files it answers true.
func cargoWorkspace(project Project) bool {
	if project.FS == nil {
		return true
	}
	for d := project.dir(); ; d = path.Dir(d) {
		if b, ok := project.read(path.Join(d, "Cargo.toml")); ok && strings.Contains(string(b), "[workspace]") {
			return true
		}
		if d == "." || d == "/" || strings.HasPrefix(d, "..") {
			return false
		}
	}
}
