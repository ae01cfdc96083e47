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
		"caffeinate": wrapSimple("caffeinate", 0, 0),
		"chroot":     wrapChroot,
		"chrt":       wrapChrt,
		"command":    wrapCommand,
		"doas":       wrapSimple("doas", 0, ClassPrivilege),
		"env":        wrapEnv,
		"exec":       wrapSimple("exec", 0, 0),
		"flock":      wrapFlock,
		"ionice":     wrapIonice,
		"ip":         wrapIp,
		"nice":       wrapNice,
		"nohup":      wrapSimple("nohup", 0, ClassBackground),
		"npx":        wrapRunner("cp"),
		"nsenter":    wrapSimple("nsenter", 0, ClassPrivilege),
		"parallel":   wrapParallel,
		"pkexec":     wrapSimple("pkexec", 0, ClassPrivilege),
		"pnpx":       wrapRunner(""),
		"prlimit":    wrapSimple("prlimit", 0, 0),
		"runuser":    wrapRunuser,
		"setpriv":    wrapSimple("setpriv", 0, ClassPrivilege),
		"setsid":     wrapSimple("setsid", 0, ClassBackground),
		"stdbuf":     wrapSimple("stdbuf", 0, 0),
		"sudo":       wrapSudo,
		"taskset":    wrapTaskset,
		"time":       wrapSimple("time", 0, 0),
		"timeout":    wrapSimple("timeout", 1, 0),
		"toybox":     wrapBusybox,
		"unbuffer":   wrapSimple("unbuffer", 0, 0),
		"unshare":    wrapSimple("unshare", 0, ClassPrivilege),
		"watch":      wrapWatch,
		"xargs":      wrapXargs,
	}
}

// wrapParse parses a wrapper's own options with its grammar, records what
// they do, and returns the words from its first operand on. An option the
// grammar does not know, or a word that may expand to options, hides where
// the command starts: exec and unknown.
func wrapParse(x *cmdCtx, name string, args []word) (*ParsedArgs, []word) {
	g := grammars()[name]
	p := g.parse(args)
	x.applyOptions(g, p)
	if p.Unknown || p.Hidden {
		x.add(ClassExec | ClassUnknown)
	}
	if len(p.Operands) == 0 {
		return p, nil
	}
	return p, args[p.Operands[0].Index:]
}

// wrapSimple is a wrapper with options, skip operands (timeout's
// duration), then a command; cls is what the wrapper adds (sudo's
// privilege, nohup's background).
func wrapSimple(name string, skip int, cls Class) wrapper {
	return func(x *cmdCtx, args []word) ([]word, bool) {
		x.add(cls)
		_, ops := wrapParse(x, name, args)
		if len(ops) <= skip {
			return nil, false
		}
		return ops[skip:], true
	}
}

// stripAssigns skips NAME=value words (env, sudo) and records what each
// assignment does to the command (assignEffect).
func stripAssigns(x *cmdCtx, ops []word) []word {
	for len(ops) > 0 && ops[0].lit {
		name, _, ok := strings.Cut(ops[0].val, "=")
		if !ok || !isName(name) {
			break
		}
		x.c.Assigns = append(x.c.Assigns, ops[0].val)
		x.applyAssign(name, word{val: ops[0].val[len(name)+1:], lit: true})
		ops = ops[1:]
	}
	return ops
}

func wrapEnv(x *cmdCtx, args []word) ([]word, bool) {
	p, ops := wrapParse(x, "env", args)
	ops = stripAssigns(x, ops)
	if p.Has("C") {
		x.w.cwdDyn = true // the command runs in another directory
	}
	for _, s := range p.Values("S") {
		if !s.Literal {
			x.add(ClassExec)
			return nil, true
		}
		var pre []word
		for _, f := range strings.Fields(s.Value) {
			pre = append(pre, word{val: f, lit: true})
		}
		ops = append(pre, ops...)
	}
	if len(ops) == 0 {
		return nil, false
	}
	return ops, true
}

func wrapSudo(x *cmdCtx, args []word) ([]word, bool) {
	x.add(ClassPrivilege)
	p, ops := wrapParse(x, "sudo", args)
	if p.Has("b") {
		x.add(ClassBackground)
	}
	ops = stripAssigns(x, ops)
	if p.Has("e") {
		x.add(ClassModify)
		x.write(ops...)
		return nil, true
	}
	if len(ops) == 0 {
		return nil, false
	}
	return ops, true
}

func wrapNice(x *cmdCtx, args []word) ([]word, bool) {
	if len(args) > 0 && args[0].lit && len(args[0].val) > 1 && args[0].val[0] == '-' &&
		strings.Trim(args[0].val[1:], "0123456789") == "" {
		args = args[1:] // nice -5 CMD: the historical adjustment
	}
	return wrapSimple("nice", 0, 0)(x, args)
}

func wrapCommand(x *cmdCtx, args []word) ([]word, bool) {
	p, ops := wrapParse(x, "command", args)
	if p.Has("v", "V") || len(ops) == 0 {
		return nil, false
	}
	return ops, true
}

func wrapBuiltin(x *cmdCtx, args []word) ([]word, bool) {
	if len(args) == 0 {
		return nil, false
	}
	return args, true
}

