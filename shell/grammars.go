package shell

import (
	"strings"
	"sync"
)

// This file holds the option grammars of programs whose options write
// files, delete them, run code or reach the network. Each grammar lists
// every option of the real program (the GNU ones are checked against the
// installed tool's --help in TestGrammarsKnowRealOptions), so that an
// option it does not know can be treated as running code.

// grammars returns the grammar table, built on first use.
var grammars = sync.OnceValue(grammarTable)

// GrammarFor returns the option grammar of a program or "program
// subcommand" ("sort", "go test", "pytest", "cargo test"), if there is one.
func GrammarFor(name string) (*Grammar, bool) {
	g, ok := grammars()[name]
	return g, ok
}

// ParseOptions parses args, the words after the program (and its
// subcommand), with the named program's grammar, as that program would:
// ParseOptions("go test", []string{"-run=X", "./..."}). All words are
// taken as literal. It reports false when there is no grammar for name.
func ParseOptions(program string, args []string) (*ParsedArgs, bool) {
	g, ok := GrammarFor(program)
	if !ok {
		return nil, false
	}
	ws := make([]word, len(args))
	for i, a := range args {
		ws[i] = word{val: a, lit: true}
	}
	return g.parse(ws), true
}

// Grammar names shared by several programs.
const (
	gJSRunner = "js test runner" // the union of the JavaScript runners' options (npm test -- ARGS)
)

// goBuildFlags are the build flags every go subcommand that builds takes.
var goBuildFlags = []string{
	"a", "n", "p=", "race", "msan", "asan", "cover", "covermode=", "coverpkg=", "v", "work", "x",
	"buildmode=", "buildvcs=", "compiler=", "gccgoflags= :x", "installsuffix=",
	"linkshared", "modcacherw", "modfile= :x", "overlay= :x", "pgo= :r", "pkgdir= :wd", "tags=",
	"trimpath", "toolexec= :x", "json", "debug-actiongraph= :w", "debug-runtime-trace= :w", "debug-trace= :w",
}

// goTestFlags are go test's own flags (each also spelled -test.NAME).
var goTestFlags = []string{
	"c", "o= :w", "exec= :x", "args :pass", "bench= :f", "benchmem", "benchtime=", "count=", "cpu=",
	"failfast", "fullpath", "fuzz= :f", "fuzzcachedir= :wd", "fuzzminimizetime=", "fuzztime=", "fuzzworker",
	"list= :f", "parallel=", "run= :f", "short :f", "shuffle=", "skip= :f", "timeout=", "vet=", "artifacts",
	"blockprofile= :w", "blockprofilerate=", "coverprofile= :w", "cpuprofile= :w", "memprofile= :w",
	"memprofilerate=", "mutexprofile= :w", "mutexprofilefraction=", "outputdir= :wd", "trace= :w",
	"testlogfile= :w", "paniconexit0", "gocoverdir= :wd",
}

// goVetAnalyzers are the analyzers of the default vet tool; each is a
// flag (-printf, -printf=false) and may have sub-flags (-printf.funcs).
var goVetAnalyzers = []string{
	"appends", "asmdecl", "assign", "atomic", "bools", "buildtag", "cgocall", "composites", "copylocks",
	"defers", "directive", "errorsas", "framepointer", "hostport", "httpresponse", "ifaceassert",
	"loopclosure", "lostcancel", "nilfunc", "printf", "shift", "sigchanyzer", "slog", "stdmethods",
	"stdversion", "stringintconv", "structtag", "testinggoroutine", "tests", "timeformat", "unmarshal",
	"unreachable", "unsafeptr", "unusedresult", "waitgroup", "shadow", "fieldalignment", "nilness",
}

func goGrammar(name string, extra ...string) *Grammar {
	entries := append(append([]string{}, goBuildFlags...), extra...)
	g := G(name, StyleGo, entries...)
	g.Opts = append(g.Opts, Opt{Names: []string{"ldflags"}, Arg: RequiredArg, Check: checkLdflags},
		Opt{Names: []string{"C"}, Arg: RequiredArg, Check: checkProjectDir},
		Opt{Names: []string{"gcflags"}, Arg: RequiredArg, Check: checkGcflags},
		Opt{Names: []string{"asmflags"}, Arg: RequiredArg, Check: func(v string) (Effect, string) {
			return checkToolFlags(v, map[string]bool{"trimpath": true, "shared": true, "dynlink": true, "D": true, "I": true, "p": true})
		}},
		Opt{Names: []string{"mod"}, Arg: RequiredArg, Check: func(v string) (Effect, string) {
			if v == "mod" {
				return EffWrite | EffNetwork, "go.mod" // may download modules and rewrite go.mod
			}
			return 0, ""
		}})
	return g
}

// goTestGrammar is go test's: build flags, test flags and -test.NAME
// spellings; go test lets flags and packages mix.
func goTestGrammar() *Grammar {
	var tf []string
	for _, f := range goTestFlags {
		tf = append(tf, f)
		name, rest, _ := strings.Cut(f, " ")
		tf = append(tf, "test."+name+" "+rest)
	}
	g := goGrammar("go test", tf...)
	g.Permute = true
	return g
}

// goTestBinaryGrammar parses what -args passes to the test binary: its
// -test.NAME flags (the test's own flags are the project's code, which the
// test class already runs).
func goTestBinaryGrammar() *Grammar {
	var tf []string
	for _, f := range goTestFlags {
		name, rest, _ := strings.Cut(f, " ")
		if name == "args" || name == "exec" || name == "c" || name == "o" {
			continue
		}
		tf = append(tf, "test."+name+" "+rest)
	}
	g := G("go test -args", StyleGo, tf...)
	g.Permute = true
	g.Lenient = true
	return g
}

// checkLdflags allows the linker flags that change nothing but the binary:
// -s, -w, -X, -buildid, -v, -race. -extld, -linkmode external with
// -extldflags, -I (the ELF interpreter), -tmpdir and the profile flags run
// programs or write files.
func checkLdflags(v string) (Effect, string) {
	return checkToolFlags(v, map[string]bool{"s": true, "w": true, "X": true, "buildid": true, "v": true,
		"race": true, "checklinkname": true, "strictdups": true, "compressdwarf": true, "linkmode=internal": true,
		"B": true, "bindnow": true})
}

// checkGcflags allows the compiler flags that only change diagnostics or
// code generation.
func checkGcflags(v string) (Effect, string) {
	return checkToolFlags(v, map[string]bool{"N": true, "l": true, "m": true, "S": true, "B": true, "C": true,
		"e": true, "h": true, "K": true, "L": true, "live": true, "race": true, "std": true, "spectre": true,
		"wb": true, "w": true, "lang": true, "trimpath": true, "d=checkptr": true, "d=checkptr=0": true,
		"d=checkptr=1": true, "d=checkptr=2": true, "json": false, "p": true, "complete": true, "smallframes": true,
		"c": true, "dwarf": true, "dwarflocationlists": true, "asan": true, "msan": true, "l=4": true, "l=0": true})
}

