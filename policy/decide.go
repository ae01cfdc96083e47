package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/statewright-go/statewright/shell"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/statewright-go/statewright/engine"
)

// prepared is a tool call with its derived facts, computed lazily and
// shared between the decision and the suggestion simulations.
//
// prepared lives on Decide's stack and is zeroed for every decision: its
// flags share one word (decoded, haveEdit, simulating, strict,
// haveTarget, haveFile0, haveRel0), so that it stays within the size the
// compiler zeroes with a loop of vector stores (1408 bytes in Go 1.26);
// beyond it the compiler zeroes with REP STOSQ, slower at this size
// (TestPreparedSize).
type prepared struct {
	call *ToolCall
	info toolInfo
	// decoded: m and inputErr are the input's, decoded once.
	decoded bool
	// haveEdit: editv is the flat edit's reading (editErr none).
	haveEdit bool
	// simulating is set while the call is decided in another phase for a
	// suggestion: a deny there needs no lesson, and a flat edit is read
	// only as far as the answer needs (lazyFlat) unless strict is set (an
	// implicit transition's decision, which may allow).
	simulating, strict bool
	// haveTarget, haveFile0, haveRel0: target, file0, rel0 below are
	// found.
	haveTarget, haveFile0, haveRel0 bool

	m        map[string]any
	inputErr error
	sh       *shellCall
	editv    editInfo
	editErr  error
	// files are the edit's targets as counted (editPath), resolved once
	// for the decision and every simulated phase.
	files []string
	// deferred is a self-protection block that applies only if nothing
	// else denies the call (a target that could reach the law).
	deferred *block
	// lazy reads a flat edit's fields as far as a question needs; target
	// is the one file it found (self-protection's, a simulation's), once
	// haveTarget.
	lazy   lazyFlat
	target string
	// file0 is files' one file when the edit has one (haveFile0): handed
	// out in the caller's array, files stays nil (no allocation).
	file0 string
	// abs0 is the lexical absolute path of the edit's first target
	// abs0Of, as self-protection resolved it (without a Resolver).
	abs0, abs0Of string
	// rel0 is files[0] relative to the project (relTo), once haveRel0.
	rel0 string
	// Room for what a decision would otherwise allocate: the raw fields
	// of a flat edit, the run state of a simulated phase (prepared lives
	// on Decide's stack).
	raw rawFields
	sim RunState
	// prot is what the reason of an edit of a protected file says
	// (selfProtect's protectedHere).
	prot protectedWrite
}

func (p *prepared) input() (map[string]any, error) {
	if !p.decoded {
		p.decoded = true
		if c := p.call.Decoded; c != nil {
			p.m, p.inputErr = c.decode(p.call.Input)
		} else {
			p.m, p.inputErr = decodeInput(p.call.Input)
		}
	}
	return p.m, p.inputErr
}

// DecodedInput is a tool input decoded once for the decisions of one call
// (ToolCall.Decoded). The zero value is ready; it is safe for concurrent
// use.
type DecodedInput struct {
	once sync.Once
	src  []byte // a copy of the input decoded
	m    map[string]any
	err  error
}

// decode returns input decoded (decodeInput): what the first decode kept
// when input is the same bytes, else a decoding of its own. The map it
// returns is shared by the call's decisions, which only read it.
func (c *DecodedInput) decode(input json.RawMessage) (map[string]any, error) {
	c.once.Do(func() {
		c.src = bytes.Clone(input)
		c.m, c.err = decodeInput(input)
	})
	if bytes.Equal(c.src, input) {
		return c.m, c.err
	}
	return decodeInput(input)
}

// shellCall analyses the call's command once.
func (p *prepared) shell() (*shellCall, error) {
	if p.sh != nil {
		return p.sh, nil
	}
	m, err := p.input()
	if err != nil {
		return nil, err
	}
	src, _, ok := shellCommand(m)
	if !ok {
		if s, _, ok := shellCommandOf(m); ok && shellTwice(m, s) {
			return nil, fmt.Errorf("the input gives its command twice (command and cmd), with different values")
		}
		return nil, fmt.Errorf("the input has no command")
	}
	sc := &shellCall{src: src}
	if bg, _ := m["run_in_background"].(bool); bg {
		sc.background = true
	}
	sc.analysis, sc.err, sc.internal = runAnalysis(src)
	p.sh = sc
	return sc, nil
}

func (p *prepared) editInfo() (*editInfo, error) {
	if p.editErr != nil {
		return nil, p.editErr
	}
	if p.haveEdit {
		return &p.editv, nil
	}
	// (Read into p.editv, which counts only once haveEdit is set: an
	// editInfo, 120 bytes, is not copied on its way there.)
	ei := &p.editv
	var err error
	switch k := p.info.kind; {
	case (k == kWrite || k == kEdit || k == kNotebookEdit || k == kDelete) && !p.decoded && scanFlat(p.call.Input, &p.raw):
		// The flat fields read in place: no decoding of the whole input
		// (a large Write's content stays where it is).
		err = parseFlatEditInto(k, fields{raw: &p.raw}, ei)
	default:
		m, derr := p.input()
		if derr != nil {
			p.editErr = derr
			return nil, derr
		}
		*ei, err = parseEdit(k, m)
	}
	if err == nil && p.haveTarget && ei.one != p.target {
		// The lazy reading stopped at another value of a key given twice.
		err = errAmbiguousPath
	}
	if err != nil {
		p.editErr, p.editv = err, editInfo{}
		return nil, err
	}
	p.haveEdit = true
	return ei, nil
}

var errAmbiguousPath = errors.New("the input names its file twice, with different values")

// fastSim turns on the short way of a denied edit's simulations: an edit
// decided in another phase by its checks alone (simAllows), the first
// target's path as self-protection found it, its project-relative path
// found once, path checks without a reason. Tests turn it off to decide
// every call through the pipeline and compare.
var fastSim = true

// lazyMin is the size from which a flat edit's input is read lazily:
// a smaller one is read whole at once, which costs less than reading it
// in steps (tests set it to 0 to read every input lazily).
var lazyMin = 1024

// lazyInput reports whether the call is a flat edit (its files and lines can
// be read lazily, lazyFlat) whose input is large enough to.
func (p *prepared) lazyInput() bool {
	k := p.info.kind
	return (k == kWrite || k == kEdit || k == kNotebookEdit || k == kDelete) && !p.decoded && len(p.call.Input) >= lazyMin &&
		len(p.call.Input) < 1<<31-1
}

// editTargets returns the files an edit names, for self-protection and
// for the denies and suggestions of other phases: a flat edit's path
// fields are read in place, without the rest of the input (a large
// Write's content). Anything the lazy reading cannot answer with a file
// (no path, not an object, a key given twice) goes to editInfo, which
// reads the input whole, as does every allow.
func (p *prepared) editTargets() ([]string, error) {
	one, many, err := p.editTargetsIn()
	if one != "" {
		return []string{one}, nil
	}
	return many, err
}

// editTargetsIn is editTargets without allocating: the one target the
// lazy reading found (one, not ""), or else the edit's targets (many).
func (p *prepared) editTargetsIn() (one string, many []string, err error) {
	switch {
	case p.haveEdit:
		return p.editv.one, p.editv.paths, nil
	case p.editErr != nil:
		return "", nil, p.editErr
	case p.haveTarget:
		return p.target, nil, nil
	}
	if p.lazyInput() {
		if p.lazy.s == "" {
			p.lazy.s = unsafeString(p.call.Input)
		}
		if idx, ok := p.lazy.pick(pathList.idx); ok && idx >= 0 {
			if t, ok := p.lazy.str(idx); ok && t != "" {
				p.target, p.haveTarget = t, true
				return t, nil, nil
			}
		}
	}
	ei, err := p.editInfo()
	if err != nil {
		return "", nil, err
	}
	return ei.one, ei.paths, nil
}

