package policy

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/statewright-go/statewright/shell"
)

// A block is why self-protection (pipeline step 1) stops a call: the rule
// (self-protect, or unknown-target for a target that cannot be known and
// could reach the law) and the reason.
type block struct {
	rule   Rule
	reason string
	// prot, when set, is a protected file's block whose reason is not
	// written yet: text and appendReason write it where it is needed (a
	// deny's lesson), once.
	prot *protectedWrite
	// deferred blocks (a target that could reach the law, rather than one
	// that does) are applied only when nothing else denies the call, so
	// that the phase's own rules teach first.
	deferred bool
	// ask blocks do not deny: a read that a phase's ask rule names makes
	// the call wait for a person, if nothing else denies it.
	ask bool
}

// protectedWrite is what the reason of a write to a protected file says:
// subject+verb, the target as written (and its real path when a link or
// ".." changed it), and the protected entry that covers it.
type protectedWrite struct {
	subject, verb, written, real, what string
}

// protectedBlock is the block of a write to a protected file, its reason
// unwritten: one allocation, where a written reason takes two.
type protectedBlock struct {
	b block
	w protectedWrite
}

// text returns b's reason, writing it first when it is a protected
// file's.
func (b *block) text() string {
	if b.reason == "" && b.prot != nil {
		b.reason = string(b.appendReason(nil))
	}
	return b.reason
}

// appendReason appends b's reason to buf.
func (b *block) appendReason(buf []byte) []byte {
	w := b.prot
	if w == nil || b.reason != "" {
		return append(buf, b.reason...)
	}
	buf = append(buf, w.subject...)
	buf = append(buf, w.verb...)
	buf = append(buf, ' ')
	buf = append(buf, w.written...)
	if w.real != "" {
		buf = append(buf, " (really "...)
		buf = append(buf, w.real...)
		buf = append(buf, ')')
	}
	buf = append(buf, ", which is protected ("...)
	buf = append(buf, w.what...)
	return append(buf, "): agents cannot change statewright's store, workflows or binary, harness settings and hooks, shell rc files, or git configuration and hooks"...)
}

// blocks keeps the first deferred and the first ask block while the scan
// goes on.
type blocks struct{ deferred, ask *block }

// add returns b when it must stop the scan (a block that is neither
// deferred nor an ask).
func (bs *blocks) add(b *block) *block {
	if b == nil {
		return nil
	}
	if b.ask {
		if bs.ask == nil {
			bs.ask = b
		}
		return nil
	}
	if b.deferred {
		if bs.deferred == nil {
			bs.deferred = b
		}
		return nil
	}
	return b
}

// rest is what the scan found when nothing stopped it: a deferred block,
// else an ask.
func (bs *blocks) rest() *block {
	if bs.deferred != nil {
		return bs.deferred
	}
	return bs.ask
}

func unknownBlock(format string, args ...any) *block {
	return &block{rule: RuleUnknownTarget, reason: fmt.Sprintf(format, args...), deferred: true}
}

// deferBlock is a self-protection block applied only when nothing else
// denies the call.
func deferBlock(format string, args ...any) *block {
	return &block{rule: RuleSelfProtect, reason: fmt.Sprintf(format, args...), deferred: true}
}

func protectBlock(format string, args ...any) *block {
	return &block{rule: RuleSelfProtect, reason: fmt.Sprintf(format, args...)}
}

// resolved is one path a call names, as written, lexically absolute, and
// as the runtime found it.
type resolved struct {
	written string
	abs     string
	info    PathInfo
}

func (l *Law) resolve(call *ToolCall, p string) resolved {
	raw := l.rawAbs(call, p)
	abs := cleanPath(raw)
	if call.Resolver == nil && !call.win && (strings.HasPrefix(raw, "/") || !winCall(call)) {
		// What info answers without a Resolver (a relative path is
		// unknown only in a Windows-shaped call), cleaned once.
		return resolved{written: p, abs: abs, info: PathInfo{Real: abs}}
	}
	return resolved{written: p, abs: abs, info: l.info(call, raw)}
}

