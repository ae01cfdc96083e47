package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// cmdCtx is the state of classifying one simple command.
type cmdCtx struct {
	w       *walker
	c       *Command
	args    []word    // the remaining argv, program first
	extra   []Command // further commands (find -exec, fd -x)
	scripts []string  // literal scripts to parse as nested code
	inShell bool      // the scripts run in this shell (eval): their cd leaks out
	stdin   *stdinInfo
	xargs   bool // the command receives unknown extra arguments (xargs)
	hops    int
	// testPathVar: an assignment points an interpreter's module path
	// somewhere (PYTHONPATH=src): harmless for a test run, exec otherwise.
	testPathVar bool
}

// stdinInfo describes what a here-document or here-string feeds a command.
type stdinInfo struct {
	text string
	lit  bool
}

// codeLoadingVars are variables whose assignment changes which code runs.
var codeLoadingVars = map[string]bool{
	"BASH_ENV": true, "ENV": true, "PATH": true, "UNZIP": true, "UNZIPOPT": true, "ZIPINFO": true,
	"ZIPINFOOPT": true, "ZIP": true, "ZIPOPT": true, "GLIBC_TUNABLES": true, "LOCPATH": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true,
	"LD_AUDIT": true, "NODE_OPTIONS": true, "PERL5OPT": true, "PERL5LIB": true, "RUBYOPT": true,
	"PYTHONSTARTUP": true, "PYTHONHOME": true, "GIT_SSH": true, "GIT_SSH_COMMAND": true,
	"GIT_EXEC_PATH": true, "GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true, "GIT_EDITOR": true,
	"GIT_CONFIG": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_PARAMETERS": true,
	"GIT_CONFIG_COUNT": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true, "PAGER": true, "EDITOR": true,
	"VISUAL": true, "PROMPT_COMMAND": true, "IFS": true, "SHELLOPTS": true, "BASHOPTS": true,
	"GIT_DIR": true, "GIT_WORK_TREE": true, "LESSOPEN": true, "LESSCLOSE": true, "MANPAGER": true,
	"MANOPT": true, "BROWSER": true, "RUBYLIB": true, "NODE_PATH": true, "RUSTC_WRAPPER": true,
	"RUSTC_WORKSPACE_WRAPPER": true, "CARGO_BUILD_RUSTC_WRAPPER": true, "GOFLAGS": true, "JAVA_TOOL_OPTIONS": true,
	"_JAVA_OPTIONS": true, "DOTNET_STARTUP_HOOKS": true, "PYTEST_ADDOPTS": true, "PYTEST_PLUGINS": true,
	"PERL5DB": true, "PYTHONBREAKPOINT": true, "CC": true, "CXX": true, "MAKEFLAGS": true, "SHELL": true,
	"BASH_LOADABLES_PATH": true, "CDPATH": true, "HISTFILE": true, "PS0": true, "PS1": true, "PS2": true,
	"PS3": true, "PS4": true, // prompts (PS4 under set -x) expand $(...)
	// pagers and their key files, configs that name programs
	"LESS": true, "LESSKEY": true, "LESSKEYIN": true, "LESSKEY_SYSTEM": true, "LESSKEYIN_SYSTEM": true,
	"LESSEDIT": true, "LESSHISTFILE": true, "LESS_TERMCAP_mb": false, "BAT_PAGER": true, "BAT_CONFIG_PATH": true,
	"BAT_OPTS": true, "SYSTEMD_PAGER": true, "SYSTEMD_LESS": true, "DELTA_PAGER": true, "GH_PAGER": true,
	"MORE": true, "MANROFFOPT": true, "MANROFFSEQ": true, "AWKPATH": true, "AWKLIBPATH": true,
	"RIPGREP_CONFIG_PATH": true, "TAR_OPTIONS": true, "GZIP": true, "XZ_OPT": true, "ZSTD_NBTHREADS": false,
	"WGETRC": true, "CURL_HOME": true, "HOME": true, "XDG_CONFIG_HOME": true, "GIT_CONFIG_NOSYSTEM": false,
	"INPUTRC": true, "PYTHONPATH": true, "PYTHONUSERBASE": true, "GEM_PATH": true, "GEM_HOME": true,
	"CGO_CFLAGS": true, "CGO_CPPFLAGS": true, "CGO_CXXFLAGS": true, "CGO_FFLAGS": true, "CGO_LDFLAGS": true,
	"RUSTFLAGS": true, "RUSTDOCFLAGS": true, "CARGO_ENCODED_RUSTFLAGS": true, "CARGO_HOME": true, "GOROOT": true,
	"GOENV": true, "GOTOOLCHAIN": true, "JQ_LIBRARY_PATH": true, "FZF_DEFAULT_COMMAND": true, "SUDO_ASKPASS": true,
	"TERMINFO": false, "PROMPT_DIRTRIM": false, "MAVEN_OPTS": true, "GRADLE_OPTS": true, "JAVA_OPTS": true,
	"COMPOSER_HOME": true, "NPM_TOKEN": false, "BUNDLE_GEMFILE": true, "PIP_CONFIG_FILE": true,
	// compilers, their flags and search paths (a cgo, node-gyp or pip build
	// runs them), and libraries' configuration files that load code
	"AR": true, "LD": true, "AS": true, "CPP": true, "FC": true, "F77": true, "CFLAGS": true, "CXXFLAGS": true,
	"CPPFLAGS": true, "LDFLAGS": true, "FFLAGS": true, "CPATH": true, "LIBRARY_PATH": true, "C_INCLUDE_PATH": true,
	"CPLUS_INCLUDE_PATH": true, "OBJC_INCLUDE_PATH": true, "PKG_CONFIG": true, "PKG_CONFIG_PATH": true,
	"PKG_CONFIG_LIBDIR": true, "PKG_CONFIG_SYSROOT_DIR": true, "CLASSPATH": true, "MAKEFILES": true, "GCONV_PATH": true,
	"TCLLIBPATH": true, "R_PROFILE": true, "R_PROFILE_USER": true, "R_ENVIRON": true, "R_ENVIRON_USER": true,
	"R_LIBS": true, "R_LIBS_USER": true, "PHPRC": true, "PHP_INI_SCAN_DIR": true, "GIT_TEMPLATE_DIR": true,
	"SSL_ENGINE": true, "QT_PLUGIN_PATH": true, "GTK_PATH": true, "GIO_EXTRA_MODULES": true, "MAGIC": true,
}

