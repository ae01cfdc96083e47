package policy

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/statewright-go/statewright/shell"
)

// shellCall is a shell tool call, analysed once per decision.
type shellCall struct {
	src        string
	analysis   *shell.Analysis
	err        error // parse error (or analysis failure): the call is denied
	internal   bool  // err is an analysis failure, not the command's fault
	background bool  // the harness runs it in the background (run_in_background)
}

// analyze is shell.Analyze; a variable so tests can count calls.
var analyze = shell.Analyze

// shellCommand extracts the command line of a shell tool call: "command"
// (a string, or an argv as Codex's shell tool sends it), "cmd"
// (exec_command) or "action.command" (local_shell).
func shellCommand(m map[string]any) (src string, argv []string, ok bool) {
	src, argv, ok = shellCommandOf(m)
	if ok && shellTwice(m, src) {
		return "", nil, false
	}
	return src, argv, ok
}

// shellTwice reports an input that gives its command as both command
// and cmd, with cmd not the command src was read from: a harness reads
// one (Codex's exec_command reads cmd), the law would analyse the other.
func shellTwice(m map[string]any, src string) bool {
	c, ok := m["cmd"].(string)
	return ok && m["command"] != nil && c != src
}

// shellCommandOf is shellCommand without the check of a second spelling.
func shellCommandOf(m map[string]any) (src string, argv []string, ok bool) {
	if s, ok := m["command"].(string); ok {
		return s, nil, true
	}
	if s, ok := m["cmd"].(string); ok {
		return s, nil, true
	}
	arr, _ := m["command"].([]any)
	if arr == nil {
		if act, _ := m["action"].(map[string]any); act != nil {
			arr, _ = act["command"].([]any)
		}
	}
	if len(arr) == 0 {
		return "", nil, false
	}
	for _, w := range arr {
		s, ok := w.(string)
		if !ok {
			return "", nil, false
		}
		argv = append(argv, s)
	}
	switch path.Base(argv[0]) {
	case "bash", "sh", "zsh", "dash":
		if len(argv) == 3 && strings.HasPrefix(argv[1], "-") && strings.Contains(argv[1], "c") {
			return argv[2], argv, true
		}
	}
	q := make([]string, len(argv))
	for i, w := range argv {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " "), argv, true
}

// shellQuote quotes a word for bash when it needs it.
func shellQuote(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '+' || r == '@' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// runAnalysis analyses src, turning a panic in the analyser into an
// internal error (fail closed).
func runAnalysis(src string) (a *shell.Analysis, err error, internal bool) {
	defer func() {
		if r := recover(); r != nil {
			a, err, internal = nil, fmt.Errorf("shell analysis failed: %v", r), true
		}
	}()
	a, err = analyze(src)
	if err == nil && a == nil {
		return nil, fmt.Errorf("shell analysis returned nothing"), true
	}
	return a, err, false
}

const readOnlyClasses = shell.ClassRead | shell.ClassSearch | shell.ClassGitRead

// needs maps operation classes to the capabilities they require beyond the
// shell tool itself (docs/shell.md).
func needs(c shell.Class) capSet {
	var n capSet
	if c&(shell.ClassWrite|shell.ClassModify) != 0 {
		n |= capWrite
	}
	if c&(shell.ClassDelete|shell.ClassProcess) != 0 {
		n |= capDestructive
	}
	if c&shell.ClassNetwork != 0 {
		n |= capNetwork
	}
	if c&shell.ClassGitWrite != 0 {
		n |= capGitWrite
	}
	if c&(shell.ClassExec|shell.ClassUnknown) != 0 {
		n |= capExec
	}
	if c&shell.ClassPrivilege != 0 {
		n |= capPrivileged
	}
	if c&shell.ClassPackageInstall != 0 {
		n |= capNetwork | capWrite
	}
	if c&shell.ClassBackground != 0 {
		n |= capBackground
	}
	if c&shell.ClassNestedAgent != 0 {
		n |= capNestedAgent
	}
	return n
}

// commandText renders a command for messages, at most 80 characters.
func commandText(c *shell.Command) string {
	return clip(strings.Join(c.Argv, " "), 80)
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-3]) + "..."
}

// statewrightMutates reports whether argv runs a statewright subcommand
// other than the read-only ones (shell.StatewrightReadOnly: one table for
// the shell analysis and the policy).
func statewrightMutates(argv []string) bool {
	return !shell.StatewrightReadOnly(argv[1:])
}

