package shell

import (
	"strings"
)

// This file holds the argument-aware classifiers the table refers to.

func progCd(x *cmdCtx) {
	x.add(ClassRead)
	if x.c.Program == "popd" {
		x.w.cwdDyn = true
		return
	}
	x.w.cd(x.rest())
}

func progEnv(x *cmdCtx) {
	x.add(ClassRead)
	x.w.a.DumpsEnv = true
}

func progSudo(x *cmdCtx) {
	x.add(ClassPrivilege)
	p := getopt(x.rest(), "ugpCDrtTUR", nil, true)
	if p.has("s", "i", "--shell", "--login") {
		x.add(ClassExec)
		return
	}
	x.add(ClassRead)
}

func progPrintenv(x *cmdCtx) {
	x.add(ClassRead)
	p := getopt(x.rest(), "", nil, false)
	if len(p.ops) == 0 {
		x.w.a.DumpsEnv = true
	}
	for _, o := range p.ops {
		if o.lit {
			x.w.ref(o.val)
		} else {
			x.w.a.IndirectEnv = true
		}
	}
}

func progSet(x *cmdCtx) {
	x.add(ClassRead)
	for _, a := range x.rest() {
		if !a.lit || injects(a.val) {
			x.w.ev.tainted = true // set -- $(cmd): positional parameters
		}
	}
	if len(x.rest()) == 0 {
		x.w.a.DumpsEnv = true
	}
}

// progDeclCall handles export/declare run as a simple command (`builtin
// export -p`, `command declare -x`).
func progDeclCall(x *cmdCtx) {
	x.add(ClassRead)
	names := 0
	exports := x.c.Program == "export"
	for _, a := range x.rest() {
		if a.lit && strings.HasPrefix(a.val, "-") {
			if strings.Contains(a.val, "x") {
				exports = true
			}
			if strings.ContainsAny(a.val, "pfFn") {
				exports = false
			}
			continue
		}
		names++
		if a.lit && exports && isName(a.val) && !x.w.ev.assigned[a.val] {
			f := assignEffect(a.val, word{val: "$" + a.val}) // see decl
			x.applyVarEffect(varEffect{class: f.class, writes: f.writes})
		}
		if a.lit {
			if n, v, ok := strings.Cut(a.val, "="); ok && isName(n) {
				f := assignEffect(n, word{val: v, lit: true})
				if f.testPath {
					x.w.exportedTestPath = true
				}
				x.applyVarEffect(varEffect{class: f.class, writes: f.writes})
			}
		} else {
			x.add(ClassExec | ClassUnknown)
		}
	}
	if names == 0 {
		x.w.a.DumpsEnv = true
	}
}

func progCompgen(x *cmdCtx) {
	x.add(ClassRead)
	p := getopt(x.rest(), "AGWFCXPS", nil, false)
	if p.has("v", "e") {
		x.w.a.DumpsEnv = true
	}
	for _, a := range p.all("A") {
		if a.val == "variable" || a.val == "export" {
			x.w.a.DumpsEnv = true
		}
	}
	if p.has("C", "F") {
		x.add(ClassExec)
	}
}

func progEnvsubst(x *cmdCtx) {
	x.add(ClassRead)
	x.w.a.DumpsEnv = true
}

func progEnable(x *cmdCtx) {
	x.add(ClassRead)
	if p := getopt(x.rest(), "f", nil, false); p.has("f") {
		x.add(ClassExec) // loads a shared object
	} else if p.has("n") && len(p.ops) > 0 {
		x.add(ClassExec) // a later call of that name runs a program found in PATH instead
	}
}

func progAlias(x *cmdCtx) {
	x.add(ClassRead)
	for _, a := range x.rest() {
		if !a.lit || strings.Contains(a.val, "=") {
			x.add(ClassExec)
		}
	}
}

// progTrap: the action is a script; it is also exec, because where the
// harness keeps one shell for the session the trap outlives the command
// and runs later (DEBUG before every command, EXIT when the shell ends),
// in whatever phase that is.
func progTrap(x *cmdCtx) {
	x.add(ClassRead)
	p := getopt(x.rest(), "", nil, true)
	if len(p.ops) >= 2 && !(p.ops[0].lit && (p.ops[0].val == "-" || p.ops[0].val == "")) {
		x.script(p.ops[0])
		x.add(ClassExec)
	}
}

func progEval(x *cmdCtx) {
	args := x.rest()
	var parts []string
	for _, a := range args {
		if !a.lit {
			x.add(ClassExec)
			x.w.cwdDyn = true // the evaluated text may cd
			return
		}
		parts = append(parts, a.val)
	}
	if len(parts) > 0 {
		x.inShell = true
		x.script(word{val: strings.Join(parts, " "), lit: true})
	}
}

func progSource(x *cmdCtx) {
	x.add(ClassExec)
	if len(x.rest()) > 0 {
		x.read(x.rest()[0])
	}
	x.w.cwdDyn = true // the sourced file may cd
}

// progShell handles bash/sh/zsh/dash/ksh/fish: -c strings are parsed as
// nested code; a script file is exec; a literal here-document on stdin is
// parsed too.
func progShell(x *cmdCtx) {
	args := x.rest()
	cflag := false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			break
		}
		v := a.val
		if v == "--" {
			i++
			break
		}
		if v == "-o" || v == "+o" || v == "-O" || v == "+O" || v == "--init-file" || v == "--rcfile" {
			i++
			if v == "--init-file" || v == "--rcfile" {
				x.add(ClassExec)
			}
			continue
		}
		if strings.HasPrefix(v, "--") {
			if v == "--version" || v == "--help" {
				x.add(ClassRead)
				return
			}
			continue
		}
		if (strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+")) && len(v) > 1 {
			if strings.Contains(v[1:], "c") && v[0] == '-' {
				cflag = true
			}
			continue
		}
		break
	}
	ops := args[min(i, len(args)):]
	if cflag {
		if len(ops) == 0 {
			x.add(ClassExec | ClassUnknown)
			return
		}
		x.script(ops[0])
		return
	}
	if len(ops) > 0 {
		x.add(ClassExec)
		x.read(ops[0])
		return
	}
	// the script comes from stdin
	if x.stdin != nil && x.stdin.lit {
		x.scripts = append(x.scripts, x.stdin.text)
		return
	}
	x.add(ClassExec)
}

func progSu(x *cmdCtx) {
	x.add(ClassPrivilege)
	p := getopt(x.rest(), "cgGs", []string{"command", "group", "supp-group", "shell", "session-command"}, false)
	if c, ok := p.get("c", "--command", "--session-command"); ok {
		x.script(c)
		return
	}
	x.add(ClassExec)
}