// testPathVars change where an interpreter finds modules: running a test
// runner with them runs the project's code, as the runner does anyway.
var testPathVars = map[string]bool{"PYTHONPATH": true, "NODE_PATH": true, "RUBYLIB": true, "PERL5LIB": true, "GEM_PATH": true}

// networkVars are variables that point a program at a host of the
// caller's choosing (a module proxy, a package index, an HTTP proxy).
var networkVars = map[string]bool{
	"GOPROXY": true, "GOSUMDB": true, "GONOSUMDB": true, "GONOSUMCHECK": true, "GOPRIVATE": true, "GONOPROXY": true,
	"GOINSECURE": true, "GOVCS": true, "GOTOOLCHAIN": true, "PIP_INDEX_URL": true, "PIP_EXTRA_INDEX_URL": true,
	"PIP_FIND_LINKS": true, "PIP_TRUSTED_HOST": true, "PIP_PROXY": true, "UV_INDEX_URL": true, "UV_EXTRA_INDEX_URL": true,
	"UV_INDEX": true, "UV_DEFAULT_INDEX": true, "HTTP_PROXY": true, "HTTPS_PROXY": true, "ALL_PROXY": true,
	"http_proxy": true, "https_proxy": true, "all_proxy": true, "YARN_NPM_REGISTRY_SERVER": true, "YARN_REGISTRY": true,
	"GEM_HOST": true, "RUBYGEMS_HOST": true, "COMPOSER_REPOSITORY": true, "CARGO_HTTP_PROXY": true, "GIT_PROXY_COMMAND": true,
	"PYPI_URL": true, "POETRY_REPOSITORIES": true, "CONDA_CHANNELS": true,
}