// isStatewright reports whether a command runs the statewright binary.
func (l *Law) isStatewright(c *shell.Command) bool {
	if c.Program == "statewright" || c.Program == "statewright-gateway" || c.Program == "statewright-hook" {
		return true
	}
	if c.Program == "" {
		return false
	}
	for _, p := range l.protected {
		if baseName(p) == strings.ToLower(c.Program) && strings.Contains(baseName(p), "statewright") {
			return true
		}
	}
	return false
}

// shellSelfProtect applies self-protection to an analysed command line:
// statewright's mutating subcommands, git configuration, every write
// target (static ones on their real paths, as trees, with the directories
// that contain the law; dynamic ones as step 7 of the decision pipeline says (docs/architecture.md)), links to
// protected files, and every read of a secret, recursive walks included.
func (l *Law) shellSelfProtect(call *ToolCall, sc *shellCall) *block {
	if sc.err != nil {
		if l.hasMarker(sc.src) || containsFold(sc.src, "statewright") {
			return protectBlock("the command does not parse and names statewright's own files")
		}
		return nil
	}
	a := sc.analysis
	if a.DumpsEnv || a.IndirectEnv {
		// An operator who exported $STATEWRIGHT_OPERATOR_TOKEN where the
		// agent runs would hand it over to a plain `env`.
		return protectBlock("the command prints the whole environment or reads variables by computed name, which may include an operator credential ($STATEWRIGHT_OPERATOR_TOKEN); name the variables you need instead")
	}
	for _, v := range a.EnvRefs {
		if strings.HasPrefix(v, "STATEWRIGHT_") && (strings.Contains(v, "TOKEN") || strings.Contains(v, "SECRET") || strings.Contains(v, "KEY")) {
			return protectBlock("the command reads $%s, an operator credential", v)
		}
	}
	findExec := false
	for i := range a.Commands {
		if c := &a.Commands[i]; c.Program == "find" || c.Program == "bfs" {
			if _, _, ok := findRoots(c.Argv); ok {
				findExec = true
			}
		}
	}
	var bs blocks
	for i := range a.Commands {
		if b := l.commandSelfProtect(call, &a.Commands[i], findExec, &bs); b != nil {
			return b
		}
	}
	for _, t := range a.Writes {
		var b *block
		if t.Dynamic {
			b = l.dynamicWriteBlock(call, nil, t)
		} else {
			b = l.writeBlock(call, l.resolve(call, t.Path), false, "the command writes to")
		}
		if b := bs.add(b); b != nil {
			return b
		}
	}
	return bs.rest()
}

