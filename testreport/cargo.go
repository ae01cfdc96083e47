package testreport

import (
	"path"
	"slices"
	"strings"
)

// cargoValueOpts are cargo test options whose value may be the next word.
var cargoValueOpts = map[string]bool{
	"-p": true, "--package": true, "--exclude": true, "--test": true, "--bench": true, "--bin": true,
	"--example": true, "-F": true, "--features": true, "--target": true, "--target-dir": true,
	"--manifest-path": true, "-j": true, "--jobs": true, "--profile": true, "--message-format": true,
	"--color": true, "--config": true, "-Z": true, "--lockfile-path": true, "--timings": false,
}

// libtestValueOpts are libtest (test binary) options that take a value.
var libtestValueOpts = map[string]bool{
	"--skip": true, "--test-threads": true, "--logfile": true, "--format": true, "--color": true,
	"-Z": true, "--shuffle-seed": true, "--report-time": false,
}

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
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if !strings.HasPrefix(a, "-") {
			p.narrow("argv test name filter %s", quoteArg(a))
			continue
		}
		opt, val, hasVal := strings.Cut(a, "=")
		if !hasVal && cargoValueOpts[opt] && j+1 < len(rest) {
			j++
			val = rest[j]
		}
		switch opt {
		case "-p", "--package":
			if cargoWorkspace(project) {
				p.narrow("argv %s %s (one package of the workspace)", opt, val)
			}
		case "--lib", "--bins", "--tests", "--examples", "--benches", "--doc":
			p.narrow("argv %s (only some targets)", opt)
		case "--bin", "--test", "--example", "--bench":
			p.narrow("argv %s %s (only some targets)", opt, val)
		case "--no-run", "--help", "-h":
			p.ListOnly = true
		case "-v", "--verbose":
			p.Verbose = true
		}
	}
	userFormat := false
	for j := 0; j < len(binArgs); j++ {
		a := binArgs[j]
		if !strings.HasPrefix(a, "-") {
			p.narrow("argv test name filter %s", quoteArg(a))
			continue
		}
		opt, val, hasVal := strings.Cut(a, "=")
		if !hasVal && libtestValueOpts[opt] && j+1 < len(binArgs) {
			j++
			val = binArgs[j]
		}
		switch opt {
		case "--skip":
			p.narrow("argv --skip %s", quoteArg(val))
		case "--ignored":
			p.narrow("argv --ignored (only the ignored tests)")
		case "--exact":
			// narrows only with a filter, which is reported itself
		case "--list", "--help", "-h":
			p.ListOnly = true
		case "--format":
			userFormat = true
		case "--nocapture", "--show-output":
			p.Verbose = true
		}
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
