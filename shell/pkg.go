package shell

import (
	"path"
	"strings"
)

// This file covers package managers, build tools and test runners.

// standaloneRunners are programs that only run tests.
var standaloneRunners = map[string]bool{
	"ava": true, "bats": true, "behave": true, "busted": true, "ctest": true, "jasmine": true, "jest": true,
	"karma": true, "mocha": true, "nosetests": true, "nox": true, "pest": true, "phpunit": true, "prove": true,
	"py.test": true, "pytest": true, "rspec": true, "tox": true, "vitest": true,
}

// verbRunners are programs whose subcommand "test" runs tests.
var verbRunners = map[string]bool{
	"bazel": true, "bun": true, "dotnet": true, "deno": true, "go": true, "just": true, "lein": true,
	"meson": true, "mix": true, "ninja": true, "pnpm": true, "rake": true, "sbt": true, "swift": true, "yarn": true,
}

// testRunnerNames are the program names IsTestRunner may accept.
var testRunnerNames = map[string]bool{
	"python": true, "pypy": true, "cargo": true, "npm": true, "pnpm": true, "yarn": true, "bun": true,
	"node": true, "make": true, "gmake": true, "mvn": true, "mvnw": true, "gradle": true, "gradlew": true,
	"npx": true, "bunx": true, "pnpx": true, "uv": true, "poetry": true, "pipenv": true, "pdm": true,
	"hatch": true, "bundle": true, "php": true,
}

func init() {
	for n := range standaloneRunners {
		testRunnerNames[n] = true
	}
	for n := range verbRunners {
		testRunnerNames[n] = true
	}
}

// runnerValueOpts are global options of runners that take a value before
// the subcommand (go -C dir test, npm --prefix dir test).
var runnerValueOpts = map[string][]string{
	"go":   {"-C"},
	"npm":  {"--prefix", "-w", "--workspace"},
	"pnpm": {"-C", "--dir", "--filter", "-F"},
	"yarn": {"--cwd"},
	"bun":  {"--cwd"},
	"deno": {"--config", "-c"},
}

// IsTestRunner reports whether argv (already unwrapped, literal words)
// runs a known test runner: pytest, python -m pytest, go test, cargo test,
// npm test, npm run test, yarn test, pnpm test, jest, vitest, mocha, rspec,
// phpunit, make test, tox, nox, ctest, mvn test, gradle test, dotnet test,
// bun test, deno test, node --test, npx/bunx RUNNER, uv/poetry/pipenv/pdm run
// RUNNER, bundle exec RUNNER and similar.
func IsTestRunner(argv []string) bool {
	return isTestRunner(argv, 0)
}

func isTestRunner(argv []string, depth int) bool {
	if len(argv) == 0 || depth > 4 {
		return false
	}
	ws := make([]word, len(argv))
	for i, a := range argv {
		ws[i] = word{val: a, lit: true}
	}
	return runnerParts(ws, depth) != nil
}

// trustedRunner reports whether a runner's program path may be trusted to
// be the runner: a system path, or a project's wrapper and local bins
// (./gradlew, ./mvnw, node_modules/.bin/jest, vendor/bin/phpunit).
func trustedRunner(p string) bool {
	name, trusted := progName(p)
	if trusted {
		return true
	}
	dir := path.Dir(p)
	switch {
	case name == "gradlew" || name == "mvnw":
		return true
	case strings.HasSuffix(dir, "node_modules/.bin") || strings.HasSuffix(dir, "vendor/bin"):
		return true
	}
	return false
}

// makeTargetsTest reports whether make's operands name only test targets
// (VAR=value overrides aside).
func makeTargetsTest(args []word) bool {
	p := grammars()["make"].parse(args)
	targets := 0
	for _, o := range p.Operands {
		if !o.Literal {
			return false
		}
		t := o.Value
		if strings.Contains(t, "=") {
			continue
		}
		if t != "test" && t != "tests" && t != "check" && t != "unittest" && !strings.HasPrefix(t, "test-") && !strings.HasPrefix(t, "test_") {
			return false
		}
		targets++
	}
	return targets > 0 && !p.Has("n", "q", "v", "h")
}

// mavenGoalsTest reports whether mvn's goals run tests (and only build
// phases up to them).
func mavenGoalsTest(args []word) bool {
	p := grammars()["mvn"].parse(args)
	test := false
	for _, o := range p.Operands {
		if !o.Literal {
			return false
		}
		switch o.Value {
		case "test", "verify", "surefire:test":
			test = true
		case "clean", "compile", "test-compile", "validate", "process-test-classes", "process-test-resources":
		default:
			return false
		}
	}
	return test && !p.Has("v", "h")
}