// linesOver reports, for a simulated phase, whether a flat edit whose
// lines are its content's (Write, NotebookEdit, a deletion's none)
// changes more than limit lines, reading the content only until that is
// certain. ok is false when the lazy reading cannot tell: editInfo counts.
func (p *prepared) linesOver(limit int) (over, ok bool) {
	var keys []int
	switch p.info.kind {
	case kDelete:
		return 0 > limit, true
	case kWrite:
		keys = contentList.idx
	case kNotebookEdit:
		keys = notebookList.idx
	default:
		return false, false
	}
	if !p.haveTarget || p.haveEdit || p.lazy.st == lzUnsure {
		return false, false
	}
	idx, ok := p.lazy.pick(keys)
	if !ok {
		return false, false
	}
	if idx < 0 {
		return 0 > limit, true
	}
	return p.lazy.linesOver(idx, limit)
}

// editLines returns the lines an edit changes, from the whole input
// (editInfo). For a replace_all edit every occurrence changes, so they
// are counted in its file, which only the runtime on the agent's host can
// read (a Resolver that is a ContentReader); known is false when it
// cannot, and lines is then the count of one replacement.
func (p *prepared) editLines(files []string) (lines int, known bool, err error) {
	ei, err := p.editInfo()
	if err != nil {
		return 0, false, err
	}
	if ei.linesLater {
		// (Only a flat edit read in place is counted later: p.raw holds
		// its fields.)
		ei.lines, ei.linesLater = flatEditLines(fields{raw: &p.raw}), false
	}
	if !ei.replaceAll {
		return ei.lines, true, nil
	}
	cr, ok := p.call.Resolver.(ContentReader)
	content := ""
	if ok && len(files) == 1 {
		content, ok = cr.Content(files[0])
	}
	if !ok {
		return ei.lines, false, nil
	}
	if ei.multi != nil {
		return multiEditLines(content, ei.multi), true, nil
	}
	return replaceAllLines(content, ei.old, ei.new), true, nil
}

// linesWithin reports, for a simulated phase, that an Edit read in place
// whose lines are not counted yet (editInfo's linesLater) changes at most
// limit lines, without decoding its text: a replacement changes no more
// lines than the longer of its old and new text has (changedLines), and
// scanFlat counted those. False means only that the count must be made.
// TestLinesWithinBounds compares it with the count.
func (p *prepared) linesWithin(limit int) bool {
	if !p.haveEdit || !p.editv.linesLater {
		return false
	}
	return max(p.raw.lines(oldList), p.raw.lines(newList)) <= limit
}

func isEditKind(k kind) bool {
	switch k {
	case kWrite, kEdit, kMultiEdit, kNotebookEdit, kApplyPatch, kDelete:
		return true
	}
	return false
}

func isReadKind(k kind) bool {
	switch k {
	case kRead, kGrep, kGlob, kLS, kOther:
		return true
	}
	return false
}

// Decide decides one tool call in the run's current state. run may be nil
// (no active run). Decide never panics on bad input and never allows a call
// it could not check; it does not mutate its arguments.
//
// For an allowed call of a non-shell, non-edit tool Decide does map lookups
// only and does not allocate.
func (l *Law) Decide(run *RunState, call *ToolCall) (d Decision) {
	defer func() {
		// Fail closed: a bug in the core denies, it never lets a call through.
		if r := recover(); r != nil {
			d = Decision{Verdict: Deny, Rule: RuleInternal, Reason: fmt.Sprintf("Denied: the decision core failed (%v) (rule internal-error).", r), AllowedTools: emptyList, NextEvents: emptyList}
		}
	}()
	// A Windows-shaped call is decided on slash-form paths (winpath.go),
	// and a shell command in it as bash and as cmd.exe or PowerShell read
	// it: the stricter answer stands.
	call = slashCall(call)
	l.decideCallInto(&d, run, call)
	if v := winShellVariant(call); v != nil && d.Verdict != Deny {
		if alt := l.decideCall(run, v); stricter(alt, d) {
			return alt
		}
	}
	return d
}

// decideCall is Decide of one reading of a call.
func (l *Law) decideCall(run *RunState, call *ToolCall) (d Decision) {
	l.decideCallInto(&d, run, call)
	return d
}

// decideCallInto is decideCall into *out: a Decision is 224 bytes, and
// one returned by value is copied again at every level it passes (into
// is written by the function that decides, all the way up).
func (l *Law) decideCallInto(out *Decision, run *RunState, call *ToolCall) {
	p := prepared{call: call, info: lookupTool(call.Harness, call.Tool)}
	if p.info.kind == kBash {
		// Codex sends apply_patch through its shell tool, as an argv or as
		// a here-document: decide it as the edit it is.
		if m, err := p.input(); err == nil {
			// Codex's shell tools carry their own working directory.
			if wd, ok := str(m, "workdir", "cwd"); ok && wd != "" {
				c := *call
				c.Cwd = l.absPath(call, wd)
				if c.ProjectDir == "" {
					c.ProjectDir = call.Cwd
				}
				p.call = &c
			}
			if field := sandboxEscape(m); field != "" {
				// A call that asks the harness to skip its sandbox is
				// decided as unsandboxed, and a person must agree to it
				// (docs/sandbox.md, "No model-settable escape").
				c := *p.call
				c.Sandboxed = false
				p.call = &c
				d := l.decide(run, &p, true)
				if d.Verdict != Allow {
					*out = d
					return
				}
				d.Verdict, d.Rule = Ask, RuleSandboxEscape
				d.Reason = "The command asks to run outside the sandbox (" + field + "); only a person may allow that (rule sandbox-escape). " +
					"Run it again without " + field + " to have it run inside the phase's sandbox."
				d.Effects = Effects{CountIteration: true}
				*out = d
				return
			}
			src, argv, ok := shellCommand(m)
			patch := false
			if ok && len(argv) >= 2 && (path.Base(argv[0]) == "apply_patch" || path.Base(argv[0]) == "applypatch") {
				p.info = toolInfo{kind: kApplyPatch, canon: "Edit"}
				patch = true
			} else if body, ok := heredocPatch(src); ok {
				p.info = toolInfo{kind: kApplyPatch, canon: "Edit"}
				p.m = map[string]any{"input": body}
				patch = true
			}
			if patch {
				// The tool lists must see the edit, not the shell tool that
				// carried it: a phase that allows Bash but not Edit must not
				// let a patch through by the raw name.
				c := *p.call
				c.Tool = "apply_patch"
				p.call = &c
			}
		}
	}
	// (decide written out: the Decision, 224 bytes, is copied once less
	// on its way back.)
	var cs *compiledState
	if run != nil && run.Active {
		cs = l.states[run.State]
	}
	l.decideInto(out, run, cs, &p, true)
}

// heredocPatch recognises a command line that is exactly one apply_patch
// with a here-document (`apply_patch <<'EOF'` … `EOF`) and returns the body.
func heredocPatch(src string) (string, bool) {
	src = strings.TrimSpace(src)
	first, rest, ok := strings.Cut(src, "\n")
	if !ok {
		return "", false
	}
	prog, delim, ok := strings.Cut(strings.TrimSpace(first), "<<")
	prog = strings.TrimSpace(prog)
	if !ok || prog != "apply_patch" && prog != "applypatch" {
		return "", false
	}
	delim = strings.Trim(strings.TrimSpace(strings.TrimPrefix(delim, "-")), `'"`)
	if delim == "" || strings.ContainsAny(delim, " \t;&|<>$`") {
		return "", false
	}
	lines := strings.Split(rest, "\n")
	for i, ln := range lines {
		if strings.TrimRight(ln, "\r") == delim {
			if strings.TrimSpace(strings.Join(lines[i+1:], "\n")) != "" {
				return "", false // something else follows the patch
			}
			body := strings.Join(lines[:i], "\n")
			if !strings.Contains(body, "*** Begin Patch") {
				return "", false
			}
			return body, true
		}
	}
	return "", false
}

// decide runs the pipeline; suggest is false inside suggestion simulations.
// sandboxEscape returns the input field by which a shell call asks its
// harness to run it outside the harness's sandbox ("" for none): Claude
// Code's dangerouslyDisableSandbox, Codex's escalation fields.
func sandboxEscape(m map[string]any) string {
	if b, _ := m["dangerouslyDisableSandbox"].(bool); b {
		return "dangerouslyDisableSandbox"
	}
	if b, _ := m["with_escalated_permissions"].(bool); b {
		return "with_escalated_permissions"
	}
	if s, _ := m["sandbox_permissions"].(string); s != "" && s != "use_default" {
		return "sandbox_permissions: " + s
	}
	return ""
}