// paths returns the lexical and the real path (once when equal), in a
// caller's array: for _, p := range t.paths(&buf).
func (r *resolved) paths(buf *[2]string) []string {
	buf[0] = r.abs
	if r.info.Real == "" || r.info.Real == r.abs {
		return buf[:1]
	}
	buf[1] = r.info.Real
	return buf[:2]
}

// protectedBy reports which protected entry covers p.
func (l *Law) protectedBy(p string) (string, bool) {
	return l.protect.match(p)
}

// secretBy reports which secret entry covers p.
func (l *Law) secretBy(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	if strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/") {
		// A process's environment holds operator tokens and blocked_env
		// variables (issue 14.6): /proc/*/environ by any spelling.
		if shell.ReadsEnvironment(p) {
			return "a process's environment", true
		}
	}
	if w, ok := l.secret.match(p); ok || !winSlash(p) || l.winSecret == nil {
		return w, ok
	}
	return l.winSecret.match(p)
}

// isSecretPath is secretBy as a predicate, for Resolver.Reach.
func (l *Law) isSecretPath(p string) bool {
	_, ok := l.secretBy(p)
	return ok
}

// lawAncestor reports a protected tree that lies strictly below dir (dir
// is the project, a parent of it, ~/.config, the store's directory, ...):
// moving, deleting or replacing dir would move or delete the law.
func (l *Law) lawAncestor(call *ToolCall, dir string) (string, bool) {
	return l.lawAncestorOf(call, dir, true)
}

// lawAncestorOf is lawAncestor; quick answers for a path too long to be
// the project directory, a parent of it or its .git without lower-casing
// and comparing them (tests turn it off to compare, TestLawAncestorQuick).
func (l *Law) lawAncestorOf(call *ToolCall, dir string, quick bool) (string, bool) {
	ld := foldPath(dir)
	for _, a := range l.anchors {
		if properAncestor(ld, a) {
			return a, true
		}
	}
	if call.ProjectDir == "" {
		return "", false
	}
	if quick && call.Resolver == nil && len(ld) > len(call.ProjectDir)+len("/.git") && ld != "/" && isASCII(call.ProjectDir) {
		// The one root is ProjectDir cleaned (never longer) and
		// lower-cased (as long, in ASCII): ld is neither it, nor above
		// it, nor its .git.
		return "", false
	}
	roots, n := l.projectRootsIn(call)
	for _, pd := range roots[:n] {
		lpd := foldPath(pd)
		if underOrEqual(lpd, ld) {
			return pd + "/.claude", true
		}
		if len(ld) == len(lpd)+len("/.git") && strings.HasPrefix(ld, lpd) && strings.HasSuffix(ld, "/.git") {
			return dir + "/config", true
		}
	}
	return "", false
}

// isASCII reports whether s is ASCII text.
func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// projectRoots are the call's project directory as written and resolved.
func (l *Law) projectRoots(call *ToolCall) []string {
	roots, n := l.projectRootsIn(call)
	if n == 0 {
		return nil
	}
	return append([]string(nil), roots[:n]...)
}

// projectRootsIn is projectRoots in an array (the first n), for the
// paths a decision takes on every edit: no allocation.
func (l *Law) projectRootsIn(call *ToolCall) (roots [2]string, n int) {
	pd := cleanPath(call.ProjectDir)
	if pd == "" || !strings.HasPrefix(pd, "/") {
		return roots, 0
	}
	roots[0], n = pd, 1
	if call.Resolver != nil {
		if r := call.Resolver.Resolve(pd).Real; r != "" && r != pd {
			roots[1], n = r, 2
		}
	}
	return roots, n
}

// writeBlock reports why writing t is forbidden, or nil. into is true
// when t is a directory the write creates entries in (cp's or mv's
// destination) rather than replaces.
func (l *Law) writeBlock(call *ToolCall, t resolved, into bool, verb string) *block {
	return l.writeBlockOf(call, t, into, "", verb)
}