// commandSelfProtect applies self-protection to one simple command.
func (l *Law) commandSelfProtect(call *ToolCall, c *shell.Command, findExec bool, bs *blocks) *block {
	if l.isStatewright(c) && statewrightMutates(c.Argv) {
		return protectBlock("`%s` runs a statewright subcommand that changes runs or settings; only a person may do that (read-only ones such as status, explain, check are fine)", commandText(c))
	}
	if f := ToolchainConfigWrite(c.Argv); f != "" {
		return protectBlock("`%s` writes %s, which makes the user's later builds and installs run programs (protected); a person changes it, outside the agent", commandText(c), f)
	}
	if c.Program == "git" && c.Subcommand == "config" && c.Classes&shell.ClassGitWrite != 0 {
		return protectBlock("`%s` changes git configuration (.git/config can point hooks, pagers and ssh at any program); reading it with `git config --get` is fine", commandText(c))
	}
	cc := call
	if c.Program == "git" {
		var b *block
		cc, b = l.gitCall(call, c)
		if b := bs.add(b); b != nil {
			return b
		}
	}
	text := "`" + commandText(c) + "` writes to"
	last := len(c.Writes) - 1
	for i, t := range c.Writes {
		if t.Dynamic {
			if c.Program == "git" && isDescription(t.Path) {
				if b := bs.add(l.gitTreeBlock(cc, c, t.Path)); b != nil {
					return b
				}
				continue
			}
			if b := bs.add(l.dynamicWriteBlock(cc, c, t)); b != nil {
				return b
			}
			continue
		}
		r := l.resolve(cc, t.Path)
		into := intoWriters[c.Program] && c.Classes&shell.ClassDelete == 0 || c.Program == "mv" && i == last && last > 0
		if b := bs.add(l.writeBlock(cc, r, into, text)); b != nil {
			return b
		}
		if into && r.info.Exists && r.info.Dir {
			if b := bs.add(l.landingBlock(cc, c, r, i)); b != nil {
				return b
			}
		}
	}
	if b := bs.add(l.linkBlock(cc, c)); b != nil {
		return b
	}
	for _, f := range nameListFiles(c) {
		// A list of names read from a file reaches the output (each name,
		// or an error naming it): a read of the file's content.
		var b *block
		if strings.ContainsAny(f, "$`*?[") {
			b = l.dynamicReadBlock(cc, c, shell.Target{Path: f, Dynamic: true}, nil)
		} else {
			b = l.readBlock(l.resolve(cc, f), "`"+commandText(c)+"` reads")
		}
		if b := bs.add(b); b != nil {
			return b
		}
	}
	if roots, w, rec := recursive(c); !namesOnly[c.Program] || rec {
		var wp *Walk
		if rec {
			wp = &w
		}
		for _, t := range c.Reads {
			if t.Dynamic {
				if t.Path == "{}" && findExec {
					continue // find's walk is checked below
				}
				if b := bs.add(l.dynamicReadBlock(cc, c, t, wp)); b != nil {
					return b
				}
				continue
			}
			if b := bs.add(l.readBlock(l.resolve(cc, t.Path), "`"+commandText(c)+"` reads")); b != nil {
				return b
			}
		}
		if rec && !cc.Sandboxed {
			for _, root := range roots {
				if strings.ContainsAny(root, "$`*?[") {
					continue // a dynamic root is a dynamic read, decided above
				}
				if b := bs.add(l.reachBlock(cc, l.resolve(cc, root), w, "`"+commandText(c)+"` reads")); b != nil {
					return b
				}
			}
		}
	}
	if b := l.winWordBlock(cc, c); b != nil {
		return b
	}
	for i, w := range c.Argv {
		if i > 0 && !namesOnly[c.Program] && isOwnSecretText(w) {
			return protectBlock("`%s` reads an operator credential", commandText(c))
		}
	}
	// Arguments of a command that can change files or run code must not
	// name a protected path. git is exempt (its writes are checked above;
	// commit messages often name such files; git config is checked above).
	if c.Classes&^(readOnlyClasses|shell.ClassTest) != 0 && c.Program != "git" {
		for i, w := range c.Argv {
			if i == 0 || strings.HasPrefix(w, "-") && !strings.Contains(w, "=") {
				continue
			}
			if l.hasMarker(w) {
				return protectBlock("`%s` names %s, one of statewright's protected files, in a command that can change it", commandText(c), clip(w, 60))
			}
			if !strings.ContainsAny(w, " \n$`") {
				r := l.resolve(cc, w)
				var pbuf [2]string
				for _, p := range r.paths(&pbuf) {
					if what, ok := l.protectedBy(p); ok {
						return protectBlock("`%s` names %s, which is protected (%s), in a command that can change it", commandText(c), clip(w, 60), what)
					}
				}
			}
		}
	}
	return nil
}

// isOwnSecretText reports whether shell text names statewright's own
// credentials (the operator token, its configuration directory).
func isOwnSecretText(s string) bool {
	return containsFold(s, "operator-token") || containsFold(s, ".config/statewright") || containsFold(s, "statewright/tokens.json")
}

// intoWriters create entries inside a destination directory rather than
// replace it (cp f dir/, ln -s x dir/); mv's last operand too.
var intoWriters = map[string]bool{
	"cp": true, "ln": true, "link": true, "install": true, "rsync": true, "scp": true, "mkdir": true, "touch": true,
}

// landingBlock checks where an into-writer puts its sources: dest/name
// for each, and dest itself when a source's contents are copied
// (`cp -r dir/. dest`, `rsync dir/ dest`), which may put anything there.
func (l *Law) landingBlock(call *ToolCall, c *shell.Command, dest resolved, destIdx int) *block {
	var srcs []string
	if c.Program == "mv" {
		for i, t := range c.Writes {
			if i != destIdx && !t.Dynamic {
				srcs = append(srcs, t.Path)
			}
		}
	} else {
		for _, t := range c.Reads {
			if !t.Dynamic {
				srcs = append(srcs, t.Path)
			}
		}
	}
	text := "`" + commandText(c) + "` writes to"
	for _, s := range srcs {
		if (c.Program == "cp" || c.Program == "rsync") && (strings.HasSuffix(s, "/") || strings.HasSuffix(s, "/.") || s == ".") {
			if b := l.writeBlock(call, dest, false, text); b != nil {
				return b
			}
			continue
		}
		land := path.Join(dest.info.Real, path.Base(s))
		if b := l.writeBlock(call, resolved{written: land, abs: land, info: l.info(call, land)}, false, text); b != nil {
			return b
		}
	}
	return nil
}