func isNetworkVar(name string) bool {
	return networkVars[name] || strings.HasPrefix(name, "CARGO_REGISTRIES_") || strings.HasPrefix(name, "CARGO_REGISTRY_") ||
		strings.HasPrefix(name, "POETRY_REPOSITORIES_") || strings.HasPrefix(name, "UV_INDEX_") || strings.HasPrefix(name, "BUNDLE_MIRROR__")
}

func isCodeLoadingVar(name string) bool {
	return codeLoadingVars[name] || strings.HasPrefix(name, "DYLD_") || strings.HasPrefix(name, "CARGO_BUILD_") ||
		strings.HasPrefix(name, "CARGO_TARGET_") || strings.HasPrefix(name, "LESSKEY") || strings.HasPrefix(name, "LD_") ||
		strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") ||
		strings.HasPrefix(name, "BASH_FUNC_") || strings.HasPrefix(name, "NPM_CONFIG_") ||
		strings.HasPrefix(name, "npm_config_")
}

func stdinOf(redirs []*syntax.Redirect) *stdinInfo {
	var in *stdinInfo
	for _, r := range redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			v, lit := wordValue(r.Hdoc)
			in = &stdinInfo{text: v, lit: lit}
		case syntax.WordHdoc:
			v, lit := wordValue(r.Word)
			in = &stdinInfo{text: v + "\n", lit: lit}
		case syntax.RdrIn, syntax.RdrInOut:
			in = &stdinInfo{lit: false}
		}
	}
	return in
}

func (w *walker) mkWord(wd *syntax.Word) word {
	v, lit := wordValue(wd)
	if !lit {
		return word{val: w.text(wd), split: splittable(wd), dash: mayDash(wd)}
	}
	return word{val: v, lit: true}
}

func (w *walker) call(ce *syntax.CallExpr, s *syntax.Stmt) {
	var assigns []string
	var fx []varEffect
	for _, as := range ce.Assigns {
		assigns = append(assigns, w.text(as))
		w.assignEval(as)
		if as.Name != nil {
			fx = append(fx, assignEffect(as.Name.Value, w.assignValue(as)))
		}
	}
	idx := len(w.a.Commands)
	if len(ce.Args) == 0 {
		// NAME=value alone sets a shell variable, exported when it
		// already was (PATH, HOME, anything under set -a)
		var cls Class
		var writes []Target
		for _, f := range fx {
			if f.testPath {
				w.exportedTestPath = true
				continue
			}
			cls |= f.class
			writes = append(writes, f.writes...)
		}
		if cls != 0 {
			w.a.Commands = append(w.a.Commands, Command{Argv: []string{}, Assigns: assigns,
				Classes: cls, Writes: writes, Nested: w.nested, Source: w.text(ce)})
			if cls&ClassWrite != 0 {
				ensureTarget(&w.a.Commands[len(w.a.Commands)-1])
			}
		}
		to := len(w.a.Commands)
		for _, as := range ce.Assigns {
			w.node(as)
		}
		w.applyRedirs(s, idx, to)
		return
	}
	words := make([]word, len(ce.Args))
	full := make([]Word, len(ce.Args))
	for i, a := range ce.Args {
		words[i] = w.mkWord(a)
		full[i] = Word{Text: words[i].val, Literal: words[i].lit}
	}
	c := Command{Words: full, Assigns: assigns, Nested: w.nested, Source: w.text(ce)}
	if w.crSplit(ce) {
		// the parser split words at a carriage return, which bash keeps
		// inside the word: bash runs something else than what we see
		c.Classes |= ClassExec | ClassUnknown
	}
	x := &cmdCtx{w: w, c: &c, args: words, stdin: stdinOf(s.Redirs)}
	for _, f := range fx {
		x.applyVarEffect(f)
	}
	x.run()
	x.evalArgs()
	if x.testPathVar && c.Classes&ClassTest == 0 || w.exportedTestPath && c.Classes&ClassTest == 0 && modulePathReaders[c.Program] {
		c.Classes |= ClassExec // modules from the path it names run
	}
	ensureTarget(&c)
	c.Dir, c.DirUnknown = w.cwd, w.cwdDyn
	c.Argv = make([]string, len(x.args))
	for i, a := range x.args {
		c.Argv[i] = a.val
	}
	w.a.Commands = append(w.a.Commands, c)
	w.a.Commands = append(w.a.Commands, x.extra...)
	for _, sc := range x.scripts {
		cwd, dyn := w.cwd, w.cwdDyn
		if !w.nestedScript(sc) {
			w.a.Commands[idx].Classes |= ClassExec | ClassUnknown
		}
		if x.inShell && (w.nestedCwd != cwd || w.nestedCwdDyn != dyn) {
			w.cwdDyn = true // eval "cd DIR": later relative paths are unknown
		}
	}
	to := len(w.a.Commands)
	for _, as := range ce.Assigns {
		w.node(as)
	}
	for _, a := range ce.Args {
		w.word(a)
	}
	w.applyRedirs(s, idx, to)
}

