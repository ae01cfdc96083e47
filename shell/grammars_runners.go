package shell

import (
	"path"
	"strings"
)

// This file holds the grammars of the test runners, build tools and
// package launchers that grammars.go does not: every runner the analysis
// classifies as a test run parses its argv with a strict grammar, so that
// an option it does not know is exec (fail closed).

// outsideProject reports whether a directory or file given to a runner
// lies outside the project: an absolute path, a home path or one that
// climbs with "..". Options that move the runner's project there (go -C,
// make -C, npm --prefix, cargo --manifest-path, jest --rootDir) run code
// that is not the project's.
func outsideProject(v string) bool {
	if v == "" {
		return false
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") {
		return true
	}
	for _, part := range strings.Split(path.Clean(v), "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

// checkProjectDir is the Check of an option that names the project (or a
// file in it) the runner works on: outside the project it is exec.
func checkProjectDir(v string) (Effect, string) {
	if outsideProject(v) {
		return EffExec, ""
	}
	return 0, ""
}

// checkExecUnlessBuiltin makes a check that allows the named built-in
// values (reporters, formatters) and takes anything else for code.
func checkExecUnlessBuiltin(names ...string) func(string) (Effect, string) {
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return func(v string) (Effect, string) {
		if set[v] {
			return 0, ""
		}
		return EffExec, ""
	}
}

// checkSafeAssign allows NAME=VALUE settings whose value cannot name a
// program, a path outside the project or shell text (make test V=1, TEST=TestFoo,
// gradle -Pprofile=ci), unless the name is a setting that names a
// program (SHELL, CC, GO, ...).
func checkSafeAssign(kv string) (Effect, string) {
	name, val, ok := strings.Cut(kv, "=")
	if !ok {
		return 0, "" // a name alone (gradle -Pflag)
	}
	name = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(name), ":"), "?")
	name = strings.TrimSuffix(name, "+")
	if !isName(strings.ReplaceAll(strings.ReplaceAll(name, ".", "_"), "-", "_")) || programVars[strings.ToUpper(name)] ||
		strings.HasSuffix(strings.ToUpper(name), "FLAGS") {
		return EffExec, ""
	}
	if val == "" {
		return 0, ""
	}
	if strings.HasPrefix(val, "-") || strings.HasPrefix(val, ".") || outsideProject(val) {
		return EffExec, ""
	}
	for _, c := range val {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_.,:+@%^=/-", c)) {
			return EffExec, ""
		}
	}
	return 0, ""
}

// programVars are make and build variables that name programs or the
// shell recipes run with: overriding them runs another program.
var programVars = map[string]bool{
	"SHELL": true, ".SHELLFLAGS": true, "MAKEFLAGS": true, "MFLAGS": true, "MAKEFILES": true, "MAKE": true,
	"MAKEFILE_LIST": true, "CC": true, "CXX": true, "LD": true, "AR": true, "AS": true, "CPP": true, "FC": true,
	"GO": true, "GOCMD": true, "GOBIN": true, "GOFLAGS": true, "PYTHON": true, "PYTHON3": true, "PIP": true,
	"NODE": true, "NPM": true, "NPX": true, "YARN": true, "PNPM": true, "CARGO": true, "RUSTC": true,
	"DOCKER": true, "KUBECTL": true, "PERL": true, "RUBY": true, "BUNDLE": true, "JAVA": true, "MVN": true,
	"GRADLE": true, "BASH": true, "SH": true, "ENV": true, "PAGER": true, "EDITOR": true, "PYTEST": true,
	"TEST_CMD": true, "TESTCMD": true, "RUNNER": true, "CMD": true, "EXEC": true, "COMMAND": true,
	"INSTALL": true, "RM": true, "MKDIR": true, "CP": true, "MV": true, "LN": true, "SED": true, "AWK": true,
	"GREP": true, "FIND": true, "TAR": true, "CURL": true, "WGET": true, "GIT": true, "PROTOC": true,
	"JAVA_HOME": true, "GOPATH": true, "PATH": true, "DESTDIR": true, "PREFIX": true, "VPATH": true,
	"MAVEN_OPTS": true, "ARGLINE": true, "JVM": true, "JVMARGS": true,
}