// checkToolFlags reads [pattern=]flags given to the compiler or linker:
// every flag must be on the safe list (a flag name alone, or name=value
// listed as such); anything else may run a program or write a file.
func checkToolFlags(v string, safe map[string]bool) (Effect, string) {
	fields := strings.Fields(strings.Trim(v, `"'`))
	if len(fields) > 0 && !strings.HasPrefix(fields[0], "-") {
		if _, rest, ok := strings.Cut(fields[0], "="); ok {
			fields[0] = rest // all=-N
		}
	}
	skipValue := false
	for _, f := range fields {
		if skipValue {
			skipValue = false
			continue
		}
		if f == "" {
			continue
		}
		if !strings.HasPrefix(f, "-") {
			return EffExec, ""
		}
		n := strings.TrimLeft(f, "-")
		name, _, eq := strings.Cut(n, "=")
		if safe[name] && !eq && (name == "X" || name == "lang" || name == "buildid" || name == "p" || name == "trimpath") {
			skipValue = true // its value is the next word
			continue
		}
		if safe[n] {
			continue
		}
		if safe[name] && (!eq || name == "m" || name == "lang" || name == "X" || name == "buildid" || name == "trimpath" || name == "p") {
			continue
		}
		return EffExec, ""
	}
	return 0, ""
}

// checkPytestOverride allows -o KEY=VALUE for ini keys that load no code
// and write nothing.
func checkPytestOverride(v string) (Effect, string) {
	k, val, _ := strings.Cut(v, "=")
	switch strings.TrimSpace(k) {
	case "console_output_style", "log_cli", "log_cli_level", "log_cli_format", "log_cli_date_format", "log_level",
		"junit_family", "junit_suite_name", "junit_logging", "junit_log_passing_tests", "junit_duration_report",
		"xfail_strict", "empty_parameter_set_mark", "verbosity_assertions", "verbosity_test_cases", "log_format",
		"log_date_format", "faulthandler_timeout", "python_functions", "python_classes", "python_files",
		"asyncio_mode", "asyncio_default_fixture_loop_scope", "timeout", "usefixtures", "markers", "minversion",
		"enable_assertion_pass_hook", "truncation_limit_lines", "truncation_limit_chars":
		return 0, ""
	case "cache_dir":
		return EffWriteDir, val
	case "log_file":
		return EffWrite, val
	}
	return EffExec, ""
}

// checkCovReport reads pytest-cov's --cov-report TYPE[:DEST].
func checkCovReport(v string) (Effect, string) {
	typ, dest, has := strings.Cut(v, ":")
	switch typ {
	case "term", "term-missing", "":
		return 0, ""
	case "html", "annotate":
		if !has || dest == "" {
			if typ == "html" {
				dest = "htmlcov"
			} else {
				dest = "."
			}
		}
		return EffWriteDir, dest
	case "xml", "json", "lcov", "markdown", "markdown-append":
		if !has || dest == "" {
			dest = "coverage." + typ
			if typ == "lcov" {
				dest = "coverage.lcov"
			}
		}
		return EffWrite, dest
	}
	return EffWrite | EffExec, ""
}

// checkPytestWarning allows -W filters whose category is a builtin
// warning; a dotted category imports its module.
func checkPytestWarning(v string) (Effect, string) {
	parts := strings.Split(v, ":")
	if len(parts) >= 3 && strings.Contains(parts[2], ".") {
		return EffExec, ""
	}
	return 0, ""
}

// checkJSReporter allows the runners' built-in reporters by name; a path
// or a package is code.
func checkJSReporter(v string) (Effect, string) {
	name, _, _ := strings.Cut(v, "=")
	switch name {
	case "default", "basic", "verbose", "dot", "json", "junit", "tap", "tap-flat", "hanging-process",
		"github-actions", "blob", "spec", "nyan", "landing", "list", "progress", "json-stream", "min", "doc",
		"markdown", "xunit", "summary", "lcov", "silent", "teamcity", "html", "null":
		return 0, ""
	}
	return EffExec, ""
}

// checkJSEnvironment allows the built-in test environments.
func checkJSEnvironment(v string) (Effect, string) {
	switch v {
	case "node", "jsdom", "happy-dom", "edge-runtime":
		return 0, ""
	}
	return EffExec, ""
}

// checkReporterOption reads mocha's --reporter-option K=V (xunit's
// output=FILE writes).
func checkReporterOption(v string) (Effect, string) {
	for _, kv := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(kv, "=")
		if k == "output" || k == "outputFile" || k == "mochaFile" {
			return EffWrite, val
		}
	}
	return 0, ""
}

// checkTarCheckpoint: --checkpoint-action=exec=CMD runs CMD.
func checkTarCheckpoint(v string) (Effect, string) {
	if strings.HasPrefix(v, "exec") || strings.Contains(v, "exec=") {
		return EffExec, ""
	}
	return 0, ""
}

// checkTarArchive: an archive named HOST:FILE is on another machine,
// reached through rsh (network, and the rsh command is a program).
func checkTarArchive(v string) (Effect, string) {
	if i := strings.IndexByte(v, ':'); i > 0 && !strings.Contains(v[:i], "/") {
		return EffNetwork | EffExec, ""
	}
	return EffRead, v
}

// checkCloc: --vcs=git|svn|auto are known; anything else is a command.
func checkCloc(v string) (Effect, string) {
	switch v {
	case "git", "svn", "auto":
		return 0, ""
	}
	return EffExec, ""
}

// jsRunnerEntries are options shared by the JavaScript test runners, as
// jest, vitest, mocha and node --test read them.
var jestEntries = []string{
	"c config= :x", "setupFiles= :x", "setupFilesAfterEnv= :x", "globalSetup= :x", "globalTeardown= :x",
	"testRunner= :x", "transform= :x", "resolver= :x", "snapshotResolver= :x", "preset= :x", "projects= :x",
	"testSequencer= :x", "watchPlugins= :x", "moduleNameMapper= :x", "modulePaths= :x", "moduleDirectories= :x",
	"runner= :x", "testResultsProcessor= :x", "dependencyExtractor= :x", "filter= :x",
	"outputFile= :w", "coverageDirectory= :wd", "cacheDirectory= :wd", "clearCache :d=.jest-cache",
	"u updateSnapshot :w", "ci", "t testNamePattern= :f", "testPathPattern= :f", "testPathPatterns= :f",
	"testPathIgnorePatterns= :f", "o onlyChanged :f", "changedSince= :f", "lastCommit :f", "findRelatedTests :f",
	"b bail?", "watch", "watchAll", "i runInBand", "w maxWorkers=", "silent", "verbose", "noStackTrace", "colors",
	"detectOpenHandles", "forceExit", "passWithNoTests", "listTests", "showConfig", "logHeapUsage", "injectGlobals",
	"shard=", "randomize", "seed=", "selectProjects= :f", "ignoreProjects= :f", "testTimeout=", "useStderr",
	"e expand", "errorOnDeprecated", "cache", "json", "coverageProvider=", "coverageReporters=",
	"coverageThreshold=", "collectCoverageFrom=", "coveragePathIgnorePatterns=", "notify", "notifyMode=",
	"openHandlesTimeout=", "workerThreads", "testMatch= :f", "testRegex= :f", "testLocationInResults",
	"maxConcurrency=", "v version", "h help", "debug", "haste=", "waitForUnhandledRejections",
	"workerIdleMemoryLimit=", "reporters= :x", "testEnvironmentOptions=", "globals=", "automock", "clearMocks",
	"resetMocks", "restoreMocks", "resetModules", "collectCoverageOnlyFrom=", "init :w=jest.config.js",
}