// crSplit reports whether a word of the call ends at a carriage return.
func (w *walker) crSplit(ce *syntax.CallExpr) bool {
	for _, a := range ce.Args {
		if e := int(a.End().Offset()); e < len(w.src) && w.src[e] == '\r' {
			return true
		}
	}
	for _, as := range ce.Assigns {
		if e := int(as.End().Offset()); e < len(w.src) && w.src[e] == '\r' {
			return true
		}
	}
	return false
}

// evalArgs checks the arguments of builtins that evaluate a string as
// arithmetic or as a subscripted name (let, unset, test -v, declare).
func (x *cmdCtx) evalArgs() {
	args := x.rest()
	switch x.c.Program {
	case "test", "[":
		v := false
		for _, a := range args {
			v = v || a.lit && a.val == "-v"
		}
		if !v {
			return
		}
	case "let", "unset", "declare", "typeset", "local", "export", "readonly":
	default:
		return
	}
	for _, a := range args {
		if !a.lit {
			x.w.ev.evaluates = true
		} else if injects(a.val) {
			x.add(ClassExec | ClassUnknown)
		}
	}
	if x.c.Program == "let" {
		x.w.ev.evaluates = true
	}
}

// decl handles export/declare/local/readonly/typeset.
func (w *walker) decl(d *syntax.DeclClause) {
	c := Command{Argv: []string{d.Variant.Value}, Program: d.Variant.Value, Classes: ClassRead,
		Nested: w.nested, Source: w.text(d)}
	c.Words = []Word{{Text: d.Variant.Value, Literal: true}}
	var flags string
	names := 0
	for _, as := range d.Args {
		t := w.text(as)
		c.Argv = append(c.Argv, t)
		c.Words = append(c.Words, Word{Text: t, Literal: !strings.ContainsAny(t, "$`")})
		if as.Naked && as.Name == nil && as.Value != nil {
			v, lit := wordValue(as.Value)
			if lit && strings.HasPrefix(v, "-") {
				flags += v[1:]
				continue
			}
			if lit && injects(v) {
				c.Classes |= ClassExec | ClassUnknown // declare 'a[$(cmd)]=1' runs cmd
			}
			if !lit {
				c.Classes |= ClassExec | ClassUnknown // computed declaration
			}
			if lit && isName(v) && !strings.ContainsAny(flags, "pfFn") && (d.Variant.Value == "export" || strings.Contains(flags, "x")) &&
				!w.ev.assigned[v] {
				// export NAME: its value may be what an earlier call of a
				// persistent shell set; it now reaches every program
				f := assignEffect(v, word{val: "$" + v})
				c.Classes |= f.class
				c.Writes = append(c.Writes, f.writes...)
			}
			names++
			continue
		}
		names++
		before := as.Name != nil && w.ev.assigned[as.Name.Value]
		w.assignEval(as)
		if as.Name != nil {
			if as.Naked && strings.ContainsAny(flags, "p") {
				w.ref(as.Name.Value)
			}
			if as.Naked && !strings.ContainsAny(flags, "pfFn") && (d.Variant.Value == "export" || strings.Contains(flags, "x")) &&
				!before {
				f := assignEffect(as.Name.Value, word{val: "$" + as.Name.Value}) // as above
				c.Classes |= f.class
				c.Writes = append(c.Writes, f.writes...)
			}
			if !as.Naked {
				f := assignEffect(as.Name.Value, w.assignValue(as))
				if f.testPath {
					w.exportedTestPath = true
				}
				c.Classes |= f.class
				c.Writes = append(c.Writes, f.writes...)
			}
		}
	}
	if names == 0 && (!strings.ContainsAny(flags, "fFn") || d.Variant.Value == "export" && !strings.ContainsAny(flags, "fF")) {
		w.a.DumpsEnv = true // export -n alone lists the exported variables too
	}
	if strings.ContainsAny(flags, "in") {
		w.ev.evaluates = true // integer variables evaluate what is assigned; namerefs name any variable
	}
	if strings.Contains(flags, "n") && d.Variant.Value != "export" {
		w.a.IndirectEnv = true
	}
	ensureTarget(&c)
	w.a.Commands = append(w.a.Commands, c)
	for _, as := range d.Args {
		w.node(as)
	}
}

