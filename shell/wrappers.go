package shell

import "strings"

// A wrapper consumes its own options from args and returns the argv of the
// command it runs. ok is false when it runs no command (`env` alone, `sudo
// -l`, `command -v x`); the wrapper is then classified as a program by its
// table entry. A wrapper may add classes (privilege, background), targets and
// scripts to x. An empty inner argv with ok true means the wrapper ran a
// script it recorded itself (flock -c, watch).
type wrapper func(x *cmdCtx, args []word) (inner []word, ok bool)

var wrappers map[string]wrapper

func init() {
	wrappers = map[string]wrapper{
		"builtin":    wrapBuiltin,
		"bunx":       wrapRunner(""),
		"busybox":    wrapBusybox,
		"caffeinate": wrapSimple("tw", nil, 0),
		"chroot":     wrapChroot,
		"command":    wrapCommand,
		"doas":       wrapDoas,
		"env":        wrapEnv,
		"exec":       wrapExec,
		"flock":      wrapFlock,
		"ionice":     wrapIonice,
		"nice":       wrapSimple("n", []string{"adjustment"}, 0),
		"nohup":      wrapSimple("", nil, ClassBackground),
		"npx":        wrapRunner("cp"),
		"parallel":   wrapParallel,
		"pnpx":       wrapRunner(""),
		"setsid":     wrapSimple("", nil, ClassBackground),
		"stdbuf":     wrapSimple("ioe", []string{"input", "output", "error"}, 0),
		"sudo":       wrapSudo,
		"time":       wrapTime,
		"timeout":    wrapTimeout,
		"toybox":     wrapBusybox,
		"unbuffer":   wrapSimple("", nil, 0),
		"watch":      wrapWatch,
		"xargs":      wrapXargs,
	}
}

// wrapSimple is a wrapper with options then a command.
func wrapSimple(short string, long []string, cls Class) wrapper {
	return func(x *cmdCtx, args []word) ([]word, bool) {
		p := getopt(args, short, long, true)
		if len(p.ops) == 0 {
			return nil, false
		}
		x.add(cls)
		return p.ops, true
	}
}

// stripAssigns skips NAME=value words (env, sudo); code-loading variables
// make the command exec.
func stripAssigns(x *cmdCtx, ops []word) []word {
	for len(ops) > 0 && ops[0].lit {
		name, _, ok := strings.Cut(ops[0].val, "=")
		if !ok || !isName(name) {
			break
		}
		x.c.Assigns = append(x.c.Assigns, ops[0].val)
		if isCodeLoadingVar(name) {
			x.add(ClassExec)
		}
		ops = ops[1:]
	}
	return ops
}

func wrapEnv(x *cmdCtx, args []word) ([]word, bool) {
	p := getopt(args, "uCS", []string{"unset", "chdir", "split-string"}, true)
	ops := stripAssigns(x, p.ops)
	if s, ok := p.get("S", "--split-string"); ok {
		if !s.lit {
			x.add(ClassExec)
			return nil, true
		}
		var pre []word
		for _, f := range strings.Fields(s.val) {
			pre = append(pre, word{val: f, lit: true})
		}
		ops = append(pre, ops...)
	}
	if p.dyn {
		x.add(ClassExec | ClassUnknown)
	}
	if len(ops) == 0 {
		return nil, false
	}
	return ops, true
}

func wrapSudo(x *cmdCtx, args []word) ([]word, bool) {
	p := getopt(args, "ugpCDrtTUR", []string{"user", "group", "prompt", "close-from", "chdir", "role",
		"type", "command-timeout", "other-user", "chroot", "host"}, true)
	x.add(ClassPrivilege)
	if p.has("b", "--background") {
		x.add(ClassBackground)
	}
	ops := stripAssigns(x, p.ops)
	if p.has("e", "--edit") {
		x.add(ClassModify)
		x.write(ops...)
		return nil, true
	}
	if p.dyn {
		x.add(ClassExec | ClassUnknown)
	}
	if len(ops) == 0 {
		return nil, false
	}
	return ops, true
}

func wrapDoas(x *cmdCtx, args []word) ([]word, bool) {
	p := getopt(args, "uC", nil, true)
	x.add(ClassPrivilege)
	if len(p.ops) == 0 {
		return nil, false
	}
	return p.ops, true
}

func wrapTimeout(x *cmdCtx, args []word) ([]word, bool) {
	p := getopt(args, "sk", []string{"signal", "kill-after"}, true)
	if len(p.ops) < 2 {
		return nil, false
	}
	return p.ops[1:], true
}

func wrapTime(x *cmdCtx, args []word) ([]word, bool) {
	p := getopt(args, "of", []string{"output", "format"}, true)
	for _, o := range p.all("o", "--output") {
		x.writeFile(o)
	}
	if len(p.ops) == 0 {
		return nil, false
	}
	return p.ops, true
}