// mavenSafeProps are -D properties of Maven runs that select tests or
// skip plugins; any other property may configure a plugin to run a
// program (-Djvm=, -Dexec.executable=) or write elsewhere.
var mavenSafeProps = map[string]bool{
	"test": true, "it.test": true, "skipTests": true, "skipITs": true, "maven.test.skip": true,
	"maven.test.failure.ignore": true, "surefire.failIfNoSpecifiedTests": true, "failIfNoSpecifiedTests": true,
	"failIfNoTests": true, "groups": true, "excludedGroups": true, "surefire.rerunFailingTestsCount": true,
	"rerunFailingTestsCount": true, "surefire.useFile": true, "trimStackTrace": true, "surefire.printSummary": true,
	"surefire.skipAfterFailureCount": true, "skipAfterFailureCount": true, "forkCount": true, "reuseForks": true,
	"parallel": true, "threadCount": true, "maven.main.skip": true, "style.color": true, "user.timezone": true,
	"file.encoding": true, "project.build.sourceEncoding": true, "surefire.timeout": true,
	"junit.jupiter.execution.parallel.enabled": true, "maven.javadoc.skip": true, "maven.source.skip": true,
	"gpg.skip": true, "enforcer.skip": true, "org.slf4j.simpleLogger.defaultLogLevel": true,
	"org.slf4j.simpleLogger.log.org.apache.maven.cli.transfer.Slf4jMavenTransferListener": true,
}

// checkMavenProp reads -DNAME[=VALUE].
func checkMavenProp(kv string) (Effect, string) {
	name, _, _ := strings.Cut(kv, "=")
	if mavenSafeProps[name] || strings.HasSuffix(name, ".skip") || strings.HasPrefix(name, "skip") {
		return 0, ""
	}
	return EffExec, ""
}

// gradleSafeProps are -D system properties of a Gradle run that only tune
// it.
var gradleSafeProps = map[string]bool{
	"org.gradle.parallel": true, "org.gradle.daemon": true, "org.gradle.console": true, "org.gradle.caching": true,
	"org.gradle.logging.level": true, "org.gradle.warning.mode": true, "org.gradle.workers.max": true,
	"org.gradle.configureondemand": true, "test.single": true, "file.encoding": true, "user.timezone": true,
}

func checkGradleProp(kv string) (Effect, string) {
	name, _, _ := strings.Cut(kv, "=")
	if gradleSafeProps[name] {
		return 0, ""
	}
	return EffExec, ""
}

// checkProveState: --state=save (and friends) writes .prove.
func checkProveState(v string) (Effect, string) {
	for _, s := range strings.Split(v, ",") {
		if s == "save" {
			return EffWrite, ".prove"
		}
	}
	return EffRead, ".prove"
}

// checkDotnetLogger: console loggers write nothing; trx, html, junit
// and anything else write under TestResults (or their LogFilePath).
func checkDotnetLogger(v string) (Effect, string) {
	name, _, _ := strings.Cut(v, ";")
	switch strings.ToLower(name) {
	case "console", "console;verbosity=normal", "github", "githubactions":
		return 0, ""
	case "trx", "html", "junit", "nunit", "xunit":
		if i := strings.Index(strings.ToLower(v), "logfilepath="); i >= 0 {
			return EffWrite, strings.SplitN(v[i+len("logfilepath="):], ";", 2)[0]
		}
		return EffWriteDir, "TestResults"
	}
	return EffExec, ""
}

// pythonXSafe are python -X options that change no code loaded and write
// nothing.
var pythonXSafe = map[string]bool{
	"importtime": true, "dev": true, "utf8": true, "tracemalloc": true, "faulthandler": true, "showrefcount": true,
	"int_max_str_digits": true, "warn_default_encoding": true, "no_debug_ranges": true, "frozen_modules": true,
	"perf": true, "perf_jit": true, "cpu_count": true, "gil": true, "jit": true, "context_aware_warnings": true,
	"thread_inherit_context": true, "disable_remote_debug": true,
}

func checkPythonX(v string) (Effect, string) {
	name, _, _ := strings.Cut(v, "=")
	if pythonXSafe[name] {
		return 0, ""
	}
	return EffExec, "" // pycache_prefix reads and writes bytecode elsewhere, presite imports a module
}

