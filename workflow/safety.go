package workflow

import (
	"fmt"
	"regexp"
	"strings"
)

// safety runs the six checks of statewright's agent-safety validator over
// the privilege ladder. Check 1 (structural validation) is Validate itself.
// Checks 2–3 are errors for moderate and dangerous workflows; checks 4–6
// are warnings for moderate and errors for dangerous ones. A workflow that
// declares no danger level (or "safe") gets none of them: the engine does not
// require a 'failed' state, and most statewright files have none.
func (v *validator) safety() {
	def := v.def
	level := DangerLevel("")
	if def.Meta != nil {
		level = def.Meta.DangerLevel
	}
	if level != DangerModerate && level != DangerDangerous {
		return
	}
	sev23 := SeverityError
	// Checks 2 and 3.
	if failed := def.States["failed"]; failed == nil || !failed.IsFinal() {
		pos := def.fp.at("states", def.Pos)
		if failed != nil {
			pos = failed.Pos
		}
		v.add(sev23, pos, CodeSafetyFailedState, "machine must have a 'failed' state with type: final")
	} else {
		ok := v.canReach(func(sn string) bool { return sn == "failed" })
		for _, sn := range v.states {
			if !ok[sn] && !v.state(sn).IsFinal() {
				v.add(sev23, v.state(sn).Pos, CodeSafetyFailPath, "state '%s' has no path to 'failed' state (every state must be able to fail)", sn)
			}
		}
	}
	sev := SeverityWarning
	if level == DangerDangerous {
		sev = SeverityError
	}
	// Check 4.
	if init, ok := def.States[def.Initial]; ok && init != nil {
		var found []string
		if init.AllowedTools == nil && !init.IsFinal() {
			found = []string{"any tool: allowed_tools is absent"}
		}
		for _, t := range effectiveTools(init) {
			if ToolRung(def, t) >= RungWrite {
				found = append(found, t)
			}
		}
		if len(found) > 0 {
			v.add(sev, init.fp.at("allowed_tools", init.Pos), CodeSafetyInitialPrivilege, "initial state must not have write/execute tools (found: %s)", strings.Join(found, ", "))
		}
	}
	// Check 5.
	approval := false
	for _, sn := range v.states {
		for _, t := range v.state(sn).On {
			if t != nil && t.Kind == TransitionFull && t.RequiresApproval {
				approval = true
			}
		}
	}
	if !approval {
		v.add(sev, def.fp.at("states", def.Pos), CodeSafetyNoApproval, "machine with danger_level 'moderate' or 'dangerous' must have at least one transition with requires_approval: true")
	}
	// Check 6: a transition to the top rung (4) from a state at 1 or below,
	// without approval. On the seed design's ladder that includes write
	// states (write 1): write -> deploy is flagged; on the Rust project's
	// numbering (compat: statewright) only read states are.
	rust := RustNumbering(def)
	v.forEachTransition(func(sn, ev string, s *State, t *Transition) {
		if s.IsFinal() || (t.Kind == TransitionFull && t.RequiresApproval) {
			return
		}
		from := StateRung(def, s).Number(rust)
		if from > 1 {
			return
		}
		seen := map[string]bool{}
		for _, tg := range transitionTargets(t) {
			if tg == ReturnTarget || !v.exists(tg) || seen[tg] {
				continue
			}
			seen[tg] = true
			if to := StateRung(def, v.state(tg)); to == RungExternal {
				v.add(sev, t.Pos, CodeSafetyEscalation, "tool escalation from '%s' (privilege %d, %s) to '%s' (privilege %d, %s) without approval gate", sn, from, StateRung(def, s), tg, to.Number(rust), to)
			}
		}
	})
}

// way is one way out of a state: a transition or a guarded branch, with the
// guard names that must all hold.
type way struct {
	label  string
	guards []string
}