// node's own options (node --test, mocha passes them on).
var nodeEntries = []string{
	"test", "test-reporter= :x", "test-reporter-destination= :w", "test-name-pattern= :f", "test-skip-pattern= :f",
	"test-only :f", "test-concurrency=", "test-timeout=", "test-shard= :f", "experimental-test-coverage",
	"test-coverage-include=", "test-coverage-exclude=", "test-coverage-branches=", "test-coverage-functions=",
	"test-coverage-lines=", "experimental-test-snapshots", "test-update-snapshots :w", "experimental-test-module-mocks",
	"test-force-exit", "test-isolation=", "experimental-test-isolation=", "watch", "watch-path=", "watch-preserve-output",
	"r require= :x", "import= :x", "loader= :x", "experimental-loader= :x", "e eval= :x", "p print= :x", "i interactive :x",
	"c check", "v version", "h help", "env-file= :r", "env-file-if-exists= :r", "inspect? :n", "inspect-brk? :n",
	"inspect-wait? :n", "inspect-port= :n", "debug-port= :n", "cpu-prof :wd=.", "cpu-prof-dir= :wd", "cpu-prof-name= :w",
	"heap-prof :wd=.", "heap-prof-dir= :wd", "heap-prof-name= :w", "diagnostic-dir= :wd", "report-dir= :wd",
	"report-directory= :wd", "report-filename= :w", "report-on-signal", "report-uncaught-exception", "report-on-fatalerror",
	"redirect-warnings= :w", "openssl-config= :x", "openssl-shared-config", "openssl-legacy-provider", "icu-data-dir= :r",
	"experimental-policy= :x", "experimental-permission", "permission", "allow-fs-read=", "allow-fs-write=",
	"allow-child-process", "allow-worker", "allow-addons", "allow-wasi", "snapshot-blob= :x", "build-snapshot :x",
	"max-old-space-size=", "max-semi-space-size=", "stack-size=", "stack-trace-limit=", "enable-source-maps",
	"no-warnings", "no-deprecation", "throw-deprecation", "trace-deprecation", "trace-warnings", "pending-deprecation",
	"trace-uncaught", "trace-exit", "trace-sync-io", "unhandled-rejections=", "experimental-vm-modules",
	"experimental-strip-types", "experimental-transform-types", "experimental-detect-module", "experimental-require-module",
	"experimental-default-type=", "experimental-specifier-resolution=", "experimental-json-modules", "experimental-wasm-modules",
	"experimental-global-webcrypto", "experimental-fetch", "experimental-websocket", "experimental-sqlite",
	"experimental-network-imports :n", "C conditions=", "input-type=", "preserve-symlinks", "preserve-symlinks-main",
	"disable-warning=", "frozen-intrinsics", "no-experimental-fetch", "no-experimental-global-navigator",
	"dns-result-order=", "expose-gc", "title=", "tls-min-v1.2", "tls-max-v1.3", "use-openssl-ca", "use-bundled-ca",
	"zero-fill-buffers", "abort-on-uncaught-exception", "force-fips", "secure-heap=", "insecure-http-parser",
	"max-http-header-size=", "v8-options", "completion-bash", "prof :w=isolate.log", "prof-process", "trace-events-enabled",
	"trace-event-categories=", "trace-event-file-pattern= :w", "run= :x", "experimental-addon-modules",
	"watch-kill-signal=", "localstorage-file= :w", "experimental-webstorage",
}

// mochaEntries are mocha's options (it passes node's on to node).
var mochaEntries = []string{
	"r require= :x", "config= :x", "package= :x", "opts= :x", "R reporter= :x", "O reporter-option= reporter-options=",
	"u ui=", "file= ", "extension=", "spec=", "ignore= exclude=", "recursive", "w watch", "watch-files=", "watch-ignore=",
	"g grep= :f", "f fgrep= :f", "i invert :f", "t timeout= timeouts=", "s slow=", "b bail", "exit", "p parallel",
	"j jobs=", "retries=", "forbid-only", "forbid-pending", "full-trace", "check-leaks", "S sort", "delay", "dry-run",
	"fail-zero", "c color colors", "A async-only", "allow-uncaught", "diff", "inline-diffs", "list-interfaces",
	"list-reporters", "n node-option= :x", "V version", "h help", "global= globals=", "enable-source-maps",
	"reporter-option",
}

// vitestEntries are vitest's options (cac, with dotted sub-options).
var vitestEntries = []string{
	"c config= :x", "w watch", "run", "u update :w", "t testNamePattern= :f", "silent",
	"reporter= :x", "outputFile= :w", "coverage :wd=coverage", "coverage.enabled :wd=coverage",
	"coverage.reportsDirectory= :wd", "coverage.provider=", "coverage.customProviderModule= :x",
	"coverage.include=", "coverage.exclude=", "coverage.all", "coverage.reporter=", "coverage.clean",
	"coverage.thresholds.lines=", "coverage.thresholds.branches=", "coverage.thresholds.functions=",
	"coverage.thresholds.statements=", "coverage.thresholds.100", "coverage.reportOnFailure", "ui :n", "api? :n",
	"open", "browser? :x", "browser.name= :x", "browser.headless", "browser.provider= :x", "poolOptions= :x",
	"environment= :x", "globals", "dom", "isolate", "no-isolate", "fileParallelism", "maxWorkers=", "minWorkers=",
	"testTimeout=", "hookTimeout=", "bail=", "retry=", "passWithNoTests", "allowOnly", "hideSkippedTests",
	"shard= :f", "changed? :f", "sequence.shuffle", "sequence.concurrent", "sequence.seed=", "project= :f",
	"typecheck", "typecheck.enabled", "typecheck.only", "logHeapUsage", "clearScreen", "dangerouslyIgnoreUnhandledErrors",
	"exclude= :f", "standalone", "expandSnapshotDiff", "diff= :x", "mode=", "workspace= :x", "inspect? :n",
	"inspect-brk? :n", "h help", "v version", "no-color", "printConsoleTrace", "includeTaskLocation", "disableConsoleIntercept",
	"clearCache :d=node_modules/.vitest", "cache", "no-cache", "related :f", "vmMemoryLimit=", "segfaultRetry=",
	"experimental",
}