// writeBlockOf is writeBlock for the verb subject+verb, which is joined
// only for a message.
func (l *Law) writeBlockOf(call *ToolCall, t resolved, into bool, subject, verb string) *block {
	if t.info.Err != "" {
		return protectBlock("%s%s %s, whose real path cannot be resolved (%s)", subject, verb, t.written, t.info.Err)
	}
	var w protectedWrite
	if l.protectedWriteOf(&t, subject, verb, &w) {
		// (The most common self-protection deny: its reason is written
		// into the lesson, not joined here first.)
		pb := &protectedBlock{w: w}
		pb.b = block{rule: RuleSelfProtect, prot: &pb.w}
		return &pb.b
	}
	return l.writeBlockAfter(call, &t, into, subject, verb)
}

// protectedWriteOf is writeBlockOf's check of protected files, for a
// target whose real path is known (t.info.Err ""): true when t is one,
// and then *w is what the reason says (else *w is left as it is). t and
// w are pointers: a resolved target is 104 bytes, too large to be passed
// in registers.
func (l *Law) protectedWriteOf(t *resolved, subject, verb string, w *protectedWrite) bool {
	var pbuf [2]string
	for _, p := range t.paths(&pbuf) {
		if what, ok := l.protectedBy(p); ok {
			*w = protectedWrite{subject: subject, verb: verb, written: t.written, what: what}
			if t.info.Real != "" && t.info.Real != t.abs {
				w.real = t.info.Real
			}
			return true
		}
	}
	return false
}

// writeBlockAfter is writeBlockOf after its checks of an unresolved path
// and of protected files.
func (l *Law) writeBlockAfter(call *ToolCall, t *resolved, into bool, subject, verb string) *block {
	if !(into && t.info.Exists && t.info.Dir) {
		var pbuf [2]string
		for _, p := range t.paths(&pbuf) {
			if what, ok := l.lawAncestor(call, p); ok {
				return deferBlock("%s%s %s, which contains %s (protected): moving, deleting or replacing it would take the law with it", subject, verb, describe(*t), what)
			}
		}
	}
	if t.info.Nlink > 1 && !t.info.Dir {
		return protectBlock("%s%s %s, which has %d hard links: one of its other names may be a protected file", subject, verb, describe(*t), t.info.Nlink)
	}
	return nil
}

// describe renders a target for messages: as written, plus its real path
// when a link or ".." changed it.
func describe(t resolved) string {
	if t.info.Real != "" && t.info.Real != t.abs {
		return t.written + " (really " + t.info.Real + ")"
	}
	return t.written
}

// nativeWriteBlock applies the write rules to an edit tool's target, and
// one more: a target reached through a symbolic link that the agent could
// have made or could swap before the write lands (docs/policy.md).
func (l *Law) nativeWriteBlock(call *ToolCall, p, tool string) *block {
	return l.nativeWriteBlockOf(call, l.resolve(call, p), tool)
}

// nativeWriteBlockOf is nativeWriteBlock of a target resolved already.
func (l *Law) nativeWriteBlockOf(call *ToolCall, t resolved, tool string) *block {
	if b := l.writeBlockOf(call, t, false, tool, " would change"); b != nil {
		return b
	}
	return l.writeLinkBlock(call, &t, tool)
}

// nativeWriteBlockAfter is nativeWriteBlockOf after writeBlockOf's checks
// of an unresolved path and of protected files.
func (l *Law) nativeWriteBlockAfter(call *ToolCall, t *resolved, tool string) *block {
	if b := l.writeBlockAfter(call, t, false, tool, " would change"); b != nil {
		return b
	}
	return l.writeLinkBlock(call, t, tool)
}

// writeLinkBlock is nativeWriteBlockOf's check of the links to t.
func (l *Law) writeLinkBlock(call *ToolCall, t *resolved, tool string) *block {
	for _, ln := range t.info.Links {
		if ln.Writable && !l.trustedLink(call, ln.Path) {
			return protectBlock("%s would write through the symbolic link %s (→ %s), which lives where the agent can write: a link can be swapped between this decision and the write. Write to the real path %s instead", tool, ln.Path, ln.Target, t.info.Real)
		}
	}
	return nil
}

// trustedLink reports whether a link is part of the project's own path (the
// project directory, or a parent of it, reached through a link): those
// were in place when the session started, and moving them is denied.
func (l *Law) trustedLink(call *ToolCall, link string) bool {
	pd := cleanPath(call.ProjectDir)
	if pd != "" && underOrEqual(pd, link) {
		return true
	}
	if h := l.home(); h != "" && underOrEqual(h, link) {
		return true
	}
	return false
}