// linkBlock denies links to protected files and secrets: a hard link is a
// second name through which the file can be written; a symbolic link is a
// path the edit tools would follow (ln -s .claude x; Write x/settings.json).
func (l *Law) linkBlock(call *ToolCall, c *shell.Command) *block {
	linking := c.Program == "ln" || c.Program == "link"
	if c.Program == "cp" {
		opts, _ := shortOpts(c.Argv, "tS", []string{"target-directory", "suffix"})
		linking = hasOpt(opts, "-l", "-s", "--link", "--symbolic-link")
	}
	if !linking {
		return nil
	}
	var dests []string
	for _, t := range c.Writes {
		if !t.Dynamic {
			d := l.absPath(call, t.Path)
			dests = append(dests, d, path.Dir(d))
		}
	}
	for _, t := range c.Reads {
		if t.Dynamic {
			if call.Sandboxed {
				continue
			}
			return unknownBlock("`%s` links to %s, which cannot be known before the command runs and could be a protected file or a secret", commandText(c), t.Path)
		}
		cands := []resolved{l.resolve(call, t.Path)}
		if !strings.HasPrefix(t.Path, "/") && !strings.HasPrefix(t.Path, "~") {
			// A symbolic link's target is relative to the link's directory.
			for _, d := range dests {
				p := path.Join(d, t.Path)
				cands = append(cands, resolved{written: t.Path, abs: p, info: l.info(call, p)})
			}
		}
		for _, r := range cands {
			var pbuf [2]string
			for _, p := range r.paths(&pbuf) {
				if what, ok := l.protectedBy(p); ok {
					return protectBlock("`%s` links to %s, which is protected (%s): a link is a second way to write it", commandText(c), describe(r), what)
				}
				if what, ok := l.lawAncestor(call, p); ok {
					return protectBlock("`%s` links to %s, which contains %s (protected): a link is a second way to write it", commandText(c), describe(r), what)
				}
				if what, ok := l.secretBy(p); ok {
					return protectBlock("`%s` links to %s, which is a secret (%s)", commandText(c), describe(r), what)
				}
			}
		}
	}
	return nil
}

// matchEntry reports whether a simple command, as written, starts with the
// entry's words (shell.Command.HasPrefix: literal words only, so `pytest
// $(x)` never matches more than `pytest`). The first word also matches a
// path to the program (`/usr/bin/pytest` matches `pytest`), never a longer
// name (`pytestfoo`). Assignment prefixes (`PYTHONPATH=. pytest`) must
// appear in the entry exactly; otherwise the command does not match.
func matchEntry(c *shell.Command, entry []string) bool {
	if len(entry) < len(c.Assigns) {
		return false
	}
	for i, as := range c.Assigns {
		if entry[i] != as {
			return false
		}
	}
	entry = entry[len(c.Assigns):]
	if len(entry) == 0 {
		return false
	}
	if c.HasPrefix(entry) {
		return true
	}
	// /usr/bin/pytest -x matches "pytest".
	if len(c.Words) < len(entry) || !c.Words[0].Literal || strings.Contains(entry[0], "/") || path.Base(c.Words[0].Text) != entry[0] {
		return false
	}
	for i := 1; i < len(entry); i++ {
		if !c.Words[i].Literal || c.Words[i].Text != entry[i] {
			return false
		}
	}
	return true
}

// sandboxNote says which wall decided an Exec deny in a phase that lets
// Exec run inside the sandbox: the static law, because no sandbox is in
// force for this call.
func (cs *compiledState) sandboxNote(call *ToolCall, missing capSet) string {
	if !cs.sandboxExec || missing&capExec == 0 || call.Sandboxed {
		return ""
	}
	return " (this phase lets Exec run inside the OS sandbox, but no sandbox is in force for this call, so the static law decides)"
}