// gradleTasksTest reports whether gradle's tasks run tests.
func gradleTasksTest(args []word) bool {
	p := grammars()["gradle"].parse(args)
	test := false
	for _, o := range p.Operands {
		if !o.Literal {
			return false
		}
		switch t := o.Value; {
		case t == "test" || t == "check" || strings.HasSuffix(t, ":test") || strings.HasSuffix(t, ":check"):
			test = true
		case t == "clean" || strings.HasSuffix(t, ":clean"):
		default:
			return false
		}
	}
	return test && !p.Has("v", "h")
}

// dropOpts drops leading options.
func dropOpts(args []string) []string {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		args = args[1:]
	}
	return args
}

// testRunnerExec reports flags that make a test runner run other programs.
func testRunnerExec(argv []string) bool {
	has := func(n string) bool {
		for _, a := range argv {
			if a == n || strings.HasSuffix(a, "/"+n) {
				return true
			}
		}
		return false
	}
	pytest, jest := has("pytest"), has("jest") || has("vitest")
	make := len(argv) > 0 && (argv[0] == "make" || argv[0] == "gmake")
	for i, a := range argv {
		if a == "--" {
			break
		}
		if (argv[0] == "python" || argv[0] == "python3" || argv[0] == "pypy") && i < 3 && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'i') {
			return true // python -i: an interactive prompt after the run reads code
		}
		if strings.HasPrefix(a, "-DargLine") || strings.HasPrefix(a, "-Dmaven.surefire.debug") || strings.HasPrefix(a, "-Dexec.") || a == "--scan" {
			return true // surefire's JVM arguments (-javaagent), build scans uploaded
		}
		if a == "-exec" || a == "-toolexec" || strings.HasPrefix(a, "-exec=") || strings.HasPrefix(a, "-toolexec=") ||
			strings.HasPrefix(a, "--config") || (a == "-p" && pytest && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "no:")) {
			return true
		}
		for _, o := range runnerCodeOpts {
			if a == o || strings.HasPrefix(a, o+"=") {
				return true
			}
		}
		switch {
		case pytest && (strings.HasPrefix(a, "-p") && a != "-p" && !strings.HasPrefix(a, "-pno:") || // -pPLUGIN
			strings.HasPrefix(a, "-o") || a == "-c" || strings.HasPrefix(a, "--basetemp")): // ini overrides (addopts=-pX), config files; basetemp is removed
			return true
		case jest && a == "-c":
			return true
		case argv[0] == "npx" && (a == "-c" || a == "-p" || strings.HasPrefix(a, "--package") || strings.HasPrefix(a, "--call")):
			return true
		case make && (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "fE") || strings.Contains(a, "=")):
			return true // another makefile, --eval, variable overrides (SHELL=, recipe variables)
		case strings.HasPrefix(a, "-ldflags") && strings.Contains(a, "extld") || a == "-ldflags" && i+1 < len(argv) && strings.Contains(argv[i+1], "extld"):
			return true // go's external linker is any program
		}
	}
	return false
}

// runnerCodeOpts are test-runner options that name a program, module or
// script to run (besides the project's tests).
var runnerCodeOpts = []string{
	"-vettool", "--vettool", "--pdbcls", "--override-ini", "--setupFiles", "--setupFilesAfterEnv", "--globalSetup",
	"--globalTeardown", "--testEnvironment", "--transform", "--preset", "--resolver", "--runner", "--testRunner",
	"--reporters", "--snapshotResolver", "--preload", "--require", "--bootstrap", "--script-shell", "--node-options",
	"--userconfig", "--globalconfig", "--eval", "--file", "--makefile", "--test-command", "--build-and-test",
	"--script", "--loader", "--import", "--experimental-loader", "--init-script", "--override",
}

// pkgKind is what a package-manager verb does.
type pkgKind uint8

const (
	kExec    pkgKind = iota // anything unknown: runs scripts
	kInstall                // installs/removes packages: package-install, network, write
	kRead                   // lists, shows
	kRunner                 // runs a program: a test runner is test, anything else exec
)