// interpreter options that take the inline program.
func progPython(x *cmdCtx) {
	args := x.rest()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			x.add(ClassExec)
			return
		}
		switch v := a.val; {
		case v == "-m" && i+1 < len(args):
			g := grammars()["python"]
			x.applyOptions(g, g.parse(args[:i])) // -W, -X, -i before the module
			mod := args[i+1].val
			rest := literal(args[i+2:])
			switch {
			case mod == "pytest" || mod == "unittest" || mod == "nose2" || mod == "tox":
				x.add(ClassTest)
			case mod == "pip" || mod == "ensurepip":
				x.c.Subcommand = "pip"
				pipLike(x, rest)
			case mod == "http.server" || mod == "SimpleHTTPServer" || mod == "smtpd":
				x.add(ClassNetwork | ClassExec)
			case mod == "json.tool":
				// python -m json.tool [options] [INFILE [OUTFILE]]
				x.add(ClassRead)
				var ops []word
				for j := i + 2; j < len(args); j++ {
					if args[j].lit && strings.HasPrefix(args[j].val, "-") && args[j].val != "-" {
						if args[j].val == "--indent" {
							j++
						}
						continue
					}
					ops = append(ops, args[j])
				}
				if len(ops) > 0 {
					x.read(ops[0])
				}
				if len(ops) > 1 {
					x.writeFile(ops[1])
				}
				if len(literal(args[i+2:])) < len(args[i+2:]) {
					x.add(ClassExec | ClassUnknown)
				}
			case mod == "venv" || mod == "virtualenv":
				x.add(ClassWrite)
				if len(rest) > 0 {
					x.write(word{val: rest[len(rest)-1], lit: true})
				}
			default:
				x.add(ClassExec)
			}
			return
		case v == "-V" || v == "--version":
			x.add(ClassRead)
			return
		case strings.HasPrefix(v, "-m"):
			x.add(ClassExec)
			return
		case v == "-W" || v == "-X" || v == "-Q":
			i++
		case strings.HasPrefix(v, "-") && v != "-":
			if strings.Contains(v, "c") {
				x.add(ClassExec)
				return
			}
		default:
			x.add(ClassExec)
			x.read(a)
			return
		}
	}
	x.add(ClassExec)
}

func progNode(x *cmdCtx) {
	args := literal(x.rest())
	for _, a := range args {
		switch {
		case a == "--test":
			x.add(ClassTest)
			return
		case a == "-v" || a == "--version":
			x.add(ClassRead)
			return
		case !strings.HasPrefix(a, "-"):
			x.add(ClassExec)
			return
		}
	}
	x.add(ClassExec)
}

func progDeno(x *cmdCtx) {
	ops := literal(x.rest())
	if len(ops) > 0 {
		x.c.Subcommand = ops[0]
		switch ops[0] {
		case "test":
			x.add(ClassTest)
			return
		case "fmt":
			x.add(ClassModify)
			x.writeDyn("deno fmt")
			return
		case "--version", "-V":
			x.add(ClassRead)
			return
		}
	}
	x.add(ClassExec | ClassNetwork)
}

func progBun(x *cmdCtx) {
	ops := literal(x.rest())
	if len(ops) > 0 {
		x.c.Subcommand = ops[0]
		switch ops[0] {
		case "test":
			x.add(ClassTest)
			return
		case "install", "i", "add", "remove", "rm", "update", "upgrade", "link":
			x.add(ClassPackageInstall | ClassNetwork | ClassWrite)
			return
		case "run":
			if len(ops) > 1 && ops[1] == "test" {
				x.add(ClassTest)
				return
			}
		case "--version", "-v":
			x.add(ClassRead)
			return
		}
	}
	x.add(ClassExec)
}

// perlLike handles perl and ruby: -e code is exec, -i edits files in place.
func perlLike(x *cmdCtx, valueOpts string) {
	x.add(ClassExec)
	args := x.rest()
	inplace := false
	suffix := ""
	code := false
	var files []word
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			files = append(files, a)
			continue
		}
		v := a.val
		if v == "--" {
			files = append(files, args[i+1:]...)
			break
		}
		if strings.HasPrefix(v, "-") && len(v) > 1 && !code {
			for j := 1; j < len(v); j++ {
				ch := v[j]
				if ch == 'i' {
					inplace = true
					suffix = v[j+1:]
					break // the rest is the backup suffix
				}
				if ch == 'e' || ch == 'E' {
					code = true
					if j == len(v)-1 {
						i++ // the program
					}
					break
				}
				if strings.IndexByte(valueOpts, ch) >= 0 {
					if j == len(v)-1 {
						i++
					}
					break
				}
			}
			continue
		}
		if !code {
			code = true // the script file
			x.read(a)
			continue
		}
		files = append(files, a)
	}
	if inplace {
		x.add(ClassModify)
		x.write(files...)
		x.backups(word{val: suffix, lit: true}, files)
	}
}

func progPerl(x *cmdCtx) {
	if len(x.rest()) == 1 && x.rest()[0].lit && (x.rest()[0].val == "-v" || x.rest()[0].val == "--version") {
		x.add(ClassRead)
		return
	}
	perlLike(x, "ICdDmMlx0")
}

func progRuby(x *cmdCtx) {
	if len(x.rest()) == 1 && x.rest()[0].lit && (x.rest()[0].val == "-v" || x.rest()[0].val == "--version") {
		x.add(ClassRead)
		return
	}
	perlLike(x, "ICrxE0F")
}

func progPhp(x *cmdCtx) {
	args := literal(x.rest())
	if len(args) == 1 && (args[0] == "-v" || args[0] == "--version") {
		x.add(ClassRead)
		return
	}
	x.add(ClassExec)
	for _, a := range args {
		if a == "-S" {
			x.add(ClassNetwork)
		}
	}
}

// nestedAgents are the coding agents a shell may start.
var nestedAgents = map[string]bool{
	"aider": true, "amp": true, "claude": true, "codex": true, "copilot": true, "crush": true,
	"cursor-agent": true, "gemini": true, "goose": true, "opencode": true, "pi": true, "qwen": true,
}

// agentPackages are npm packages of coding agents (npx @openai/codex).
var agentPackages = map[string]bool{
	"@anthropic-ai/claude-code": true, "@openai/codex": true, "opencode-ai": true, "@google/gemini-cli": true,
	"@mariozechner/pi-coding-agent": true, "@qwen-code/qwen-code": true, "@sourcegraph/amp": true,
}

