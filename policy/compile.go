package policy

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/statewright-go/statewright/workflow"
)

// capSet is a set of shell capabilities.
type capSet uint16

// Shell capabilities a phase may grant. capWrite comes from any edit tool;
// the others from capability words in allowed_tools.
const (
	capWrite capSet = 1 << iota
	capExec
	capNetwork
	capDestructive
	capGitWrite
	capPrivileged
	capBackground
	capNestedAgent
	allCaps = capWrite | capExec | capNetwork | capDestructive | capGitWrite | capPrivileged | capBackground | capNestedAgent
)

// capabilityWords are the capability words a workflow lists in allowed_tools
// (or disallowed_tools), matched case-insensitively; "_" and "-" are ignored.
var capabilityWords = map[string]capSet{
	"exec": capExec, "network": capNetwork, "destructive": capDestructive,
	"gitwrite": capGitWrite, "privileged": capPrivileged, "background": capBackground,
	"nestedagent": capNestedAgent,
}

var capNames = []struct {
	c    capSet
	name string
}{
	{capWrite, "Write or Edit"}, {capExec, "Exec"}, {capNetwork, "Network"},
	{capDestructive, "Destructive"}, {capGitWrite, "GitWrite"}, {capPrivileged, "Privileged"},
	{capBackground, "Background"}, {capNestedAgent, "NestedAgent"},
}

func (c capSet) names() []string {
	var out []string
	for _, cn := range capNames {
		if c&cn.c != 0 {
			out = append(out, cn.name)
		}
	}
	return out
}

// toolList is a compiled allowed_tools or disallowed_tools list.
type toolList struct {
	tools toolBits // canonical tools named
	caps  capSet   // capability words named
	// names are every entry as written (exact raw-name match, named): a
	// short list is compared entry by entry, cheaper than hashing the
	// name; a long one is looked up in nameSet.
	names    []string
	nameSet  map[string]struct{}
	prefixes []string // entries ending in "*": raw-name prefixes
}

// nameSetMin is the length from which a tool list's names are looked up
// in a map.
const nameSetMin = 16

// named reports whether the list has the entry raw, as written.
func (tl *toolList) named(raw string) bool {
	if tl.nameSet != nil {
		_, ok := tl.nameSet[raw]
		return ok
	}
	for _, n := range tl.names {
		if n == raw {
			return true
		}
	}
	return false
}

func compileToolList(entries []string) toolList {
	var tl toolList
	if len(entries) >= nameSetMin {
		tl.nameSet = make(map[string]struct{}, len(entries))
	}
	for _, e := range entries {
		if tl.nameSet != nil {
			tl.nameSet[e] = struct{}{}
		}
		tl.names = append(tl.names, e)
		if strings.HasSuffix(e, "*") {
			tl.prefixes = append(tl.prefixes, strings.TrimSuffix(e, "*"))
			continue
		}
		le := strings.ToLower(e)
		word := strings.NewReplacer("_", "", "-", "").Replace(le)
		if c, ok := capabilityWords[word]; ok {
			tl.caps |= c
			continue
		}
		if k, ok := workflowNames[le]; ok {
			tl.tools |= bit(k)
		}
		// A git tool that mutates (an MCP git server's git_commit, the
		// agent's git_push) grants GitWrite in the shell; a read tool
		// (git_log, git_status) or an unknown git_* name grants nothing.
		if workflow.GitToolMutates(e) {
			tl.caps |= capGitWrite
		}
	}
	return tl
}

// has reports whether the list names a call: by canonical tool, or by the
// raw name exactly, or by a "prefix*" entry.
func (tl *toolList) has(info toolInfo, raw string) bool {
	if info.kind != kOther && info.kind != kMeta && info.kind != kControl && tl.tools&satisfiedBy[info.kind] != 0 {
		return true
	}
	if tl.named(raw) {
		return true
	}
	for _, p := range tl.prefixes {
		if strings.HasPrefix(raw, p) {
			return true
		}
	}
	return false
}