var pkgVerbs = map[string]map[string]pkgKind{
	"npm": {"install": kInstall, "i": kInstall, "in": kInstall, "ins": kInstall, "add": kInstall, "ci": kInstall,
		"update": kInstall, "up": kInstall, "upgrade": kInstall, "uninstall": kInstall, "un": kInstall,
		"remove": kInstall, "rm": kInstall, "r": kInstall, "unlink": kInstall, "link": kInstall, "dedupe": kInstall,
		"prune": kInstall, "ls": kRead, "list": kRead, "view": kRead, "info": kRead, "show": kRead, "outdated": kRead,
		"help": kRead, "--version": kRead, "-v": kRead, "exec": kRunner, "x": kRunner, "why": kRead, "explain": kRead},
	"pnpm": {"install": kInstall, "i": kInstall, "add": kInstall, "update": kInstall, "up": kInstall,
		"remove": kInstall, "rm": kInstall, "un": kInstall, "uninstall": kInstall, "link": kInstall,
		"ls": kRead, "list": kRead, "outdated": kRead, "why": kRead, "--version": kRead, "-v": kRead,
		"exec": kRunner, "dlx": kRunner},
	"yarn": {"": kInstall, "install": kInstall, "add": kInstall, "remove": kInstall, "upgrade": kInstall, "up": kInstall,
		"list": kRead, "info": kRead, "why": kRead, "--version": kRead, "-v": kRead, "dlx": kRunner, "exec": kRunner},
	"pip": {"install": kInstall, "uninstall": kInstall, "download": kInstall, "wheel": kInstall, "index": kInstall,
		"list": kRead, "show": kRead, "freeze": kRead, "check": kRead, "--version": kRead, "-V": kRead, "help": kRead},
	"pipx":       {"install": kInstall, "upgrade": kInstall, "uninstall": kInstall, "inject": kInstall, "list": kRead},
	"uv":         {"add": kInstall, "remove": kInstall, "sync": kInstall, "lock": kInstall, "venv": kInstall, "pip": kInstall, "tool": kInstall, "python": kInstall, "run": kRunner, "--version": kRead, "version": kRead, "tree": kRead},
	"poetry":     {"install": kInstall, "add": kInstall, "remove": kInstall, "update": kInstall, "lock": kInstall, "sync": kInstall, "run": kRunner, "show": kRead, "check": kRead, "--version": kRead},
	"pipenv":     {"install": kInstall, "uninstall": kInstall, "update": kInstall, "sync": kInstall, "lock": kInstall, "run": kRunner, "graph": kRead},
	"pdm":        {"add": kInstall, "install": kInstall, "remove": kInstall, "update": kInstall, "sync": kInstall, "lock": kInstall, "run": kRunner, "list": kRead},
	"conda":      {"install": kInstall, "create": kInstall, "remove": kInstall, "update": kInstall, "uninstall": kInstall, "env": kInstall, "list": kRead, "info": kRead},
	"gem":        {"install": kInstall, "update": kInstall, "uninstall": kInstall, "list": kRead, "search": kRead},
	"bundle":     {"install": kInstall, "update": kInstall, "add": kInstall, "remove": kInstall, "exec": kRunner, "list": kRead, "check": kRead},
	"composer":   {"install": kInstall, "require": kInstall, "update": kInstall, "remove": kInstall, "show": kRead, "validate": kRead},
	"sys":        {"install": kInstall, "add": kInstall, "remove": kInstall, "purge": kInstall, "autoremove": kInstall, "upgrade": kInstall, "update": kInstall, "dist-upgrade": kInstall, "full-upgrade": kInstall, "reinstall": kInstall, "erase": kInstall, "uninstall": kInstall, "del": kInstall, "tap": kInstall, "untap": kInstall, "cleanup": kInstall, "link": kInstall, "unlink": kInstall, "list": kRead, "search": kRead, "show": kRead, "info": kRead, "policy": kRead, "--version": kRead, "doctor": kRead, "config": kRead, "outdated": kRead, "deps": kRead},
	"mamba":      nil,
	"micromamba": nil,
}