func progAgent(x *cmdCtx) {
	x.add(ClassNestedAgent | ClassExec)
}

// statewrightReadOnly are the statewright subcommands that only read:
// the one table the shell analysis and the policy share.
var statewrightReadOnly = map[string]bool{
	"status": true, "runs": true, "explain": true, "check": true, "test": true, "version": true, "help": true,
	"history": true, "validate": true, "doctor": true, "schema": true, "completion": true, "graph": true,
	"--help": true, "-h": true, "--version": true, "workflows": true,
}

// statewrightWorkflowsReadOnly are the read-only verbs of `statewright workflows`.
var statewrightWorkflowsReadOnly = map[string]bool{"": true, "list": true, "show": true, "validate": true, "schema": true, "graph": true}

// StatewrightReadOnly reports whether args (the words after the statewright
// program) run a read-only subcommand: status, runs, explain, check, test,
// history, validate, doctor, schema, version, help, workflows list/show,
// or nothing (usage). Options are skipped; a word that is not literal is
// never read-only.
func StatewrightReadOnly(args []string) bool {
	var words []string
	for _, w := range args {
		if strings.HasPrefix(w, "-") && !statewrightReadOnly[w] {
			continue
		}
		words = append(words, w)
	}
	if len(words) == 0 {
		return true
	}
	if !statewrightReadOnly[words[0]] {
		return false
	}
	if words[0] == "workflows" {
		sub := ""
		if len(words) > 1 {
			sub = words[1]
		}
		return statewrightWorkflowsReadOnly[sub]
	}
	return true
}

func progStatewright(x *cmdCtx) {
	args := literal(x.rest())
	if len(args) < len(x.rest()) {
		x.add(ClassExec | ClassUnknown)
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			x.c.Subcommand = a
			break
		}
	}
	if StatewrightReadOnly(args) {
		x.add(ClassRead)
		return
	}
	x.add(ClassExec)
}

func progSqlite(x *cmdCtx) {
	x.add(ClassExec)
	p := getopt(x.rest(), "", []string{"cmd", "separator", "newline", "nullvalue", "init", "vfs", "lookaside", "pagecache", "mmap", "maxsize"}, false)
	if len(p.ops) > 0 {
		x.read(p.ops[0])
		x.write(p.ops[0])
		x.add(ClassWrite)
	}
}

func progDate(x *cmdCtx) {
	x.add(ClassRead)
	p, _ := x.gopt("date")
	if p.has("s", "--set") || len(p.ops) > 0 && p.ops[0].lit && !strings.HasPrefix(p.ops[0].val, "+") {
		x.add(ClassPrivilege) // date MMDDhhmm sets the clock
	}
}

// progInfo: info -o FILE writes the node to FILE, --dribble records keys.
func progInfo(x *cmdCtx) {
	x.add(ClassRead)
	x.gopt("info")
}

// progMan: -P/-H/-p and a troff pipeline run programs; -l reads local
// files.
func progMan(x *cmdCtx) {
	x.add(ClassRead)
	p, _ := x.gopt("man")
	if p.has("l", "--local-file") {
		x.read(p.ops...)
	}
}

func progSystemctl(x *cmdCtx) {
	ops := literal(getopt(x.rest(), "tpHMn", []string{"type", "property", "host", "machine", "lines", "output"}, false).ops)
	if len(ops) > 0 {
		x.c.Subcommand = ops[0]
		switch {
		case ops[0] == "show-environment":
			x.add(ClassRead)
			x.w.a.DumpsEnv = true
			return
		case ops[0] == "status", ops[0] == "show", ops[0] == "cat", strings.HasPrefix(ops[0], "list-"), strings.HasPrefix(ops[0], "is-"):
			x.add(ClassRead)
			return
		}
		if x.c.Program == "service" && len(ops) > 1 && ops[1] == "status" {
			x.add(ClassRead)
			return
		}
	}
	x.add(ClassProcess | ClassPrivilege)
}

func progCrontab(x *cmdCtx) {
	p := getopt(x.rest(), "u", nil, false)
	switch {
	case p.has("l"):
		x.add(ClassRead)
	case p.has("r"):
		x.add(ClassDelete)
	default:
		x.add(ClassExec | ClassBackground | ClassWrite)
		x.read(p.ops...)
	}
}

func progNc(x *cmdCtx) {
	x.add(ClassNetwork)
	p := getopt(x.rest(), "eciIOpqsTwWxXoDlmb", []string{"exec", "sh-exec", "lua-exec", "output"}, false)
	if p.has("e", "c", "--exec", "--sh-exec", "--lua-exec") {
		x.add(ClassExec)
	}
	for _, o := range p.all("o", "--output") {
		x.writeFile(o)
	}
}

func progDownloader(x *cmdCtx) {
	x.add(ClassNetwork | ClassWrite)
	x.writeDyn("download")
}

// progCurl: network; its grammar records the files its options write and
// read; -O/-J write files named by the server; data and form values
// starting with @ (and form values with <) are files read and sent.
func progCurl(x *cmdCtx) {
	if x.infoOnly("--version", "-V", "--help", "-h") {
		x.add(ClassRead)
		return
	}
	x.add(ClassNetwork)
	p, pa := x.gopt("curl")
	if pa.Hidden {
		x.add(ClassWrite) // the hidden words may be -o FILE
		x.writeDyn("curl options")
	}
	if pa.Has("O", "remote-name-all", "J") {
		x.add(ClassWrite)
		if d, ok := p.get("--output-dir"); ok {
			x.c.Writes = append(x.c.Writes, Target{Path: joinPath(d.val, "*"), Dynamic: true})
		} else {
			x.writeDyn("remote name")
		}
	}
	if pa.Has("T", "K") {
		x.add(ClassRead)
	}
	for _, o := range p.all("b") {
		if !o.lit || !strings.Contains(o.val, "=") {
			x.add(ClassRead)
			x.read(o) // a cookie file
		}
	}
	for _, o := range p.opts {
		switch o.name {
		case "d", "--data-ascii", "--data-binary", "--data-urlencode", "--json", "--url-query", "F", "H",
			"--proxy-header":
		default:
			continue
		}
		v := o.val.val
		if !o.val.lit {
			x.add(ClassRead)
			continue
		}
		if i := strings.IndexAny(v, "@<"); i >= 0 && (i == 0 || strings.Contains(v[:i], "=") || v[i] == '@' && o.name != "F") {
			if v[i] == '<' && !strings.Contains(v[:i], "=") {
				continue
			}
			f, _, _ := strings.Cut(v[i+1:], ";")
			x.add(ClassRead)
			x.read(word{val: f, lit: true})
		}
	}
}