func (l *Law) decide(run *RunState, p *prepared, suggest bool) Decision {
	var cs *compiledState
	if run != nil && run.Active {
		cs = l.states[run.State]
	}
	return l.decideIn(run, cs, p, suggest)
}

// decideIn is decide with run's compiled state looked up already.
func (l *Law) decideIn(run *RunState, cs *compiledState, p *prepared, suggest bool) (d Decision) {
	l.decideInto(&d, run, cs, p, suggest)
	return d
}

// decideInto is decideIn into *out (see decideCallInto).
func (l *Law) decideInto(out *Decision, run *RunState, cs *compiledState, p *prepared, suggest bool) {
	info := p.info
	active := run != nil && run.Active

	// 1. Self-protection, in every state and when dormant; with the
	// phase's own read fences (denied_paths, Read deny and ask rules).
	var askBlock *block
	if suggest {
		if b, bad := l.viewFor(cs).selfProtect(p); b == protectedHere {
			*out = l.denyProtected(cs, run, p)
			return
		} else if b != nil && !b.deferred && !b.ask {
			*out = l.denyBlock(cs, run, p, b, b.rule != RuleSelfProtect)
			return
		} else if b != nil && b.ask {
			askBlock = b
		} else if b != nil {
			p.deferred = b
		} else if bad != nil {
			*out = l.deny(cs, run, p, RuleBadInput, bad.Error(), false)
			return
		}
	} else if cs != nil && cs.view != nil && !isEditKind(info.kind) {
		// A phase simulated for a suggestion: its own read fences. (An
		// edit's self-protection does not depend on the phase's reads: its
		// blocks are self-protect ones, which a simulation ignores.)
		if b, _ := cs.view.selfProtect(p); b != nil && b.ask {
			askBlock = b
		} else if b != nil && !b.deferred && b.rule != RuleSelfProtect {
			*out = l.denyBlock(cs, run, p, b, false)
			return
		}
	}

	// Read-only control tools are always reachable.
	var ctl controlClass
	if info.kind == kControl {
		ctl = controlOps[info.canon]
		if ctl == ctlRead {
			*out = l.allow(cs, RuleControlRead, "read-only statewright control tool", info)
			return
		}
		if ctl == ctlUnknown {
			*out = l.deny(cs, run, p, RuleControlUnknown, "`"+p.call.Tool+"` is not a statewright control tool this version knows", false)
			return
		}
		if ctl == ctlHuman {
			d := l.deny(cs, run, p, RuleControlHumanOnly, "", false)
			d.Verdict = Ask
			d.Reason = "`" + p.call.Tool + "` weakens enforcement, so only a person may grant it (rule control-human-only). The harness must ask its user; where nothing but a person answers prompts (bypassPermissions, auto, dontAsk, full-auto) treat this as a deny. A person can also act directly with the statewright CLI."
			*out = d
			return
		}
	}

	// 2. Dormant.
	if !active {
		switch {
		case ctl == ctlStart:
			*out = l.allow(nil, RuleControlStart, "no run is active: starting one is allowed", info)
			return
		case ctl == ctlTransition:
			*out = l.deny(nil, run, p, RuleNoWorkflow, "no run is active, so there is nothing to transition; start a workflow first", false)
			return
		case l.opts.RequireWorkflow:
			*out = l.deny(nil, run, p, RuleNoWorkflow, "no workflow run is active and this hook requires one; start a workflow first", false)
			return
		}
		if isEditKind(info.kind) {
			// The allow reads the whole input (self-protection read its
			// files lazily).
			if _, err := p.editInfo(); err != nil {
				*out = l.deny(nil, run, p, RuleBadInput, err.Error(), false)
				return
			}
		}
		if b := p.deferred; b != nil {
			*out = l.denyBlock(nil, run, p, b, false)
			return
		}
		*out = Decision{Verdict: Allow, Rule: RuleDormant, Reason: "no run is active", AllowedTools: emptyList, NextEvents: emptyList, Tool: info.canon}
		return
	}
	if cs == nil {
		*out = l.deny(nil, run, p, RuleUnknownState, "the run is in state '"+run.State+"', which the workflow does not define (states: "+strings.Join(l.States(), ", ")+")", false)
		return
	}

	// 4. Control tools.
	switch ctl {
	case ctlStart:
		if cs.final {
			*out = l.allow(cs, RuleControlStart, "the last run is final: starting a new one is allowed", info)
			return
		}
		*out = l.deny(cs, run, p, RuleControlActive, "a run is already active in phase '"+cs.name+"'; finish it or ask a person to end it before starting another", false)
		return
	case ctlTransition:
		if cs.final {
			*out = l.deny(cs, run, p, RuleFinalState, "the run is in final state '"+cs.name+"'; there is nothing to transition", false)
			return
		}
		if run.PendingApproval != nil {
			ap := run.PendingApproval
			*out = l.deny(cs, run, p, RuleApprovalPending, "the run awaits human approval "+ap.ID+" (to '"+ap.To+"'); keep working with this phase's tools until a person approves it (`statewright approve SESSION --id "+ap.ID+"`)", false)
			return
		}
		*out = l.allow(cs, RuleControlTransition, "transition requests are resolved by the engine", info)
		return
	}

	// 5. Final state.
	if cs.final {
		*out = l.deny(cs, run, p, RuleFinalState, "the run is in final state '"+cs.name+"'; no tools are available", false)
		return
	}

	// Permission rules: deny wins, then ask, then allow (DECISIONS 29).
	var ro ruleOutcome
	if cs.rules != nil {
		ro = l.evalRules(cs.rules, p)
		if h := ro.deny; h != nil {
			*out = l.deny(cs, run, p, RulePermissionDeny, h.what+" matches "+h.rule.describe(), suggest)
			return
		}
		if ro.domain != "" {
			*out = l.deny(cs, run, p, RuleDomain, ro.domain, suggest)
			return
		}
	}

	// 6. disallowed_tools wins, then meta-tools, then allowed_tools —
	// unless rules name the call.
	if !ro.covered {
		if cs.disallowed.hasExactly(info, p.call.Tool) {
			if p.simulating {
				*out = Decision{Verdict: Deny, Rule: RuleDisallowedTool}
				return
			}
			*out = l.deny(cs, run, p, RuleDisallowedTool, info.canon+" is in this phase's disallowed_tools", suggest)
			return
		}
		if (info.kind == kMeta || info.kind == kTask) && ro.ask == nil && askBlock == nil {
			*out = Decision{Verdict: Allow, Rule: RuleAllowMeta, Reason: cs.metaReason, AllowedTools: cs.allowedList, NextEvents: emptyList, Tool: info.canon}
			return
		}
		if !cs.anyTool && !cs.allowed.has(info, p.call.Tool) && info.kind != kMeta && info.kind != kTask && !cs.admitsReadOnly(info, p.call) {
			name := info.canon
			if name != p.call.Tool {
				name = p.call.Tool + " (" + info.canon + ")"
			}
			if p.simulating {
				*out = Decision{Verdict: Deny, Rule: RuleToolNotAllowed}
				return
			}
			if suggest && name == info.canon && info.kind != kOther {
				l.denyToolInto(out, cs, run, p)
				return
			}
			*out = l.deny(cs, run, p, RuleToolNotAllowed, name+" is not allowed here", suggest)
			return
		}
	}

	// 7. Per-tool checks.
	var eff Effects
	eff.CountIteration = true
	switch {
	case info.kind == kBash:
		sc, err := p.shell()
		if err != nil {
			*out = l.deny(cs, run, p, RuleBadInput, err.Error(), false)
			return
		}
		if sc.err != nil {
			if sc.internal {
				*out = l.deny(cs, run, p, RuleInternal, sc.err.Error(), false)
				return
			}
			*out = l.deny(cs, run, p, RuleShellParseError, "the command does not parse ("+sc.err.Error()+"), so it cannot be checked", false)
			return
		}
		if f := l.checkShell(cs, run, p.call, sc, &eff, ro.cover, ro.netOK); f != nil {
			*out = l.deny(cs, run, p, f.rule, f.reason, suggest)
			return
		}
	case info.kind == kOther && p.call.Hints != nil && !ro.covered:
		if miss := p.call.Hints.caps() &^ cs.caps; miss != 0 {
			*out = l.deny(cs, run, p, RuleToolCapability, p.call.Tool+"'s annotations (from its trusted server) say it "+hintWords(p.call.Hints)+
				", which needs "+strings.Join(miss.names(), " and ")+": this phase does not grant it", suggest)
			return
		}
	case info.kind == kWriteStdin:
		if cs.caps&capExec == 0 {
			*out = l.deny(cs, run, p, RuleShellCapability, p.call.Tool+" sends input to a running program, which needs the Exec capability", suggest)
			return
		}
	case isEditKind(info.kind):
		// Another phase, simulated for a suggestion, reads a flat edit's
		// files and lines lazily: its allow only names an event in a
		// deny's lesson. The decision itself reads the input whole.
		lazy := p.simulating && !p.strict && p.lazyInput()
		var fb [1]string
		files, err := l.editFiles(p, lazy, &fb)
		if err != nil {
			*out = l.deny(cs, run, p, RuleBadInput, err.Error(), false)
			return
		}
		if p.simulating && fastSim {
			// Only the verdict counts: no reason is written.
			if r := l.filesRule(cs, run, p, files); r != "" {
				*out = l.deny(cs, run, p, r, "", suggest)
				return
			}
		} else if f := l.checkFiles(cs, run, p.call, files); f != nil {
			*out = l.deny(cs, run, p, f.rule, f.reason, suggest)
			return
		}
		if lazy {
			over, ok := false, true
			if cs.maxEdit >= 0 {
				over, ok = p.linesOver(cs.maxEdit)
			}
			if over {
				*out = l.deny(cs, run, p, RuleMaxEditLines, "", suggest)
				return
			}
			if ok {
				eff.FilesEdited = files
				break
			}
		}
		lines, known, err := p.editLines(files)
		if err != nil {
			*out = l.deny(cs, run, p, RuleBadInput, err.Error(), false)
			return
		}
		if !known && cs.maxEdit >= 0 {
			*out = l.deny(cs, run, p, RuleMaxEditLines, fmt.Sprintf("the edit replaces every occurrence (replace_all), so the lines it changes cannot be counted without reading the file, and max_edit_lines is %d; replace occurrences one at a time", cs.maxEdit), suggest)
			return
		}
		if cs.maxEdit >= 0 && lines > cs.maxEdit {
			*out = l.deny(cs, run, p, RuleMaxEditLines, fmt.Sprintf("the edit changes %d lines and max_edit_lines is %d; break it into smaller edits", lines, cs.maxEdit), suggest)
			return
		}
		eff.FilesEdited = files
		eff.EditedLines = lines
	}

	// 8. max_iterations.
	if cs.maxIter >= 0 && int64(run.Iterations) >= cs.maxIter {
		*out = l.deny(cs, run, p, RuleMaxIterations, fmt.Sprintf("max_iterations (%d) is reached; transition now", cs.maxIter), suggest)
		return
	}

	if b := p.deferred; b != nil {
		*out = l.denyBlock(cs, run, p, b, false)
		return
	}
	if len(eff.FilesEdited) > 0 && (!p.simulating || l.autoImplicit) {
		// (A suggestion's allow needs its effects only when it may become
		// the decision: an implicit transition.)
		l.interruptFor(cs, run, p.call, &eff)
	}
	d := Decision{Verdict: Allow, Rule: RuleAllow, Reason: cs.allowReason, AllowedTools: cs.allowedList, NextEvents: emptyList, Tool: info.canon, Effects: eff}
	switch {
	case ro.ask != nil || askBlock != nil:
		what := ""
		if h := ro.ask; h != nil {
			what = h.what + " matches " + h.rule.describe()
		} else {
			what = askBlock.text()
		}
		if p.call.Granted {
			d.Rule = RulePermissionGranted
			d.Reason = "allowed once in phase '" + cs.name + "': " + what + ", and a person granted this call"
			*out = d
			return
		}
		d.Verdict, d.Rule = Ask, RulePermissionAsk
		d.Reason = "In phase '" + cs.name + "', " + what + ": a person must agree to this call (rule permission-ask). " +
			"Where the harness asks its user, it prompts; elsewhere a person grants it with `statewright approve`, and the same call, made again, runs once."
	case ro.covered:
		d.Rule = RulePermissionAllow
		d.Reason = "allowed in phase '" + cs.name + "' by its permission rules"
	}
	*out = d
	return
}