// assignValue returns the value an assignment gives, as a word (an array
// or an append is not a literal value).
func (w *walker) assignValue(as *syntax.Assign) word {
	if as.Array != nil || as.Append || as.Index != nil {
		return word{val: w.text(as)}
	}
	if as.Value == nil {
		return word{lit: true}
	}
	return w.mkWord(as.Value)
}

// modulePathReaders are programs classified read that load modules from
// PYTHONPATH, NODE_PATH, RUBYLIB, PERL5LIB or GEM_PATH (python -m
// json.tool, pip list, node --version, gem list).
var modulePathReaders = map[string]bool{
	"python": true, "python3": true, "pypy": true, "pypy3": true, "pip": true, "pip3": true, "node": true, "nodejs": true,
	"ruby": true, "perl": true, "gem": true, "bundle": true, "irb": true, "npm": true, "npx": true,
}

// progName returns the name to look a program up by, and false when the
// program is a path we do not trust to be the system program (./x, /tmp/x).
func progName(p string) (string, bool) {
	if !strings.Contains(p, "/") {
		return p, true
	}
	dir, base := path.Split(p)
	switch path.Clean(dir) {
	case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin",
		"/opt/homebrew/bin", "/usr/libexec/git-core":
		return base, base != ""
	}
	return base, false
}

// run unwraps wrappers and classifies the inner program.
func (x *cmdCtx) run() {
	for {
		if len(x.args) == 0 {
			return
		}
		p := x.args[0]
		if !p.lit {
			x.c.Program = ""
			x.c.Dynamic = true
			x.c.Classes |= ClassExec
			x.w.cwdDyn = true // it may be cd
			return
		}
		name, trusted := progName(p.val)
		x.c.Program = name
		if !trusted || name == "" {
			if IsTestRunner(literal(x.args)) {
				x.c.Classes |= ClassTest // ./gradlew test, node_modules/.bin/jest
				x.runnerOptions()
				return
			}
			if name == "statewright" {
				progStatewright(x)
			} else if _, ok := nestedAgents[name]; ok {
				progAgent(x)
			}
			x.c.Classes |= ClassExec
			return
		}
		if x.hops < 16 {
			if wr, ok := wrappers[name]; ok {
				inner, ok := wr(x, x.args[1:])
				if ok && len(inner) == 0 {
					return // the wrapper ran a script it recorded (flock -c, watch)
				}
				if ok {
					x.hops++
					x.c.Wrappers = append(x.c.Wrappers, name)
					x.args = inner
					continue
				}
			}
		}
		if x.w.funcs[name] {
			x.w.cwdDyn = true // its body may cd
			return            // a function defined in this line: its body was walked
		}
		x.classify(lookupName(name))
		return
	}
}