// progWget: network; its grammar records the files its options write and
// read. Without -O it saves each URL under a name the server picks.
func progWget(x *cmdCtx) {
	if x.infoOnly("--version", "-V", "--help", "-h") {
		x.add(ClassRead)
		return
	}
	x.add(ClassNetwork)
	p, pa := x.gopt("wget")
	if pa.Has("b") {
		x.add(ClassBackground)
	}
	if _, ok := p.get("O"); !ok && (len(p.ops) > 0 || pa.Has("i")) && !pa.Has("spider") {
		x.add(ClassWrite)
		if !pa.Has("P") {
			x.writeDyn("download")
		}
	}
	if pa.Has("delete-after") {
		x.add(ClassDelete)
	}
}

func isRemote(a word) bool {
	if !a.lit {
		return false
	}
	v := a.val
	if strings.Contains(v, "://") || strings.Contains(v, "::") {
		return true
	}
	i := strings.Index(v, ":")
	if i <= 0 {
		return false
	}
	j := strings.Index(v, "/")
	return j < 0 || i < j
}

// progRsync: the destination is written, the sources read; its grammar
// records what its options run, write, read and delete.
func progRsync(x *cmdCtx) {
	if x.infoOnly("--version", "-V", "--help") {
		x.add(ClassRead)
		return
	}
	p, pa := x.gopt("rsync")
	x.add(ClassWrite)
	for _, o := range p.ops {
		if isRemote(o) {
			x.add(ClassNetwork)
		}
	}
	if pa.Has("daemon") {
		x.add(ClassNetwork | ClassBackground)
	}
	if n := len(p.ops); n > 0 {
		dst := p.ops[n-1]
		if !isRemote(dst) {
			x.write(dst)
		}
		for _, s := range p.ops[:n-1] {
			if !isRemote(s) {
				x.read(s)
			}
		}
	}
}

// progScp: network; the destination is written when it is local.
func progScp(x *cmdCtx) {
	x.add(ClassNetwork)
	p, _ := x.gopt("scp")
	if n := len(p.ops); n > 0 {
		if dst := p.ops[n-1]; !isRemote(dst) {
			x.add(ClassWrite)
			x.write(dst)
		}
		for _, s := range p.ops[:n-1] {
			if !isRemote(s) {
				x.read(s)
			}
		}
	}
}

// progSftp: network; a batch file (-b) runs its commands, and get writes
// local files.
func progSftp(x *cmdCtx) {
	x.add(ClassNetwork | ClassWrite)
	x.gopt("sftp")
	x.writeDyn("download")
}

// progMv: sources are moved away (modify), the destination written.
func progMv(x *cmdCtx) {
	p, _ := x.gopt("mv")
	x.add(ClassWrite | ClassModify)
	ops := p.ops
	if t, ok := p.get("t", "--target-directory"); ok {
		x.write(ops...)
		x.write(t)
		return
	}
	x.write(ops...)
}

func progInstall(x *cmdCtx) {
	p, _ := x.gopt("install")
	x.add(ClassWrite)
	if p.has("d", "--directory") {
		x.write(p.ops...)
		return
	}
	if t, ok := p.get("t", "--target-directory"); ok {
		x.write(t)
		x.read(p.ops...)
		return
	}
	if n := len(p.ops); n > 0 {
		x.read(p.ops[:n-1]...)
		x.write(p.ops[n-1])
	}
}

func progModeFiles(x *cmdCtx) {
	p := getopt(x.rest(), "", []string{"reference"}, false)
	x.add(ClassModify)
	ops := p.ops
	if _, ok := p.get("--reference"); !ok && len(ops) > 0 {
		ops = ops[1:] // the mode
	}
	// chmod -x f parses as an option; its operands are still the files
	x.write(ops...)
}

func progChown(x *cmdCtx) {
	p := getopt(x.rest(), "", []string{"reference", "from"}, false)
	x.add(ClassModify)
	ops := p.ops
	if _, ok := p.get("--reference"); !ok && len(ops) > 0 {
		owner := ops[0].val
		if o, _, _ := strings.Cut(owner, ":"); o == "root" || o == "0" || (x.c.Program == "chgrp" && (owner == "root" || owner == "0" || owner == "wheel")) {
			x.add(ClassPrivilege)
		}
		ops = ops[1:]
	}
	x.write(ops...)
}

func progMktemp(x *cmdCtx) {
	p, pa := x.gopt("mktemp")
	if pa.Has("u") {
		x.add(ClassRead)
		return
	}
	x.add(ClassWrite)
	if len(pa.Values("p", "tmpdir")) > 0 {
		return // the grammar wrote DIR/*
	}
	if len(p.ops) > 0 && p.ops[0].lit && strings.Contains(p.ops[0].val, "/") && !pa.Has("t") {
		x.c.Writes = append(x.c.Writes, Target{Path: strings.TrimRight(x.targetOf(p.ops[0]).Path, "X") + "*", Dynamic: true})
		return
	}
	x.writeDyn("mktemp")
}

func progSplit(x *cmdCtx) {
	var p parsed
	if x.c.Program == "split" {
		p, _ = x.gopt("split")
	} else {
		p = getopt(x.rest(), "bfn", []string{"prefix", "suffix-format", "digits"}, false)
	}
	x.add(ClassWrite)
	if len(p.ops) > 0 {
		x.read(p.ops[0])
	}
	prefix := "x"
	if len(p.ops) > 1 {
		if x.c.Program == "split" {
			prefix = p.ops[len(p.ops)-1].val
		}
	}
	if f, ok := p.get("f", "--prefix"); ok {
		prefix = f.val
	}
	x.c.Writes = append(x.c.Writes, Target{Path: x.w.pathTarget(prefix).Path + "*", Dynamic: true})
}

