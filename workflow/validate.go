package workflow

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Diagnostic codes reported by Validate. Codes are stable; messages of the
// statewright rules (initial-not-found … policy-*) match statewright's text.
const (
	// statewright's rules 1–7 and 9a–9g.
	CodeInitialNotFound        = "initial-not-found"
	CodeNoFinalState           = "no-final-state"
	CodeUnknownTarget          = "unknown-target"
	CodeUndefinedGuard         = "undefined-guard"
	CodeUnknownInterruptTarget = "unknown-interrupt-target"
	CodeUnknownForkState       = "unknown-fork-state"
	CodeUnreachableState       = "unreachable-state"
	CodePolicyVersion          = "policy-version"
	CodePolicyState            = "policy-state"
	CodePolicyParent           = "policy-parent"

	// Gaps statewright leaves.
	CodeUnknownSafeNext    = "unknown-safe-next"
	CodeUnknownInvokeState = "unknown-invoke-state"
	CodeReturnOutside      = "return-outside-interrupt"
	CodeCannotReachFinal   = "cannot-reach-final"
	CodeFinalTransitions   = "final-has-transitions"
	CodeMaxIterationsZero  = "max-iterations-zero"
	CodeGuardValue         = "guard-value"
	CodeGuardCycle         = "guard-cycle"
	CodeUnknownEvidence    = "unknown-evidence"
	CodeEvidenceType       = "evidence-type"
	CodeInvalidGlob        = "invalid-glob"
	CodeParallelState      = "parallel-state"
	CodeDeadlock           = "deadlock"
	CodeReservedEvent      = "reserved-event"
	// CodeSandboxExecLimits: a state lets Exec run in the sandbox and also
	// limits edits, which the sandbox cannot count (docs/sandbox.md).
	CodeSandboxExecLimits = "sandbox-exec-limits"
	// CodeSandboxPath: a sandbox block path is empty or a glob.
	CodeSandboxPath = "sandbox-path"

	// Safety validator (privilege ladder).
	CodeSafetyFailedState      = "safety-failed-state"
	CodeSafetyFailPath         = "safety-fail-path"
	CodeSafetyInitialPrivilege = "safety-initial-privilege"
	CodeSafetyNoApproval       = "safety-no-approval"
	CodeSafetyEscalation       = "safety-escalation"

	// Compatibility notes: where statewright-go behaves differently.
	CodeCompatEventData       = "compat-event-data"
	CodeCompatMaxIterations   = "compat-max-iterations"
	CodeCompatAllowedCommands = "compat-allowed-commands"
	CodeCompatDisallowedTools = "compat-disallowed-tools"
	CodeCompatBlockedEnv      = "compat-blocked-env"
)

// Validate runs structural validation (statewright's rules plus the gaps it
// leaves), safety validation (the privilege ladder), deadlock detection and
// compatibility notes. It returns every finding in a deterministic order:
// rule by rule, and within a rule by sorted state, event, guard and
// interrupt names. The definition is usable when none is an error.
func Validate(def *Definition) Diagnostics {
	if def == nil {
		return nil
	}
	v := &validator{def: def, states: sortedKeys(def.States), events: map[*State][]string{}, edgeCache: map[*State][]string{}}
	v.structural()
	v.gaps()
	v.safety()
	v.compat()
	return v.diags
}

type validator struct {
	def       *Definition
	states    []string            // sorted state names
	events    map[*State][]string // sorted event names per state
	edgeCache map[*State][]string // edges per state
	diags     Diagnostics
}

// eventsOf returns the sorted event names of s.
func (v *validator) eventsOf(s *State) []string {
	evs, ok := v.events[s]
	if !ok {
		evs = sortedKeys(s.On)
		v.events[s] = evs
	}
	return evs
}

func (v *validator) add(sev Severity, pos Pos, code, format string, args ...any) {
	v.diags = append(v.diags, Diagnostic{Severity: sev, Code: code, Message: fmt.Sprintf(format, args...), Pos: pos, Source: v.def.Source})
}