// editFiles returns the files an edit changes, as counted (editPath),
// found once for the decision and every simulated phase: its targets read
// lazily (editTargets) or whole (editInfo). One file is returned in buf.
func (l *Law) editFiles(p *prepared, lazy bool, buf *[1]string) ([]string, error) {
	var one string
	var targets []string
	var err error
	if lazy {
		one, targets, err = p.editTargetsIn()
	} else {
		var ei *editInfo
		if ei, err = p.editInfo(); err == nil {
			one, targets = ei.one, ei.paths
		}
	}
	if err != nil {
		return nil, err
	}
	if p.haveFile0 {
		buf[0] = p.file0
		return buf[:], nil
	}
	if p.files == nil && (one != "" || len(targets) == 1) {
		t := one
		if t == "" {
			t = targets[0]
		}
		if fastSim && p.abs0Of == t && p.abs0Of != "" && p.call.Resolver == nil {
			// (editPath without a Resolver is resolve's abs.)
			p.file0 = p.abs0
		} else {
			p.file0 = l.editPath(p.call, t)
		}
		p.haveFile0 = true
		buf[0] = p.file0
		return buf[:], nil
	}
	if p.files == nil {
		p.files = make([]string, 0, len(targets))
		for i, t := range targets {
			if i == 0 && fastSim && p.abs0Of == t && p.abs0Of != "" && p.call.Resolver == nil {
				// (editPath without a Resolver is resolve's abs.)
				p.files = append(p.files, p.abs0)
				continue
			}
			p.files = append(p.files, l.editPath(p.call, t))
		}
	}
	return p.files, nil
}

// simRun is the run state of a simulated phase as the edit checks read
// it: no files edited, no iterations.
var simRun = RunState{Active: true}

// simAllows reports whether p would be allowed in phase target (compiled
// ts), for a suggestion: simulateIn(run, p, target, ts).Verdict == Allow.
// An edit in a phase without permission rules is decided by the checks
// that phase's pipeline would run for it, in order, and nothing else (the
// phase's tool lists, the files, the lines, max_iterations, a deferred
// self-protection block), with no Decision or reason built; anything else
// goes through the pipeline. TestFastSimulationAgrees compares the two.
func (l *Law) simAllows(run *RunState, p *prepared, target string, ts *compiledState) bool {
	if !fastSim || ts == nil || ts.rules != nil || p.strict || !isEditKind(p.info.kind) {
		return l.simulateIn(run, p, target, ts).Verdict == Allow
	}
	info := p.info
	// (An edit is neither a control, meta nor task tool, nor an MCP tool a
	// readOnlyHint admits; its self-protection does not depend on the
	// phase.)
	if !ts.listsAllowEdit(info, p.call.Tool) {
		return false
	}
	// (Nothing below reads p.simulating: the lazy reading is chosen here.)
	lazy := p.lazyInput()
	var fb [1]string
	files, err := l.editFiles(p, lazy, &fb)
	if err != nil {
		return false
	}
	if l.filesRule(ts, &simRun, p, files) != "" {
		return false
	}
	counted := false
	if lazy {
		over, ok := false, true
		if ts.maxEdit >= 0 {
			over, ok = p.linesOver(ts.maxEdit)
		}
		if over {
			return false
		}
		counted = ok
	}
	switch {
	case counted:
	case ts.maxEdit < 0:
		// No limit: the lines need no count, the input only its check
		// (editLines' errors are editInfo's).
		if _, err := p.editInfo(); err != nil {
			return false
		}
	case p.linesWithin(ts.maxEdit):
		// (Fewer lines than the limit, whichever of them change.)
	default:
		lines, known, err := p.editLines(files)
		if err != nil || !known || lines > ts.maxEdit {
			return false
		}
	}
	// max_iterations: a simulated run has made no call yet.
	if ts.maxIter == 0 {
		return false
	}
	return p.deferred == nil
}