// deadlocks reports non-final states whose every way out needs evidence the
// state cannot produce, or a guard that can never hold.
func (v *validator) deadlocks() {
	for _, sn := range v.states {
		s := v.state(sn)
		if s.IsFinal() || len(s.On) == 0 || s.SafeNext != "" {
			continue
		}
		var ways []way
		for _, ev := range v.eventsOf(s) {
			t := s.On[ev]
			if t == nil {
				continue
			}
			switch t.Kind {
			case TransitionGuarded:
				for i, b := range t.Branches {
					if b != nil {
						ways = append(ways, way{fmt.Sprintf("event '%s' branch %d", ev, i+1), b.GuardNames()})
					}
				}
			case TransitionFull:
				ways = append(ways, way{fmt.Sprintf("event '%s'", ev), t.GuardNames()})
			default:
				ways = append(ways, way{label: fmt.Sprintf("event '%s'", ev)})
			}
		}
		if len(ways) == 0 {
			continue // an empty branch list: reported as a missing target
		}
		var reasons []string
		for _, w := range ways {
			r := ""
			for _, gn := range w.guards {
				if r = v.blocked(s, v.def.Guards[gn], map[string]bool{gn: true}, 0); r != "" {
					break
				}
			}
			if r == "" {
				reasons = nil
				break
			}
			reasons = append(reasons, w.label+": "+r)
		}
		if len(reasons) > 0 {
			v.errorf(s.Pos, CodeDeadlock, "state '%s' can never be left: %s", sn, strings.Join(reasons, "; "))
		}
	}
}

// blocked explains why guard g can never hold while the run is in state s,
// or returns "" when it might hold. Unknown names are not blocked (they are
// reported elsewhere).
func (v *validator) blocked(s *State, g *Guard, seen map[string]bool, depth int) string {
	if g == nil || depth > maxDepth {
		return ""
	}
	if g.Ref != "" {
		if seen[g.Ref] {
			return ""
		}
		seen[g.Ref] = true
		defer delete(seen, g.Ref)
		return v.blocked(s, v.def.Guards[g.Ref], seen, depth+1)
	}
	switch {
	case g.All != nil:
		for _, c := range g.All {
			if r := v.blocked(s, c, seen, depth+1); r != "" {
				return r
			}
		}
		return ""
	case g.Any != nil:
		var rs []string
		for _, c := range g.Any {
			r := v.blocked(s, c, seen, depth+1)
			if r == "" {
				return ""
			}
			rs = append(rs, r)
		}
		if len(rs) == 0 {
			return "an empty 'any' never holds"
		}
		return strings.Join(rs, " and ")
	case g.Not != nil:
		return ""
	}
	// A comparison.
	if impossible(g) {
		return fmt.Sprintf("the guard on '%s' can never hold", g.Field)
	}
	needsPresence := g.Op != OpNotExists && g.Op != OpNeq
	if !needsPresence {
		return ""
	}
	if evidenceNeedsShell(g.Field) {
		if ok, tool := allowsShell(s); !ok {
			return fmt.Sprintf("%s needs a shell command, but the state does not allow %s", g.Field, tool)
		}
	}
	if g.Field == EvidenceFilesEdited && !allowsEdit(s) && !holdsForZero(g) {
		return fmt.Sprintf("%s needs an edit, but the state allows no edit tool", g.Field)
	}
	return ""
}

// impossible reports comparisons that can never hold whatever the context:
// an op whose value has the wrong type, an empty 'in' list, or a mismatch
// with the type of an evidence field.
func impossible(g *Guard) bool {
	switch g.Op {
	case OpGt, OpGte, OpLt, OpLte:
		if !isNumber(g.Value) {
			return true
		}
	case OpIn:
		list, ok := g.Value.([]any)
		if !ok || len(list) == 0 {
			return true
		}
	case OpMatches:
		if _, ok := g.Value.(string); !ok {
			return true
		}
	}
	if typ, ok := EvidenceFieldType(g.Field); ok && g.Op != OpNeq {
		return evidenceMismatch(g, typ) != ""
	}
	return false
}

// holdsForZero evaluates a comparison against the value 0 (the files_edited
// count of a state that cannot edit).
func holdsForZero(g *Guard) bool {
	f, isNum := toFloat(g.Value)
	switch g.Op {
	case OpExists:
		return true
	case OpEq:
		return isNum && f == 0
	case OpGt:
		return isNum && 0 > f
	case OpGte:
		return isNum && 0 >= f
	case OpLt:
		return isNum && 0 < f
	case OpLte:
		return isNum && 0 <= f
	case OpIn:
		list, _ := g.Value.([]any)
		for _, x := range list {
			if xf, ok := toFloat(x); ok && xf == 0 {
				return true
			}
		}
	}
	return false
}

func toFloat(x any) (float64, bool) {
	switch n := x.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}