// pytestEntries are pytest's options and those of its common plugins.
var pytestEntries = []string{
	// general
	"k= :f", "m= :f", "x exitfirst", "maxfail= :f", "strict-markers", "strict-config", "strict", "c config-file= :x",
	"continue-on-collection-errors", "rootdir=", "fixtures funcargs", "fixtures-per-test", "pdb :x", "pdbcls= :x",
	"trace :x", "capture=", "s", "runxfail", "lf last-failed :f", "ff failed-first", "nf new-first", "cache-show?",
	"cache-clear :d=.pytest_cache", "lfnf last-failed-no-failures=", "sw stepwise :f", "sw-skip stepwise-skip :f",
	"sw-reset stepwise-reset", "durations=", "durations-min=", "v verbose", "no-header", "no-summary", "no-fold-skipped",
	"force-short-summary", "q quiet", "verbosity=", "r=", "disable-warnings disable-pytest-warnings", "l showlocals",
	"no-showlocals", "tb=", "xfail-tb", "show-capture=", "full-trace", "color=", "code-highlight=", "pastebin= :n",
	"junit-xml= junitxml= :w", "junit-prefix=", "W pythonwarnings=", "override-ini=", "o=", "basetemp= :d", "V version",
	"h help", "trace-config", "debug? :w=pytestdebug.log", "assert=", "setup-only", "setup-show", "setup-plan",
	"collect-only co :f", "pyargs", "ignore= :f", "ignore-glob= :f", "deselect= :f", "confcutdir=", "noconftest",
	"keep-duplicates", "collect-in-virtualenv", "import-mode=", "doctest-modules", "doctest-report=", "doctest-glob=",
	"doctest-ignore-import-errors", "doctest-continue-on-failure", "log-level=", "log-format=", "log-date-format=",
	"log-cli-level=", "log-cli-format=", "log-cli-date-format=", "log-file= :w", "log-file-mode=", "log-file-level=",
	"log-file-format=", "log-file-date-format=", "log-auto-indent=", "log-disable=", "report-log= :w",
	"resultlog result-log= :w", "strict-markers", "runpytest=", "max-worker-restart=", "looponfail f",
	// pytest-xdist
	"n numprocesses=", "maxprocesses=", "dist=", "tx= :x", "rsyncdir= :n", "rsyncignore=", "boxed", "d",
	// pytest-cov
	"cov-report= :w", "cov-config= :x", "no-cov", "no-cov-on-fail", "cov-fail-under=",
	"cov-append", "cov-branch", "cov-context=", "cov-precision=", "cov-reset",
	// others
	"timeout=", "timeout-method=", "timeout_method=", "reruns=", "reruns-delay=", "only-rerun=", "rerun-except=",
	"randomly-seed=", "randomly-dont-reset-seed", "randomly-dont-reorganize", "html= :w", "self-contained-html",
	"css= :r", "json-report", "json-report-file= :w", "json-report-indent=", "json-report-omit=", "alluredir= :wd",
	"benchmark-json= :w", "benchmark-save= :w", "benchmark-autosave :wd=.benchmarks", "benchmark-storage= :wd",
	"benchmark-only", "benchmark-skip", "benchmark-disable", "benchmark-enable", "benchmark-min-rounds=",
	"benchmark-sort=", "benchmark-group-by=", "benchmark-columns=", "benchmark-histogram? :w", "benchmark-compare?",
	"hypothesis-profile=", "hypothesis-show-statistics", "hypothesis-seed=", "hypothesis-verbosity=",
	"asyncio-mode=", "ds= :x", "dc= :x", "reuse-db", "create-db", "nomigrations", "migrations", "forked",
	"mypy", "flake8", "black", "isort", "ruff", "ruff-format", "snapshot-update :w", "snapshot-warn-unused",
	"sugar", "instafail", "emoji", "picked=", "testmon", "typeguard-packages= :x", "env= :x", "envfile= :r",
	"playwright-browser browser=", "headed", "slowmo=", "base-url= :n", "tracing=", "video=", "screenshot=",
	"output= :wd",
}

// unionGrammar merges grammars: an option any of them knows has the union
// of its effects and the widest value kind. It parses the arguments of a
// runner that could be any of them.
func unionGrammar(name string, gs ...*Grammar) *Grammar {
	u := &Grammar{Name: name, Style: StyleJS, Permute: true}
	byName := map[string]int{}
	for _, g := range gs {
		g.index()
		seen := map[string]bool{}
		for n, o := range g.short {
			seen[string(n)] = true
			u.merge(byName, string(n), o)
		}
		for n, o := range g.long {
			if !seen[n] {
				u.merge(byName, n, o)
			}
		}
	}
	return u
}

// merge adds option o under name n, merging with an option of that name.
func (u *Grammar) merge(byName map[string]int, n string, o *Opt) {
	k := jsKey(n)
	idx, ok := byName[k]
	if !ok {
		u.Opts = append(u.Opts, Opt{Names: []string{n}, Arg: o.Arg, Eff: o.Eff, Default: o.Default, Check: o.Check})
		byName[k] = len(u.Opts) - 1
		return
	}
	m := &u.Opts[idx]
	m.Eff |= o.Eff
	if o.Arg > m.Arg {
		m.Arg = o.Arg
	}
	if m.Default == "" {
		m.Default = o.Default
	}
	if o.Check != nil {
		prev, c, eff := m.Check, o.Check, m.Eff
		m.Check = func(v string) (Effect, string) {
			e, p := c(v)
			if prev != nil {
				e2, p2 := prev(v)
				e |= e2
				if p == "" {
					p = p2
				}
			}
			return e | eff&^(EffWrite|EffWriteDir|EffRead|EffDelete) | eff&e, p
		}
	}
}

func abbrev(g *Grammar) *Grammar { g.Abbrev = true; return g }