// progCpio: -i extracts (under -D, anywhere with --absolute-filenames),
// -p copies into its directory operand, -o writes the archive (-O, -F or
// standard output); -t lists.
func progCpio(x *cmdCtx) {
	p, pa := x.gopt("cpio")
	switch {
	case pa.Has("i") && !pa.Has("t"):
		x.add(ClassWrite)
		if pa.Has("absolute-filenames") {
			x.writeDyn("anywhere the archive names (cpio --absolute-filenames)")
		} else if d := pa.Values("D"); len(d) > 0 {
			x.c.Writes = append(x.c.Writes, Target{Path: joinPath(x.targetOf(fromArg(d[0])).Path, "*"), Dynamic: true})
		} else {
			x.writeDyn("cpio extract")
		}
	case pa.Has("p"):
		x.add(ClassWrite)
		if len(p.ops) > 0 && p.ops[0].lit {
			x.c.Writes = append(x.c.Writes, Target{Path: joinPath(x.targetOf(p.ops[0]).Path, "*"), Dynamic: true})
		} else {
			x.writeDyn("cpio pass-through")
		}
	case pa.Has("o"):
		if x.stdin != nil && x.stdin.lit {
			for _, n := range strings.Fields(x.stdin.text) {
				x.read(word{val: n, lit: true}) // the names cpio archives, from a here-string
			}
		}
		for _, f := range pa.Values("F") {
			if e, _ := checkTarArchive(f.Value); e&EffNetwork == 0 || !f.Literal {
				x.writeFile(fromArg(f)) // the archive created (-O's grammar entry writes it)
			}
		}
		if len(pa.Values("F", "O")) == 0 {
			x.add(ClassRead)
		}
	default:
		x.add(ClassRead)
		x.read(pa.ops()...)
	}
}

func progDd(x *cmdCtx) {
	x.add(ClassRead)
	for _, a := range x.rest() {
		if !a.lit {
			if strings.HasPrefix(a.val, "of=") || a.dash {
				x.add(ClassWrite | ClassDelete)
				x.writeDyn(a.val)
			}
			continue
		}
		if v, ok := strings.CutPrefix(a.val, "of="); ok {
			if harmlessDevice(v) {
				continue
			}
			x.add(ClassWrite)
			if strings.HasPrefix(v, "/dev/") {
				x.add(ClassDelete) // overwriting a device destroys it
			}
			x.write(word{val: v, lit: true})
		}
		if v, ok := strings.CutPrefix(a.val, "if="); ok {
			x.read(word{val: v, lit: true})
		}
	}
}

func progTee(x *cmdCtx) {
	p, _ := x.gopt("tee")
	x.add(ClassRead)
	for _, o := range p.ops {
		if o.lit && harmlessDevice(o.val) {
			continue
		}
		x.writeFile(o)
	}
	if p.dyn {
		x.add(ClassWrite)
	}
}

// outputOpt classifies programs that read files and write with -o FILE.
func outputOpt(x *cmdCtx, short, long string, p parsed) {
	x.add(ClassRead)
	x.read(p.ops...)
	for _, o := range p.all(short, long) {
		if o.lit && harmlessDevice(o.val) {
			continue
		}
		x.writeFile(o)
	}
	if p.dyn {
		x.add(ClassExec | ClassUnknown)
	}
}

// progFilter reads its operands; what its options do comes from its grammar.
func progFilter(name string) func(*cmdCtx) {
	return func(x *cmdCtx) {
		p, _ := x.gopt(name)
		x.add(ClassRead)
		x.read(p.ops...)
	}
}

func progIconv(x *cmdCtx) {
	outputOpt(x, "o", "--output", getopt(x.rest(), "fto", []string{"from-code", "to-code", "output"}, false))
}

// progTree: -o FILE writes; -R with -H writes 00Tree.html in every
// directory it lists.
func progTree(x *cmdCtx) {
	p, _ := x.gopt("tree")
	x.add(ClassRead)
	x.read(p.ops...)
	if p.has("R") && p.has("H") {
		x.add(ClassWrite)
		x.writeDyn("*/00Tree.html")
	}
}

func progUniq(x *cmdCtx) {
	p, pa := x.gopt("uniq")
	if pa.multi(2) {
		// uniq data/*.csv: the glob may give two files, the second written
		x.add(ClassRead | ClassWrite)
		x.read(p.ops...)
		x.c.Writes = append(x.c.Writes, Target{Path: p.ops[len(p.ops)-1].val, Dynamic: true})
		return
	}
	inputOutputFilter(x, p)
}

func progXxd(x *cmdCtx) {
	inputOutputFilter(x, getopt(x.rest(), "cglosn", []string{"cols", "groupsize", "len", "seek", "name"}, false))
}

// inputOutputFilter classifies a filter whose operands are [INPUT [OUTPUT]]
// (uniq, xxd): it reads INPUT and writes OUTPUT unless that is a harmless
// device.
func inputOutputFilter(x *cmdCtx, p parsed) {
	x.add(ClassRead)
	if len(p.ops) > 0 {
		x.read(p.ops[0])
	}
	if len(p.ops) > 1 && !(p.ops[1].lit && harmlessDevice(p.ops[1].val)) {
		x.add(ClassWrite)
		x.write(p.ops[1])
	}
	if p.dyn {
		x.add(ClassExec | ClassUnknown)
	}
}

// progYq reads YAML with either yq: mikefarah's (-i edits in place, -s
// writes one file per result, env()/strenv()/envsubst/load() read the
// environment and files) or kislyuk's jq wrapper (env, $ENV, -f).
func progYq(x *cmdCtx) {
	x.add(ClassRead)
	_, p := x.gopt("yq")
	ops := p.ops()
	if len(ops) > 0 && ops[0].lit {
		switch ops[0].val {
		case "eval", "e", "eval-all", "ea":
			ops = ops[1:]
		}
	}
	exprs := p.Values("expression")
	if p.Has("f") {
		x.w.a.DumpsEnv = true // an expression nobody sees may read the environment
		if len(ops) > 0 && len(p.Values("f")) == 0 {
			ops = ops[1:]
		}
	} else if len(exprs) == 0 && len(ops) > 0 {
		exprs = append(exprs, Arg{Value: ops[0].val, Literal: ops[0].lit})
		ops = ops[1:]
	}
	for _, e := range exprs {
		if !e.Literal {
			x.w.a.DumpsEnv = true
			continue
		}
		yqEnv(x, e.Value)
		names, dumps := jqEnv(e.Value)
		for _, n := range names {
			x.w.ref(n)
		}
		if dumps {
			x.w.a.DumpsEnv = true
		}
	}
	if p.Has("s") {
		x.add(ClassWrite)
		x.writeDyn("files named by yq --split-exp")
	}
	if p.Has("i") {
		x.add(ClassModify)
		x.write(ops...)
		return
	}
	x.read(ops...)
}

func progGofmt(x *cmdCtx) {
	p := getopt(x.rest(), "r", nil, false)
	if p.has("w") {
		x.add(ClassModify)
		x.write(p.ops...)
		return
	}
	x.add(ClassRead)
	x.read(p.ops...)
}

func progEditor(x *cmdCtx) {
	// an editor can edit any file and run shell commands (:!, e !)
	x.add(ClassModify | ClassExec)
	p := getopt(x.rest(), "cSTuUiwW", nil, false)
	x.write(p.ops...)
}