// hasExactly is has for disallowed_tools: only the call's own kind counts
// (disallowing Edit does not disallow MultiEdit's other grants).
func (tl *toolList) hasExactly(info toolInfo, raw string) bool {
	if tl.tools == 0 && len(tl.names) == 0 {
		return false // nothing is disallowed (the common case)
	}
	if info.kind != kOther && info.kind != kControl && tl.tools&bit(info.kind) != 0 {
		return true
	}
	if info.kind == kMultiEdit || info.kind == kApplyPatch || info.kind == kDelete {
		if tl.tools&bit(kEdit) != 0 {
			return true
		}
	}
	if info.kind == kWriteStdin || info.kind == kBashAux {
		if tl.tools&bit(kBash) != 0 {
			return true
		}
	}
	if tl.named(raw) {
		return true
	}
	if info.kind == kMeta || info.kind == kTask {
		if tl.named(info.canon) {
			return true
		}
	}
	for _, p := range tl.prefixes {
		if strings.HasPrefix(raw, p) {
			return true
		}
	}
	return false
}

// pathGlob is a compiled path scope pattern.
type pathGlob struct {
	pattern string
	abs     bool
	// tree, when set, is the literal directory of a "DIR/**" pattern,
	// which matches DIR and everything below it (matchScope tests that
	// without doublestar).
	tree string
	// fpattern and ftree are pattern and tree folded (foldPath), for
	// denied_paths, which match in any case (matchDenied).
	fpattern, ftree string
}

// compiledState is one phase, compiled.
type compiledState struct {
	name        string
	st          *workflow.State
	final       bool
	anyTool     bool // allowed_tools absent
	allowed     toolList
	disallowed  toolList
	caps        capSet // shell capabilities granted (after disallowed_tools)
	allowedList []string
	allowReason string
	metaReason  string
	// lessonTail is what every teaching deny in the phase ends with (the
	// allowed tools in each harness's names, index harnessIndex; shell
	// capabilities and commands); transitionNow the max_iterations lesson.
	lessonTail    [numHarnesses]string
	transitionNow string
	// cands are the one-step transitions a deny may suggest, in order
	// (suggestionCandidates); far the phases further away, nearest first
	// (farWalk, found on first use).
	cands       []suggestCand
	far         *farWalk
	commands    [][]string // allowed_commands, tokenised; nil when absent
	blockedEnv  map[string]struct{}
	allowedPath []pathGlob
	deniedPath  []pathGlob
	maxEdit     int // -1 when unlimited
	maxFiles    int // -1 when unlimited
	maxIter     int64
	events      []string // sorted event names
	// sandboxExec is the state's sandbox.exec: Exec-class commands run
	// when the call is sandboxed.
	sandboxExec bool
	// rules are the phase's permission rules (the workflow's and its
	// own); nil when there are none.
	rules *ruleSet
	// readOnlyHints: a trusted MCP tool's readOnlyHint admits it here
	// where the phase allows reading (mcp_read_only_hints).
	readOnlyHints bool
	// lessons keeps the phase's tool-not-allowed lessons (denyTool),
	// at most lessonCacheSize of them.
	lessons lessonCache
	// protLesson is the lesson of the phase's last deny of an edit of a
	// protected file (denyProtected).
	protLesson atomic.Pointer[protectedLesson]
	// view is the law as this phase's read checks see it (its
	// denied_paths and Read deny/ask rules beside the secrets); nil when
	// the phase adds no read fence.
	view *Law
	// editListed has bit i set when the phase's tool lists let the edit
	// tool canonEdits[i], called by that name, through (listsAllow), for
	// a suggestion's simulated phase (simAllows).
	editListed uint8
}

// interruptRule is a compiled interrupt.
type interruptRule struct {
	name     string
	pattern  string
	target   string
	priority int
}