func wrapXargs(x *cmdCtx, args []word) ([]word, bool) {
	p, ops := wrapParse(x, "xargs", args)
	if len(p.Values("a")) > 0 {
		x.add(ClassRead)
	}
	x.xargs = true
	if len(ops) == 0 {
		ops = []word{{val: "echo", lit: true}}
	}
	for _, f := range x.w.pipeWords {
		x.read(word{val: f, lit: true}) // echo PATH | xargs cat reads PATH
	}
	// the words xargs reads from its input may be options of the command:
	// appended at the end, or in place of the replace string (-I R, -i)
	repl := ""
	if v := p.Values("I"); len(v) > 0 {
		repl = v[0].Value
	} else if p.Has("i") {
		repl = "{}"
		if v := p.Values("i"); len(v) > 0 && v[0].Value != "" {
			repl = v[0].Value
		}
	}
	in := word{val: "(xargs input)", split: true, dash: true, input: true}
	if repl == "" {
		return append(append([]word{}, ops...), in), true
	}
	out := append([]word{}, ops...)
	for i, a := range out[1:] {
		if a.lit && strings.HasPrefix(a.val, repl) {
			out[i+1] = word{val: a.val, dash: true, input: true} // an input line, maybe an option
		}
	}
	return out, true
}

func wrapIonice(x *cmdCtx, args []word) ([]word, bool) {
	p, ops := wrapParse(x, "ionice", args)
	if p.Has("p", "P", "u") || len(ops) == 0 {
		return nil, false
	}
	return ops, true
}

// wrapChrt: chrt [options] PRIORITY COMMAND; -p changes a process.
func wrapChrt(x *cmdCtx, args []word) ([]word, bool) {
	p, ops := wrapParse(x, "chrt", args)
	if p.Has("p") {
		x.add(ClassProcess)
		return nil, true
	}
	if p.Has("m") || len(ops) < 2 {
		return nil, false
	}
	return ops[1:], true
}

// wrapTaskset: taskset [options] MASK COMMAND; -p changes a process.
func wrapTaskset(x *cmdCtx, args []word) ([]word, bool) {
	p, ops := wrapParse(x, "taskset", args)
	if p.Has("p") {
		x.add(ClassProcess)
		return nil, true
	}
	if len(ops) < 2 {
		return nil, false
	}
	return ops[1:], true
}

// wrapRunuser: runuser -u USER [--] COMMAND, or su's form with -c.
func wrapRunuser(x *cmdCtx, args []word) ([]word, bool) {
	x.add(ClassPrivilege)
	p, ops := wrapParse(x, "runuser", args)
	if c := p.Values("c", "session-command"); len(c) > 0 {
		x.script(fromArg(c[0]))
		return nil, true
	}
	if p.Has("u") && len(ops) > 0 {
		return ops, true
	}
	x.add(ClassExec) // a login shell
	return nil, true
}

// wrapIp: ip netns exec NAME COMMAND runs COMMAND in a network namespace.
func wrapIp(x *cmdCtx, args []word) ([]word, bool) {
	ops := literal(args)
	for i := 0; i < len(ops); i++ {
		if strings.HasPrefix(ops[i], "-") {
			if ops[i] == "-n" || ops[i] == "-netns" || ops[i] == "-b" || ops[i] == "-batch" || ops[i] == "-f" || ops[i] == "-family" {
				i++
			}
			continue
		}
		if ops[i] == "netns" || ops[i] == "netn" || ops[i] == "net" {
			if i+2 < len(args) && args[i+1].lit && args[i+1].val == "exec" {
				x.add(ClassPrivilege)
				return args[i+3:], true
			}
		}
		break
	}
	return nil, false
}

func wrapFlock(x *cmdCtx, args []word) ([]word, bool) {
	p, ops := wrapParse(x, "flock", args)
	if len(ops) > 0 {
		x.add(ClassWrite)
		x.write(ops[0]) // the lock file is created
	}
	if c := p.Values("c"); len(c) > 0 {
		x.script(fromArg(c[0]))
		return nil, true
	}
	if len(ops) < 2 {
		return nil, false
	}
	if ops[1].lit && (ops[1].val == "-c" || ops[1].val == "--command") {
		if len(ops) > 2 {
			x.script(ops[2]) // flock FILE -c COMMAND
		}
		return nil, true
	}
	return ops[1:], true
}

func wrapChroot(x *cmdCtx, args []word) ([]word, bool) {
	x.add(ClassPrivilege)
	_, ops := wrapParse(x, "chroot", args)
	if len(ops) < 2 {
		return nil, false
	}
	return ops[1:], true
}

func wrapBusybox(x *cmdCtx, args []word) ([]word, bool) {
	if len(args) == 0 || !args[0].lit || strings.HasPrefix(args[0].val, "-") {
		return nil, false
	}
	return args, true
}

func wrapWatch(x *cmdCtx, args []word) ([]word, bool) {
	p, ops := wrapParse(x, "watch", args)
	if len(ops) == 0 {
		return nil, false
	}
	if p.Has("x") {
		return ops, true
	}
	var parts []string
	for _, o := range ops {
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

// wrapRunner unwraps package runners (npx, bunx, pnpx) only for known test
// runners, recording what their own options do (-p fetches and runs a
// package, -c runs a shell command); anything else they run is exec.
func wrapRunner(short string) wrapper {
	return func(x *cmdCtx, args []word) ([]word, bool) {
		own, inner, ok := splitLauncher("npx", args)
		if ok && len(inner) > 0 && inner[0].lit {
			pkg := inner[0].val
			if i := strings.LastIndex(pkg, "@"); i > 0 {
				pkg = pkg[:i] // drop @version
			}
			if agentPackages[pkg] {
				x.add(ClassNestedAgent)
			}
		}
		if !ok || len(inner) == 0 || !IsTestRunner(literal(inner)) || len(literal(inner)) < len(inner) && !inner[0].lit {
			return nil, false
		}
		g := grammars()["npx"]
		x.applyOptions(g, g.parse(own))
		return inner, true
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