// isCompanion reports whether a command is a pure read filter that may join
// a line whose other commands match allowed_commands (`pytest | tail -20`).
func isCompanion(c *shell.Command) bool {
	return !c.Dynamic && c.Classes != 0 && c.Classes&^readOnlyClasses == 0 && len(c.Writes) == 0
}

// shellFinding is the first problem found with a shell call.
type shellFinding struct {
	rule   Rule
	reason string
}

// checkShell applies step 7 to a shell call: allowed_commands, capabilities,
// blocked_env, then write targets against path scopes and edit limits.
//
// cover marks the commands permission rules name (nil when the phase has
// none): they count as matching allowed_commands, and need no capability.
//
// netOK marks the commands whose network the phase's domains grant: they
// need no Network capability.
func (l *Law) checkShell(cs *compiledState, run *RunState, call *ToolCall, sc *shellCall, eff *Effects, cover, netOK []bool) *shellFinding {
	a := sc.analysis
	matched := make([]bool, len(a.Commands))
	covered := func(i int) bool { return i < len(cover) && cover[i] }
	if cs.commands != nil {
		anyMatched := false
		for i := range a.Commands {
			if covered(i) {
				matched[i] = true
				anyMatched = true
				continue
			}
			for _, e := range cs.commands {
				if matchEntry(&a.Commands[i], e) {
					matched[i] = true
					anyMatched = true
					break
				}
			}
		}
		for i := range a.Commands {
			c := &a.Commands[i]
			if matched[i] || anyMatched && isCompanion(c) {
				continue
			}
			return &shellFinding{RuleAllowedCommands, "`" + commandText(c) + "` matches no entry of allowed_commands (" + strings.Join(cs.st.AllowedCommands, ", ") + ")"}
		}
	}
	caps := cs.caps
	if cs.sandboxExec && call.Sandboxed {
		// The sandbox keeps whatever the code does inside the phase's
		// write scope (docs/sandbox.md), so Exec needs no capability here.
		caps |= capExec
	}
	var union shell.Class
	for i := range a.Commands {
		c := &a.Commands[i]
		union |= c.Classes
		n := needs(c.Classes)
		if covered(i) {
			// A permission rule names this command: it grants what the
			// command needs (allow), or a person will (ask).
			n = 0
		}
		if i < len(netOK) && netOK[i] {
			n &^= capNetwork
		}
		if matched[i] && c.Classes&shell.ClassTest == 0 {
			// allowed_commands vouches for an unknown program or script.
			// A test runner needs no such waiver; when it is exec too, a
			// flag makes it run an arbitrary program (go test -exec,
			// pytest -p, make SHELL=): that still needs Exec.
			n &^= capExec
		}
		if missing := n &^ caps; missing != 0 {
			return &shellFinding{RuleShellCapability, fmt.Sprintf("`%s` does %s, which needs the %s capability%s", commandText(c), strings.Join(c.Classes.Names(), "+"), strings.Join(missing.names(), " and "), cs.sandboxNote(call, missing))}
		}
		if c.Program == "git" && caps&capExec == 0 {
			// Even where allowed_commands names it (`git status`).
			if where := l.gitElsewhere(call, c); where != "" {
				return &shellFinding{RuleShellCapability, fmt.Sprintf("`%s` runs git in %s, another repository than the project's: git runs the programs its configuration names (core.fsmonitor, aliases, hooks, core.sshCommand), which the agent could have written there, so this needs the Exec capability%s. Run git in the project's own repository", commandText(c), where, cs.sandboxNote(call, capExec))}
			}
		}
	}
	rest := needs(a.Classes &^ union)
	if sc.background {
		rest |= capBackground
	}
	if missing := rest &^ caps; missing != 0 {
		what := strings.Join((a.Classes &^ union).Names(), "+")
		if sc.background {
			what = strings.TrimPrefix(what+"+background", "+")
		}
		return &shellFinding{RuleShellCapability, fmt.Sprintf("the command line does %s, which needs the %s capability", what, strings.Join(missing.names(), " and "))}
	}
	if cs.blockedEnv != nil {
		for _, v := range a.EnvRefs {
			if _, ok := cs.blockedEnv[v]; ok {
				return &shellFinding{RuleBlockedEnv, "the command reads $" + v + ", which blocked_env forbids here"}
			}
		}
		if a.IndirectEnv {
			return &shellFinding{RuleBlockedEnv, "the command reads variables whose names are computed (${!X}), which could reveal blocked_env variables (" + strings.Join(cs.st.BlockedEnv, ", ") + ")"}
		}
		if a.DumpsEnv {
			return &shellFinding{RuleBlockedEnv, "the command prints the whole environment, which would reveal blocked_env variables (" + strings.Join(cs.st.BlockedEnv, ", ") + ")"}
		}
	}
	// Write targets count like edits.
	var files []string
	seen := map[string]bool{}
	limited := len(cs.allowedPath) > 0 || len(cs.deniedPath) > 0 || cs.maxFiles >= 0 || cs.maxEdit >= 0
	for _, t := range a.Writes {
		if t.Dynamic {
			if limited {
				return &shellFinding{RuleUnknownTarget, "the command writes to " + t.Path + ", a target that cannot be known before it runs, and this phase limits which files may change"}
			}
			continue
		}
		abs := l.editPath(call, t.Path)
		if !seen[abs] {
			seen[abs] = true
			files = append(files, abs)
		}
	}
	if len(files) > 0 {
		if f := l.checkFiles(cs, run, call, files); f != nil {
			return f
		}
		if cs.maxEdit >= 0 {
			for i := range a.Commands {
				c := &a.Commands[i]
				if len(c.Writes) > 0 && !linelessWriters[c.Program] {
					return &shellFinding{RuleMaxEditLines, fmt.Sprintf("`%s` writes %s from the shell, where the lines it changes cannot be counted; this phase limits edits to %d lines, so use the edit tools", commandText(c), clip(strings.Join(files, ", "), 120), cs.maxEdit)}
				}
			}
		}
	}
	eff.FilesEdited = files
	return nil
}