// Law is a workflow compiled for deciding tool calls. It is immutable and
// safe for concurrent use.
type Law struct {
	def        *workflow.Definition
	opts       Options
	states     map[string]*compiledState
	interrupts []interruptRule
	protected  []string  // Options.ProtectedPaths, cleaned and lower-cased
	markers    []string  // substrings that mark a protected path in shell text
	fences     Fences    // the host's protected and secret sets with this workflow's secret rules
	protect    fenceSet  // fences.Protected, compiled
	secret     fenceSet  // fences.Secret, compiled
	winSecret  *fenceSet // the secrets by name, for Windows-shaped calls where the home is not a Windows one
	anchors    []string  // the literal protected trees (lower-cased), for ancestor checks
	lawNames   []string  // names a glob must not be able to spell (".claude", ...)

	// secretAnywhere is secret as it would be without a home or project
	// directory: its names matched below any directory (~/.ssh as
	// **/.ssh), for an MCP tool's relative path, which its server may
	// resolve against a directory of its own. Built on first use (most
	// laws never decide such a call); nil: secret is that already.
	secretAnywhere *lazyFences

	// autoImplicit is meta.implicit_transitions: auto.
	autoImplicit bool
	// phase is set on a phase's view (compiledState.view): the read
	// fences that phase adds.
	phase *phaseReads
}

var (
	emptyList = []string{}
	anyList   = []string{"*"}
)

// Compile compiles def for deciding. It fails on patterns that do not parse
// (allowed_paths, denied_paths, interrupt file patterns) and on
// allowed_commands entries that are empty.
func Compile(def *workflow.Definition, opts Options) (*Law, error) {
	if def == nil {
		return nil, fmt.Errorf("policy: nil workflow definition")
	}
	// A Windows host's paths are matched in slash form (winpath.go).
	var err error
	if opts.Host, err = slashHost(opts.Host); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if opts.ProtectedPaths, err = slashPaths(opts.ProtectedPaths); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	l := &Law{def: def, opts: opts, states: map[string]*compiledState{}}
	for name, st := range def.States {
		if st == nil {
			return nil, fmt.Errorf("policy: state %q is empty", name)
		}
		cs, err := compileState(name, st)
		if err != nil {
			return nil, err
		}
		l.states[name] = cs
	}
	for _, cs := range l.states {
		cs.cands = l.suggestionCandidates(cs)
	}
	for _, cs := range l.states {
		cs.far = &farWalk{from: cs}
	}
	for name, in := range def.Interrupts {
		if in == nil {
			continue
		}
		if !doublestar.ValidatePattern(in.Trigger.FilePattern) {
			return nil, fmt.Errorf("policy: interrupt %q: invalid file_pattern %q", name, in.Trigger.FilePattern)
		}
		l.interrupts = append(l.interrupts, interruptRule{name: name, pattern: in.Trigger.FilePattern, target: in.Target, priority: in.Priority})
	}
	sort.Slice(l.interrupts, func(i, j int) bool {
		a, b := l.interrupts[i], l.interrupts[j]
		if a.priority != b.priority {
			return a.priority < b.priority
		}
		return a.name < b.name
	})
	if def.Meta != nil {
		if v, _ := def.Meta.Extra["implicit_transitions"].(string); v == "auto" {
			l.autoImplicit = true
		}
	}
	l.markers = append(l.markers, protectedMarkers...)
	var rules SecretRules
	if sec := def.Secrets; sec != nil {
		rules.NoDefaults = sec.Defaults != nil && !*sec.Defaults
		rules.Paths = sec.Paths
		for _, p := range sec.Paths {
			if !doublestar.ValidatePattern(strings.TrimPrefix(p, "~/")) {
				return nil, fmt.Errorf("policy: secrets: invalid pattern %q", p)
			}
		}
	}
	l.fences = HostFences(opts.Host, rules)
	for _, p := range opts.ProtectedPaths {
		if p == "" {
			continue
		}
		c := foldPath(cleanPath(p))
		l.protected = append(l.protected, c)
		l.markers = append(l.markers, c)
		if b := baseName(c); len(b) >= 4 && b != c {
			l.markers = append(l.markers, b)
		}
		if strings.HasPrefix(c, "/") {
			l.fences.Protected = append(l.fences.Protected, Fence{Path: cleanPath(p), What: "a protected path"})
		} else {
			// A relative protected path protects that path below any directory.
			l.fences.Protected = append(l.fences.Protected, Fence{Path: "**/" + strings.TrimPrefix(cleanPath(p), "./"), Pattern: true, What: "a protected path"})
		}
	}
	l.protect = compileFences(l.fences.Protected, nil)
	l.secret = compileFences(l.fences.Secret, l.fences.NotSecret)
	if opts.Host != nil && (opts.Host.Home != "" || opts.Host.ProjectDir != "") {
		l.secretAnywhere = &lazyFences{build: func() fenceSet {
			an := HostFences(&Host{}, rules)
			return compileFences(an.Secret, an.NotSecret)
		}}
	}
	if !winSlash(l.home()) {
		// A Windows-shaped call decided where the home directory is not a
		// Windows one (serve on Linux): the home's secrets by name, at any
		// depth (winpath.go).
		ws := compileFences(HostFences(&Host{}, rules).Secret, notSecret)
		l.winSecret = &ws
	}
	l.anchors = append(l.anchors, l.protect.trees...)
	l.lawNames = l.protect.names()
	for name, cs := range l.states {
		rs, err := compileRules(def, name, cs.st, opts.Host)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		cs.rules = rs
		cs.readOnlyHints = def.MCPReadOnlyHints != nil && *def.MCPReadOnlyHints
		if cs.st.MCPReadOnlyHints != nil {
			cs.readOnlyHints = *cs.st.MCPReadOnlyHints
		}
		if pr := compilePhaseReads(cs, rs, opts.Host); pr != nil {
			v := *l
			v.phase = pr
			cs.view = &v
		}
	}
	return l, nil
}