func addRunnerGrammars(m map[string]*Grammar, add func(*Grammar, ...string)) {
	// the interpreter's own options before -m MODULE (python -m pytest)
	add(G("python", StyleGNU, "b", "bb", "B", "d", "E", "h help", "i :x", "I", "O", "OO", "P", "q", "s", "S",
		"u", "v", "V version", "x", "R", "c= :x", "check-hash-based-pycs=", "help-env", "help-xoptions",
		"help-all").exact().stop().with(
		Opt{Names: []string{"W"}, Arg: RequiredArg, Check: checkPytestWarning},
		Opt{Names: []string{"X"}, Arg: RequiredArg, Check: checkPythonX}))

	// Perl's prove (Getopt::Long: bundling and unique prefixes)
	add(G("prove", StyleGNU, "v verbose", "l lib", "b blib", "s shuffle", "c color", "nocolor", "count", "nocount",
		"D dry", "f failures", "o comments", "ignore-exit", "m merge", "r recurse", "reverse", "q quiet", "Q QUIET",
		"p parse", "directives", "timer", "T", "t", "W", "w", "h help", "H man", "V version", "trap", "normalize",
		"j jobs=", "fork", "rc= :x", "norc", "a archive= :w", "e exec= :x", "harness= :x", "formatter= :x",
		"source= :x", "ext=", "I= :x", "P= :x", "M= :x", "x", "nodirectives", "dry-run", "state=").with(
		Opt{Names: []string{"state"}, Arg: RequiredArg, Check: checkProveState}))
	// bats-core (its own parser: exact names)
	batsFmt := checkExecUnlessBuiltin("tap", "tap13", "pretty", "junit")
	add(G("bats", StyleGNU, "c count", "code-quote-style=", "f filter= :f", "filter-status= :f", "filter-tags= :f",
		"gather-test-outputs-in= :wd", "h help", "j jobs=", "no-tempdir-cleanup", "no-parallelize-across-files",
		"no-parallelize-within-files", "print-output-on-failure", "show-output-of-passing-tests", "o output= :wd",
		"p pretty", "r recursive", "t tap", "T timing", "x trace", "verbose-run", "v version",
		"line-reference-format=", "abort", "negative-filter= :f").exact().with(
		Opt{Names: []string{"F", "formatter"}, Arg: RequiredArg, Check: batsFmt},
		Opt{Names: []string{"report-formatter"}, Arg: RequiredArg, Check: batsFmt},
		Opt{Names: []string{"setup-suite-file"}, Arg: RequiredArg, Check: checkProjectDir}))
	// nose (optparse: unique prefixes)
	add(G("nosetests", StyleGNU, "v verbose", "verbosity=", "q quiet", "c config= :x", "w where= :x", "py3where= :x",
		"m match= testmatch= :f", "tests= :f", "debug=", "debug-log= :w", "logging-config= log-config= :x",
		"e exclude= :f", "i include= :f", "s nocapture", "x stop", "P no-path-adjustment", "exe", "noexe",
		"traverse-namespace", "first-package-wins", "processes=", "process-timeout=", "process-restartworker",
		"with-xunit", "xunit-file= :w", "xunit-testsuite-name=", "with-coverage", "cover-html-dir= :wd",
		"cover-xml-file= :w", "cover-html :wd=cover", "cover-xml :w=coverage.xml", "cover-package=", "cover-erase",
		"cover-branches", "cover-inclusive", "cover-tests", "cover-min-percentage=", "with-doctest",
		"doctest-extension=", "doctest-tests", "a attr= :f", "A eval-attr= :x", "collect-only", "p plugins",
		"pdb :x", "pdb-failures :x", "pdb-errors :x", "with-id", "id-file= :w", "failed :f", "nologcapture",
		"logging-format=", "logging-datefmt=", "logging-filter=", "logging-clear-handlers", "logging-level=",
		"all-modules", "V version", "h help", "no-byte-compile", "no-skip", "no-deprecated", "with-isolation",
		"detailed-errors", "failure-detail", "with-profile :w=.prof", "profile-stats-file= :w", "profile-sort=",
		"profile-restrict="))
	// behave (argparse)
	add(G("behave", StyleArgparse, "c no-color", "color?", "d dry-run", "D define= userdata=", "e exclude= :f",
		"i include= :f", "no-junit", "junit", "junit-directory= :wd", "steps-catalog", "k no-skipped",
		"show-skipped", "no-snippets", "snippets", "m no-multiline", "multiline", "n name= :f", "capture",
		"no-capture", "no-capture-stderr", "capture-stderr", "no-logcapture", "logcapture", "logging-level=",
		"logging-format=", "logging-datefmt=", "logging-filter=", "logging-clear-handlers", "no-summary",
		"summary", "o outfile= :w", "q quiet", "no-source", "show-source", "stage= :x", "stop", "t tags= :f",
		"T no-timings", "show-timings", "v verbose", "w wip", "x expand", "lang=", "lang-list", "lang-help=",
		"tags-help", "version", "h help", "r format-rerun?", "runner= :x", "jobs= parallel=", "no-color").with(
		Opt{Names: []string{"f", "format"}, Arg: RequiredArg, Check: checkExecUnlessBuiltin("plain", "pretty",
			"progress", "progress2", "progress3", "json", "json.pretty", "rerun", "sphinx.steps", "steps",
			"steps.catalog", "steps.doc", "steps.usage", "tags", "tags.location", "null", "help")}))
	// busted (Lua)
	add(G("busted", StyleGNU, "p pattern= :f", "exclude-pattern= :f", "t tags= :f", "exclude-tags= :f",
		"filter= :f", "filter-out= :f", "m lpath= :x", "cpath= :x", "r run= :f", "repeat=", "seed=", "lang=",
		"loaders= :x", "helper= :x", "lua= :x", "ignore-lua", "e= :x", "c coverage :w=luacov.stats.out",
		"coverage-config-file= :x", "v verbose", "version", "l list", "no-keep-going", "keep-going", "no-recursive",
		"recursive", "shuffle", "shuffle-files", "shuffle-tests", "sort", "sort-files", "sort-tests",
		"R root= :x", "C directory= :x", "f config-file= :x", "defer-print", "suppress-pending", "X Xoutput= :x",
		"Xhelper= :x", "auto-insulate", "no-auto-insulate", "enable-sound", "h help", "exit", "no-exit").exact().with(
		Opt{Names: []string{"o", "output"}, Arg: RequiredArg, Check: checkExecUnlessBuiltin("utfTerminal",
			"plainTerminal", "TAP", "json", "junit", "sound", "gtest")}))
	// jasmine (node)
	add(G("jasmine", StyleJS, "config= :x", "filter= :f", "helper= :x", "require= :x", "no-color", "color",
		"random=", "seed=", "fail-fast", "parallel=", "verbose", "h help", "v version").with(
		Opt{Names: []string{"reporter"}, Arg: RequiredArg, Check: checkJSReporter}))
	// ava
	add(G("ava", StyleJS, "m match= :f", "w watch", "fail-fast", "s serial", "t tap", "T timeout=", "verbose",
		"u update-snapshots :w", "reset-cache :d=node_modules/.cache/ava", "config= :x", "node-arguments= :x",
		"c concurrency=", "color", "no-color", "h help", "v version", "only :f"))
	// karma: start CONFIG runs the project's test config
	add(G("karma", StyleJS, "port=", "auto-watch", "no-auto-watch", "log-level=", "colors", "no-colors",
		"reporters=", "browsers=", "capture-timeout=", "single-run", "no-single-run", "fail-on-empty-test-suite",
		"report-slower-than=", "hostname= :n", "listen-address= :n", "format-error= :x", "h help", "v version",
		"grep= :f", "watch", "no-watch").stop())
	// mix, swift, rake, just, sbt, lein, meson, bazel, ninja test: the
	// options that only select tests or output
	add(G("mix test", StyleGNU, "cover :wd=cover", "failed :f", "only= :f", "exclude= :f", "include= :f",
		"seed=", "trace", "stale :f", "max-failures=", "color", "no-color", "slowest=", "raise", "warnings-as-errors",
		"no-compile", "no-deps-check", "no-archives-check", "formatter= :x", "export-coverage= :w", "repeat-until-failure=",
		"partitions=", "timeout=", "breakpoints :x", "profile-require= :x").exact())
	add(G("swift test", StyleGNU, "parallel", "filter= :f", "skip= :f", "c configuration=", "v verbose",
		"q quiet", "enable-code-coverage :wd=.build", "xunit-output= :w", "num-workers=", "package-path= :x",
		"scratch-path= :wd", "build-path= :wd", "list-tests", "enable-swift-testing", "disable-swift-testing",
		"enable-xctest", "disable-xctest", "Xswiftc= :x", "Xcc= :x", "Xlinker= :x", "Xcxx= :x", "toolset= :x",
		"sdk= :x", "swift-sdk= :x", "skip-build", "h help").exact())
	add(G("rake test", StyleGNU, "t trace?", "v verbose", "q quiet", "s silent", "n dry-run", "m multitask",
		"j jobs?", "f rakefile= :x", "r require= :x", "I libdir= :x", "e execute= :x", "p execute-print= :x",
		"E execute-continue= :x", "R rakelibdir= rakelib= :x", "g system", "G no-system", "N no-search",
		"P prereqs", "T tasks?", "D describe?", "W where?", "X no-deprecation-warnings", "h help", "V version",
		"A all", "B build-all", "comments", "job-stats?", "rules", "backtrace?", "suppress-backtrace=", "C directory= :x"))
	add(G("just test", StyleGNU, "f justfile= :x", "d working-directory= :x", "set= :x", "shell= :x",
		"shell-arg= :x", "dotenv-path= :x", "dotenv-filename= :x", "q quiet", "v verbose", "n dry-run",
		"color=", "yes", "no-deps", "h help", "V version").exact())
	add(G("bazel test", StyleGNU, "test_output=", "test_filter= :f", "test_arg= :x", "test_env= :x",
		"cache_test_results=", "runs_per_test=", "test_timeout=", "test_size_filters= :f", "test_tag_filters= :f",
		"k keep_going", "config=", "jobs=", "verbose_failures", "nocache_test_results", "test_summary=",
		"build_tests_only", "compilation_mode= c=", "define= :x", "copt= :x", "linkopt= :x", "run_under= :x",
		"remote_cache= :n", "remote_executor= :n", "disk_cache= :wd").exact())
	for _, n := range []string{"meson test", "ninja test", "sbt test", "lein test"} {
		add(G(n, StyleGNU, "v verbose", "q quiet", "h help", "C= :x", "j jobs= num-processes=", "suite= :f",
			"no-rebuild", "list", "print-errorlogs", "timeout-multiplier=", "repeat=", "wrapper= :x", "gdb :x",
			"setup= :x", "test-args= :x", "logbase= :w", "benchmark").exact())
	}

	// php artisan test (Laravel): phpunit's options plus its own
	add(G("artisan test", StyleGNU, "parallel", "p processes=", "recreate-databases", "drop-databases",
		"without-databases", "coverage :wd=coverage", "min=", "profile", "compact", "testsuite= :f",
		"filter= :f", "group= :f", "exclude-group= :f", "stop-on-failure", "env=", "h help").exact())

	// make: GNU getopt_long; VAR=value operands override the makefile's
	// variables (checkSafeAssign)
	add(G("make", StyleGNU, "b", "m", "B always-make", "d", "debug?", "e environment-overrides", "E eval= :x",
		"f file= makefile= :x", "h help", "i ignore-errors", "I include-dir= :x", "j jobs?",
		"jobserver-style=", "k keep-going", "l load-average? max-load?", "L check-symlink-times",
		"n just-print dry-run recon", "o old-file= assume-old=", "O output-sync?", "p print-data-base :e",
		"q question", "r no-builtin-rules", "R no-builtin-variables", "shuffle?", "s silent quiet", "no-silent",
		"S no-keep-going stop", "t touch :w", "trace", "v version", "w print-directory", "no-print-directory",
		"W what-if= new-file= assume-new=", "warn-undefined-variables").with(
		Opt{Names: []string{"C", "directory"}, Arg: RequiredArg, Check: checkProjectDir}))

	// Maven (commons-cli: unique prefixes of long options)
	add(G("mvn", StyleGNU, "am also-make", "amd also-make-dependents", "B batch-mode", "b builder=",
		"C strict-checksums", "c lax-checksums", "cpu check-plugin-updates", "e errors", "emp encrypt-master-password?",
		"ep encrypt-password?", "fae fail-at-end", "ff fail-fast", "fn fail-never", "gs global-settings= :x",
		"gt global-toolchains= :x", "h help", "l log-file= :w", "llr legacy-local-repository", "N non-recursive",
		"npr no-plugin-registry", "npu no-plugin-updates", "nsu no-snapshot-updates", "ntp no-transfer-progress",
		"o offline", "P activate-profiles=", "pl projects=", "q quiet", "rf resume-from=", "s settings= :x",
		"t toolchains= :x", "T threads=", "U update-snapshots :n", "up update-plugins :n", "v version",
		"V show-version", "X debug", "color=", "ignore-transitive-repositories").with(
		Opt{Names: []string{"D", "define"}, Arg: RequiredArg, Check: checkMavenProp},
		Opt{Names: []string{"f", "file"}, Arg: RequiredArg, Check: checkProjectDir}))
	// Gradle
	add(G("gradle", StyleGNU, "I init-script= :x", "g gradle-user-home= :x", "project-cache-dir= :wd", "offline",
		"refresh-dependencies :n", "scan :n", "no-scan", "build-cache", "no-build-cache", "configuration-cache",
		"no-configuration-cache", "configuration-cache-problems=", "no-daemon", "daemon", "foreground", "parallel",
		"no-parallel", "max-workers=", "q quiet", "i info", "d debug", "w warn", "s stacktrace", "S full-stacktrace",
		"console=", "continue", "t continuous", "m dry-run", "rerun-tasks", "rerun", "x exclude-task=",
		"tests= :f", "fail-fast", "warning-mode=", "status", "stop", "v version", "h help", "include-build= :x",
		"write-locks :w", "update-locks= :w", "dependency-verification=", "write-verification-metadata= :w",
		"export-keys :w", "profile :wd=build/reports/profile", "priority=", "watch-fs", "no-watch-fs",
		"no-rebuild a", "build-file= b= :x", "settings-file= c= :x", "no-continue").exact().with(
		Opt{Names: []string{"D", "system-prop"}, Arg: RequiredArg, Check: checkGradleProp},
		Opt{Names: []string{"P", "project-prop"}, Arg: RequiredArg, Check: checkSafeAssign},
		Opt{Names: []string{"p", "project-dir"}, Arg: RequiredArg, Check: checkProjectDir}))

	// tox 4 and 3 (argparse)
	add(G("tox", StyleArgparse, "c conf= configfile= :x", "workdir= :wd", "e env= :f", "m labels= :f",
		"f factors= :f", "r recreate", "n notest", "p parallel?", "o parallel-live", "parallel-no-spinner",
		"q quiet", "v verbose", "colored=", "exit-and-dump-after=", "result-json= :w", "hashseed=", "discover= :x",
		"list-dependencies", "no-list-dependencies", "s skip-missing-interpreters?", "skip-pkg-install",
		"installpkg= :x", "develop", "no-recreate-pkg", "no-provision?", "x override= :x", "runner=", "version",
		"h help", "a listenvs-all", "l listenvs", "showconfig", "sdistonly", "devenv= :wd", "pre", "i index-url= :n",
		"alwayscopy", "force-dep= :n", "sitepackages", "no-capture", "skip-env= :f", "k skip-pkg-install",
		"help-ini", "core", "root= :x", "runner=", "no-recreate-provision"))
	// nox (argparse)
	add(G("nox", StyleArgparse, "f noxfile= :x", "s sessions= e= :f", "k keywords= :f", "t tags= :f",
		"p python= pythons= :f", "l list", "list-sessions", "json", "envdir= :wd", "r reuse-existing-virtualenvs",
		"R", "no-reuse-existing-virtualenvs", "reuse-venv=", "no-venv", "force-venv-backend= :x",
		"db default-venv-backend= :x", "x stop-on-first-error", "no-stop-on-first-error",
		"error-on-missing-interpreters", "no-error-on-missing-interpreters", "error-on-external-run",
		"no-error-on-external-run", "install-only", "no-install", "report= :w", "non-interactive", "nocolor",
		"forcecolor", "no-color", "add-timestamp", "v verbose", "version", "h help", "extra-pythons= :x",
		"P force-python= force-pythons= :x", "download-python=", "no-install-only"))

	// package launchers that run a runner: their own options
	add(abbrev(G("npx", StyleJS, "p package= :n,x", "c call= :x", "y yes", "no", "no-install", "ignore-existing",
		"q quiet", "shell= :x", "node-options= :x", "prefix= :x", "w workspace=", "ws workspaces",
		"include-workspace-root", "registry= :n", "userconfig= :x", "globalconfig= :x", "script-shell= :x",
		"cache= :wd", "offline", "prefer-offline", "prefer-online", "silent s", "loglevel=", "v version",
		"h help", "d", "dd", "ddd", "verbose", "always-spawn", "shell-auto-fallback", "npm= :x",
		"node-arg= n= :x")).stop())
	add(G("uv run", StyleGNU, "with= :n,x", "with-editable= :x", "with-requirements= :n,x", "isolated", "no-sync",
		"frozen", "locked", "offline", "no-project", "only-group= :f", "group= :f", "no-group= :f", "no-dev",
		"dev", "only-dev", "all-groups", "extra= :f", "all-extras", "no-default-groups", "package= :f",
		"all-packages", "p python= :x", "directory= :x", "project= :x", "env-file= :r", "no-env-file",
		"m module", "script :x", "s", "no-editable", "exact", "inexact", "q quiet", "v verbose", "no-progress",
		"color=", "native-tls", "no-cache", "n", "cache-dir= :wd", "config-file= :x", "no-config",
		"index= :n", "default-index= :n", "i index-url= :n", "extra-index-url= :n", "f find-links= :n",
		"python-preference=", "managed-python", "no-managed-python", "python-platform=", "h help",
		"refresh", "upgrade U", "reinstall", "compile-bytecode", "active", "no-active", "preview").stop())
	add(G("poetry run", StyleGNU, "C directory= :x", "P project= :x", "q quiet", "v verbose", "vv", "vvv",
		"n no-interaction", "no-plugins", "no-cache", "ansi", "no-ansi", "h help").exact().stop())
	add(G("pdm run", StyleGNU, "p project= :x", "g global", "c config= :x", "v verbose", "q quiet", "s site-packages",
		"l list", "j json", "venv= :x", "recreate", "skip= :f", "h help").exact().stop())
	add(G("hatch run", StyleGNU, "e env= :f", "v verbose", "q quiet", "h help").exact().stop())
	add(G("pipenv run", StyleGNU, "python= :x", "v verbose", "q quiet", "h help").exact().stop())
	add(G("bundle exec", StyleGNU, "gemfile= :x", "keep-file-descriptors", "V verbose", "no-color", "retry=",
		"h help").exact().stop())
	// cargo nextest run
	add(G("cargo nextest", StyleGNU, "E filter-expr= :f", "no-fail-fast", "fail-fast", "j jobs= test-threads=",
		"P profile=", "workspace", "p package= :f", "lib :f", "bins :f", "bin= :f", "tests :f", "test= :f",
		"examples :f", "benches :f", "all-targets", "r release", "F features=", "all-features",
		"no-default-features", "retries=", "no-capture nocapture", "partition= :f", "cargo-profile=",
		"target-dir= :wd", "target=", "message-format=", "hide-progress-bar", "status-level=",
		"final-status-level=", "failure-output=", "success-output=", "v verbose", "color=", "run-ignored=",
		"ignore-default-filter", "max-fail=", "no-tests=", "exact :f", "skip= :f", "frozen", "locked", "offline",
		"show-progress=", "no-output-indent", "h help", "archive-file= :x", "workspace-remap= :x",
		"tool-config-file= :x", "config= :x", "Z= :x", "manifest-path= :x").exact())
	// python -m unittest [discover]
	add(G("unittest", StyleArgparse, "v verbose", "q quiet", "locals", "f failfast", "c catch", "b buffer",
		"k= :f", "durations=", "h help", "p pattern= :f").with(
		Opt{Names: []string{"s", "start-directory"}, Arg: RequiredArg, Check: checkProjectDir},
		Opt{Names: []string{"t", "top-level-directory"}, Arg: RequiredArg, Check: checkProjectDir}))
}