func wrapCommand(x *cmdCtx, args []word) ([]word, bool) {
	p := getopt(args, "", nil, true)
	if p.has("v", "V") || len(p.ops) == 0 {
		return nil, false
	}
	return p.ops, true
}

func wrapBuiltin(x *cmdCtx, args []word) ([]word, bool) {
	if len(args) == 0 {
		return nil, false
	}
	return args, true
}

func wrapExec(x *cmdCtx, args []word) ([]word, bool) {
	p := getopt(args, "a", nil, true)
	if len(p.ops) == 0 {
		return nil, false
	}
	return p.ops, true
}

func wrapXargs(x *cmdCtx, args []word) ([]word, bool) {
	p := getopt(args, "adEILnPs", []string{"arg-file", "delimiter", "eof", "replace", "max-lines",
		"max-args", "max-procs", "max-chars", "process-slot-var"}, true)
	for _, f := range p.all("a", "--arg-file") {
		x.add(ClassRead)
		x.read(f)
	}
	x.xargs = true
	if p.dyn {
		x.add(ClassExec | ClassUnknown)
	}
	if len(p.ops) == 0 {
		return []word{{val: "echo", lit: true}}, true
	}
	return p.ops, true
}

func wrapIonice(x *cmdCtx, args []word) ([]word, bool) {
	p := getopt(args, "cnpPu", []string{"class", "classdata", "pid", "pgid", "uid"}, true)
	if p.has("p", "P", "u", "--pid", "--pgid", "--uid") || len(p.ops) == 0 {
		return nil, false
	}
	return p.ops, true
}

func wrapFlock(x *cmdCtx, args []word) ([]word, bool) {
	p := getopt(args, "wEc", []string{"timeout", "conflict-exit-code", "command"}, true)
	if len(p.ops) > 0 {
		x.add(ClassWrite)
		x.write(p.ops[0]) // the lock file is created
	}
	if c, ok := p.get("c", "--command"); ok {
		x.script(c)
		return nil, true
	}
	if len(p.ops) < 2 {
		return nil, false
	}
	return p.ops[1:], true
}

func wrapChroot(x *cmdCtx, args []word) ([]word, bool) {
	p := getopt(args, "", []string{"userspec", "groups"}, true)
	x.add(ClassPrivilege)
	if len(p.ops) < 2 {
		return nil, false
	}
	return p.ops[1:], true
}

func wrapBusybox(x *cmdCtx, args []word) ([]word, bool) {
	if len(args) == 0 || !args[0].lit || strings.HasPrefix(args[0].val, "-") {
		return nil, false
	}
	return args, true
}

func wrapWatch(x *cmdCtx, args []word) ([]word, bool) {
	p := getopt(args, "nq", []string{"interval", "equexit"}, true)
	if len(p.ops) == 0 {
		return nil, false
	}
	if p.has("x", "--exec") {
		return p.ops, true
	}
	var parts []string
	for _, o := range p.ops {
		if !o.lit {
			x.add(ClassExec)
			return nil, true
		}
		parts = append(parts, o.val)
	}
	x.script(word{val: strings.Join(parts, " "), lit: true})
	return nil, true
}

func wrapParallel(x *cmdCtx, args []word) ([]word, bool) {
	p := getopt(args, "jSIn", []string{"jobs", "sshlogin", "joblog", "results"}, true)
	x.add(ClassExec)
	var inner []word
	for _, o := range p.ops {
		if o.lit && (o.val == ":::" || o.val == "::::" || o.val == ":::+") {
			break
		}
		inner = append(inner, o)
	}
	if len(inner) == 0 {
		return nil, false
	}
	x.xargs = true
	return inner, true
}

// wrapRunner unwraps package runners (npx, bunx) only for known test
// runners; anything else they run is exec.
func wrapRunner(short string) wrapper {
	return func(x *cmdCtx, args []word) ([]word, bool) {
		p := getopt(args, short, []string{"package", "call"}, true)
		if len(p.ops) > 0 && p.ops[0].lit {
			pkg := p.ops[0].val
			if i := strings.LastIndex(pkg, "@"); i > 0 {
				pkg = pkg[:i] // drop @version
			}
			if agentPackages[pkg] {
				x.add(ClassNestedAgent)
			}
		}
		if len(p.ops) == 0 || !IsTestRunner(literal(p.ops)) || p.has("c", "--call", "p", "--package") {
			return nil, false // npx -c CMD runs a shell command, -p fetches any package
		}
		return p.ops, true
	}
}

// literal returns the values of literal words, stopping at the first
// dynamic one.
func literal(ws []word) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		if !w.lit {
			break
		}
		out = append(out, w.val)
	}
	return out
}