// compat emits the compatibility notes: places where a statewright file
// relies on behaviour statewright-go changed on purpose.
func (v *validator) compat() {
	def := v.def
	// allowed_commands entries that cannot mean what they say: always.
	for _, sn := range v.states {
		s := v.state(sn)
		for i, c := range s.AllowedCommands {
			if msg := commandNote(c); msg != "" {
				v.warnf(s.fp.at(fmt.Sprintf("allowed_commands[%d]", i), s.Pos), CodeCompatAllowedCommands, "state '%s' allowed_commands entry %q %s", sn, c, msg)
			}
		}
	}
	// The semantic changes: not for files that declare statewright-go
	// semantics by setting trust_event_data explicitly.
	if def.TrustEventDataSet {
		return
	}
	// Guards that only event data could satisfy.
	if !def.TrustEventData {
		for _, name := range sortedKeys(def.Guards) {
			seen := map[string]bool{}
			v.eventDataGuards(name, def.Guards[name], seen, 0)
		}
	}
	// max_iterations: once per file.
	for _, sn := range v.states {
		s := v.state(sn)
		if s.MaxIterations != nil && !s.IsFinal() {
			v.warnf(s.fp.at("max_iterations", s.Pos), CodeCompatMaxIterations, "state '%s' sets max_iterations: at the limit statewright-go denies further tool calls until the agent transitions (statewright only added a checkpoint notice); this applies to every state with max_iterations", sn)
			break
		}
	}
	for _, sn := range v.states {
		s := v.state(sn)
		if len(s.DisallowedTools) > 0 && !s.IsFinal() {
			v.warnf(s.fp.at("disallowed_tools", s.Pos), CodeCompatDisallowedTools, "state '%s' disallowed_tools is enforced by statewright-go (statewright only reported it): these tools are denied even where allowed_tools would allow them", sn)
		}
		if len(s.BlockedEnv) > 0 && !s.IsFinal() {
			v.warnf(s.fp.at("blocked_env", s.Pos), CodeCompatBlockedEnv, "state '%s' blocked_env is enforced by statewright-go (statewright only reported it): shell commands that read these variables are denied", sn)
		}
	}
}

func (v *validator) eventDataGuards(name string, g *Guard, seen map[string]bool, depth int) {
	if g == nil || depth > maxDepth {
		return
	}
	for _, c := range g.All {
		v.eventDataGuards(name, c, seen, depth+1)
	}
	for _, c := range g.Any {
		v.eventDataGuards(name, c, seen, depth+1)
	}
	v.eventDataGuards(name, g.Not, seen, depth+1)
	if g.Op == "" || g.Field == "" || seen[g.Field] {
		return
	}
	head, _, _ := strings.Cut(g.Field, ".")
	if head == "runtime" || head == "data" {
		return
	}
	if _, ok := v.def.Context[head]; ok {
		return
	}
	if _, ok := v.def.Context[g.Field]; ok { // a dotted key that exists verbatim
		return
	}
	seen[g.Field] = true
	v.warnf(g.fp.at("field", g.Pos), CodeCompatEventData, "guard '%s' reads '%s', which the workflow's context does not define: under statewright only event data could satisfy it, but statewright-go puts event data under 'data.' — name 'data.%s' in the guard, or set \"trust_event_data\": true to merge event data into the context as statewright did", name, g.Field, g.Field)
}

// commandNote explains how an allowed_commands entry written for
// statewright's raw string-prefix matching is read now, or returns "".
func commandNote(c string) string {
	switch {
	case strings.TrimSpace(c) == "":
		return "is empty and matches no command"
	case strings.ContainsAny(c, ";|&<>`") || strings.Contains(c, "$("):
		return fmt.Sprintf("contains shell operators: statewright compared it with the raw command string; statewright-go splits every command at its operators and matches each simple command's argv, so an entry is one simple command — list %s as separate entries", partList(c))
	case strings.ContainsAny(c, "*?["):
		return fmt.Sprintf("contains glob characters: statewright-go does not expand globs in allowed_commands and reads the entry as the literal argv prefix %s — write the program and its leading arguments instead (e.g. \"go test\")", wordList(c))
	}
	return ""
}

// partList splits an entry at shell operators and quotes the parts.
func partList(c string) string {
	parts := operatorSplit.Split(c, -1)
	var q []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			q = append(q, fmt.Sprintf("%q", p))
		}
	}
	return strings.Join(q, " and ")
}

var operatorSplit = regexp.MustCompile(`\|\||&&|[;|&<>` + "`" + `]|\$\(|\)`)

func wordList(c string) string {
	words := strings.Fields(c)
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = fmt.Sprintf("%q", w)
	}
	return "[" + strings.Join(q, " ") + "]"
}