// readBlock reports why reading t is forbidden (a secret, or a path the
// phase denies reading), or that a person must agree (a phase's ask rule),
// or nil.
func (l *Law) readBlock(t resolved, verb string) *block {
	if t.info.Err == errWinPath {
		return protectBlock("%s %s, %s: what it would read cannot be known", verb, t.written, errWinPath)
	}
	var pbuf [2]string
	for _, p := range t.paths(&pbuf) {
		if what, ok := l.secretBy(p); ok {
			return protectBlock("%s %s, which is a secret (%s): agents never read credentials, keys or statewright's tokens", verb, describe(t), what)
		}
	}
	return l.phaseReadBlock(t, verb)
}

// reachBlock walks a directory as a recursive reader would and reports a
// secret it would read.
func (l *Law) reachBlock(call *ToolCall, t resolved, w Walk, verb string) *block {
	if b := l.readBlock(t, verb); b != nil {
		return b
	}
	if call.Resolver == nil || !t.info.Exists || !t.info.Dir {
		return nil
	}
	pred := l.isSecretPath
	if l.phase != nil {
		pred = l.isReadDenied(false)
	}
	found, err := call.Resolver.Reach(t.info.Real, w, pred)
	if err == nil && found == "" && l.phase.hasAsk() {
		found, err = call.Resolver.Reach(t.info.Real, w, l.isReadDenied(true))
	}
	if err != nil {
		return protectBlock("%s %s recursively, and what it would read cannot be checked (%v); name the files to read", verb, t.written, err)
	}
	if found != "" {
		if what, ok := l.secretBy(found); ok {
			return protectBlock("%s %s recursively, which would reach %s, a secret (%s); search a narrower directory, or exclude it", verb, t.written, found, what)
		}
		if e := l.phase.match(found, true); e != nil {
			b := e.block(verb, t)
			b.reason = fmt.Sprintf("%s %s recursively, which would reach %s, which %s", verb, t.written, found, e.what)
			if e.ask {
				b.reason += " names: a person must agree"
			} else {
				b.reason += " forbids reading; search a narrower directory, or exclude it"
			}
			return b
		}
	}
	return nil
}

// dynamicKind says what kind of text a dynamic target is.
type dynamicKind int

const (
	dynGlob    dynamicKind = iota // a plain glob: only * ? [ ] in literal text
	dynUnknown                    // variables, substitutions, braces, or a description ("git working tree")
)

func classifyDynamic(text string) dynamicKind {
	if strings.ContainsAny(text, "$`{}\"' \t\n\\<>") || !strings.ContainsAny(text, "*?[") {
		return dynUnknown
	}
	return dynGlob
}

// globSpells reports a protected name (or "..") that a glob component
// could match: such a glob could reach the law.
func (l *Law) globSpells(glob string) (string, bool) {
	for _, comp := range strings.Split(glob, "/") {
		if !strings.ContainsAny(comp, "*?[") {
			if comp == ".." {
				continue // a literal parent step is resolved like any other
			}
			for _, n := range l.lawNames {
				if strings.EqualFold(comp, n) {
					return n, true
				}
			}
			continue
		}
		for _, n := range append(l.lawNames, "..", ".") {
			if ok, _ := path.Match(strings.ToLower(comp), n); ok {
				return n, true
			}
		}
	}
	return "", false
}