// linelessWriters create paths without content (zero changed lines), so
// max_edit_lines does not stop them; path scopes and max_files still apply.
var linelessWriters = map[string]bool{"mkdir": true, "touch": true}

// checkFiles applies path scopes and max_files_per_state to resolved targets.
func (l *Law) checkFiles(cs *compiledState, run *RunState, call *ToolCall, files []string) *shellFinding {
	newFiles := 0
	for _, abs := range files {
		rel := l.relTo(call, abs)
		if len(cs.deniedPath) > 0 && matchDenied(cs.deniedPath, abs, rel) {
			return &shellFinding{RulePathScope, rel + " is in denied_paths (" + strings.Join(cs.st.DeniedPaths, ", ") + ")"}
		}
		if len(cs.allowedPath) > 0 && !matchScope(cs.allowedPath, abs, rel) {
			return &shellFinding{RulePathScope, rel + " is outside allowed_paths (" + strings.Join(cs.st.AllowedPaths, ", ") + ")"}
		}
		if !contains(run.FilesEdited, abs) {
			newFiles++
		}
	}
	if cs.maxFiles >= 0 && newFiles > 0 && len(run.FilesEdited)+newFiles > cs.maxFiles {
		return &shellFinding{RuleMaxFiles, fmt.Sprintf("%d files were edited in this phase already (%s) and max_files_per_state is %d", len(run.FilesEdited), clip(strings.Join(run.FilesEdited, ", "), 200), cs.maxFiles)}
	}
	return nil
}

// filesRule is checkFiles(cs, run, p.call, files)'s rule ("" for none)
// for a simulated phase, whose deny needs no reason: it writes none, and
// it finds the first file's project-relative path once for every phase.
func (l *Law) filesRule(cs *compiledState, run *RunState, p *prepared, files []string) Rule {
	newFiles := 0
	for i, abs := range files {
		if len(cs.deniedPath) > 0 || len(cs.allowedPath) > 0 {
			var rel string
			if i == 0 {
				if !p.haveRel0 {
					p.rel0, p.haveRel0 = l.relTo(p.call, abs), true
				}
				rel = p.rel0
			} else {
				rel = l.relTo(p.call, abs)
			}
			if len(cs.deniedPath) > 0 && matchDenied(cs.deniedPath, abs, rel) {
				return RulePathScope
			}
			if len(cs.allowedPath) > 0 && !matchScope(cs.allowedPath, abs, rel) {
				return RulePathScope
			}
		}
		if !contains(run.FilesEdited, abs) {
			newFiles++
		}
	}
	if cs.maxFiles >= 0 && newFiles > 0 && len(run.FilesEdited)+newFiles > cs.maxFiles {
		return RuleMaxFiles
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