// lookupName normalises versioned names (python3.12, pip3) for the table.
func lookupName(name string) string {
	if _, ok := programs()[name]; ok {
		return name
	}
	if strings.HasPrefix(name, "mkfs") {
		return "mkfs"
	}
	t := strings.TrimRight(name, "0123456789.")
	if _, ok := programs()[t]; ok && t != "" {
		return t
	}
	return name
}

// operands returns the args after the program.
func (x *cmdCtx) rest() []word { return x.args[1:] }

func (x *cmdCtx) add(c Class) { x.c.Classes |= c }

// infoOnly reports whether every argument is one of flags (--version,
// --help): the program prints about itself and does nothing else.
func (x *cmdCtx) infoOnly(flags ...string) bool {
	args := x.rest()
	if len(args) == 0 {
		return false
	}
	for _, a := range args {
		if !a.lit || !contains(flags, a.val) {
			return false
		}
	}
	return true
}

func (x *cmdCtx) write(ws ...word) {
	for _, a := range ws {
		x.c.Writes = append(x.c.Writes, x.targetOf(a))
	}
}

func (x *cmdCtx) read(ws ...word) {
	for _, a := range ws {
		if a.lit && a.val == "-" || a.input {
			continue
		}
		x.c.Reads = append(x.c.Reads, x.targetOf(a))
	}
}

func (x *cmdCtx) targetOf(a word) Target {
	if !a.lit {
		return Target{Path: a.val, Dynamic: true}
	}
	return x.w.pathTarget(a.val)
}

// writeFile records a written file and the write class, unless the file
// is a harmless device (/dev/null, /dev/stdout, ...).
func (x *cmdCtx) writeFile(a word) {
	if a.lit && harmlessDevice(a.val) {
		return
	}
	x.add(ClassWrite)
	x.write(a)
}

func (x *cmdCtx) writeDyn(desc string) {
	x.c.Writes = append(x.c.Writes, Target{Path: desc, Dynamic: true})
}

// inner classifies argv as a further command run by this one (find -exec,
// fd -x) and appends it.
func (x *cmdCtx) inner(argv []word, wrapper string, extraArgs bool) {
	if len(argv) == 0 {
		return
	}
	argv = append([]word(nil), argv...)
	for i, a := range argv {
		if a.lit && strings.Contains(a.val, "{}") {
			argv[i] = word{val: a.val} // replaced by each found path
		}
	}
	c := Command{Nested: x.c.Nested, Source: x.c.Source, Wrappers: []string{wrapper}}
	c.Words = make([]Word, len(argv))
	for i, a := range argv {
		c.Words[i] = Word{Text: a.val, Literal: a.lit}
	}
	ix := &cmdCtx{w: x.w, c: &c, args: argv, xargs: extraArgs, hops: x.hops + 1}
	ix.run()
	ensureTarget(&c)
	c.Argv = make([]string, len(ix.args))
	for i, a := range ix.args {
		c.Argv[i] = a.val
	}
	x.extra = append(x.extra, c)
	x.extra = append(x.extra, ix.extra...)
	x.scripts = append(x.scripts, ix.scripts...)
}

// script records a literal shell script run by this command; a dynamic
// script makes the command exec.
func (x *cmdCtx) script(a word) {
	if !a.lit {
		x.add(ClassExec)
		return
	}
	x.scripts = append(x.scripts, a.val)
}

// runnerOutputOpts are test-runner options that write a file or directory
// the caller names (go test -o, -coverprofile, pytest --junitxml, ...).
var runnerOutputOpts = []string{
	"-o", "-coverprofile", "-cpuprofile", "-memprofile", "-blockprofile", "-mutexprofile", "-trace", "-outputdir",
	"--junitxml", "--junit-xml", "--resultlog", "--report-log", "--outputFile", "--coverageDirectory", "--target-dir",
}

