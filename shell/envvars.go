package shell

import "strings"

// This file decides what assigning an environment variable does to the
// programs that run with it (`GOFLAGS=-toolexec=./x go test`, `export
// PYTHONWARNINGS=error::evil.W`, `env RUSTC=./x cargo test`). Tools read
// their configuration from variables in their own namespace (GO*, PYTHON*,
// NODE_*, CARGO_*, GIT_*, ...): a variable of a tool's namespace that is
// not known to be harmless is taken to change which code runs (fail
// closed), as an option a grammar does not know is. Variables outside the
// tools' namespaces (DATABASE_URL, CI, DEBUG) are the project's own
// configuration, which only the project's code reads.

// varEffect is what one assignment does.
type varEffect struct {
	class    Class    // ClassExec, ClassNetwork, ClassWrite (with targets), ClassExec|ClassUnknown
	testPath bool     // exec only outside a test run (PYTHONPATH for pytest runs the project's code)
	writes   []Target // files or directories the programs write because of it
}

// toolNamespaces are the prefixes of variables tools read as
// configuration.
var toolNamespaces = []string{
	"CGO_", "PYTHON", "PYTEST_", "PIP_", "UV_", "POETRY_", "PIPENV_", "PDM_", "HATCH_", "TOX_", "NOX_",
	"COVERAGE_", "VIRTUALENV_", "NODE_", "NPM_", "npm_", "YARN_", "PNPM_", "BUN_", "DENO_", "COREPACK_",
	"TS_NODE_", "BABEL_", "CARGO", "RUST", "JAVA", "JDK_", "MAVEN_", "M2_", "GRADLE_", "SBT_", "GIT_", "LD_",
	"DYLD_", "LESS", "PERL", "RUBY", "GEM_", "BUNDLE_", "PHP", "COMPOSER_", "DOTNET_", "COMPlus_", "CORECLR_",
	"NUGET_", "MSBUILD", "LUA_", "OPENSSL_", "GCONV_", "MAKE", "XDG_", "BASH", "SSH_", "DOCKER_", "KUBE",
	"BAT_", "MANPAGER", "MANOPT", "MANROFF", "JEST_", "VITEST_", "MOCHA_",
	"PLAYWRIGHT_", "PUPPETEER_", "CYPRESS_", "ELECTRON_", "CONDA_", "MAMBA_", "JULIA_", "R_", "ERL_", "MIX_",
	"HEX_", "ZIG_", "SWIFT", "CLANG", "GCC_", "CCACHE_", "SCCACHE_", "VCPKG_", "CMAKE_", "CTEST_", "MESON_",
	"NINJA_", "BAZEL", "PRE_COMMIT", "RIPGREP_", "FZF_", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
	"BOTO_", "CLOUDSDK_", "KUBECONFIG",
}