func (l *Law) allow(cs *compiledState, rule Rule, reason string, info toolInfo) Decision {
	d := Decision{Verdict: Allow, Rule: rule, Reason: reason, AllowedTools: emptyList, NextEvents: emptyList, Tool: info.canon}
	if cs != nil {
		d.AllowedTools = cs.allowedList
	}
	return d
}

// interruptFor names the first interrupt an edited file triggers, with the
// engine's rule: an interrupt fires unless its frame is already on the
// history stack or the run is already in its target state.
func (l *Law) interruptFor(cs *compiledState, run *RunState, call *ToolCall, eff *Effects) {
	for _, f := range eff.FilesEdited {
		rel := l.relTo(call, f)
		for _, in := range l.interrupts {
			if in.target == cs.name || engine.Active(run.History, in.name) {
				continue
			}
			if ok, _ := doublestar.Match(in.pattern, rel); ok {
				eff.FireInterrupt, eff.InterruptTarget, eff.InterruptFile = in.name, in.target, rel
				return
			}
		}
	}
}

// protectedHere is the block selfProtect returns for an edit of a
// protected file: p.prot says what its reason says (decideIn builds the
// block on its stack; allocated, it was most of such a deny's garbage).
// A self-protect block, as such.
var protectedHere = &block{rule: RuleSelfProtect}

// selfProtect applies pipeline step 1. bad is set when the input cannot be
// checked (fail closed). An edit of a protected file is protectedHere.
func (l *Law) selfProtect(p *prepared) (b *block, bad error) {
	call := p.call
	switch k := p.info.kind; {
	case k == kControl:
		return nil, nil
	case k == kBash:
		sc, err := p.shell()
		if err != nil {
			return nil, err
		}
		return l.shellSelfProtect(call, sc), nil
	case isEditKind(k):
		one, targets, err := p.editTargetsIn()
		if err != nil {
			return nil, err
		}
		n := len(targets)
		if one != "" {
			n = 1
		}
		for i := range n {
			t := one
			if one == "" {
				t = targets[i]
			}
			r := l.resolve(call, t)
			if r.info.Err == "" {
				// A protected file: what the reason says is kept in p, and
				// the deny builds its block on the stack (protectedHere).
				if l.protectedWriteOf(&r, canonOrRaw(p), " would change", &p.prot) {
					return protectedHere, nil
				}
				if b := l.nativeWriteBlockAfter(call, &r, canonOrRaw(p)); b != nil {
					return b, nil
				}
			} else if b := l.nativeWriteBlockOf(call, r, canonOrRaw(p)); b != nil {
				return b, nil
			}
			if i == 0 && call.Resolver == nil {
				// The path the edit is counted under (editPath), found
				// already.
				p.abs0, p.abs0Of = r.abs, t
			}
		}
	case k == kOther && writeishName(call.Tool):
		// MCP and custom tools that write (a filesystem server's
		// write_file, move_file, ...): every path-like string argument
		// is checked.
		m, err := p.input()
		if err != nil {
			return nil, nil
		}
		var wb *block
		deep := argStrings(m, func(t string) bool {
			if t != "" && len(t) < 4096 && !strings.ContainsAny(t, "\n") {
				wb = l.writeBlock(call, l.resolve(call, t), false, call.Tool+" would change")
				if r, ok := l.fromProject(call, t); ok && wb == nil {
					wb = l.writeBlock(call, r, false, call.Tool+" would change")
				}
			}
			return wb == nil
		})
		if wb != nil {
			return wb, nil
		}
		if deep {
			return deepArgs(call), nil
		}
		return l.readToolBlock(p), nil
	case isReadKind(k) || k == kBashAux || k == kWebFetch:
		return l.readToolBlock(p), nil
	}
	return nil, nil
}

// readToolBlock keeps read tools away from secrets: Read of a secret file,
// Grep over a directory whose walk reaches one, Glob and LS inside a secret
// directory, an MCP tool handed a secret's path.
func (l *Law) readToolBlock(p *prepared) *block {
	call := p.call
	k := p.info.kind
	if k == kRead || k == kGrep || k == kGlob || k == kLS {
		// The common case without allocation: one plain path field.
		raw, ok := rawString(call.Input, pathKeys...)
		if ok && call.Resolver == nil && len(call.ResolvedPaths) == 0 && (k == kRead || raw != "") && !strings.HasPrefix(raw, "~") {
			abs := raw
			if !strings.HasPrefix(raw, "/") && call.Cwd != "" {
				abs = l.absPath(call, raw)
			}
			if _, hit := l.secretBy(abs); !hit && l.phase == nil {
				return nil
			}
		}
	}
	switch k {
	case kRead, kGrep, kGlob, kLS, kWebFetch, kOther:
		// An MCP or custom tool's server may take any string for a
		// path relative to its working directory: no shortcut.
	default:
		if !p.decoded && pathPrefilter && !mayNamePath(call.Input) {
			// No string in the input can look like a path, and it does
			// not nest too deep, so argStrings below would find nothing:
			// an upstream tool's input is not decoded unless a later step
			// asks for it.
			return nil
		}
	}
	m, err := p.input()
	if err != nil {
		return nil // not a path-bearing input; later steps decide
	}
	verb := canonOrRaw(p) + " would read"
	switch k {
	case kRead, kGrep, kGlob, kLS:
		// Each harness's tool reads one spelling of its path (opencode's
		// filePath, Claude Code's file_path, a Grep's path or dir_path),
		// the checks below the first they find.
		if !stringsAgree(m, readPathKeys...) {
			return &block{rule: RuleBadInput, reason: verb + " a file it names twice, with different values"}
		}
	}
	switch k {
	case kRead, kGrep, kGlob, kLS:
		// A process's environment by a spelling lexical cleaning would
		// lose (/dev/fd/../environ: the kernel follows /dev/fd first).
		if t, ok := str(m, pathKeys...); ok && t != "" {
			raw := l.rawAbs(call, t)
			if shell.ReadsEnvironment(raw) || k != kRead && shell.ReadsEnvironmentTree(raw) {
				return &block{rule: RuleSelfProtect, reason: verb + " " + t + ", a process's environment (it may hold an operator credential or blocked_env variables)"}
			}
		}
	}
	switch k {
	case kRead:
		if t, ok := str(m, pathKeys...); ok && t != "" {
			return l.readBlock(l.resolve(call, t), verb)
		}
		// An MCP resource (ReadMcpResourceTool, the gateway's
		// resources/read) whose URI is a file's: a Read of its path.
		if u, ok := str(m, "uri"); ok {
			if fp, ok := fileURLPath(u); ok {
				return l.readBlock(l.resolve(call, fp), verb)
			}
		}
	case kGrep:
		t, _ := str(m, "path", "dir_path", "directory", "file_path")
		if t == "" {
			t = call.Cwd
		}
		if t == "" {
			return nil
		}
		// Claude Code's Grep is ripgrep: it honours .gitignore; it is taken
		// to enter hidden files.
		return l.reachBlock(call, l.resolve(call, t), Walk{Hidden: true}, verb)
	case kGlob, kLS:
		t, _ := str(m, "path", "dir_path", "directory")
		if t == "" {
			t = call.Cwd
		}
		if t != "" {
			return l.readBlock(l.resolve(call, t), canonOrRaw(p)+" would list")
		}
	case kWebFetch:
		for _, k := range []string{"url", "uri"} {
			if u, ok := m[k].(string); ok {
				if fp, ok := fileURLPath(u); ok {
					if b := l.readBlock(l.resolve(call, fp), verb); b != nil {
						return b
					}
				}
			}
		}
	default:
		var rb *block
		deep := argStrings(m, func(t string) bool {
			// An MCP or custom tool's server resolves a relative path
			// against its working directory as a reader does (the
			// filesystem server reads {"path":".env"} and
			// {"paths":["src/../.env"]}): every string of its arguments
			// is checked as one. A harness's own tools (BashOutput's
			// ids, ...) name paths only as paths look.
			if t == "" || len(t) > 4096 || strings.ContainsAny(t, "\n") || (k != kOther && !looksLikePath(t)) {
				return true
			}
			r := l.resolve(call, t)
			if rb = l.readBlock(r, verb); rb == nil && searchishName(call.Tool) {
				rb = l.reachBlock(call, r, Walk{Hidden: true, Ignored: true}, verb)
			}
			if r, ok := l.fromProject(call, t); ok && rb == nil && k == kOther {
				if rb = l.readBlock(r, verb); rb == nil && searchishName(call.Tool) {
					rb = l.reachBlock(call, r, Walk{Hidden: true, Ignored: true}, verb)
				}
			}
			if rb == nil && k == kOther {
				rb = l.relativeSecret(call, t, verb)
			}
			return rb == nil
		})
		if rb != nil {
			return rb
		}
		if deep && k == kOther {
			return deepArgs(call)
		}
	}
	return nil
}