// runnerWrites records the files a test runner's output options write, so
// protected paths and edit limits see them.
func (x *cmdCtx) runnerWrites(argv []string) {
	for i, a := range argv {
		a = strings.TrimPrefix(a, "-test.")
		if a != argv[i] {
			a = "-" + a
		}
		for _, o := range runnerOutputOpts {
			if o == "-o" && argv[0] != "go" {
				continue // pytest -o is an ini override
			}
			if v, ok := strings.CutPrefix(a, o+"="); ok {
				x.writeFile(word{val: v, lit: true})
			} else if a == o && i+1 < len(argv) {
				x.writeFile(word{val: argv[i+1], lit: true})
			}
		}
	}
}

// classify looks the program up in the table and applies it.
func (x *cmdCtx) classify(name string) {
	if !testRunnerNames[name] {
		// not a runner: skip the argv copy
	} else if argv := literal(x.args); IsTestRunner(argv) {
		x.add(ClassTest)
		if !x.runnerOptions() {
			if testRunnerExec(argv) {
				x.add(ClassExec)
			}
			x.runnerWrites(argv)
			if len(argv) < len(x.args) {
				x.add(ClassExec | ClassUnknown) // a dynamic word may be any option
			}
		}
		if ops := dropOpts(argv[1:]); len(ops) > 0 && !standaloneRunners[name] {
			x.c.Subcommand = ops[0]
		}
		return
	}
	sp, ok := programs()[name]
	if !ok {
		x.add(ClassExec)
		return
	}
	if sp.fn != nil {
		sp.fn(x)
	} else {
		x.generic(sp)
	}
	if x.xargs && x.c.Classes&(ClassWrite|ClassModify|ClassDelete) != 0 && !hasDynamic(x.c.Writes) {
		x.writeDyn("{}") // the arguments xargs or find add
	}
}

// generic applies a table entry without a custom function.
func (x *cmdCtx) generic(sp spec) {
	x.add(sp.class)
	if sp.ops == opNone && len(sp.execOpts) == 0 && !sp.sensitive && sp.g == "" {
		return
	}
	var p parsed
	if sp.g != "" {
		p, _ = x.gopt(sp.g)
	} else {
		p = getopt(x.rest(), sp.short, sp.long, false)
	}
	ops := p.ops
	// files of names or patterns: read
	x.read(p.all("--files0-from", "--exclude-from", "--include-from")...)
	if sp.ops == opPatternRead {
		x.read(p.all("f", "--file")...)
	}
	switch sp.ops {
	case opRead:
		x.read(ops...)
	case opPatternRead:
		if len(ops) > 0 && !p.has("e", "f", "--regexp", "--file") {
			ops = ops[1:]
		}
		x.read(ops...)
	case opWrite:
		x.write(ops...)
	case opLastWrite:
		if t, ok := p.get("t", "--target-directory"); ok {
			x.write(t)
			x.read(ops...)
			return
		}
		if len(ops) == 1 {
			x.write(word{val: path.Base(ops[0].val), lit: ops[0].lit})
			x.read(ops[0])
			return
		}
		if len(ops) > 1 {
			x.read(ops[:len(ops)-1]...)
			x.write(ops[len(ops)-1])
		}
	}
	if (sp.sensitive || len(sp.execOpts) > 0) && p.dyn {
		x.add(ClassExec | ClassUnknown)
	}
	if len(sp.execOpts) > 0 && p.has(sp.execOpts...) {
		x.add(ClassExec)
	}
}

// ensureTarget gives a command that writes, modifies or deletes but named
// no path a dynamic target, so "writes something" is never "writes nothing".
func ensureTarget(c *Command) {
	if c.Classes&(ClassWrite|ClassModify|ClassDelete) == 0 || len(c.Writes) > 0 {
		return
	}
	desc := "files written by " + c.Program
	switch {
	case c.Classes&ClassPackageInstall != 0:
		desc = "package files"
	case c.Program == "git":
		desc = "git repository"
	case c.Program == "":
		desc = "unnamed files"
	}
	c.Writes = append(c.Writes, Target{Path: desc, Dynamic: true})
}

func hasDynamic(ts []Target) bool {
	for _, t := range ts {
		if t.Dynamic {
			return true
		}
	}
	return false
}