func pkgVerb(x *cmdCtx, table string, valueOpts []string) {
	verbs := pkgVerbs[table]
	if verbs == nil {
		verbs = pkgVerbs["conda"]
	}
	args := x.rest()
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			x.add(ClassExec | ClassUnknown)
			return
		}
		if _, ok := verbs[a.val]; ok {
			break
		}
		if !strings.HasPrefix(a.val, "-") {
			break
		}
		if contains(valueOpts, a.val) {
			i++
		}
	}
	verb := ""
	if i < len(args) {
		verb = args[i].val
	}
	x.c.Subcommand = verb
	kind, ok := verbs[verb]
	if !ok {
		x.add(ClassExec) // runs a package script or an unknown verb
		return
	}
	if table == "pip" {
		pipLike(x, literal(args[i:]))
		return
	}
	if table == "gem" {
		local := verb == "list"
		for _, a := range literal(args) {
			if a == "-s" || strings.HasPrefix(a, "--source") || a == "--clear-sources" || strings.HasPrefix(a, "--http-proxy") || a == "-p" {
				x.add(ClassNetwork) // a gem server of the caller's choosing
			}
			switch a {
			case "-r", "--remote", "-b", "--both":
				local = false
			case "-l", "--local":
				local = true
			}
		}
		if !local {
			x.add(ClassNetwork) // gem search asks the gem server unless --local
		}
	}
	if table == "composer" && verb == "show" {
		for _, a := range literal(args[i+1:]) {
			switch a {
			case "-a", "--all", "-l", "--latest", "-o", "--outdated", "--available":
				x.add(ClassNetwork) // asks the repositories
			}
		}
	}
	switch kind {
	case kInstall:
		x.add(ClassPackageInstall | ClassNetwork | ClassWrite)
	case kRead:
		x.add(ClassRead)
	case kRunner:
		inner := dropOpts(literal(args[i+1:]))
		if IsTestRunner(inner) {
			x.add(ClassTest)
			return
		}
		x.add(ClassExec)
	default:
		x.add(ClassExec)
	}
}

// pipHostOpts are pip options that pick the index or a proxy.
var pipHostOpts = []string{"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "--proxy",
	"--index", "--default-index", "--cert", "--client-cert", "--keyring-provider"}

// pipLike classifies pip's verbs (args start at the verb).
func pipLike(x *cmdCtx, args []string) {
	if len(args) == 0 {
		x.add(ClassExec)
		return
	}
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if contains(pipHostOpts, name) || strings.HasPrefix(a, "-i") && len(a) > 2 && !strings.HasPrefix(a, "--") ||
			strings.HasPrefix(a, "--ind") || strings.HasPrefix(a, "--extra-") || strings.HasPrefix(a, "--find-") {
			x.add(ClassNetwork) // an index of the caller's choosing
		}
		if a == "-o" || a == "--outdated" || a == "-u" || a == "--uptodate" {
			x.add(ClassNetwork) // queries the index
		}
		if a == "--config-file" || strings.HasPrefix(a, "--config-file=") {
			x.add(ClassExec)
		}
	}
	switch args[0] {
	case "index", "search":
		x.add(ClassNetwork | ClassRead)
		return
	case "list", "show", "freeze", "check", "help", "--version":
		x.add(ClassRead)
	case "install", "uninstall", "download", "wheel":
		x.add(ClassPackageInstall | ClassNetwork | ClassWrite)
	default:
		x.add(ClassExec)
	}
}

func progNpm(x *cmdCtx) {
	_, p := x.gopt("npm")
	for _, o := range p.Options {
		if n := strings.ToLower(o.Name); strings.HasSuffix(n, "registry") || strings.Contains(n, ":registry") {
			x.add(ClassNetwork) // a scoped registry (--@scope:registry=URL) of the caller's choosing
		}
	}
	ops := p.ops()
	if len(ops) > 0 && ops[0].lit {
		switch ops[0].val {
		case "run", "run-script", "rum", "urn":
			if len(ops) > 1 && ops[1].lit && ops[1].val == "env" {
				x.w.a.DumpsEnv = true // npm's built-in env script
			}
			if len(ops) == 1 {
				x.c.Subcommand = ops[0].val
				x.add(ClassRead) // lists the scripts
				return
			}
		case "config", "c":
			if len(ops) > 1 && ops[1].lit {
				switch ops[1].val {
				case "get", "list", "ls":
					x.c.Subcommand = ops[0].val
					x.add(ClassRead)
					return
				case "set", "delete", "edit", "fix":
					x.c.Subcommand = ops[0].val
					x.add(ClassWrite | ClassExec) // .npmrc can name programs (script-shell, git, node-options)
					x.writeDyn(".npmrc")
					return
				}
			}
		case "view", "info", "show", "v", "outdated", "search", "s", "se", "find", "audit", "ping", "dist-tag", "owner":
			for _, o := range ops[1:] {
				if pkgSpecNamesHost(o) {
					x.add(ClassNetwork) // a package fetched from a host of the caller's choosing
				}
			}
			if ops[0].val == "ping" || ops[0].val == "audit" && len(ops) > 1 && ops[1].lit && ops[1].val == "fix" {
				x.add(ClassNetwork)
			}
		}
	}
	pkgVerb(x, x.c.Program, []string{"--prefix", "-C", "--dir", "--filter", "-w", "--workspace", "--cwd"})
}