// fromProject is an MCP or custom tool's relative argument t resolved
// against the project directory, when that is not the call's working
// directory: the harness's MCP servers run in the project, where they
// resolve it, while the harness's working directory follows the agent's
// cd (Claude Code's hook cwd). Checked besides the call's own reading, a
// relative path is denied when either reaches a secret or a protected
// file. ok is false when there is no other reading.
func (l *Law) fromProject(call *ToolCall, t string) (resolved, bool) {
	if call.ProjectDir == "" || call.ProjectDir == call.Cwd || call.win || winCall(call) ||
		strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") {
		return resolved{}, false
	}
	pc := *call
	pc.Cwd = call.ProjectDir
	return l.resolve(&pc, t), true
}

// relativeSecret denies an MCP or custom tool's relative path whose names
// say it is a secret below whichever directory it is resolved in: its
// server may resolve it against a directory of its own, neither the
// call's working directory nor the project (the reference filesystem
// server takes its first allowed directory), so u/.ssh/id_rsa may be
// /home/u/.ssh/id_rsa.
func (l *Law) relativeSecret(call *ToolCall, t, verb string) *block {
	if call.win || winCall(call) || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") {
		return nil
	}
	fs := &l.secret
	if l.secretAnywhere != nil {
		fs = l.secretAnywhere.get()
	}
	if what, ok := fs.match(path.Clean("/" + t)); ok {
		return protectBlock("%s %s, a relative path that names a secret (%s) below whichever directory it is resolved in: agents never read credentials, keys or statewright's tokens", verb, t, what)
	}
	return nil
}

// maxArgDepth is how deep argStrings follows a tool's arguments.
const maxArgDepth = 32

// argStrings calls f with every string in a tool's decoded arguments, at
// any depth (an MCP server reads {"paths":[...]} and {"files":[{"path":
// ...}]} as it reads a top-level path), until f returns false. deep
// reports arguments nested deeper than maxArgDepth, which are not all
// read (the caller denies them).
func argStrings(m map[string]any, f func(string) bool) (deep bool) {
	var walk func(v any, depth int) bool
	walk = func(v any, depth int) bool {
		if depth > maxArgDepth {
			deep = true
			return false
		}
		switch x := v.(type) {
		case string:
			return f(x)
		case map[string]any:
			for _, e := range x {
				if !walk(e, depth+1) {
					return false
				}
			}
		case []any:
			for _, e := range x {
				if !walk(e, depth+1) {
					return false
				}
			}
		}
		return true
	}
	walk(m, 0)
	return deep
}

// deepArgs denies a tool whose arguments nest deeper than the checks of
// their paths follow.
func deepArgs(call *ToolCall) *block {
	return &block{rule: RuleBadInput, reason: fmt.Sprintf("%s's arguments nest deeper than %d levels, past what the checks of their paths read", call.Tool, maxArgDepth)}
}

// fileURLPath is the path a file: URL names, percent-decoded as the
// reader decodes it (file:///home/u/%2essh is ~/.ssh); ok is false for
// another scheme. A URL that does not parse is taken as written after
// its scheme.
func fileURLPath(u string) (string, bool) {
	if len(u) < len("file:") || !strings.EqualFold(u[:len("file:")], "file:") {
		return "", false
	}
	if pu, err := url.Parse(u); err == nil && pu.Path != "" {
		return pu.Path, true
	}
	return strings.TrimPrefix(u[len("file:"):], "//"), true
}

// readPathKeys are the path spellings a read tool's checks read.
var readPathKeys = append(append([]string(nil), pathKeys...), "dir_path", "directory")

// pathPrefilter turns on mayNamePath's shortcut in readToolBlock (for
// a harness's own tools; an MCP or custom tool's strings are all paths to
// its server, relative ones included). Tests
// turn it off to decode every input and compare.
var pathPrefilter = true

// mayNamePath reports whether some JSON string in input may satisfy
// looksLikePath once decoded: a quote followed by a byte a path-like
// string can begin with ('/', '~', '.', 'f' or 'F' of file://), an escape
// or a non-ASCII byte. It looks at every quote, so keys and closing
// quotes only make it say yes more often: false means no string of the
// input, at any depth, looks like a path. An input of more than
// maxArgDepth brackets may nest deeper than argStrings reads (deepArgs):
// it says yes.
func mayNamePath(input []byte) bool {
	if bytes.Count(input, []byte{'{'})+bytes.Count(input, []byte{'['}) > maxArgDepth {
		return true
	}
	for i := 0; ; {
		j := bytes.IndexByte(input[i:], '"')
		if j < 0 || i+j+1 >= len(input) {
			return false
		}
		i += j + 1
		switch c := input[i]; {
		case c == '/', c == '~', c == '.', c == 'f', c == 'F', c == '\\', c >= utf8.RuneSelf:
			return true
		}
	}
}

// looksLikePath reports whether an argument of a tool without canonical
// form names a path.
func looksLikePath(s string) bool {
	return strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") || strings.HasPrefix(s, "./") ||
		strings.HasPrefix(s, "../") || s == "." || s == ".." || strings.HasPrefix(strings.ToLower(s), "file://")
}

// searchishName reports whether a tool without canonical form looks like
// it reads a directory tree (search_files, directory_tree, grep, ...).
func searchishName(tool string) bool {
	lt := strings.ToLower(tool)
	for _, w := range []string{"search", "grep", "find", "tree", "directory", "glob", "read_multiple"} {
		if strings.Contains(lt, w) {
			return true
		}
	}
	return false
}

// writeishWords are the words of a tool name that say it changes files.
var writeishWords = []string{"write", "edit", "create", "move", "rename", "delete", "remove", "patch", "put", "copy", "upload", "save",
	"update", "append", "replace", "insert", "mkdir", "make", "touch", "chmod", "chown", "truncate", "modify", "link", "apply", "change"}

// writeishName reports whether a tool without canonical form looks like it
// changes files (write_file, edit_file, move_file, create_directory, ...).
func writeishName(tool string) bool {
	lt := strings.ToLower(tool)
	for _, w := range writeishWords {
		if strings.Contains(lt, w) {
			return true
		}
	}
	return false
}

func canonOrRaw(p *prepared) string {
	if p.info.kind == kOther {
		return p.call.Tool
	}
	return p.info.canon
}

// suggestion is one event that leads to a phase allowing the call.
type suggestion struct {
	event, target, note string
}

// suggList is a list of suggestions, held by value while it is short (a
// slice into prepared would move it to the heap).
type suggList struct {
	n     int
	first [4]suggestion
	more  []suggestion
	// mask has bit i set for the phase's candidate i that was suggested;
	// dynamic is set when a suggestion is not one of the first 64 or came
	// from the run (an interrupt's return): mask does not name the list.
	mask    uint64
	dynamic bool
}

func (l *suggList) add(s suggestion) {
	if l.n < len(l.first) {
		l.first[l.n] = s
	} else {
		l.more = append(l.more, s)
	}
	l.n++
}

func (l *suggList) at(i int) suggestion {
	if i < len(l.first) {
		return l.first[i]
	}
	return l.more[i-len(l.first)]
}

// suggestions lists the current phase's events whose one-step target phase
// would allow the call (docs/architecture.md, decision pipeline step 9). Fork and invoke
// transitions are never suggested; guarded and approval-gated ones are
// named as such.
func (l *Law) suggestions(cs *compiledState, run *RunState, p *prepared) suggList {
	var out suggList
	l.suggestionsInto(&out, cs, run, p)
	return out
}