// progPatch: the files named in the patch (or the operand, or -o) are
// modified; --dry-run only reads.
func progPatch(x *cmdCtx) {
	p, pa := x.gopt("patch")
	if pa.Has("dry-run", "C") {
		x.add(ClassRead)
		x.read(p.ops...)
		return
	}
	x.add(ClassModify)
	if _, ok := p.get("o"); ok {
		// the grammar recorded the output file
	} else if len(p.ops) > 0 {
		x.write(p.ops[0])
	} else if d, ok := p.get("d"); ok {
		x.c.Writes = append(x.c.Writes, Target{Path: joinPath(x.targetOf(d).Path, "*"), Dynamic: true})
	} else {
		x.writeDyn("files named in the patch")
	}
	if len(p.ops) > 1 {
		x.read(p.ops[1])
	}
}

func progCompress(x *cmdCtx) {
	p := getopt(x.rest(), "SbLo", []string{"suffix", "format", "output"}, false)
	if p.has("c", "--stdout", "--to-stdout", "l", "--list", "t", "--test") {
		x.add(ClassRead)
		x.read(p.ops...)
		return
	}
	if o, ok := p.get("o", "--output"); ok {
		x.add(ClassRead | ClassWrite)
		x.read(p.ops...)
		x.write(o)
		return
	}
	x.add(ClassModify)
	if len(p.ops) == 0 {
		x.add(ClassRead) // a filter on stdin
		x.c.Classes &^= ClassModify
		return
	}
	x.write(p.ops...)
}

// progTar: extract writes unknown paths; create/append write the archive;
// list reads.
func progTar(x *cmdCtx) {
	args := x.rest()
	// old-style bundled first argument: tar xzf a.tgz
	if len(args) > 0 && args[0].lit && !strings.HasPrefix(args[0].val, "-") && args[0].val != "" {
		args = append([]word{{val: "-" + args[0].val, lit: true}}, args[1:]...)
	}
	g := grammars()["tar"]
	pa := g.parse(args)
	x.applyOptions(g, pa)
	p := pa.legacy()
	archive, hasArchive := p.get("f", "--file")
	switch {
	case p.has("x", "--extract", "--get"):
		x.add(ClassWrite)
		if hasArchive {
			x.read(archive)
		}
		dir := "."
		if d, ok := p.get("C", "--directory"); ok {
			dir = d.val
			if !d.lit {
				dir = d.val
			}
		}
		x.c.Writes = append(x.c.Writes, Target{Path: joinPath(x.w.pathTarget(dir).Path, "*"), Dynamic: true})
		if p.has("--overwrite", "--recursive-unlink", "--unlink-first", "U", "--remove-files") {
			x.add(ClassDelete)
		}
	case p.has("c", "--create", "r", "--append", "u", "--update", "A", "--catenate", "--concatenate", "--delete"):
		x.add(ClassRead)
		if p.has("--remove-files") {
			x.add(ClassDelete)
			x.write(p.ops...)
		} else {
			x.read(p.ops...)
		}
		if hasArchive && !(archive.lit && (archive.val == "-" || harmlessDevice(archive.val))) {
			x.add(ClassWrite)
			x.write(archive)
		}
	default: // -t, --list, --diff
		x.add(ClassRead)
		if hasArchive {
			x.read(archive)
		}
	}
	if p.dyn {
		x.add(ClassExec | ClassUnknown)
	}
}

func progDpkg(x *cmdCtx) {
	p := getopt(x.rest(), "", nil, false)
	if p.has("i", "--install", "r", "--remove", "P", "--purge", "--unpack", "--configure") {
		x.add(ClassPackageInstall | ClassWrite)
		return
	}
	x.add(ClassRead)
}

// progFind: a search; -delete deletes, -fprint* and -fls write, and -exec,
// -execdir, -ok and -okdir run commands (classified as further commands).
func progFind(x *cmdCtx) {
	x.add(ClassSearch)
	args := x.rest()
	i := 0
	for i < len(args) && args[i].lit && (args[i].val == "-H" || args[i].val == "-L" || args[i].val == "-P" ||
		strings.HasPrefix(args[i].val, "-O") || args[i].val == "-D") {
		if args[i].val == "-D" {
			i++
		}
		i++
	}
	var roots []word
	for i < len(args) {
		a := args[i]
		if a.lit && (strings.HasPrefix(a.val, "-") || a.val == "(" || a.val == "!" || a.val == ")") {
			break
		}
		if a.dash {
			x.add(ClassExec | ClassUnknown) // may expand to -exec/-delete
		}
		roots = append(roots, a)
		i++
	}
	x.read(roots...)
	root := "."
	if len(roots) == 1 {
		root = x.targetOf(roots[0]).Path
	}
	x.c.namesOnly = true
	for ; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			if a.dash {
				x.add(ClassExec | ClassUnknown)
			}
			continue
		}
		switch a.val {
		case "-delete":
			x.add(ClassDelete)
			x.c.Writes = append(x.c.Writes, Target{Path: joinPath(root, "*"), Dynamic: true})
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				x.add(ClassWrite)
				x.write(args[i+1])
				i++
				if a.val == "-fprintf" {
					i++
				}
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			x.c.namesOnly = false
			j := i + 1
			for j < len(args) && !(args[j].lit && (args[j].val == ";" || args[j].val == "+")) {
				j++
			}
			x.inner(args[i+1:j], "find", true)
			i = j
		case "-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-type", "-newer", "-perm", "-user",
			"-group", "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-maxdepth", "-mindepth",
			"-printf", "-wholename", "-iwholename", "-lname", "-ilname", "-samefile", "-inum", "-links", "-uid",
			"-gid", "-fstype", "-regextype", "-context", "-xtype", "-used", "-anewer", "-cnewer":
			i++
		case "-files0-from":
			if i+1 < len(args) {
				x.read(args[i+1]) // the start points are read from it (and echoed in errors)
			}
			i++
		default:
			if len(a.val) == 8 && strings.HasPrefix(a.val, "-newer") {
				i++ // -newerXY REFERENCE
			} else if !findPlain[a.val] {
				// a primary GNU find does not have: find refuses it today,
				// but another find (or a later one) may run or write with it
				x.add(ClassExec | ClassUnknown)
			}
		}
	}
}