// pkgSpecNamesHost reports whether a package spec names where to fetch it
// from: a URL, a git or hosted-git spec, a GitHub user/repo shorthand.
func pkgSpecNamesHost(o word) bool {
	if !o.lit {
		return true
	}
	v := o.val
	for _, pre := range []string{"git+", "git:", "github:", "gitlab:", "bitbucket:", "gist:", "http:", "https:", "ssh:", "npm:"} {
		if strings.HasPrefix(v, pre) {
			return true
		}
	}
	return strings.Contains(v, "://") || !strings.HasPrefix(v, "@") && !strings.HasPrefix(v, ".") &&
		!strings.HasPrefix(v, "/") && strings.Contains(v, "/")
}

func progLangPkg(x *cmdCtx) {
	name := lookupName(x.c.Program)
	pkgVerb(x, name, []string{"--directory", "-d", "--project", "-C", "--python", "-p", "--index-url", "-i",
		"--prefix", "-n", "--name", "--gemfile", "--working-dir"})
}

func progSysPkg(x *cmdCtx) {
	args := literal(x.rest())
	if x.c.Program == "pacman" && len(args) > 0 {
		a := args[0]
		switch {
		case strings.HasPrefix(a, "-Q") || a == "-V" || a == "--version" || strings.HasPrefix(a, "-Ss") || strings.HasPrefix(a, "-Si"):
			x.add(ClassRead)
		default:
			x.add(ClassPackageInstall | ClassNetwork | ClassWrite)
		}
		return
	}
	pkgVerb(x, "sys", []string{"-o", "-c", "-t", "--option", "--config-file", "--target-release", "--root", "-R", "--installroot"})
	switch x.c.Program + " " + x.c.Subcommand {
	case "brew search", "snap find", "snap info", "flatpak remote-ls", "flatpak remote-info":
		x.add(ClassNetwork) // asks the package server
	}
}

func progCargo(x *cmdCtx) {
	args := x.rest()
	for _, a := range literal(args) {
		if a == "--config" || strings.HasPrefix(a, "--config=") || a == "-Z" || strings.HasPrefix(a, "-Z") && len(a) > 2 {
			x.add(ClassExec) // configuration can name programs (build.rustc-wrapper, linkers, registries)
		}
		if a == "--" {
			break
		}
	}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			x.add(ClassExec | ClassUnknown)
			return
		}
		v := a.val
		if strings.HasPrefix(v, "+") {
			continue
		}
		if !strings.HasPrefix(v, "-") {
			break
		}
		if v == "--config" || strings.HasPrefix(v, "--config=") {
			x.add(ClassExec)
		}
		if v == "--config" || v == "-Z" || v == "--manifest-path" || v == "-C" || v == "--color" {
			i++
		}
		if v == "--version" || v == "-V" || v == "--list" {
			x.add(ClassRead)
			return
		}
	}
	if i >= len(args) {
		x.add(ClassRead)
		return
	}
	sub := args[i].val
	x.c.Subcommand = sub
	switch sub {
	case "install", "add", "remove", "rm", "update", "fetch", "uninstall", "generate-lockfile", "vendor":
		x.add(ClassPackageInstall | ClassNetwork | ClassWrite)
	case "fmt":
		if contains(literal(args[i+1:]), "--check") {
			x.add(ClassRead)
		} else {
			x.add(ClassModify)
			x.writeDyn("cargo fmt")
		}
	case "search", "info":
		x.add(ClassNetwork | ClassRead) // queries a registry
	case "tree", "metadata", "version", "locate-project", "pkgid", "verify-project", "read-manifest", "help":
		x.add(ClassRead)
	case "clean":
		x.add(ClassDelete)
		x.writeDyn("target/")
	case "new", "init":
		x.add(ClassWrite)
		x.writeDyn("new crate")
	case "publish", "login", "owner", "yank":
		x.add(ClassNetwork | ClassExec)
	default: // build, check, clippy, run, bench, doc: build scripts and code run
		x.add(ClassExec)
	}
}