// suggestionsInto is suggestions into the caller's zero list (a deny's
// hot path copies no list).
func (l *Law) suggestionsInto(out *suggList, cs *compiledState, run *RunState, p *prepared) {
	skip := false // the rest of an event that was suggested already
	for i := range cs.cands {
		c := &cs.cands[i]
		if skip {
			skip = c.more
			continue
		}
		target, ts := c.target, c.ts
		if ts == nil {
			// The return of an interrupt: where the history says.
			if len(run.History) == 0 {
				continue
			}
			target = run.History[len(run.History)-1].Return
			if ts = l.states[target]; ts == nil || ts.final || target == cs.name {
				continue
			}
		}
		if l.simAllows(run, p, target, ts) {
			out.add(suggestion{c.event, target, c.note})
			if i < 64 && c.ts != nil {
				out.mask |= 1 << i
			} else {
				out.dynamic = true
			}
			skip = c.more
		}
	}
}

// farther returns the index in cs.far.hops of the nearest phase more than one
// transition away whose law allows the call (-1 when none does). Only a
// deny of the phase's tools or shell capabilities looks further than one
// transition: a limit (edit size, files, paths) is kept by doing the work
// differently here, not by walking the workflow elsewhere.
func (l *Law) farther(cs *compiledState, run *RunState, p *prepared, rule Rule) int {
	if !implicitRules[rule] {
		return -1
	}
	for _, i := range cs.far.phases() {
		if ts := cs.far.hops[i].ts; l.simAllows(run, p, ts.name, ts) {
			return i
		}
	}
	return -1
}

// simulate decides p in phase target, with run's history, for a
// suggestion: its denies carry no lesson.
func (l *Law) simulate(run *RunState, p *prepared, target string) Decision {
	return l.simulateIn(run, p, target, l.states[target])
}

// simulateIn is simulate with the target's compiled state ts.
func (l *Law) simulateIn(run *RunState, p *prepared, target string, ts *compiledState) Decision {
	p.sim = RunState{Active: true, State: target, History: run.History}
	p.simulating = true
	d := l.decideIn(&p.sim, ts, p, false)
	p.simulating = false
	return d
}

// implicitRules are the denies an opted-in implicit transition may turn
// into an allow: the tool or command belongs to the next phase.
var implicitRules = map[Rule]bool{
	RuleToolNotAllowed: true, RuleDisallowedTool: true, RuleShellCapability: true, RuleAllowedCommands: true,
}

// implicit applies the opt-in of step 9 of the decision pipeline (docs/architecture.md): when the workflow sets
// meta.implicit_transitions: auto and exactly one unguarded, approval-free
// event leads to a phase that allows the call, the call is allowed there and
// the runtime must first take that transition (Effects.Transition).
func (l *Law) implicit(cs *compiledState, run *RunState, p *prepared, rule Rule, ss *suggList) (Decision, bool) {
	if !l.autoImplicit || !implicitRules[rule] || run.PendingApproval != nil {
		return Decision{}, false
	}
	direct := -1
	for i := range ss.n {
		if ss.at(i).note == "" {
			if direct >= 0 {
				return Decision{}, false
			}
			direct = i
		}
	}
	if direct < 0 {
		return Decision{}, false
	}
	s := ss.at(direct)
	// The call decided in the target phase, reading its input whole: this
	// decision may allow it.
	p.strict = true
	d := l.simulate(run, p, s.target)
	p.strict = false
	if d.Verdict != Allow {
		return Decision{}, false
	}
	d.Rule = RuleImplicitTransition
	d.Reason = fmt.Sprintf("allowed after the implicit transition %s: '%s' → '%s' (the workflow opts in to implicit transitions; rule %s)", s.event, cs.name, s.target, RuleImplicitTransition)
	d.Effects.Transition, d.Effects.TransitionTarget = s.event, s.target
	d.Effects.CountIteration = true
	return d, true
}

// deny builds a deny Decision whose reason teaches: the phase, what was
// denied and why, the rule, the allowed tools, and the events that lead to a
// phase where the call would be allowed. Inside a suggestion simulation
// nobody reads the lesson, so none is built.
func (l *Law) deny(cs *compiledState, run *RunState, p *prepared, rule Rule, what string, suggest bool) Decision {
	return l.denyWhy(cs, run, p, rule, what, nil, suggest)
}

// denyBlock is deny for a self-protection or read block: its reason is
// written into the lesson (a protected file's is not written before).
func (l *Law) denyBlock(cs *compiledState, run *RunState, p *prepared, b *block, suggest bool) Decision {
	return l.denyWhy(cs, run, p, b.rule, "", b, suggest)
}

// denyWhy is deny where what was denied and why is what, or (wb set)
// wb's reason.
func (l *Law) denyWhy(cs *compiledState, run *RunState, p *prepared, rule Rule, what string, wb *block, suggest bool) Decision {
	d := Decision{Verdict: Deny, Rule: rule, AllowedTools: emptyList, NextEvents: emptyList, Tool: p.info.canon}
	// Denied ordinary calls count toward max_iterations too.
	d.Effects.CountIteration = run != nil && run.Active && cs != nil && !cs.final &&
		p.info.kind != kControl && p.info.kind != kMeta && p.info.kind != kTask
	if p.simulating {
		return d
	}
	// The suggestions first: an implicit transition answers instead.
	var ss suggList
	far := -1
	if cs != nil && suggest && !cs.final && rule != RuleMaxIterations {
		if ss = l.suggestions(cs, run, p); ss.n > 0 {
			if auto, ok := l.implicit(cs, run, p, rule, &ss); ok {
				return auto
			}
		} else {
			far = l.farther(cs, run, p, rule)
		}
	}
	l.lesson(&d, cs, rule, what, wb, suggest, &ss, harnessIndex(p.call.Harness), far)
	return d
}

// protectedLesson is the lesson of a deny of an edit of the protected
// file w says (its strings copied: the target as written may lie in the
// caller's input).
type protectedLesson struct {
	w      protectedWrite
	reason string
}

// protLessonCache turns on denyProtected's keeping of a phase's last
// lesson (tests turn it off to build every lesson and compare).
var protLessonCache = true

// denyProtected is the deny of an edit of a protected file (p.prot says
// which, and how the reason names it). Its lesson depends only on the
// phase and p.prot (no suggestions: a self-protection deny teaches none),
// so the phase keeps the last one: an agent that meets such a deny tends
// to try the same edit again, and the lesson, a few hundred bytes, was
// most of what the deny allocated. TestProtectedLessonKept compares kept
// lessons with built ones.
func (l *Law) denyProtected(cs *compiledState, run *RunState, p *prepared) Decision {
	if cs != nil && protLessonCache {
		if pl := cs.protLesson.Load(); pl != nil && pl.w == p.prot {
			d := Decision{Verdict: Deny, Rule: RuleSelfProtect, Reason: pl.reason, AllowedTools: cs.allowedList, NextEvents: emptyList, Tool: p.info.canon}
			// (As denyWhy counts it.)
			d.Effects.CountIteration = run != nil && run.Active && !cs.final &&
				p.info.kind != kControl && p.info.kind != kMeta && p.info.kind != kTask
			return d
		}
	}
	w := p.prot
	pb := block{rule: RuleSelfProtect, prot: &w}
	d := l.denyWhy(cs, run, p, RuleSelfProtect, "", &pb, false)
	if cs != nil && protLessonCache {
		w := p.prot
		w.subject, w.verb, w.written = strings.Clone(w.subject), strings.Clone(w.verb), strings.Clone(w.written)
		w.real, w.what = strings.Clone(w.real), strings.Clone(w.what)
		cs.protLesson.Store(&protectedLesson{w: w, reason: d.Reason})
	}
	return d
}

// lessonKey names a tool-not-allowed lesson of a phase: which of the
// phase's suggestion candidates allow the call (the mask), and packed in
// the second word, the tool's kind (it is called by its canonical name,
// which the cached lesson holds and a load compares), the harness's index
// (its tool names) and far, the phase further away that allows the call
// (an index into the phase's farWalk hops, at most the number of phases;
// -1 for none). Two words of plain memory hash as one, faster than a
// struct with a string.
type lessonKey [2]uint64