// harmlessToolVars are variables of the tools' namespaces that select
// behaviour without naming code, a host or a file.
var harmlessToolVars = map[string]bool{
	// Go
	"GOOS": true, "GOARCH": true, "GOARM": true, "GOARM64": true, "GOAMD64": true, "GO386": true, "GOMIPS": true,
	"GOMIPS64": true, "GOPPC64": true, "GORISCV64": true, "GOWASM": true, "GOMAXPROCS": true, "GOGC": true,
	"GOMEMLIMIT": true, "GODEBUG": true, "GOTRACEBACK": true, "GO111MODULE": true, "GOEXPERIMENT": true,
	"GOFIPS140": true, "GOTELEMETRY": false, "CGO_ENABLED": true,
	// Python
	"PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true, "PYTHONHASHSEED": true, "PYTHONIOENCODING": true,
	"PYTHONUTF8": true, "PYTHONFAULTHANDLER": true, "PYTHONDEVMODE": true, "PYTHONASYNCIODEBUG": true,
	"PYTHONTRACEMALLOC": true, "PYTHONOPTIMIZE": true, "PYTHONVERBOSE": true, "PYTHONNOUSERSITE": true,
	"PYTHONSAFEPATH": true, "PYTHONCOERCECLOCALE": true, "PYTHONMALLOC": true, "PYTHONMALLOCSTATS": true,
	"PYTHONDEBUG": true, "PYTHONINTMAXSTRDIGITS": true, "PYTHONNODEBUGRANGES": true, "PYTHONWARNDEFAULTENCODING": true,
	"PYTHONPROFILEIMPORTTIME": true, "PYTHONLEGACYWINDOWSSTDIO": true, "PYTHON_COLORS": true, "PYTHON_GIL": true,
	"PYTHON_JIT": true, "PYTHON_CPU_COUNT": true, "PYTHON_BASIC_REPL": true, "PYTHONBREAKPOINT": false,
	"PYTEST_DISABLE_PLUGIN_AUTOLOAD": true, "PYTEST_XDIST_AUTO_NUM_WORKERS": true, "PYTEST_THEME": true,
	"PYTEST_THEME_MODE": true, "PYTEST_CURRENT_TEST": true, "PYTEST_VERSION": true, "PYTEST_DEBUG": true,
	"PYTEST_TIMEOUT": true, "PIP_DISABLE_PIP_VERSION_CHECK": true, "PIP_NO_INPUT": true, "PIP_QUIET": true,
	"PIP_NO_COLOR": true, "PIP_PROGRESS_BAR": true, "PIP_REQUIRE_VIRTUALENV": true, "UV_NO_PROGRESS": true,
	"UV_OFFLINE": true, "UV_FROZEN": true, "UV_LOCKED": true, "UV_NO_SYNC": true, "UV_COMPILE_BYTECODE": true,
	"UV_CONCURRENT_DOWNLOADS": true, "UV_LINK_MODE": true, "UV_NO_CACHE": true, "POETRY_VIRTUALENVS_IN_PROJECT": true,
	"POETRY_NO_INTERACTION": true, "PIPENV_VERBOSITY": true, "PIPENV_NOSPIN": true, "TOX_PARALLEL_NO_SPINNER": true,
	"COVERAGE_CORE": true,
	// JavaScript
	"NODE_ENV": true, "NODE_NO_WARNINGS": true, "NODE_DEBUG": true, "NODE_TLS_REJECT_UNAUTHORIZED": true,
	"NODE_EXTRA_CA_CERTS": true, "NODE_PENDING_DEPRECATION": true, "NODE_DISABLE_COLORS": true,
	"NODE_PRESERVE_SYMLINKS": true, "NODE_SKIP_PLATFORM_CHECK": true, "NODE_MAX_OLD_SPACE_SIZE": true,
	"NPM_CONFIG_LOGLEVEL": true, "npm_config_loglevel": true, "NPM_CONFIG_COLOR": true, "npm_config_color": true,
	"NPM_CONFIG_YES": true, "npm_config_yes": true, "NPM_CONFIG_FUND": true, "npm_config_fund": true,
	"NPM_CONFIG_AUDIT": true, "npm_config_audit": true, "NPM_CONFIG_UPDATE_NOTIFIER": true,
	"npm_config_update_notifier": true, "NPM_CONFIG_PROGRESS": true, "npm_config_progress": true,
	"YARN_ENABLE_PROGRESS_BARS": true, "YARN_ENABLE_COLORS": true, "YARN_ENABLE_IMMUTABLE_INSTALLS": true,
	"YARN_SILENT": true, "DENO_NO_UPDATE_CHECK": true, "DENO_NO_PROMPT": true, "JEST_WORKER_ID": true,
	"BABEL_ENV": true, "VITEST_MODE": true,
	// Rust
	"RUST_BACKTRACE": true, "RUST_LIB_BACKTRACE": true, "RUST_LOG": true, "RUST_LOG_STYLE": true,
	"RUST_TEST_THREADS": true, "RUST_TEST_NOCAPTURE": true, "RUST_MIN_STACK": true, "RUST_TEST_TIME_UNIT": true,
	"RUST_TEST_TIME_INTEGRATION": true, "RUST_TEST_TIME_DOCTEST": true, "RUSTC_BOOTSTRAP": true,
	"CARGO_TERM_COLOR": true, "CARGO_TERM_VERBOSE": true, "CARGO_TERM_QUIET": true, "CARGO_TERM_PROGRESS_WHEN": true,
	"CARGO_TERM_PROGRESS_WIDTH": true, "CARGO_INCREMENTAL": true, "CARGO_BUILD_JOBS": true, "CARGO_NET_OFFLINE": true,
	"CARGO_NET_RETRY": true, "CARGO_PROFILE_DEV_DEBUG": true, "CARGO_PROFILE_RELEASE_DEBUG": true,
	"CARGO_PROFILE_TEST_DEBUG": true, "CARGO_PROFILE_DEV_OPT_LEVEL": true, "CARGO_PROFILE_RELEASE_LTO": true,
	// git
	"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true, "GIT_COMMITTER_NAME": true,
	"GIT_COMMITTER_EMAIL": true, "GIT_COMMITTER_DATE": true, "GIT_TERMINAL_PROMPT": true, "GIT_OPTIONAL_LOCKS": true,
	"GIT_FLUSH": true, "GIT_LITERAL_PATHSPECS": true, "GIT_GLOB_PATHSPECS": true, "GIT_NOGLOB_PATHSPECS": true,
	"GIT_ICASE_PATHSPECS": true, "GIT_CEILING_DIRECTORIES": true, "GIT_DISCOVERY_ACROSS_FILESYSTEM": true,
	"GIT_MERGE_VERBOSITY": true, "GIT_NO_REPLACE_OBJECTS": true, "GIT_REFLOG_ACTION": true, "GIT_PROTOCOL": true,
	"GIT_ATTR_NOSYSTEM": true, "GIT_CONFIG_NOSYSTEM": true, "GIT_ADVICE": true, "GIT_REDACT_COOKIES": true,
	"GIT_DEFAULT_HASH": true, "GIT_PAGER_IN_USE": true, "GIT_QUARANTINE_PATH": false,
	// others
	"DOCKER_BUILDKIT": true, "DOCKER_CLI_HINTS": true, "DOCKER_DEFAULT_PLATFORM": true, "COMPOSE_PROJECT_NAME": true,
	"MAKELEVEL": true, "BASH_XTRACEFD": false, "SSH_AUTH_SOCK": false, "DOTNET_CLI_TELEMETRY_OPTOUT": true,
	"DOTNET_NOLOGO": true, "DOTNET_SKIP_FIRST_TIME_EXPERIENCE": true, "DOTNET_ENVIRONMENT": true,
	"GRADLE_OPTS": false, "JAVA_OPTS": false, "MAVEN_OPTS": false, "TF_LOG": true, "TF_IN_AUTOMATION": true,
	"PRE_COMMIT_COLOR": true, "GH_PROMPT_DISABLED": true, "GH_NO_UPDATE_NOTIFIER": true, "PLAYWRIGHT_BROWSERS_PATH": false,
	"CMAKE_BUILD_PARALLEL_LEVEL": true, "CTEST_OUTPUT_ON_FAILURE": true, "CTEST_PARALLEL_LEVEL": true,
	"MANWIDTH": true, "LESSCHARSET": true,
}

