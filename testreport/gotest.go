package testreport

import (
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/shell"
)

// goRunAll are -run values that select every test.
var goRunAll = []string{"", ".", ".*", "^.*$", "^.*"}

// goFlag applies one go test flag (from argv, GOFLAGS or -args), parsed
// with go test's grammar, to the plan.
func goFlag(p *Plan, where string, o shell.ParsedOption) {
	name := strings.TrimPrefix(o.Name, "test.")
	val := o.Value.Value
	switch name {
	case "run":
		if !slices.Contains(goRunAll, val) {
			p.narrow("%s -run %s", where, quoteArg(val))
		}
	case "skip":
		if val != "" {
			p.narrow("%s -skip %s", where, quoteArg(val))
		}
	case "short":
		if flagOn(o) {
			p.narrow("%s -short", where)
		}
	case "list":
		p.ListOnly = true
	case "c", "n":
		if flagOn(o) {
			p.ListOnly = true
		}
	case "v", "json":
		if flagOn(o) {
			p.Verbose = true // -json: the agent sees the JSON stream as it asked
		}
	}
}

func planGo(p *Plan, argv, env []string, project Project) bool {
	i := 1
	dir := project.dir()
	for i < len(argv) && strings.HasPrefix(argv[i], "-") {
		name, val, hasVal := flagName(argv[i])
		if name != "C" {
			return false // go's only flag before the subcommand is -C
		}
		if !hasVal {
			if i+1 >= len(argv) {
				return false
			}
			i++
			val = argv[i]
		}
		dir = path.Join(dir, val)
		i++
	}
	if i >= len(argv) || argv[i] != "test" {
		return false
	}
	p.Runner, p.Format = GoTest, FormatGoJSON
	testAt := i
	userJSON := false
	args := parseArgs("go test", argv[testAt+1:])
	for _, o := range args.Options {
		if !o.Known {
			// go test passes a flag it does not know to the test binary,
			// whose own flags may select tests.
			p.unknownOption("argv", o)
			continue
		}
		if o.Name == "json" && flagOn(o) {
			userJSON = true
		}
		goFlag(p, "argv", o)
	}
	if len(args.Passed) > 0 {
		passed := make([]string, len(args.Passed))
		for k, a := range args.Passed {
			passed[k] = a.Value
		}
		bin := parseArgs("go test -args", passed)
		for _, o := range bin.Options {
			if !o.Known {
				p.unknownOption("argv -args", o)
				continue
			}
			goFlag(p, "argv -args", o)
		}
		for _, a := range operands(bin) {
			p.narrow("argv -args %s (an argument the test binary reads itself; it may select tests)", quoteArg(a))
		}
	}
	if gf, ok := envValue(env, "GOFLAGS"); ok {
		for _, o := range parseArgs("go test", splitShellWords(gf)).Options {
			if !o.Known {
				p.unknownOption("GOFLAGS", o)
				continue
			}
			goFlag(p, "GOFLAGS", o)
		}
	}
	goPackages(p, operands(args), dir, project)
	p.inst = func(argv []string, _ string) (Instrumented, error) {
		if userJSON {
			return Instrumented{Argv: argv, ReportOnStdout: true}, nil
		}
		out := append(slices.Clone(argv[:testAt+1]), "-json")
		out = append(out, argv[testAt+1:]...)
		return Instrumented{Argv: out, ReportOnStdout: true, Render: true}, nil
	}
	return true
}

// goPackages decides whether the package patterns cover the whole module.
func goPackages(p *Plan, pkgs []string, dir string, project Project) {
	modRoot, modPath := goModule(project, dir)
	for _, pk := range pkgs {
		if strings.HasSuffix(pk, ".go") {
			p.narrow("argv names single files (%s)", pk)
			return
		}
	}
	if len(pkgs) == 0 {
		if modRoot != "" && dir == modRoot && !goOtherTestDirs(project, modRoot) {
			return // the module's only package with tests
		}
		p.narrow("no package pattern: only the package in %s", displayDir(dir))
		return
	}
	for _, pk := range pkgs {
		if pk == "all" {
			return
		}
		base, ok := strings.CutSuffix(pk, "/...")
		if !ok && pk == "..." {
			base, ok = ".", true
		}
		if !ok {
			continue
		}
		if modPath != "" && base == modPath {
			return
		}
		if modRoot != "" && (strings.HasPrefix(base, ".") || base == "") && path.Join(dir, base) == modRoot {
			return
		}
		if modRoot == "" && base == "." && dir == "." {
			return // no go.mod known: ./... from the project root
		}
	}
	p.narrow("package subset %s (the module is %s/...)", strings.Join(pkgs, " "), displayDir(modRootOr(modRoot, dir)))
}

func modRootOr(root, dir string) string {
	if root != "" {
		return root
	}
	return dir
}

func displayDir(d string) string {
	if d == "." || d == "" {
		return "."
	}
	return "./" + d
}

// goModule finds the go.mod governing dir: its directory and module path.
func goModule(project Project, dir string) (root, modPath string) {
	for d := dir; ; d = path.Dir(d) {
		if b, ok := project.read(path.Join(d, "go.mod")); ok {
			for _, line := range strings.Split(string(b), "\n") {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module"); ok {
					modPath = strings.Trim(strings.TrimSpace(rest), `"`)
					break
				}
			}
			return d, modPath
		}
		if d == "." || d == "/" || strings.HasPrefix(d, "..") {
			return "", ""
		}
	}
}

// goOtherTestDirs reports whether the module at root has _test.go files in
// a directory other than root (not in vendor, testdata, hidden or _
// directories, nor nested modules). Without files it answers true.
func goOtherTestDirs(project Project, root string) bool {
	if project.FS == nil {
		return true
	}
	found, seen := false, 0
	_ = fs.WalkDir(project.FS, root, func(name string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return fs.SkipDir
		}
		if seen++; seen > 20000 {
			found = true // too big to tell: assume there are
			return fs.SkipAll
		}
		if d.IsDir() {
			if name == root {
				return nil
			}
			b := path.Base(name)
			if b == "vendor" || b == "testdata" || strings.HasPrefix(b, ".") || strings.HasPrefix(b, "_") {
				return fs.SkipDir
			}
			if _, err := fs.Stat(project.FS, path.Join(name, "go.mod")); err == nil {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, "_test.go") && path.Dir(name) != root {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found
}