// sandboxPolicy checks a state's sandbox block: plain paths, and no exec
// where edits are limited (the sandbox keeps writes in scope but cannot
// count lines or files).
func (v *validator) sandboxPolicy(sn string, s *State) {
	if s == nil || s.Sandbox == nil {
		return
	}
	sb := s.Sandbox
	if sb.Exec {
		for _, limit := range []struct {
			key string
			set bool
		}{{"max_edit_lines", s.MaxEditLines != nil}, {"max_files_per_state", s.MaxFilesPerState != nil}} {
			if limit.set {
				v.errorf(sb.fp.at("exec", sb.Pos), CodeSandboxExecLimits, "state '%s' sets sandbox.exec and %s: code run through Exec escapes every line and file count, and the sandbox cannot count them; drop one of the two", sn, limit.key)
			}
		}
	}
	for _, field := range []struct {
		key  string
		list []string
	}{{"writable", sb.Writable}, {"hidden", sb.Hidden}} {
		for i, p := range field.list {
			if strings.TrimSpace(p) == "" || strings.ContainsAny(p, "*?[{") {
				v.errorf(sb.fp.at(fmt.Sprintf("%s[%d]", field.key, i), sb.Pos), CodeSandboxPath, "state '%s' sandbox.%s entry '%s' must be a plain path (project-relative, absolute or ~/…), not empty and not a glob", sn, field.key, p)
			}
		}
	}
}

func (v *validator) errorf(pos Pos, code, format string, args ...any) {
	v.add(SeverityError, pos, code, format, args...)
}