func makeLessonKey(k kind, mask uint64, harness, far int) lessonKey {
	return lessonKey{mask, uint64(k)<<40 | uint64(uint8(harness))<<32 | uint64(uint32(int32(far)))}
}

// lessonCacheSize bounds the lessons a phase keeps.
const lessonCacheSize = 128

// cachedLesson is a deny's reason and next events, shared by the
// decisions that teach the same lesson (callers must not mutate them, as
// with AllowedTools).
type cachedLesson struct {
	key    lessonKey
	tool   string // the canonical name the lesson names
	reason string
	next   []string
}

// denyTool is deny for a tool the phase does not allow, called by its
// canonical name: its lesson depends only on the phase, the tool and the
// suggestions, so it is built once and kept (lessonCacheSize per phase).
func (l *Law) denyTool(cs *compiledState, run *RunState, p *prepared) (d Decision) {
	l.denyToolInto(&d, cs, run, p)
	return d
}

// denyToolInto is denyTool into *d (see decideCallInto).
func (l *Law) denyToolInto(d *Decision, cs *compiledState, run *RunState, p *prepared) {
	*d = Decision{Verdict: Deny, Rule: RuleToolNotAllowed, AllowedTools: cs.allowedList, NextEvents: emptyList, Tool: p.info.canon}
	d.Effects.CountIteration = run.Active && !cs.final &&
		p.info.kind != kControl && p.info.kind != kMeta && p.info.kind != kTask
	var ss suggList
	far := -1
	if !cs.final {
		if l.suggestionsInto(&ss, cs, run, p); ss.n > 0 {
			if l.autoImplicit {
				if auto, ok := l.implicit(cs, run, p, RuleToolNotAllowed, &ss); ok {
					*d = auto
					return
				}
			}
		} else {
			far = l.farther(cs, run, p, RuleToolNotAllowed)
		}
	}
	h := harnessIndex(p.call.Harness)
	key := makeLessonKey(p.info.kind, ss.mask, h, far)
	if !ss.dynamic {
		if cl := cs.lessons.load(key); cl != nil && cl.tool == p.info.canon {
			d.Reason, d.NextEvents = cl.reason, cl.next
			return
		}
	}
	l.lesson(d, cs, RuleToolNotAllowed, p.info.canon+" is not allowed here", nil, true, &ss, h, far)
	if !ss.dynamic {
		cs.lessons.store(key, &cachedLesson{key, p.info.canon, d.Reason, d.NextEvents})
	}
}

// lessonCache is a phase's kept lessons: a map that is never changed once
// published, read without a lock (a lookup hashes the key once, with no
// interface boxing as sync.Map needs); a store copies it, under mu.
type lessonCache struct {
	m  atomic.Pointer[map[lessonKey]*cachedLesson]
	mu sync.Mutex
	// last is the lesson load found last: a phase's denies mostly teach
	// one lesson again and again, found without hashing the key.
	last atomic.Pointer[cachedLesson]
}

func (c *lessonCache) load(k lessonKey) *cachedLesson {
	if cl := c.last.Load(); cl != nil && cl.key == k {
		return cl
	}
	if m := c.m.Load(); m != nil {
		cl := (*m)[k]
		if cl != nil {
			c.last.Store(cl)
		}
		return cl
	}
	return nil
}

// store keeps cl under k unless the cache holds lessonCacheSize lessons
// already (or k is kept already: the first stays).
func (c *lessonCache) store(k lessonKey, cl *cachedLesson) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var old map[lessonKey]*cachedLesson
	if m := c.m.Load(); m != nil {
		old = *m
	}
	if _, ok := old[k]; ok || len(old) >= lessonCacheSize {
		return
	}
	m := make(map[lessonKey]*cachedLesson, len(old)+1)
	for ok, ov := range old {
		m[ok] = ov
	}
	m[k] = cl
	c.m.Store(&m)
}

// lesson writes a deny's reason and next events into d: the phase, what
// was denied and why, the rule, the allowed tools, and the suggestions ss
// (computed by the caller), once, into a buffer on the stack, copied out
// at its exact size. What was denied and why is what, or (wb set) wb's
// reason.
func (l *Law) lesson(d *Decision, cs *compiledState, rule Rule, what string, wb *block, suggest bool, ss *suggList, h, far int) {
	var arr [768]byte
	b := arr[:0]
	if cs != nil {
		d.AllowedTools = cs.allowedList
		b = append(b, "Denied in phase '"...)
		b = append(b, cs.name...)
		b = append(b, "': "...)
		if wb != nil {
			b = wb.appendReason(b)
		} else {
			b = append(b, what...)
		}
		b = append(b, " (rule "...)
		b = append(b, rule...)
		b = append(b, ")."...)
		if !cs.final && rule != RuleSelfProtect && rule != RuleControlHumanOnly && rule != RuleControlUnknown {
			b = append(b, cs.lessonTail[h]...)
		}
	} else {
		b = append(b, "Denied: "...)
		if wb != nil {
			b = wb.appendReason(b)
		} else {
			b = append(b, what...)
		}
		b = append(b, " (rule "...)
		b = append(b, rule...)
		b = append(b, ")."...)
	}
	if cs != nil && suggest && !cs.final {
		if rule == RuleMaxIterations {
			if len(cs.events) > 0 {
				b = append(b, cs.transitionNow...)
				d.NextEvents = append([]string(nil), cs.events...)
			}
		} else if ss.n > 0 {
			d.NextEvents = make([]string, ss.n)
			for i := range ss.n {
				d.NextEvents[i] = ss.at(i).event
			}
			if s := ss.at(0); ss.n == 1 && s.note == "" {
				b = append(b, " Event "...)
				b = append(b, s.event...)
				b = append(b, " leads to '"...)
				b = append(b, s.target...)
				b = append(b, "', where this call is allowed."...)
			} else {
				b = append(b, " Events that lead to a phase where this call is allowed: "...)
				for i := range ss.n {
					s := ss.at(i)
					if i > 0 {
						b = append(b, "; "...)
					}
					b = append(b, s.event...)
					b = append(b, " → "...)
					b = append(b, s.target...)
					if s.note != "" {
						b = append(b, " ("...)
						b = append(b, s.note...)
						b = append(b, ")"...)
					}
				}
				b = append(b, "."...)
			}
		} else if far >= 0 {
			fp := cs.far.path(far)
			d.NextEvents = []string{fp.events[0]}
			b = fmt.Appendf(b, " This call is allowed in '%s', %d transitions away: %s (through '%s')",
				fp.ts.name, len(fp.events), strings.Join(fp.events, " → "), strings.Join(fp.via, "', '"))
			if len(fp.notes) > 0 {
				b = append(b, "; "...)
				b = append(b, strings.Join(fp.notes, "; ")...)
			}
			b = append(b, "."...)
		} else if implicitRules[rule] {
			b = append(b, " No phase reachable from '"...)
			b = append(b, cs.name...)
			b = append(b, "' allows this call."...)
		} else {
			b = append(b, " No single transition from '"...)
			b = append(b, cs.name...)
			b = append(b, "' leads to a phase that allows this call."...)
		}
	}
	d.Reason = string(b)
}

// MarshalDecision renders d as the one line of JSON `statewright check`
// prints (without the newline): decision, rule, reason, allowed_tools and
// next_events, with no HTML escaping so commands stay readable.
func MarshalDecision(d Decision) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(d) // a Decision always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// admitsReadOnly reports whether a trusted MCP tool's readOnlyHint admits
// it into this phase unnamed: the workflow opts in (mcp_read_only_hints)
// and the phase allows reading (the Read tool).
func (cs *compiledState) admitsReadOnly(info toolInfo, call *ToolCall) bool {
	return info.kind == kOther && cs.readOnlyHints && call.Hints != nil && call.Hints.ReadOnly &&
		cs.allowed.tools&bit(kRead) != 0
}

func hintWords(h *ToolHints) string {
	var w []string
	if h.Destructive {
		w = append(w, "may destroy or overwrite (destructiveHint)")
	}
	if h.OpenWorld {
		w = append(w, "reaches outside systems (openWorldHint)")
	}
	return strings.Join(w, " and ")
}