// viewFor is the law as a phase's read checks see it.
func (l *Law) viewFor(cs *compiledState) *Law {
	if cs != nil && cs.view != nil {
		return cs.view
	}
	return l
}

// MustCompile is Compile that panics on error, for tests and fixed workflows.
func MustCompile(def *workflow.Definition, opts Options) *Law {
	l, err := Compile(def, opts)
	if err != nil {
		panic(err)
	}
	return l
}

// Fences returns the host's protected and secret sets with this workflow's
// secret rules: what the sandbox mounts read-only and hides for a phase of
// this workflow. Callers must not mutate it.
func (l *Law) Fences() Fences { return l.fences }

// Definition returns the workflow the Law was compiled from.
func (l *Law) Definition() *workflow.Definition { return l.def }

// States returns the workflow's state names, sorted.
func (l *Law) States() []string {
	out := make([]string, 0, len(l.states))
	for n := range l.states {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// HasState reports whether the workflow has a state of that name.
func (l *Law) HasState(name string) bool { _, ok := l.states[name]; return ok }

func compileState(name string, st *workflow.State) (*compiledState, error) {
	cs := &compiledState{name: name, st: st, final: st.IsFinal(), maxEdit: -1, maxFiles: -1, maxIter: -1}
	cs.anyTool = st.AllowedTools == nil
	cs.allowed = compileToolList(st.AllowedTools)
	cs.disallowed = compileToolList(st.DisallowedTools)
	if cs.anyTool {
		cs.caps = allCaps
		cs.allowedList = anyList
	} else {
		cs.caps = cs.allowed.caps
		if cs.allowed.tools&editTools != 0 {
			cs.caps |= capWrite
		}
		cs.allowedList = append([]string{}, st.AllowedTools...)
	}
	cs.caps &^= cs.disallowed.caps
	for i, n := range canonEdits {
		if cs.listsAllow(canonEditInfo[i], n) {
			cs.editListed |= 1 << i
		}
	}
	// Disallowing every granted edit tool takes the shell's write capability away too.
	granted := cs.allowed.tools & editTools
	if cs.anyTool {
		granted = bit(kWrite) | bit(kEdit)
	}
	if granted&^cs.disallowed.tools == 0 {
		cs.caps &^= capWrite
	}
	cs.allowReason = "allowed in phase '" + name + "'"
	cs.metaReason = "meta-tool, always allowed in phase '" + name + "'"
	if st.AllowedCommands != nil {
		cs.commands = [][]string{}
		for _, e := range st.AllowedCommands {
			toks, err := tokenizeEntry(e)
			if err != nil {
				return nil, fmt.Errorf("policy: state %q: allowed_commands entry %q: %v", name, e, err)
			}
			cs.commands = append(cs.commands, toks)
		}
	}
	if len(st.BlockedEnv) > 0 {
		cs.blockedEnv = map[string]struct{}{}
		for _, v := range st.BlockedEnv {
			cs.blockedEnv[v] = struct{}{}
		}
	}
	var err error
	if cs.allowedPath, err = compileGlobs(name, "allowed_paths", st.AllowedPaths); err != nil {
		return nil, err
	}
	if cs.deniedPath, err = compileGlobs(name, "denied_paths", st.DeniedPaths); err != nil {
		return nil, err
	}
	if st.MaxEditLines != nil {
		cs.maxEdit = int(*st.MaxEditLines)
	}
	if st.MaxFilesPerState != nil {
		cs.maxFiles = int(*st.MaxFilesPerState)
	}
	if st.MaxIterations != nil {
		cs.maxIter = int64(*st.MaxIterations)
	}
	// Validation rejects sandbox.exec with edit limits; a definition that
	// skipped validation gets the narrower reading.
	cs.sandboxExec = st.Sandbox != nil && st.Sandbox.Exec && cs.maxEdit < 0 && cs.maxFiles < 0
	for ev := range st.On {
		cs.events = append(cs.events, ev)
	}
	sort.Strings(cs.events)
	var rest string
	if cs.caps != 0 && !cs.anyTool {
		if c := (cs.caps &^ capWrite).names(); len(c) > 0 {
			rest += " Shell capabilities: " + strings.Join(c, ", ") + "."
		}
	}
	if cs.commands != nil {
		rest += " Allowed commands: " + strings.Join(st.AllowedCommands, ", ") + "."
	}
	for i, h := range Harnesses {
		tools := "any tool"
		switch {
		case cs.anyTool:
		case len(st.AllowedTools) == 0:
			tools = "no tools"
		default:
			tools = strings.Join(LessonTools(h, st.AllowedTools), ", ")
		}
		cs.lessonTail[i] = " Allowed here: " + tools + "." + rest
	}
	var parts []string
	for _, ev := range cs.events {
		if t := st.On[ev]; t != nil {
			parts = append(parts, ev+" → "+primaryTarget(t))
		}
	}
	cs.transitionNow = " Transition now with one of: " + strings.Join(parts, "; ") + "."
	return cs, nil
}

func compileGlobs(state, field string, pats []string) ([]pathGlob, error) {
	var out []pathGlob
	for _, p := range pats {
		q, err := slashPattern(strings.TrimPrefix(p, "./"))
		if err != nil {
			return nil, fmt.Errorf("policy: state %q: %s: %q: %w", state, field, p, err)
		}
		if strings.HasSuffix(q, "/") {
			q += "**"
		}
		if !doublestar.ValidatePattern(q) {
			return nil, fmt.Errorf("policy: state %q: %s: invalid pattern %q", state, field, p)
		}
		g := pathGlob{pattern: q, abs: strings.HasPrefix(q, "/")}
		if dir, ok := strings.CutSuffix(q, "/**"); ok && dir != "" && !strings.ContainsAny(dir, "*?[{\\") && path.Clean(dir) == dir {
			g.tree = dir
		}
		g.fpattern, g.ftree = foldPath(g.pattern), foldPath(g.tree)
		out = append(out, g)
	}
	return out, nil
}

// tokenizeEntry splits an allowed_commands entry into words: whitespace
// separated, single and double quotes removed. Shell operators are refused:
// an entry names one command and its leading arguments.
func tokenizeEntry(e string) ([]string, error) {
	var toks []string
	var cur strings.Builder
	inTok := false
	for i := 0; i < len(e); i++ {
		c := e[i]
		switch {
		case c == ' ' || c == '\t':
			if inTok {
				toks = append(toks, cur.String())
				cur.Reset()
				inTok = false
			}
		case c == '\\' && i+1 < len(e):
			cur.WriteByte(e[i+1])
			i++
			inTok = true
		case c == '\'' || c == '"':
			j := strings.IndexByte(e[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated quote")
			}
			cur.WriteString(e[i+1 : i+1+j])
			i += j + 1
			inTok = true
		case strings.IndexByte(";|&<>`$()\n\r", c) >= 0:
			return nil, fmt.Errorf("shell operator %q is not allowed in an entry", c)
		default:
			cur.WriteByte(c)
			inTok = true
		}
	}
	if inTok {
		toks = append(toks, cur.String())
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("empty entry")
	}
	return toks, nil
}

// primaryTarget is t.PrimaryTarget for a definition that may not have
// been validated (a fork or invoke without its descriptor).
func primaryTarget(t *workflow.Transition) string {
	if t.Kind == workflow.TransitionFork && t.Fork == nil || t.Kind == workflow.TransitionInvoke && t.Invoke == nil {
		return ""
	}
	return t.PrimaryTarget()
}

// suggestCand is one transition a deny in a phase may suggest: the event,
// the phase it leads to (ts; nil for the return of an interrupt, which
// the run's history names), and what stands in its way (note).
type suggestCand struct {
	event, target, note string
	ts                  *compiledState
	// more is set on every branch of a guarded transition but the last:
	// the next candidate belongs to the same event.
	more bool
}

// suggestionCandidates lists what suggestions tries for a phase, in event
// order: a simple or full transition's target, each branch of a guarded
// one; never forks or invokes, final phases, or the phase itself.
func (l *Law) suggestionCandidates(cs *compiledState) []suggestCand {
	var out []suggestCand
	for _, ev := range cs.events {
		t := cs.st.On[ev]
		if t == nil {
			continue
		}
		var evc []suggestCand
		add := func(target, note string) {
			if target == workflow.ReturnTarget {
				evc = append(evc, suggestCand{event: ev, target: target, note: note})
				return
			}
			ts := l.states[target]
			if ts == nil || ts.final || target == cs.name {
				return
			}
			evc = append(evc, suggestCand{event: ev, target: target, note: note, ts: ts})
		}
		switch t.Kind {
		case workflow.TransitionSimple:
			add(t.Target, "")
		case workflow.TransitionFull:
			note := ""
			if g := t.GuardNames(); len(g) > 0 {
				note = "only if guard " + strings.Join(g, " and ") + " passes"
			}
			if t.RequiresApproval {
				if note != "" {
					note += ", "
				}
				note += "needs human approval"
			}
			add(t.Target, note)
		case workflow.TransitionGuarded:
			for _, b := range t.Branches {
				note := ""
				if g := b.GuardNames(); len(g) > 0 {
					note = "only if guard " + strings.Join(g, " and ") + " passes"
				}
				add(b.Target, note)
			}
		}
		for i := range evc {
			evc[i].more = i < len(evc)-1
		}
		out = append(out, evc...)
	}
	return out
}

// farWalk finds, on first use, the phases two or more transitions from a
// phase, each by its shortest path (breadth first over the one-step
// candidates, event order), for the deny whose call no single transition
// allows. It is lazy and keeps each path as a link to its predecessor, so a
// workflow of a thousand phases compiles in linear time and a phase pays
// for its walk only when one of its denies needs it (issue 16: the hook is
// flat from 10 to 1,000 states).
type farWalk struct {
	from *compiledState
	once sync.Once
	hops []farHop
	far  []int // indices into hops of the phases two or more transitions away, nearest first
}

// farHop is one phase the walk reached: the event that leads to it from
// hops[prev] (prev -1: from the walk's own phase), and that transition's note.
type farHop struct {
	ts          *compiledState
	prev        int
	event, note string
}

// farPath is a phase more than one transition away: the events that lead
// there, the phases passed through, and the notes of those transitions.
type farPath struct {
	events, via, notes []string
	ts                 *compiledState
}

// phases returns the indices into w.hops of the phases two or more
// transitions away, nearest first; the walk runs once.
func (w *farWalk) phases() []int {
	w.once.Do(func() {
		seen := map[*compiledState]bool{w.from: true}
		level := []int{-1}
		for depth := 1; len(level) > 0; depth++ {
			var next []int
			for _, at := range level {
				ts := w.from
				if at >= 0 {
					ts = w.hops[at].ts
				}
				for _, c := range ts.cands {
					if c.ts == nil || seen[c.ts] {
						continue
					}
					seen[c.ts] = true
					w.hops = append(w.hops, farHop{ts: c.ts, prev: at, event: c.event, note: c.note})
					next = append(next, len(w.hops)-1)
					if depth > 1 {
						w.far = append(w.far, len(w.hops)-1)
					}
				}
			}
			level = next
		}
	})
	return w.far
}

// path spells out the path to hops[i].
func (w *farWalk) path(i int) farPath {
	fp := farPath{ts: w.hops[i].ts}
	for at := i; at >= 0; at = w.hops[at].prev {
		h := w.hops[at]
		fp.events = append(fp.events, h.event)
		if at != i {
			fp.via = append(fp.via, h.ts.name)
		}
		if h.note != "" {
			fp.notes = append(fp.notes, h.event+" "+h.note)
		}
	}
	slices.Reverse(fp.events)
	slices.Reverse(fp.via)
	slices.Reverse(fp.notes)
	return fp
}

// canonEdits are the edit tools by their canonical (Claude Code) names,
// and canonEditInfo what lookupTool makes of each.
var (
	canonEdits    = [...]string{"Write", "Edit", "MultiEdit", "NotebookEdit"}
	canonEditInfo = func() (out [len(canonEdits)]toolInfo) {
		for i, n := range canonEdits {
			out[i] = lookupTool(ClaudeCode, n)
		}
		return out
	}()
)

// listsAllow reports whether the phase's tool lists let a call through
// (simAllows' first check): it is not final, disallowed_tools does not
// name the call, and allowed_tools (if any) does.
func (cs *compiledState) listsAllow(info toolInfo, raw string) bool {
	return !cs.final && !cs.disallowed.hasExactly(info, raw) && (cs.anyTool || cs.allowed.has(info, raw))
}

// listsAllowEdit is listsAllow for an edit: for one of canonEdits called
// by its name, the answer compileState kept (editListed).
func (cs *compiledState) listsAllowEdit(info toolInfo, raw string) bool {
	for i := range canonEdits {
		if info == canonEditInfo[i] && raw == canonEdits[i] {
			return cs.editListed&(1<<i) != 0
		}
	}
	return cs.listsAllow(info, raw)
}

// lazyFences is a fence set compiled on first use, shared by a law's
// copies (its phases' views).
type lazyFences struct {
	once  sync.Once
	build func() fenceSet
	fs    fenceSet
}

func (z *lazyFences) get() *fenceSet {
	z.once.Do(func() { z.fs = z.build() })
	return &z.fs
}