func (v *validator) warnf(pos Pos, code, format string, args ...any) {
	v.add(SeverityWarning, pos, code, format, args...)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (v *validator) exists(name string) bool {
	_, ok := v.def.States[name]
	return ok
}

// didYouMean suggests the state a nonexistent target likely meant
// (" (did you mean 'x'?)"), or "".
func (v *validator) didYouMean(name string) string {
	if len(name) < 4 { // one- to three-letter names are one edit from most others
		return ""
	}
	if s := suggest(name, v.states); s != "" {
		return " (did you mean '" + s + "'?)"
	}
	return ""
}

// state returns the named state; nil entries (hand-built definitions) read
// as an empty state.
func (v *validator) state(name string) *State {
	if s := v.def.States[name]; s != nil {
		return s
	}
	return &State{Name: name}
}

// forEachTransition calls f for every transition in sorted state/event order.
func (v *validator) forEachTransition(f func(state, event string, s *State, t *Transition)) {
	for _, sn := range v.states {
		s := v.state(sn)
		for _, ev := range v.eventsOf(s) {
			if t := s.On[ev]; t != nil {
				f(sn, ev, s, t)
			}
		}
	}
}

// targetPos is where a transition names its primary target.
func targetPos(t *Transition) Pos {
	switch t.Kind {
	case TransitionGuarded:
		if len(t.Branches) > 0 && t.Branches[0] != nil {
			return t.Branches[0].fp.at("target", t.Branches[0].Pos)
		}
	case TransitionFork:
		if t.Fork != nil {
			return t.Fork.fp.at("on_complete", t.Pos)
		}
	case TransitionInvoke:
		if t.Invoke != nil {
			return t.Invoke.fp.at("on_complete", t.Pos)
		}
	}
	return t.fp.at("target", t.Pos)
}

func primaryTarget(t *Transition) string {
	switch {
	case t.Kind == TransitionFork && t.Fork == nil, t.Kind == TransitionInvoke && t.Invoke == nil:
		return ""
	case t.Kind == TransitionGuarded && len(t.Branches) > 0 && t.Branches[0] == nil:
		return ""
	}
	return t.PrimaryTarget()
}

// structural runs statewright's rules 1–7 and 9a–9g with its messages.
func (v *validator) structural() {
	def := v.def
	// Rule 1.
	if !v.exists(def.Initial) {
		v.errorf(def.fp.at("initial", def.Pos), CodeInitialNotFound, "initial state '%s' not found in states", def.Initial)
	}
	// Rule 2.
	hasFinal := false
	for _, s := range def.States {
		if s.IsFinal() {
			hasFinal = true
		}
	}
	if !hasFinal {
		v.errorf(def.fp.at("states", def.Pos), CodeNoFinalState, "no final state defined; at least one state must have type: final")
	}
	// Rules 3 and 4, and the same checks for every branch (gap).
	v.forEachTransition(func(sn, ev string, s *State, t *Transition) {
		if pt := primaryTarget(t); pt != ReturnTarget && !v.exists(pt) {
			v.errorf(targetPos(t), CodeUnknownTarget, "state '%s' event '%s' targets nonexistent state '%s'%s", sn, ev, pt, v.didYouMean(pt))
		}
		for i, g := range t.GuardNames() {
			if _, ok := def.Guards[g]; !ok {
				v.errorf(guardNamePos(t.fp, t.Guard != "", i, t.Pos), CodeUndefinedGuard, "state '%s' event '%s' references undefined guard '%s'", sn, ev, g)
			}
		}
		if t.Kind != TransitionGuarded {
			return
		}
		for i, b := range t.Branches {
			if b == nil {
				continue
			}
			if i > 0 && b.Target != ReturnTarget && !v.exists(b.Target) {
				v.errorf(b.fp.at("target", b.Pos), CodeUnknownTarget, "state '%s' event '%s' branch %d targets nonexistent state '%s'%s", sn, ev, i+1, b.Target, v.didYouMean(b.Target))
			}
			for j, g := range b.GuardNames() {
				if _, ok := def.Guards[g]; !ok {
					v.errorf(guardNamePos(b.fp, b.Guard != "", j, b.Pos), CodeUndefinedGuard, "state '%s' event '%s' branch %d references undefined guard '%s'", sn, ev, i+1, g)
				}
			}
		}
	})
	// Rule 5.
	for _, name := range sortedKeys(def.Interrupts) {
		in := def.Interrupts[name]
		if in != nil && !v.exists(in.Target) {
			v.errorf(in.fp.at("target", in.Pos), CodeUnknownInterruptTarget, "interrupt '%s' targets nonexistent state '%s'%s", name, in.Target, v.didYouMean(in.Target))
		}
	}
	// Rule 6.
	v.forEachTransition(func(sn, ev string, s *State, t *Transition) {
		if t.Kind != TransitionFork || t.Fork == nil {
			return
		}
		for _, bn := range sortedKeys(t.Fork.Branches) {
			b := t.Fork.Branches[bn]
			if b == nil {
				continue
			}
			if !v.exists(b.Initial) {
				v.errorf(b.fp.at("initial", b.Pos), CodeUnknownForkState, "state '%s' event '%s' fork branch '%s' initial state '%s' not found", sn, ev, bn, b.Initial)
			}
			if !v.exists(b.Terminal) {
				v.errorf(b.fp.at("terminal", b.Pos), CodeUnknownForkState, "state '%s' event '%s' fork branch '%s' terminal state '%s' not found", sn, ev, bn, b.Terminal)
			}
		}
		if t.Fork.OnFail != "" && !v.exists(t.Fork.OnFail) {
			v.errorf(t.Fork.fp.at("on_fail", t.Fork.Pos), CodeUnknownForkState, "state '%s' event '%s' fork on_fail state '%s' not found", sn, ev, t.Fork.OnFail)
		}
	})
	// Rule 7.
	if v.exists(def.Initial) {
		seeds := []string{def.Initial}
		for _, name := range sortedKeys(def.Interrupts) {
			if in := def.Interrupts[name]; in != nil {
				seeds = append(seeds, in.Target)
			}
		}
		reached := v.reach(seeds)
		for _, sn := range v.states {
			if !reached[sn] {
				v.errorf(v.state(sn).Pos, CodeUnreachableState, "state '%s' is unreachable from initial state", sn)
			}
		}
	}
	v.policies()
}

// guardNamePos finds the position of the i-th name of GuardNames().
func guardNamePos(fp fieldPos, hasGuard bool, i int, fallback Pos) Pos {
	if hasGuard {
		if i == 0 {
			return fp.at("guard", fallback)
		}
		i--
	}
	return fp.at(fmt.Sprintf("guards[%d]", i), fp.at("guards", fallback))
}

// edges returns every state a state can move to: all transition targets,
// fork branch states and on_fail, invoke on_fail, and safe_next. $return
// and nonexistent names are left out.
func (v *validator) edges(s *State) []string {
	if out, ok := v.edgeCache[s]; ok {
		return out
	}
	out := v.computeEdges(s)
	v.edgeCache[s] = out
	return out
}

func (v *validator) computeEdges(s *State) []string {
	var out []string
	add := func(n string) {
		if n != "" && n != ReturnTarget && v.exists(n) {
			out = append(out, n)
		}
	}
	for _, ev := range v.eventsOf(s) {
		t := s.On[ev]
		if t == nil {
			continue
		}
		switch t.Kind {
		case TransitionGuarded:
			for _, b := range t.Branches {
				if b != nil {
					add(b.Target)
				}
			}
		case TransitionFork:
			if t.Fork == nil {
				continue
			}
			add(t.Fork.OnComplete)
			add(t.Fork.OnFail)
			for _, bn := range sortedKeys(t.Fork.Branches) {
				if b := t.Fork.Branches[bn]; b != nil {
					add(b.Initial)
					add(b.Terminal)
				}
			}
		case TransitionInvoke:
			if t.Invoke != nil {
				add(t.Invoke.OnComplete)
				add(t.Invoke.OnFail)
			}
		default:
			add(t.Target)
		}
	}
	add(s.SafeNext)
	return out
}

// reach returns the states reachable from seeds (seeds included).
func (v *validator) reach(seeds []string) map[string]bool {
	seen := map[string]bool{}
	queue := []string{}
	for _, s := range seeds {
		if v.exists(s) && !seen[s] {
			seen[s] = true
			queue = append(queue, s)
		}
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, n := range v.edges(v.state(cur)) {
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	return seen
}

// usesReturn reports whether a state has a way on that targets $return.
func usesReturn(s *State) bool {
	if s.SafeNext == ReturnTarget {
		return true
	}
	for _, t := range s.On {
		if t == nil {
			continue
		}
		for _, tg := range transitionTargets(t) {
			if tg == ReturnTarget {
				return true
			}
		}
	}
	return false
}

func transitionTargets(t *Transition) []string {
	switch {
	case t.Kind == TransitionFork && t.Fork == nil, t.Kind == TransitionInvoke && t.Invoke == nil:
		return nil
	case t.Kind == TransitionGuarded:
		var out []string
		for _, b := range t.Branches {
			if b != nil {
				out = append(out, b.Target)
			}
		}
		return out
	}
	return t.Targets()
}

// canReach returns, for every state, whether it can reach one of the goal
// states. A $return counts as a way back to any non-final state (an
// interrupt may fire anywhere).
func (v *validator) canReach(goal func(string) bool) map[string]bool {
	reverse := map[string][]string{}
	var returners []string
	for _, sn := range v.states {
		s := v.state(sn)
		for _, n := range v.edges(s) {
			reverse[n] = append(reverse[n], sn)
		}
		if usesReturn(s) {
			returners = append(returners, sn)
		}
	}
	ok := map[string]bool{}
	var queue []string
	mark := func(sn string) {
		if !ok[sn] {
			ok[sn] = true
			queue = append(queue, sn)
		}
	}
	for _, sn := range v.states {
		if goal(sn) {
			mark(sn)
		}
	}
	returnsOK := false
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if !returnsOK && !v.state(cur).IsFinal() {
			returnsOK = true
			for _, r := range returners {
				mark(r)
			}
		}
		for _, p := range reverse[cur] {
			mark(p)
		}
	}
	return ok
}

func (v *validator) policies() {
	meta := v.def.Meta
	if meta == nil {
		return
	}
	if ws := meta.Workspace; ws != nil && ws.Version != 1 {
		v.errorf(ws.fp.at("version", ws.Pos), CodePolicyVersion, "workspace policy version %d is unsupported; expected 1", ws.Version)
	}
	if pv := meta.Preview; pv != nil {
		if pv.Version != 1 {
			v.errorf(pv.fp.at("version", pv.Pos), CodePolicyVersion, "preview policy version %d is unsupported; expected 1", pv.Version)
		}
		for _, f := range []struct{ name, state string }{
			{"prepare_state", pv.PrepareState}, {"deploy_state", pv.DeployState}, {"validate_state", pv.ValidateState},
		} {
			if !v.exists(f.state) {
				v.errorf(pv.fp.at(f.name, pv.Pos), CodePolicyState, "preview policy %s references nonexistent state '%s'", f.name, f.state)
			}
		}
		if pv.Required && (meta.Workspace == nil || !meta.Workspace.Required) {
			v.errorf(pv.Pos, CodePolicyParent, "required preview policy requires a required workspace policy")
		}
	}
	if pr := meta.Promotion; pr != nil {
		if pr.Version != 1 {
			v.errorf(pr.fp.at("version", pr.Pos), CodePolicyVersion, "promotion policy version %d is unsupported; expected 1", pr.Version)
		}
		if !v.exists(pr.PromoteState) {
			v.errorf(pr.fp.at("promote_state", pr.Pos), CodePolicyState, "promotion policy promote_state references nonexistent state '%s'", pr.PromoteState)
		}
		if pr.Required && (meta.Preview == nil || !meta.Preview.Required) {
			v.errorf(pr.Pos, CodePolicyParent, "required promotion policy requires a required preview policy")
		}
	}
}

// gaps runs the checks statewright leaves out.
func (v *validator) gaps() {
	def := v.def
	// Guards: references, cycles, op/value and evidence fields.
	for _, name := range sortedKeys(def.Guards) {
		if g := def.Guards[name]; g != nil {
			v.checkGuard(name, g, 0)
		}
	}
	v.guardCycles()

	// Invoke on_fail.
	v.forEachTransition(func(sn, ev string, s *State, t *Transition) {
		if t.Kind == TransitionInvoke && t.Invoke != nil && t.Invoke.OnFail != "" && t.Invoke.OnFail != ReturnTarget && !v.exists(t.Invoke.OnFail) {
			v.errorf(t.Invoke.fp.at("on_fail", t.Pos), CodeUnknownInvokeState, "state '%s' event '%s' invoke on_fail state '%s' not found", sn, ev, t.Invoke.OnFail)
		}
	})

	// Per state.
	handlers := v.reach(v.interruptTargets())
	for _, sn := range v.states {
		s := v.state(sn)
		if s.SafeNext != "" && s.SafeNext != ReturnTarget && !v.exists(s.SafeNext) {
			v.errorf(s.fp.at("safe_next", s.Pos), CodeUnknownSafeNext, "state '%s' safe_next targets nonexistent state '%s'", sn, s.SafeNext)
		}
		if !handlers[sn] {
			if s.SafeNext == ReturnTarget {
				v.warnf(s.fp.at("safe_next", s.Pos), CodeReturnOutside, "state '%s' safe_next is '$return', but no interrupt leads to state '%s', so there is nothing to return to", sn, sn)
			}
			for _, ev := range v.eventsOf(s) {
				t := s.On[ev]
				if t == nil {
					continue
				}
				for _, tg := range transitionTargets(t) {
					if tg == ReturnTarget {
						v.warnf(t.Pos, CodeReturnOutside, "state '%s' event '%s' targets '$return', but no interrupt leads to state '%s', so there is nothing to return to", sn, ev, sn)
						break
					}
				}
			}
		}
		for _, ev := range v.eventsOf(s) {
			for _, prefix := range reservedEventPrefixes {
				if strings.HasPrefix(ev, prefix) && s.On[ev] != nil {
					v.warnf(s.On[ev].Pos, CodeReservedEvent, "state '%s' event '%s' starts with the reserved prefix '%s': the runtime handles such events itself, so this transition never fires", sn, ev, prefix)
				}
			}
		}
		if s.IsFinal() && len(s.On) > 0 {
			v.warnf(s.Pos, CodeFinalTransitions, "final state '%s' has outgoing transitions; they are never taken", sn)
		}
		if s.Type == StateParallel {
			v.warnf(s.fp.at("type", s.Pos), CodeParallelState, "state '%s' has type 'parallel', which has no behaviour; it runs as a normal state", sn)
		}
		if s.MaxIterations != nil && *s.MaxIterations == 0 && !s.IsFinal() {
			v.warnf(s.fp.at("max_iterations", s.Pos), CodeMaxIterationsZero, "state '%s' has max_iterations 0: every tool call in it is denied", sn)
		}
		for _, field := range []struct {
			key  string
			list []string
		}{{"allowed_paths", s.AllowedPaths}, {"denied_paths", s.DeniedPaths}} {
			for i, p := range field.list {
				if !doublestar.ValidatePattern(p) {
					v.errorf(s.fp.at(fmt.Sprintf("%s[%d]", field.key, i), s.Pos), CodeInvalidGlob, "state '%s' %s entry '%s' is not a valid glob pattern", sn, field.key, p)
				}
			}
		}
	}
	for _, sn := range v.states {
		v.sandboxPolicy(sn, v.state(sn))
	}
	for _, name := range sortedKeys(def.Interrupts) {
		in := def.Interrupts[name]
		if in != nil && !doublestar.ValidatePattern(in.Trigger.FilePattern) {
			v.errorf(in.fp.at("file_pattern", in.Pos), CodeInvalidGlob, "interrupt '%s' file_pattern '%s' is not a valid glob pattern", name, in.Trigger.FilePattern)
		}
	}

	// Every non-final state must be able to reach a final state.
	if hasFinalState(def) {
		ok := v.canReach(func(sn string) bool { return v.state(sn).IsFinal() })
		for _, sn := range v.states {
			if !ok[sn] {
				v.errorf(v.state(sn).Pos, CodeCannotReachFinal, "state '%s' cannot reach a final state", sn)
			}
		}
	}
	v.deadlocks()
}

// reservedEventPrefixes start events the runtime interprets itself:
// "INTERRUPT:<name>" fires an interrupt, "BRANCH_DONE:<branch>" ends a fork
// branch.
var reservedEventPrefixes = []string{"INTERRUPT:", "BRANCH_DONE:"}

func hasFinalState(def *Definition) bool {
	for _, s := range def.States {
		if s.IsFinal() {
			return true
		}
	}
	return false
}

func (v *validator) interruptTargets() []string {
	var out []string
	for _, name := range sortedKeys(v.def.Interrupts) {
		if in := v.def.Interrupts[name]; in != nil {
			out = append(out, in.Target)
		}
	}
	return out
}

// checkGuard checks one guard tree named name.
func (v *validator) checkGuard(name string, g *Guard, depth int) {
	if g == nil || depth > maxDepth {
		return
	}
	if g.Ref != "" {
		if _, ok := v.def.Guards[g.Ref]; !ok {
			v.errorf(g.Pos, CodeUndefinedGuard, "guard '%s' references undefined guard '%s'", name, g.Ref)
		}
		return
	}
	for _, c := range g.All {
		v.checkGuard(name, c, depth+1)
	}
	for _, c := range g.Any {
		v.checkGuard(name, c, depth+1)
	}
	v.checkGuard(name, g.Not, depth+1)
	if g.Op == "" {
		return
	}
	valuePos := g.fp.at("value", g.Pos)
	switch g.Op {
	case OpGt, OpGte, OpLt, OpLte:
		if !isNumber(g.Value) {
			v.errorf(valuePos, CodeGuardValue, "guard '%s' uses op '%s' with %s; gt, gte, lt and lte need a number", name, g.Op, describeValue(g.Value))
		}
	case OpIn:
		if _, ok := g.Value.([]any); !ok {
			v.errorf(valuePos, CodeGuardValue, "guard '%s' uses op 'in' with %s; in needs an array", name, describeValue(g.Value))
		}
	case OpMatches:
		pat, ok := g.Value.(string)
		if !ok {
			v.errorf(valuePos, CodeGuardValue, "guard '%s' uses op 'matches' with %s; matches needs a regular expression string", name, describeValue(g.Value))
		} else if _, err := regexp.Compile(pat); err != nil {
			v.errorf(valuePos, CodeGuardValue, "guard '%s' has an invalid regular expression: %v", name, err)
		}
	}
	fieldPos := g.fp.at("field", g.Pos)
	if IsEvidenceField(g.Field) {
		typ, ok := EvidenceFieldType(g.Field)
		if !ok {
			v.errorf(fieldPos, CodeUnknownEvidence, "guard '%s' reads unknown runtime field '%s' (known: %s)", name, g.Field, strings.Join(EvidenceFields(), ", "))
			return
		}
		if msg := evidenceMismatch(g, typ); msg != "" {
			v.errorf(valuePos, CodeEvidenceType, "guard '%s' %s", name, msg)
		}
	}
}

// evidenceMismatch explains why a comparison can never hold for an evidence
// field of type typ, or returns "".
func evidenceMismatch(g *Guard, typ EvidenceType) string {
	fits := func(x any) bool {
		switch typ {
		case EvidenceInt:
			return isNumber(x)
		case EvidenceBool:
			_, ok := x.(bool)
			return ok
		default:
			_, ok := x.(string)
			return ok
		}
	}
	switch g.Op {
	case OpEq, OpNeq:
		if g.Value != nil && !fits(g.Value) {
			return fmt.Sprintf("compares %s (%s) with %s", g.Field, typ, describeValue(g.Value))
		}
	case OpGt, OpGte, OpLt, OpLte:
		if typ != EvidenceInt {
			return fmt.Sprintf("uses op '%s' on %s (%s)", g.Op, g.Field, typ)
		}
	case OpMatches, OpContains:
		if typ != EvidenceString {
			return fmt.Sprintf("uses op '%s' on %s (%s)", g.Op, g.Field, typ)
		}
	case OpIn:
		if list, ok := g.Value.([]any); ok {
			for _, x := range list {
				if fits(x) {
					return ""
				}
			}
			if len(list) > 0 {
				return fmt.Sprintf("looks %s (%s) up in a list that holds no %s value", g.Field, typ, typ)
			}
		}
	}
	return ""
}

func isNumber(x any) bool {
	switch x.(type) {
	case int64, float64, int, uint32, uint64, int32, float32:
		return true
	}
	return false
}

func describeValue(x any) string {
	switch x.(type) {
	case nil:
		return "no value"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	if isNumber(x) {
		return "a number"
	}
	return fmt.Sprintf("a %T", x)
}

// guardCycles reports named guards that refer back to themselves.
func (v *validator) guardCycles() {
	reported := map[string]bool{}
	for _, name := range sortedKeys(v.def.Guards) {
		if reported[name] {
			continue
		}
		if path := v.cycleFrom(name, []string{name}, map[string]bool{}); path != nil {
			for _, p := range path {
				reported[p] = true
			}
			v.errorf(v.def.Guards[name].Pos, CodeGuardCycle, "guard '%s' refers to itself (%s)", name, strings.Join(path, " -> "))
		}
	}
}

func (v *validator) cycleFrom(start string, path []string, seen map[string]bool) []string {
	cur := path[len(path)-1]
	if seen[cur] || len(path) > 64 {
		return nil
	}
	seen[cur] = true
	for _, r := range guardRefs(v.def.Guards[cur], nil, 0) {
		if r == start {
			return append(append([]string{}, path...), r)
		}
		if _, ok := v.def.Guards[r]; ok {
			if p := v.cycleFrom(start, append(path, r), seen); p != nil {
				return p
			}
		}
	}
	return nil
}

func guardRefs(g *Guard, out []string, depth int) []string {
	if g == nil || depth > maxDepth {
		return out
	}
	if g.Ref != "" {
		return append(out, g.Ref)
	}
	for _, c := range g.All {
		out = guardRefs(c, out, depth+1)
	}
	for _, c := range g.Any {
		out = guardRefs(c, out, depth+1)
	}
	return guardRefs(g.Not, out, depth+1)
}