// findPlain are find's primaries and operators that take no argument and
// neither write nor run anything, and the words that are not primaries.
var findPlain = map[string]bool{
	"-daystart": true, "-depth": true, "-d": true, "-follow": true, "-ignore_readdir_race": true,
	"-noignore_readdir_race": true, "-mount": true, "-xdev": true, "-noleaf": true, "-warn": true, "-nowarn": true,
	"-help": true, "--help": true, "-version": true, "--version": true, "-true": true, "-false": true,
	"-empty": true, "-executable": true, "-readable": true, "-writable": true, "-nouser": true, "-nogroup": true,
	"-print": true, "-print0": true, "-ls": true, "-prune": true, "-quit": true, "-and": true, "-a": true,
	"-or": true, "-o": true, "-not": true, "(": true, ")": true, "!": true, ",": true, "-P": true, "-H": true,
	"-L": true,
}

// progFd: fd's -x/--exec and -X/--exec-batch run the rest of the line
// (clap: they may end a cluster, -Hx CMD, or hold the program, -xCMD); the
// options before them are read with fd's grammar.
func progFd(x *cmdCtx) {
	x.add(ClassSearch)
	g := grammars()["fd"]
	g.index()
	args := x.rest()
	end := len(args)
	var inner []word
	found := false
scan:
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			continue
		}
		switch {
		case a.val == "--exec" || a.val == "--exec-batch":
			end, found, inner = i, true, args[i+1:]
			break scan
		case strings.HasPrefix(a.val, "--exec=") || strings.HasPrefix(a.val, "--exec-batch="):
			_, v, _ := strings.Cut(a.val, "=")
			end, found, inner = i, true, append([]word{{val: v, lit: true}}, args[i+1:]...)
			break scan
		case a.val == "--":
			break scan
		case strings.HasPrefix(a.val, "--"):
			name, _, eq := strings.Cut(a.val[2:], "=")
			if o, ok := g.long[name]; ok && o.Arg == RequiredArg && !eq {
				i++
			}
		case len(a.val) > 1 && a.val[0] == '-':
			for j := 1; j < len(a.val); j++ {
				c := a.val[j]
				if c == 'x' || c == 'X' {
					// the options before it in the cluster count too
					pre := append(append([]word{}, args[:i]...), word{val: a.val[:j], lit: true})
					if j == 1 {
						pre = pre[:len(pre)-1]
					}
					args, end, found = pre, len(pre), true
					if rest := a.val[j+1:]; rest != "" {
						inner = append([]word{{val: rest, lit: true}}, x.rest()[i+1:]...)
					} else {
						inner = x.rest()[i+1:]
					}
					break scan
				}
				if o, ok := g.short[c]; ok && o.Arg == RequiredArg {
					if j == len(a.val)-1 {
						i++ // its value is the next word
					}
					break
				}
			}
		}
	}
	pa := g.parse(args[:end])
	x.applyOptions(g, pa)
	// the operands after the pattern are the directories searched (and
	// --search-path's): fd lists their names, -x/-X hands them on
	roots := pa.ops()
	if len(roots) > 0 {
		roots = roots[1:]
	}
	for _, v := range pa.Values("search-path", "base-directory") {
		roots = append(roots, fromArg(v))
	}
	x.read(roots...)
	x.c.namesOnly = !found
	if !found {
		return
	}
	stop := len(inner)
	for j, w := range inner {
		if w.lit && w.val == ";" {
			stop = j
			break
		}
	}
	x.inner(inner[:stop], "fd", true)
	if stop == 0 {
		x.add(ClassExec | ClassUnknown)
	}
}

// progHistory: -w and -a write the history file (HISTFILE when none is
// named), -r and -n read it, -s adds an entry.
func progHistory(x *cmdCtx) {
	x.add(ClassRead)
	p := getopt(x.rest(), "d", nil, false)
	if p.has("w", "a") {
		if len(p.ops) > 0 {
			x.writeFile(p.ops[0])
		} else {
			x.add(ClassWrite)
			x.writeDyn("$HISTFILE")
		}
	} else if p.has("r", "n") && len(p.ops) > 0 {
		x.read(p.ops[0])
	}
	if p.has("c", "s", "d") {
		x.add(ClassWrite)
		x.writeDyn("$HISTFILE")
	}
}

// progPager: less/more +CMD runs a pager command at start; ! and | in it
// run shell commands.
func progPager(x *cmdCtx) {
	x.add(ClassRead)
	p, _ := x.gopt("less")
	for _, o := range p.ops {
		if o.lit && strings.HasPrefix(o.val, "+") {
			if strings.ContainsAny(o.val, "!|sE") || o.val == "+" {
				x.add(ClassExec) // commands: ! and | run a shell, s saves to a file, E edits
			}
			continue
		}
		if !o.lit && o.dash {
			x.add(ClassExec | ClassUnknown) // may be +!cmd
		}
		x.read(o)
	}
}

// progRg: search; the first operand is the pattern unless -e/-f give
// it; the grammar records --pre and --hostname-bin (programs it runs).
func progRg(x *cmdCtx) {
	p, pa := x.gopt("rg")
	x.add(ClassSearch)
	ops := p.ops
	if len(ops) > 0 && !pa.Has("e", "f", "files", "type-list") {
		ops = ops[1:]
	}
	x.read(ops...)
}

func progHash(x *cmdCtx) {
	x.add(ClassRead)
	if getopt(x.rest(), "pt", nil, false).has("p") {
		x.add(ClassExec) // hash -p PATH NAME maps a command name to any program
	}
}

// progSsh: network; options that run local commands make it exec.
// progSsh: network; its grammar records the options that run commands
// (-o ProxyCommand, -F a config, -S a control socket) and write files.
func progSsh(x *cmdCtx) {
	if x.infoOnly("-V") {
		x.add(ClassRead)
		return
	}
	x.add(ClassNetwork)
	x.gopt("ssh")
}

// progMapfile: mapfile/readarray -C CALLBACK evaluates the callback.
func progMapfile(x *cmdCtx) {
	x.add(ClassRead)
	x.w.ev.tainted = true
	p := getopt(x.rest(), "dnOsuCc", nil, false)
	if c, ok := p.get("C"); ok {
		x.script(c)
	}
	for _, n := range p.ops {
		if !n.lit || isCodeLoadingVar(n.val) || injects(n.val) {
			x.add(ClassExec)
		}
	}
}