func grammarTable() map[string]*Grammar {
	m := map[string]*Grammar{}
	add := func(g *Grammar, aliases ...string) {
		m[g.Name] = g
		for _, a := range aliases {
			m[a] = g
		}
	}

	// coreutils and friends
	add(G("sort", StyleGNU, "b ignore-leading-blanks", "d dictionary-order", "f ignore-case", "g general-numeric-sort",
		"i ignore-nonprinting", "M month-sort", "h human-numeric-sort", "n numeric-sort", "R random-sort",
		"random-source= :r", "r reverse", "sort=", "V version-sort", "batch-size=", "c check?", "C",
		"compress-program= :x", "debug", "files0-from= :r", "k key=", "m merge", "o output= :w", "s stable",
		"S buffer-size=", "t field-separator=", "T temporary-directory= :wd", "parallel=", "u unique",
		"z zero-terminated", "help", "version"))
	add(G("uniq", StyleGNU, "c count", "d repeated", "D all-repeated?", "f skip-fields=", "group?", "i ignore-case",
		"s skip-chars=", "u unique", "z zero-terminated", "w check-chars=", "help", "version").lenient())
	add(G("shuf", StyleGNU, "e echo", "i input-range=", "n head-count=", "o output= :w", "random-source= :r",
		"r repeat", "z zero-terminated", "help", "version"))
	add(G("sed", StyleGNU, "n quiet silent", "debug", "e expression=", "f file= :r", "follow-symlinks",
		"i in-place? :m", "l line-length=", "posix", "E r regexp-extended", "s separate", "sandbox", "u unbuffered",
		"z null-data zero-terminated", "help", "version"))
	add(G("tee", StyleGNU, "a append", "i ignore-interrupts", "p", "output-error?", "help", "version").lenient())
	add(G("split", StyleGNU, "a suffix-length=", "additional-suffix=", "b bytes=", "C line-bytes=", "d",
		"numeric-suffixes?", "x", "hex-suffixes?", "e elide-empty-files", "filter= :x", "l lines=", "n number=",
		"t separator=", "u unbuffered", "verbose", "help", "version"))
	add(G("date", StyleGNU, "d date=", "debug", "f file= :r", "I iso-8601?", "resolution", "R rfc-email",
		"rfc-3339=", "r reference= :r", "s set=", "u utc universal", "help", "version").lenient())
	add(G("touch", StyleGNU, "a", "c no-create", "d date=", "f", "h no-dereference", "m", "r reference= :r",
		"t=", "time=", "help", "version").lenient())
	cpLike := []string{"backup?", "b", "f force", "i interactive", "n no-clobber", "S suffix=",
		"t target-directory=", "T no-target-directory", "u update?", "v verbose", "help", "version",
		"strip-trailing-slashes", "Z", "context?", "debug", "exchange", "no-copy"}
	add(G("cp", StyleGNU, append([]string{"a archive", "attributes-only", "copy-contents", "d", "H", "l link",
		"L dereference", "P no-dereference", "p", "preserve?", "no-preserve=", "parents", "R r recursive",
		"reflink?", "remove-destination", "sparse=", "s symbolic-link", "x one-file-system", "keep-directory-symlink"},
		cpLike...)...).lenient())
	add(G("mv", StyleGNU, cpLike...).lenient())
	add(G("ln", StyleGNU, append([]string{"d F directory", "L logical", "n no-dereference", "P physical",
		"r relative", "s symbolic"}, cpLike...)...).lenient())
	add(G("install", StyleGNU, append([]string{"c", "C compare", "d directory", "D", "g group=", "m mode=",
		"o owner=", "p preserve-timestamps", "s strip", "strip-program= :x", "preserve-context"}, cpLike...)...))
	add(G("diff", StyleGNU, "normal", "q brief", "s report-identical-files", "c", "C context?", "u", "U unified?",
		"e ed", "n rcs", "y side-by-side", "W width=", "left-column", "suppress-common-lines", "p show-c-function",
		"F show-function-line=", "label=", "t expand-tabs", "T initial-tab", "tabsize=", "suppress-blank-empty",
		"l paginate", "r recursive", "no-dereference", "N new-file", "unidirectional-new-file",
		"ignore-file-name-case", "no-ignore-file-name-case", "x exclude=", "X exclude-from= :r", "S starting-file=",
		"from-file= :r", "to-file= :r", "i ignore-case", "E ignore-tab-expansion", "Z ignore-trailing-space",
		"b ignore-space-change", "w ignore-all-space", "B ignore-blank-lines", "I ignore-matching-lines=", "a text",
		"strip-trailing-cr", "D ifdef=", "old-group-format=", "new-group-format=", "unchanged-group-format=",
		"changed-group-format=", "line-format=", "old-line-format=", "new-line-format=", "unchanged-line-format=",
		"d minimal", "horizon-lines=", "speed-large-files", "color?", "palette=", "help", "v version"))
	add(G("diff3", StyleGNU, "A show-all", "e ed", "E show-overlap", "3 easy-only", "x overlap-only", "X", "i",
		"m merge", "a text", "strip-trailing-cr", "T initial-tab", "diff-program= :x", "L label=", "help",
		"v version"))
	add(G("sdiff", StyleGNU, "o output= :w", "i ignore-case", "E ignore-tab-expansion", "Z ignore-trailing-space",
		"b ignore-space-change", "W ignore-all-space", "B ignore-blank-lines", "I ignore-matching-lines=",
		"strip-trailing-cr", "a text", "w width=", "l left-column", "s suppress-common-lines", "t expand-tabs",
		"tabsize=", "d minimal", "H speed-large-files", "diff-program= :x", "help", "v version"))
	add(G("info", StyleGNU, "a all", "k apropos=", "d directory=", "dribble= :w", "f file=", "h help",
		"index-search=", "n node=", "o output= :w", "O show-options usage", "raw-escapes", "no-raw-escapes",
		"restore= :r", "run-server", "R", "show-malformed-multibytes", "strict-node-location", "subnodes",
		"v variable=", "version", "vi-keys", "w where location", "x debug=", "init-file= :x", "all-matches"))
	add(G("man", StyleGNU, "C config-file= :x", "d debug", "D default", "warnings?", "f whatis", "k apropos",
		"K global-apropos", "l local-file", "w where path location", "W where-cat location-cat", "c catman",
		"R recode= :w", "L locale=", "m systems=", "M manpath=", "S s sections=", "e extension=", "i ignore-case",
		"I match-case", "regex", "wildcard", "names-only", "a all", "u update", "no-subpages", "P pager= :x",
		"r prompt=", "7 ascii", "E encoding=", "no-hyphenation nh", "no-justification nj", "p preprocessor= :x",
		"t troff :x", "T troff-device? :x", "H html? :x", "X gxditview? :x", "Z ditroff :x", "help", "usage",
		"V version"))
	add(G("tar", StyleGNU, "A catenate concatenate", "c create", "delete", "d diff compare", "r append",
		"test-label", "t list", "u update", "x extract get", "check-device", "g listed-incremental= :w",
		"G incremental", "hole-detection=", "ignore-failed-read", "level=", "no-check-device", "no-seek", "n seek",
		"occurrence?", "sparse-version=", "S sparse", "add-file=", "C directory=", "exclude=", "exclude-backups",
		"exclude-caches", "exclude-caches-all", "exclude-caches-under", "exclude-ignore=", "exclude-ignore-recursive=",
		"exclude-tag=", "exclude-tag-all=", "exclude-tag-under=", "exclude-vcs", "exclude-vcs-ignores", "no-null",
		"null", "no-recursion", "no-unquote", "no-verbatim-files-from", "verbatim-files-from", "recursion",
		"T files-from= :r", "unquote", "X exclude-from= :r", "anchored", "ignore-case", "no-anchored",
		"no-ignore-case", "no-wildcards", "no-wildcards-match-slash", "wildcards", "wildcards-match-slash",
		"keep-directory-symlink", "keep-newer-files", "k keep-old-files", "no-overwrite-dir", "one-top-level?",
		"overwrite", "overwrite-dir", "recursive-unlink", "remove-files", "skip-old-files", "U unlink-first",
		"W verify", "ignore-command-error", "no-ignore-command-error", "O to-stdout", "to-command= :x",
		"atime-preserve?", "clamp-mtime", "delay-directory-restore", "group=", "group-map= :r", "mode=", "mtime=",
		"m touch", "no-delay-directory-restore", "no-same-owner", "no-same-permissions", "numeric-owner", "owner=",
		"owner-map= :r", "p preserve-permissions same-permissions", "same-owner", "sort=", "s preserve-order same-order",
		"acls", "no-acls", "no-selinux", "no-xattrs", "selinux", "xattrs", "xattrs-exclude=", "xattrs-include=",
		"force-local", "F info-script= new-volume-script= :x", "L tape-length=", "M multi-volume",
		"rmt-command= :x", "rsh-command= :x", "volno-file= :w", "b blocking-factor=", "B read-full-records",
		"i ignore-zeros", "record-size=", "H format=", "old-archive portability", "pax-option=", "posix",
		"V label=", "a auto-compress", "I use-compress-program= :x", "j bzip2", "J xz", "lzip", "lzma", "lzop",
		"no-auto-compress", "zstd", "z gzip gunzip ungzip", "Z compress uncompress", "backup?", "hard-dereference",
		"h dereference", "K starting-file=", "newer-mtime=", "N newer= after-date=", "one-file-system",
		"P absolute-names", "suffix=", "strip-components=", "transform= xform=", "checkpoint?", "full-time",
		"index-file= :w", "l check-links", "no-quote-chars=", "quote-chars=", "quoting-style=", "R block-number",
		"show-defaults", "show-omitted-dirs", "show-snapshot-field-ranges", "show-transformed-names",
		"show-stored-names", "totals?", "utc", "restrict", "v verbose", "warning=", "w interactive confirmation", "o",
		"no-same-owner", "help", "usage", "version", "?").with(
		Opt{Names: []string{"checkpoint-action"}, Arg: RequiredArg, Check: checkTarCheckpoint},
		Opt{Names: []string{"f", "file"}, Arg: RequiredArg, Check: checkTarArchive}))
	add(G("less", StyleGNU, "?", "help", "a search-skip-screen", "A SEARCH-SKIP-SCREEN", "b buffers=",
		"B auto-buffers", "c clear-screen", "C CLEAR-SCREEN", "d dumb", "D color=", "e quit-at-eof",
		"E QUIT-AT-EOF", "f force", "F quit-if-one-screen", "g hilite-search", "G HILITE-SEARCH", "h max-back-scroll=",
		"i ignore-case", "I IGNORE-CASE", "j jump-target=", "J status-column", "k lesskey-file= :x",
		"lesskey-src= :x", "lesskey-content= :x", "K quit-on-intr", "L no-lessopen", "m long-prompt",
		"M LONG-PROMPT", "n line-numbers", "N LINE-NUMBERS", "o log-file= :w", "O LOG-FILE= :w", "p pattern=",
		"P prompt=", "q quiet silent", "Q QUIET SILENT", "r raw-control-chars", "R RAW-CONTROL-CHARS",
		"s squeeze-blank-lines", "S chop-long-lines", "t tag=", "T tag-file= :r", "u underline-special",
		"U UNDERLINE-SPECIAL", "V version", "w hilite-unread", "W HILITE-UNREAD", "x tabs=", "X no-init",
		"y max-forw-scroll=", "z window=", "quotes=", "~ tilde", "# shift=", "file-size", "follow-name", "incsearch",
		"line-num-width=", "mouse", "MOUSE", "no-keypad", "no-histdups", "no-number-headers", "no-search-headers",
		"no-vbell", "redraw-on-quit", "rscroll=", "save-marks", "search-options=", "show-preproc-errors",
		"status-col-width=", "status-line", "header=", "intr=", "modelines=", "proc-backspace", "PROC-BACKSPACE",
		"proc-return", "PROC-RETURN", "proc-tab", "PROC-TAB", "exit-follow-on-close", "autosave=", "cmd=",
		"form-feed", "match-shift=", "wordwrap", "use-backslash", "use-color", "wheel-lines=", "lesskey-context= :x",
		"editor= :x", "no-edit-warn", "nonum"))
	add(G("cloc", StyleGNU, "report-file= :w", "out= :w", "sql= :w", "sql-append", "write-lang-def= :w",
		"write-lang-def-incl-dup= :w", "read-lang-def= :r", "force-lang-def= :r", "script-lang=", "force-lang=",
		"list-file= :r", "exclude-list-file= :r", "config= :x", "3", "count-and-diff", "diff", "diff-alignment= :w",
		"exclude-dir=", "exclude-ext=", "exclude-lang=", "include-ext=", "include-lang=", "match-f=", "match-d=",
		"not-match-f=", "not-match-d=", "fullpath", "by-file", "by-file-by-lang", "json", "yaml", "csv", "md", "xml",
		"quiet", "progress-rate=", "hide-rate", "no-autogen", "skip-uniqueness", "timeout=", "processes=", "v verbose?",
		"version", "help", "git", "autoconf", "follow-links", "max-file-size=", "found= :w", "ignored= :w",
		"counted= :w", "categorized= :w", "unique= :w", "original-dir", "strip-comments= :w", "strip-code= :w",
		"sum-reports", "skip-archive=", "extract-with= :x", "unicode", "no3", "sdir= :wd", "docstring-as-code",
		"include-content=", "exclude-content=", "list-lang=", "show-lang?", "show-ext?", "show-os", "explain=",
		"csv-delimiter=", "sql-project=", "sql-style=", "use-sloccount", "percent", "ignore-whitespace",
		"ignore-case", "ignore-case-ext", "diff-timeout=", "stat", "vcs-use-stat").with(
		Opt{Names: []string{"vcs"}, Arg: RequiredArg, Check: checkCloc}))
	// gawk (and the awk options mawk shares); -f/-E/-i/-l and the program
	// text itself are read by progAwk
	add(G("gawk", StyleGNU, "f file= :x", "F field-separator=", "v assign=", "b characters-as-bytes",
		"c traditional compat", "C copyright", "d dump-variables? :w=awkvars.out", "D debug? :x", "e source=",
		"E exec= :x", "g gen-pot gen-po", "h help usage", "i include=", "I trace", "k csv", "l load= :x",
		"L lint?", "M bignum", "N use-lc-numeric", "n non-decimal-data", "o pretty-print? :w=awkprof.out",
		"O optimize", "p profile? :w=awkprof.out", "P posix", "r re-interval", "s no-optimize", "S sandbox",
		"t lint-old", "V version", "Y", "persist?"), "awk")
	m["gawk"].WLong = true
	add(G("mawk", StyleGNU, "f file= :x", "F=", "v=", "version", "help", "usage", "traditional", "posix",
		"dump :x", "sprintf=", "posix_space", "random=", "exec= :x", "interactive").stop(), "nawk")
	m["mawk"].WLong = true

	// Go
	add(goTestGrammar())
	add(goTestBinaryGrammar())
	vet := append([]string{"vettool= :x", "c=", "V?", "flags", "json", "fix"}, "diff")
	for _, a := range goVetAnalyzers {
		vet = append(vet, a+"?")
	}
	g := goGrammar("go vet", vet...)
	g.Permute = true
	add(g)
	add(goGrammar("go build", "o= :w"))
	add(goGrammar("go install"))
	add(goGrammar("go run", "exec= :x"))
	add(goGrammar("go list", "m", "u :n", "versions :n", "retracted :n", "reuse= :r", "f=", "e", "export", "find",
		"deps", "test", "compiled", "json?", "export", "pgo="))

	// Python
	add(G("pytest", StyleArgparse, pytestEntries...).with(
		Opt{Names: []string{"override-ini", "o"}, Arg: RequiredArg, Check: checkPytestOverride},
		Opt{Names: []string{"cov-report"}, Arg: RequiredArg, Check: checkCovReport},
		Opt{Names: []string{"cov"}, Arg: OptionalArg, Check: func(string) (Effect, string) { return EffWrite, ".coverage" }},
		Opt{Names: []string{"W", "pythonwarnings"}, Arg: RequiredArg, Check: checkPytestWarning},
		Opt{Names: []string{"p"}, Arg: RequiredArg, Check: func(v string) (Effect, string) {
			if strings.HasPrefix(v, "no:") {
				return 0, "" // disables a plugin
			}
			return EffExec, ""
		}}), "py.test")
	m["pytest"].FromFile = '@'

	// JavaScript
	add(G("jest", StyleJS, jestEntries...).with(
		Opt{Names: []string{"rootDir", "roots"}, Arg: RequiredArg, Check: checkProjectDir},
		Opt{Names: []string{"env", "testEnvironment"}, Arg: RequiredArg, Check: checkJSEnvironment},
		Opt{Names: []string{"coverage", "collectCoverage"}, Eff: EffWriteDir, Default: "coverage"},
		Opt{Names: []string{"reporters"}, Arg: RequiredArg, Check: checkJSReporter}))
	add(G("vitest", StyleJS, vitestEntries...).with(
		Opt{Names: []string{"r", "root", "dir"}, Arg: RequiredArg, Check: checkProjectDir},
		Opt{Names: []string{"environment"}, Arg: RequiredArg, Check: checkJSEnvironment},
		Opt{Names: []string{"reporter"}, Arg: RequiredArg, Check: checkJSReporter},
		Opt{Names: []string{"pool"}, Arg: RequiredArg, Check: func(v string) (Effect, string) {
			switch v {
			case "threads", "forks", "vmThreads", "vmForks", "typescript":
				return 0, ""
			}
			return EffExec, "" // a custom pool is a module
		}}))
	add(G("mocha", StyleJS, append(append([]string{}, nodeEntries...), mochaEntries...)...).with(
		Opt{Names: []string{"reporter", "R"}, Arg: RequiredArg, Check: checkJSReporter},
		Opt{Names: []string{"reporter-option", "reporter-options", "O"}, Arg: RequiredArg, Check: checkReporterOption},
		Opt{Names: []string{"ui", "u"}, Arg: RequiredArg, Check: func(v string) (Effect, string) {
			switch v {
			case "bdd", "tdd", "qunit", "exports":
				return 0, ""
			}
			return EffExec, ""
		}}))
	add(G("node", StyleJS, nodeEntries...).with(
		Opt{Names: []string{"test-reporter"}, Arg: RequiredArg, Check: checkJSReporter}))
	m["node --test"] = m["node"]
	// npm test -- ARGS: the script is unknown, so ARGS count with the
	// effects every runner gives them.
	add(unionGrammar(gJSRunner, m["jest"], m["vitest"], m["mocha"]))
	add(G("bun test", StyleJS, "preload= :x", "r require= :x", "coverage :wd=coverage", "coverage-dir= :wd",
		"coverage-reporter=", "reporter=", "reporter-outfile= :w", "t test-name-pattern= :f", "timeout=", "bail?",
		"u update-snapshots :w", "rerun-each=", "only :f", "todo", "watch", "hot", "smol", "define=", "env-file= :r",
		"cwd=", "c config= :x", "tsconfig-override=", "conditions=", "max-concurrency=", "concurrent", "randomize",
		"seed=", "pass-with-no-tests", "inspect? :n", "inspect-brk? :n", "inspect-wait? :n", "h help"))

	// deno test: permissions grant what the tests may do
	// (permissions widen what the project's tests may do, as any other
	// runner lets them; they are not the command's own effects)
	add(G("deno test", StyleJS, "A allow-all", "allow-run?", "allow-ffi?", "allow-net?",
		"allow-write?", "allow-env?", "allow-read?", "allow-sys?", "allow-hrtime", "allow-import?",
		"P permit-no-files", "c config= :x", "import-map= :x", "coverage? :wd=coverage", "junit-path= :w",
		"reporter=", "filter= :f", "doc", "no-check", "check", "parallel", "fail-fast?", "shuffle?", "watch",
		"q quiet", "L log-level=", "reload? :n", "r", "lock?", "no-lock", "frozen", "cached-only", "no-remote",
		"no-npm", "node-modules-dir?", "vendor?", "cert= :r", "location=", "v8-flags= :x", "seed=", "inspect? :n",
		"inspect-brk? :n", "inspect-wait? :n", "env-file? :r", "ext=", "trace-leaks", "clean", "h help",
		"ignore=", "unstable", "no-prompt", "deny-net?", "deny-read?", "deny-write?", "deny-run?", "deny-env?"))

	// Ruby, PHP, CMake, .NET, JVM runners (lenient: the options listed
	// are the ones with effects; their others select tests or output)
	add(G("rspec", StyleGNU, "r require= :x", "o out= :w", "I= :x", "options= :x", "e example= :f",
		"E example-matches= :f", "t tag= :f", "seed=", "order=", "fail-fast?", "b backtrace", "c color",
		"force-color", "no-color", "p profile?", "dry-run", "w warnings", "bisect? :x", "only-failures :f",
		"next-failure n :f", "exclude-pattern= :f", "pattern= :f", "init :w=.rspec", "h help", "v version",
		"failure-exit-code=", "error-exit-code=", "deprecation-out= :w", "j json", "X drb", "drb-port= :n",
		"full-backtrace", "tty", "backtrace").with(
		Opt{Names: []string{"default-path"}, Arg: RequiredArg, Check: checkProjectDir},
		Opt{Names: []string{"f", "format"}, Arg: RequiredArg, Check: func(v string) (Effect, string) {
			switch v {
			case "progress", "p", "documentation", "d", "html", "h", "json", "j", "failures", "f":
				return 0, ""
			}
			return EffExec, "" // a formatter class from a required file
		}}))
	add(G("phpunit", StyleGNU, "c configuration= :x", "bootstrap= :x", "d= :x", "include-path= :x",
		"log-junit= :w", "log-teamcity= :w", "log-events-text= :w", "log-events-verbose-text= :w",
		"testdox-html= :w", "testdox-text= :w", "testdox-xml= :w", "coverage-html= :wd", "coverage-clover= :w",
		"coverage-cobertura= :w", "coverage-crap4j= :w", "coverage-php= :w", "coverage-text?", "coverage-xml= :wd",
		"cache-result-file= :w", "cache-directory= :wd", "extension= :x", "filter= :f", "group= :f",
		"exclude-group= :f", "testsuite= :f", "exclude-testsuite= :f", "stop-on-failure", "stop-on-error",
		"stop-on-warning", "stop-on-risky", "stop-on-skipped", "stop-on-incomplete", "stop-on-defect",
		"stop-on-deprecation", "stop-on-notice", "fail-on-warning", "fail-on-risky", "fail-on-empty-test-suite",
		"fail-on-skipped", "fail-on-incomplete", "fail-on-deprecation", "fail-on-notice", "fail-on-all-issues",
		"no-coverage", "colors?", "testdox", "testdox-summary", "h help", "version", "no-configuration",
		"no-extensions", "no-output", "no-progress", "no-results", "no-logging", "display-deprecations",
		"display-warnings", "display-errors", "display-notices", "display-incomplete", "display-skipped",
		"display-all-issues", "order-by=", "random-order-seed=", "list-tests", "list-tests-xml= :w", "list-suites",
		"list-groups", "list-test-files", "covers= :f", "uses= :f", "requires-php-extension= :f",
		"test-suffix=", "do-not-cache-result", "cache-result", "strict-coverage", "strict-global-state",
		"disallow-test-output", "enforce-time-limit", "default-time-limit=", "dont-report-useless-tests",
		"process-isolation", "globals-backup", "static-backup", "debug", "teamcity", "reverse-list",
		"generate-configuration :w=phpunit.xml", "migrate-configuration :w=phpunit.xml", "generate-baseline= :w",
		"use-baseline= :r", "ignore-baseline", "log-otr= :w", "coverage-filter= :f", "path-coverage",
		"disable-coverage-ignore", "warm-coverage-cache", "check-version", "atleast-version=", "bail",
		"parallel", "p processes=", "compact", "profile", "min=", "ci", "dirty :f", "retry :f", "todos",
		"type-coverage", "mutate :w", "init :w=tests/Pest.php"), "pest")
	add(G("ctest", StyleGNU, "S= :x", "SP= :x", "script= :x", "build-and-test :x", "test-command= :x",
		"D dashboard= :n", "T test-action= :n", "M test-model= :n", "O output-log= :w", "output-junit= :w",
		"R tests-regex= :f", "E exclude-regex= :f", "L", "LE", "I tests-information= :f",
		"j?", "output-on-failure", "V verbose", "VV extra-verbose", "N", "preset=",
		"C build-config=", "timeout=", "repeat=", "stop-on-failure", "rerun-failed :f", "resource-spec-file= :r",
		"overwrite= :x", "extra-submit= :n", "submit-index=", "H help", "version", "Q quiet", "schedule-random",
		"no-tests=", "progress", "build-generator= :x", "U union", "stop-time=", "max-width=", "interactive-debug-mode=",
		"no-label-summary", "no-subproject-summary", "test-output-size-passed=", "test-output-size-failed=",
		"test-output-truncation=", "test-load=", "tests-from-file= :r", "exclude-from-file= :r",
		"exclude-fixture= :f", "exclude-fixture-setup= :f", "exclude-fixture-cleanup= :f", "FA fixture-exclude-any= :f",
		"FS fixture-exclude-setup= :f", "FC fixture-exclude-cleanup= :f", "debug", "print-labels", "show-only?",
		"output-junit-file= :w", "group= :f", "parallel=", "resource-spec-file= :r", "test-timeout=",
		"label-regex= :f", "label-exclude= :f", "repeat-until-fail=").with(
		Opt{Names: []string{"test-dir"}, Arg: RequiredArg, Check: checkProjectDir}))
	dn := G("dotnet test", StyleGNU, "results-directory= :wd", "diag= d= :w",
		"test-adapter-path= :x", "s settings= :x", "collect= :wd=TestResults", "blame :wd=TestResults",
		"blame-crash :wd=TestResults", "blame-hang :wd=TestResults", "blame-crash-dump-type=", "blame-hang-timeout=",
		"blame-hang-dump-type=", "filter= :f", "f framework=", "c configuration=", "no-build", "no-restore", "v verbosity=",
		"nologo", "a arch=", "os=", "e environment= :x", "list-tests t", "h help", "r runtime=", "o output= :wd",
		"artifacts-path= :wd", "interactive", "no-dependencies", "disable-build-servers", "tl terminal-logger=",
		"lt", "ignore-failed-sources", "source= :n", "use-current-runtime").exact().with(
		Opt{Names: []string{"l", "logger"}, Arg: RequiredArg, Check: checkDotnetLogger},
		Opt{Names: []string{"p", "property"}, Arg: RequiredArg, Check: checkSafeAssign})
	dn.Colon = true
	add(dn)

	// Rust
	add(G("cargo test", StyleGNU, "q quiet", "v verbose", "color=", "config= :x", "Z= :x", "C=", "frozen",
		"locked", "offline", "h help", "no-run", "no-fail-fast", "p package= :f", "workspace all", "exclude= :f",
		"lib :f", "bins :f", "bin= :f", "examples :f", "example= :f", "tests :f", "test= :f", "benches :f",
		"bench= :f", "all-targets", "doc :f", "F features=", "all-features", "no-default-features", "j jobs=",
		"r release", "profile=", "target=", "target-dir= :wd", "artifact-dir= out-dir= :wd",
		"lockfile-path= :r", "message-format=", "unit-graph", "timings? :wd=target/cargo-timings",
		"future-incompat-report", "ignore-rust-version", "keep-going", "list", "lockfile-path=").exact().with(
		Opt{Names: []string{"manifest-path"}, Arg: RequiredArg, Check: checkProjectDir},
		Opt{Names: []string{"target"}, Arg: RequiredArg, Check: func(v string) (Effect, string) {
			if strings.HasSuffix(v, ".json") || strings.Contains(v, "/") {
				return EffExec, "" // a target specification names the linker
			}
			return 0, ""
		}}))
	// libtest, after cargo test --: its options; a custom harness (the
	// project's code) reads anything else.
	add(G("libtest", StyleGNU, "include-ignored", "ignored :f", "force-run-in-process", "exclude-should-panic",
		"test", "bench", "list", "logfile= :w", "nocapture no-capture", "test-threads=", "skip= :f", "q quiet",
		"exact :f", "color=", "format=", "show-output", "Z=", "report-time", "ensure-time", "shuffle",
		"shuffle-seed=", "h help").exact().lenient())

	// npm's config flags (any key is accepted; these are the ones that run
	// code, write or pick a host)
	npmg := G("npm", StyleJS, "registry= :n", "userconfig= :x", "globalconfig= :x", "script-shell= :x",
		"node-options= :x", "onload-script= :x", "init-module= :x", "editor= :x", "browser= :x", "shell= :x",
		"git= :x", "viewer= :x", "cache= :wd", "logs-dir= :wd", "proxy= :n", "https-proxy= :n",
		"noproxy=", "cafile= :r", "ca=", "cert=", "key=", "tag=", "w workspace= :f", "ws workspaces", "if-present",
		"ignore-scripts", "foreground-scripts", "silent s", "loglevel=", "json", "parseable", "long", "depth=", "all a",
		"global g", "production", "omit=", "include=", "dry-run", "yes y", "no-yes", "force f", "legacy-peer-deps",
		"strict-peer-deps", "audit", "fund", "progress", "color=", "unicode", "q quiet", "d", "dd", "ddd",
		"verbose", "v version", "h help", "usage", "include-workspace-root", "save", "save-dev D", "save-exact E",
		"save-optional O", "save-prod P", "no-save", "package-lock", "offline", "prefer-offline", "prefer-online",
		"install-links", "workspaces-update", "before=", "call= c :x", "package= p :x", "which=", "otp=",
		"scope=", "access=", "pack-destination= :wd", "node-gyp= :x", "sign-git-tag", "git-tag-version",
		"commit-hooks", "message= m", "filter= F= :f", "cwd=", "dir=", "recursive r", "parallel", "stream",
		"workspace-concurrency=", "reporter=", "aggregate-output", "fail-if-no-match", "workspace-root",
		"frozen-lockfile", "immutable", "check-files", "mode=").with(
		Opt{Names: []string{"prefix", "C"}, Arg: RequiredArg, Check: checkProjectDir})
	add(abbrev(npmg).lenient())
	addRunnerGrammars(m, add)
	addWrapperGrammars(add)
	addReaderGrammars(add)
	addNetGrammars(add)
	addGitGrammars(add)
	addArchiveGrammars(add)
	return m
}