func progGo(x *cmdCtx) {
	args := x.rest()
	for len(args) > 1 && args[0].lit && args[0].val == "-C" {
		args = args[2:] // go -C dir ...
	}
	if len(args) == 0 {
		x.add(ClassRead)
		return
	}
	if !args[0].lit {
		x.add(ClassExec | ClassUnknown) // any subcommand
		return
	}
	sub := args[0].val
	x.c.Subcommand = sub
	rest := args[1:]
	lit := literal(rest)
	parse := func(name string) *ParsedArgs {
		g := grammars()[name]
		p := g.parse(rest)
		x.applyOptions(g, p)
		for _, o := range p.ops() {
			if o.lit && strings.Contains(o.val, "@") && !strings.HasPrefix(o.val, "@") {
				x.add(ClassNetwork) // a module at a version: fetched from its host or a proxy
			}
		}
		return p
	}
	switch sub {
	case "get", "install":
		x.add(ClassPackageInstall | ClassNetwork | ClassWrite)
		parse("go install")
	case "mod":
		m := ""
		if len(lit) > 0 {
			m = lit[0]
		}
		switch m {
		case "graph", "why", "verify", "help":
			x.add(ClassRead)
		case "download", "tidy", "vendor":
			x.add(ClassPackageInstall | ClassNetwork | ClassWrite)
		default:
			x.add(ClassWrite)
			x.writeDyn("go.mod")
		}
	case "vet":
		x.add(ClassTest)
		parse("go vet")
	case "build":
		x.add(ClassWrite)
		p := parse("go build")
		if !p.Has("o") {
			x.writeDyn("go build output")
		}
	case "fmt":
		x.add(ClassModify)
		x.writeDyn("go fmt")
	case "env":
		if contains(lit, "-w") || contains(lit, "-u") {
			x.add(ClassWrite)
			x.writeDyn("go env file")
		} else {
			x.add(ClassRead)
			if len(dropOpts(lit)) == 0 {
				x.w.a.DumpsEnv = true
			}
		}
		if len(lit) < len(rest) {
			x.add(ClassExec | ClassUnknown)
		}
	case "list":
		x.add(ClassRead)
		parse("go list")
	case "version", "doc", "help":
		x.add(ClassRead)
		if len(lit) < len(rest) {
			x.add(ClassExec | ClassUnknown)
		}
	case "clean":
		x.add(ClassDelete)
		x.writeDyn("go caches")
	case "work":
		x.add(ClassWrite)
		x.writeDyn("go.work")
	case "test":
		x.add(ClassTest) // reached through a dynamic word the runner check stops at
		x.runnerOptions()
	default: // run, generate, tool
		x.add(ClassExec)
	}
}

// progMake: make runs the makefile's recipes (exec); -n, -q, -v and -h
// only print. Its options are parsed with its grammar: -p prints the
// environment, -t touches targets, -f/-E/-I load other makefiles, -C
// outside the project runs another project's.
func progMake(x *cmdCtx) {
	_, p := x.gopt("make")
	for _, o := range p.Operands {
		if !o.Literal || strings.Contains(o.Value, "=") {
			if e, _ := checkSafeAssign(o.Value); e != 0 || !o.Literal {
				x.add(ClassExec)
			}
		}
	}
	if p.Has("n", "q", "v", "h") && x.c.Classes&ClassExec == 0 {
		x.add(ClassRead) // make -n still evaluates $(shell ...) in the project's makefile
		return
	}
	x.add(ClassExec)
}

func progBuildTool(x *cmdCtx) {
	ops := dropOpts(literal(x.rest()))
	if len(ops) > 0 {
		x.c.Subcommand = ops[0]
	}
	if x.c.Program == "dotnet" && len(ops) > 0 {
		switch ops[0] {
		case "restore":
			x.add(ClassPackageInstall | ClassNetwork | ClassWrite)
			return
		case "add", "remove":
			if len(ops) > 1 && ops[1] == "package" || len(ops) > 2 && ops[2] == "package" {
				x.add(ClassPackageInstall | ClassNetwork | ClassWrite)
				return
			}
		case "--version", "--info", "--list-sdks":
			x.add(ClassRead)
			return
		}
	}
	if contains(literal(x.rest()), "--version") || contains(literal(x.rest()), "-v") && x.c.Program == "mvn" {
		x.add(ClassRead)
		return
	}
	x.add(ClassExec)
}