// progSetsVars handles builtins that assign variables named in their
// arguments (printf -v NAME, read NAME..., mapfile NAME, getopts S NAME):
// assigning PATH, LD_PRELOAD, ... changes which code later commands run.
func progSetsVars(x *cmdCtx) {
	x.add(ClassRead)
	x.w.ev.tainted = true
	var names []word
	switch x.c.Program {
	case "printf":
		p := getopt(x.rest(), "v", nil, true)
		names = p.all("v")
	case "read":
		p := getopt(x.rest(), "adinNptu", nil, false)
		names = append(p.all("a"), p.ops...)
	case "getopts":
		if ops := x.rest(); len(ops) > 1 {
			names = ops[1:2]
		}
	}
	for _, n := range names {
		if !n.lit || isCodeLoadingVar(strings.SplitN(n.val, "[", 2)[0]) || injects(n.val) {
			x.add(ClassExec) // read 'a[$(cmd)]' runs cmd
		}
	}
}

// progJq: the filter's env and $ENV read the environment; -f reads a
// filter nobody sees (it may too). --arg/--argjson/--slurpfile/--rawfile
// take two words, --args/--jsonargs make the operands values.
func progJq(x *cmdCtx) {
	x.add(ClassRead)
	args := x.rest()
	var filter *word
	var files []word
	fromFile, valuesOnly := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			if a.dash {
				x.w.a.DumpsEnv = true // may be -f or a filter
			}
			if filter == nil && !fromFile {
				filter = &args[i]
			} else if !valuesOnly {
				files = append(files, a)
			}
			continue
		}
		v := a.val
		switch {
		case v == "--arg" || v == "--argjson" || v == "--slurpfile" || v == "--rawfile":
			if (v == "--slurpfile" || v == "--rawfile") && i+2 < len(args) {
				x.read(args[i+2])
			}
			i += 2
		case v == "--args" || v == "--jsonargs":
			valuesOnly = true
		case v == "-f" || v == "--from-file":
			fromFile = true
			if i+1 < len(args) {
				i++
				x.read(args[i])
			}
		case v == "-L" || v == "--indent" || v == "--tab":
			if v != "--tab" {
				i++
			}
		case v == "--":
			valuesOnly = valuesOnly || filter != nil
		case strings.HasPrefix(v, "--") && !jqLongFlags[v[2:]]:
			x.w.a.DumpsEnv = true // an option jq does not know: fail closed
			x.add(ClassUnknown | ClassExec)
		case strings.HasPrefix(v, "-") && len(v) > 1:
			if !strings.HasPrefix(v, "--") && strings.ContainsRune(v, 'f') {
				fromFile = true
			}
			if !strings.HasPrefix(v, "--") && strings.Trim(v[1:], "nrjasScCMeRfLhVb") != "" {
				x.w.a.DumpsEnv = true
				x.add(ClassUnknown | ClassExec)
			}
		default:
			if filter == nil && !fromFile {
				filter = &args[i]
			} else if !valuesOnly {
				files = append(files, a)
			}
		}
	}
	if fromFile {
		x.w.a.DumpsEnv = true
	}
	if filter != nil {
		if !filter.lit {
			x.w.a.DumpsEnv = true // any filter
		} else {
			names, dumps := jqEnv(filter.val)
			for _, n := range names {
				x.w.ref(n)
			}
			if dumps {
				x.w.a.DumpsEnv = true
			}
		}
	}
	x.read(files...)
}

// jqLongFlags are jq's long options without a value (the ones with
// values are read above).
var jqLongFlags = map[string]bool{
	"null-input": true, "raw-input": true, "slurp": true, "compact-output": true, "tab": true, "color-output": true,
	"monochrome-output": true, "ascii-output": true, "unbuffered": true, "sort-keys": true, "raw-output": true,
	"raw-output0": true, "join-output": true, "exit-status": true, "seq": true, "stream": true, "stream-errors": true,
	"help": true, "version": true, "build-configuration": true, "binary": true,
}

// progPs: BSD-style "e" shows each process's environment.
func progPs(x *cmdCtx) {
	x.add(ClassRead)
	for _, a := range x.rest() {
		if !a.lit {
			x.w.a.DumpsEnv = true
			continue
		}
		if !strings.HasPrefix(a.val, "-") && strings.ContainsRune(a.val, 'e') && !strings.ContainsAny(a.val, "=,") {
			x.w.a.DumpsEnv = true
		}
		if strings.HasPrefix(a.val, "-") && !strings.HasPrefix(a.val, "--") && strings.ContainsRune(a.val, 'E') {
			x.w.a.DumpsEnv = true // BSD and macOS ps -E prints each process's environment
		}
	}
}

// progVersionOnly: compilers and toolchains that only print their version
// with --version/-V/-v alone, and otherwise run code (proc macros,
// plugins, the program they build).
func progVersionOnly(x *cmdCtx) {
	args := x.rest()
	if len(args) == 1 && args[0].lit {
		switch args[0].val {
		case "--version", "-V", "-v", "-version", "--help", "-h", "show":
			x.add(ClassRead)
			return
		}
	}
	x.add(ClassExec)
}

// yqEnv reads yq's env(NAME), strenv(NAME) and envsubst: a literal name is
// a reference, anything else may read any variable.
func yqEnv(x *cmdCtx, expr string) {
	if strings.Contains(expr, "envsubst") {
		x.w.a.DumpsEnv = true
	}
	// load("FILE"), load_str, load_xml, load_props, load_base64: files read
	for rest := expr; ; {
		i := strings.Index(rest, "load")
		if i < 0 {
			break
		}
		rest = rest[i+4:]
		j := 0
		for j < len(rest) && (rest[j] == '_' || rest[j] >= 'a' && rest[j] <= 'z') {
			j++
		}
		k := j
		for k < len(rest) && (rest[k] == ' ' || rest[k] == '\t') {
			k++
		}
		if k >= len(rest) || rest[k] != '(' {
			continue
		}
		arg := strings.TrimSpace(rest[k+1:])
		if end := strings.IndexByte(arg, ')'); end > 0 && len(arg) > 1 && arg[0] == '"' && strings.IndexByte(arg[1:end], '"') == end-2 {
			x.read(word{val: arg[1 : end-1], lit: true})
			continue
		}
		x.w.a.DumpsEnv = true // a computed path may name /proc/self/environ
	}
	for _, fn := range []string{"strenv(", "env("} {
		rest := expr
		for {
			i := strings.Index(rest, fn)
			if i < 0 {
				break
			}
			if fn == "env(" && i > 0 && isWordByte(rest[i-1]) {
				rest = rest[i+len(fn):]
				continue
			}
			rest = rest[i+len(fn):]
			end := strings.IndexByte(rest, ')')
			if end < 0 || !isName(strings.TrimSpace(rest[:end])) {
				x.w.a.DumpsEnv = true
				continue
			}
			x.w.ref(strings.TrimSpace(rest[:end]))
		}
	}
}