// dynamicWriteBlock decides a write target the analysis could not know
// (docs/architecture.md, decision pipeline step 7; docs/sandbox.md). Under the sandbox the OS keeps the
// law read-only, so only text that names the law is denied. Outside it, a
// plain glob is expanded now and each match checked, provided it cannot
// spell a protected name; anything else (variables, substitutions, loops,
// archives, patches, git's working tree) could reach the law and is denied.
func (l *Law) dynamicWriteBlock(call *ToolCall, c *shell.Command, t shell.Target) *block {
	if l.hasMarker(t.Path) {
		return protectBlock("`%s` writes to %s, which may be one of statewright's protected files", cmdText(c), t.Path)
	}
	if call.Sandboxed || toolOutputs[t.Path] {
		return nil
	}
	if classifyDynamic(t.Path) == dynGlob && !treeWriters[programOf(c)] {
		if n, ok := l.globSpells(t.Path); ok {
			return unknownBlock("`%s` writes to %s, a glob that could match %s (protected); name the files literally", cmdText(c), t.Path, n)
		}
		abs := l.absPath(call, t.Path)
		if call.Resolver == nil {
			return nil // decided on the text alone
		}
		matches, ok := call.Resolver.Glob(abs)
		if !ok {
			return unknownBlock("`%s` writes to %s, a glob that cannot be expanded to check it; name the files literally", cmdText(c), t.Path)
		}
		for _, m := range matches {
			if b := l.writeBlock(call, resolved{written: m, abs: m, info: l.info(call, m)}, false, "`"+cmdText(c)+"` writes to"); b != nil {
				return b
			}
		}
		return nil
	}
	return unknownBlock("`%s` writes to %s, a target that cannot be known before the command runs and could reach a protected path (harness settings, git hooks, the store); outside the sandbox such writes are denied. Write to literal paths, or use the edit tools", cmdText(c), t.Path)
}

// toolOutputs are the analysis's descriptions of what known tools write
// into the project (build outputs, caches, formatted sources, package
// files): not the law, whatever the names. Every other description
// (git's working tree, archive contents, a download, xargs' arguments)
// could reach it.
var toolOutputs = map[string]bool{
	"go build output": true, "go caches": true, "go fmt": true, "go.mod": true, "go.work": true,
	"cargo fmt": true, "deno fmt": true, "target/": true, "new crate": true, "package files": true,
	"mktemp": true, "go env file": true, "remote name": true,
}

// treeWriters write anything below their (dynamic) target: archives and
// patches.
var treeWriters = map[string]bool{
	"tar": true, "bsdtar": true, "unzip": true, "7z": true, "7za": true, "cpio": true, "patch": true,
	"git": true, "ar": true, "pax": true, "gunzip": false,
}

func programOf(c *shell.Command) string {
	if c == nil {
		return ""
	}
	return c.Program
}

func cmdText(c *shell.Command) string {
	if c == nil {
		return "the command"
	}
	return commandText(c)
}

// dynamicReadBlock decides a read target the analysis could not know:
// under the sandbox secrets are hidden, so it is left to the OS; outside
// it a plain glob is expanded and checked, anything else could be a secret.
func (l *Law) dynamicReadBlock(call *ToolCall, c *shell.Command, t shell.Target, w *Walk) *block {
	if call.Sandboxed || strings.HasPrefix(t.Path, "<(") || strings.HasPrefix(t.Path, ">(") {
		return nil // a process substitution's own commands are checked
	}
	if classifyDynamic(t.Path) != dynGlob {
		return unknownBlock("`%s` reads %s, which cannot be known before the command runs and could be a secret (a credential, a key, statewright's tokens); outside the sandbox such reads are denied. Name the files literally", cmdText(c), t.Path)
	}
	abs := l.absPath(call, t.Path)
	if what, ok := l.secretBy(abs); ok {
		return protectBlock("`%s` reads %s, which matches a secret (%s)", cmdText(c), t.Path, what)
	}
	if e := l.phase.match(abs, true); e != nil {
		return e.block("`"+cmdText(c)+"` reads", resolved{written: t.Path, abs: abs})
	}
	if call.Resolver == nil {
		return nil
	}
	matches, ok := call.Resolver.Glob(abs)
	if !ok {
		return unknownBlock("`%s` reads %s, a glob that cannot be expanded to check it; name the files literally", cmdText(c), t.Path)
	}
	for _, m := range matches {
		r := resolved{written: m, abs: m, info: l.info(call, m)}
		var b *block
		if w != nil {
			b = l.reachBlock(call, r, *w, "`"+cmdText(c)+"` reads")
		} else {
			b = l.readBlock(r, "`"+cmdText(c)+"` reads")
		}
		if b != nil {
			return b
		}
	}
	return nil
}