// writeVars name a file or directory the programs write.
var writeVars = map[string]Effect{
	"GOCOVERDIR": EffWriteDir, "GOTMPDIR": EffWriteDir, "TMPDIR": EffWriteDir, "COVERAGE_FILE": EffWrite,
	"PYTEST_DEBUG_TEMPROOT": EffWriteDir, "NODE_V8_COVERAGE": EffWriteDir, "NODE_REDIRECT_WARNINGS": EffWrite,
	"GIT_INDEX_FILE": EffWrite, "HISTFILE": EffWrite, "NODE_REPL_HISTORY": EffWrite, "PYTHON_HISTORY": EffWrite,
	"JEST_JUNIT_OUTPUT_DIR": EffWriteDir, "JEST_JUNIT_OUTPUT_FILE": EffWrite, "MOCHA_FILE": EffWrite,
}

// assignEffect reports what assigning value to name does to the programs
// that run with it.
func assignEffect(name string, value word) varEffect {
	if isNetworkVar(name) {
		return varEffect{class: ClassNetwork}
	}
	if e, ok := writeVars[name]; ok {
		return writeVarEffect(e, value)
	}
	if strings.HasPrefix(name, "GIT_TRACE") {
		// GIT_TRACE*=1|2|true: stderr or a descriptor; an absolute path: a file
		if value.lit {
			v := strings.ToLower(value.val)
			if v == "" || v == "0" || v == "1" || v == "2" || v == "false" || v == "true" || v == "no" || v == "yes" {
				return varEffect{}
			}
			if strings.Trim(v, "0123456789") == "" {
				return varEffect{} // a descriptor
			}
		}
		return writeVarEffect(EffWrite, value)
	}
	if check, ok := checkedVars[name]; ok {
		if !value.lit {
			return varEffect{class: ClassExec | ClassUnknown}
		}
		return check(value.val)
	}
	if testPathVars[name] {
		return varEffect{class: ClassExec, testPath: true}
	}
	if isCodeLoadingVar(name) {
		return varEffect{class: ClassExec}
	}
	if harmlessToolVars[name] {
		return varEffect{}
	}
	if goVar(name) {
		return varEffect{class: ClassExec} // GOPATH, GOCACHE, GOWORK, ...: Go's settings
	}
	for _, p := range toolNamespaces {
		if strings.HasPrefix(name, p) {
			return varEffect{class: ClassExec} // a tool's setting we do not know
		}
	}
	return varEffect{}
}

// goVar reports a name of Go's settings: GO followed by capitals only
// (GOPATH, GOWORK), not GOOGLE_APPLICATION_CREDENTIALS.
func goVar(name string) bool {
	if !strings.HasPrefix(name, "GO") || len(name) < 4 {
		return false
	}
	for i := 2; i < len(name); i++ {
		if name[i] < 'A' || name[i] > 'Z' {
			return false
		}
	}
	return true
}

func writeVarEffect(e Effect, value word) varEffect {
	t := Target{Path: value.val, Dynamic: !value.lit}
	if e == EffWriteDir && value.lit {
		t = Target{Path: joinPath(value.val, "*"), Dynamic: true}
	}
	if value.lit && value.val == "" {
		return varEffect{}
	}
	return varEffect{class: ClassWrite, writes: []Target{t}}
}

// checkedVars are variables whose value is a list of options of a
// program: it is read with that program's grammar.
var checkedVars map[string]func(string) varEffect

func init() {
	checkedVars = map[string]func(string) varEffect{
		"GOFLAGS":        func(v string) varEffect { return optionsVarEffect("go test", v) },
		"PYTEST_ADDOPTS": func(v string) varEffect { return optionsVarEffect("pytest", v) },
		"NODE_OPTIONS":   func(v string) varEffect { return optionsVarEffect("node", v) },
		"PYTHONWARNINGS": func(v string) varEffect {
			for _, f := range strings.Split(v, ",") {
				if e, _ := checkPytestWarning(f); e != 0 {
					return varEffect{class: ClassExec} // a dotted category imports its module
				}
			}
			return varEffect{}
		},
	}
}

// optionsVarEffect parses a variable that holds options (GOFLAGS) with the
// program's grammar: what they do is what the variable does.
func optionsVarEffect(grammar, v string) varEffect {
	g := grammars()[grammar]
	var ws []word
	for _, f := range strings.Fields(v) {
		ws = append(ws, word{val: f, lit: true})
	}
	p := g.parse(ws)
	var fx varEffect
	if len(p.Operands) > 0 || p.Unknown || len(p.Passed) > 0 {
		fx.class |= ClassExec | ClassUnknown
	}
	for _, o := range p.Options {
		if !o.Known {
			continue
		}
		if o.Eff&(EffExec|EffModify|EffDelete|EffEnv) != 0 {
			fx.class |= ClassExec
		}
		if o.Eff&EffNetwork != 0 {
			fx.class |= ClassNetwork
		}
		if o.Eff&(EffWrite|EffWriteDir) != 0 {
			fx.class |= ClassWrite
			switch {
			case o.Path.Value == "":
				fx.writes = append(fx.writes, Target{Path: "files written by " + grammar, Dynamic: true})
			case o.Eff&EffWriteDir != 0:
				fx.writes = append(fx.writes, Target{Path: joinPath(o.Path.Value, "*"), Dynamic: true})
			default:
				fx.writes = append(fx.writes, Target{Path: o.Path.Value})
			}
		}
	}
	return fx
}

// applyAssign records what an assignment in front of the command (or
// given to env) does: a test runner may run with the module paths that
// point at the project's code.
func (x *cmdCtx) applyAssign(name string, value word) {
	fx := assignEffect(name, value)
	x.applyVarEffect(fx)
}

func (x *cmdCtx) applyVarEffect(fx varEffect) {
	if fx.class == 0 {
		return
	}
	if fx.testPath {
		x.testPathVar = true
		return
	}
	x.add(fx.class)
	for _, t := range fx.writes {
		if t.Dynamic {
			x.c.Writes = append(x.c.Writes, t)
		} else {
			x.c.Writes = append(x.c.Writes, x.w.pathTarget(t.Path))
		}
	}
}
