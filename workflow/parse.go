package workflow

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ParseOptions controls Parse.
//
// By default Parse is strict about keys: an unknown key (a typo such as
// allowed_tool would leave a phase unrestricted) and a field statewright
// would silently drop are errors with their line:column. Two ways make them
// warnings instead: Lenient, for the snapshot of a run already in flight
// (an upgrade must not deny every call of a running session), and the
// file's own opt-in, "compat": "statewright", for files written for the
// original (which ignored unknown keys).
type ParseOptions struct {
	// Source is the file name used in diagnostics.
	Source string
	// Strict keeps unknown keys and dropped fields errors even in a file
	// that opts into compat: "statewright" (callers such as `--strict` then
	// also count every other warning as a failure).
	Strict bool
	// Lenient reads unknown keys and dropped fields as warnings: only for
	// a workflow snapshot a run already holds, never for a workflow being
	// validated, installed or loaded to start a run.
	Lenient bool
}

// CompatStatewright is the value of a workflow's "compat" key that opts a
// file written for the original statewright into its lenient reading:
// unknown keys and dropped fields are warnings, and the privilege ladder
// uses the Rust project's numbering.
const CompatStatewright = "statewright"

// Diagnostic codes reported by Parse.
const (
	CodeSyntax       = "syntax"         // the file is not well-formed JSON/YAML
	CodeUnknownKey   = "unknown-key"    // a key the format does not define
	CodeDroppedField = "dropped-field"  // a key statewright silently ignores in this shape
	CodeDuplicateKey = "duplicate-key"  // a key (or an alias pair) given twice
	CodeTypeMismatch = "type-mismatch"  // a value of the wrong JSON type
	CodeInvalidValue = "invalid-value"  // a value out of range or not in an enum
	CodeMissingKey   = "missing-key"    // a required key is absent or null
	CodeBadShape     = "bad-transition" // a transition fits none of the five shapes
	CodeBadGuard     = "bad-guard"      // a guard mixes forms or has none
)

// Parse decodes a workflow from JSON or YAML (detected from content: a first
// non-space byte '{' means JSON). It accepts statewright's wrapper form
// {"definition": {...}, "upstream_servers": [...]} too.
//
// Warnings (unknown keys, fields statewright would drop) are returned
// alongside a usable definition; a definition that cannot be decoded yields
// a *ParseError whose diagnostics carry line:column positions. In strict
// mode the warnings are errors.
//
// Parse does not run structural validation; see Validate.
func Parse(data []byte, opts ParseOptions) (*Definition, Diagnostics, error) {
	d := &decoder{src: opts.Source, strict: opts.Strict, lenient: opts.Lenient}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dup := func(key string, pos Pos) {
		d.errorf(pos, CodeDuplicateKey, "duplicate key %q", key)
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	var root *node
	var err error
	switch {
	case len(trimmed) == 0:
		err = &syntaxError{pos: Pos{Line: 1, Col: 1}, msg: "empty document"}
	case trimmed[0] == '{':
		root, err = parseJSONNode(data, dup)
	default:
		root, err = parseYAMLNode(data, dup)
	}
	if err != nil {
		se, ok := err.(*syntaxError)
		if !ok {
			se = &syntaxError{pos: Pos{Line: 1, Col: 1}, msg: err.Error()}
		}
		d.diags = Diagnostics{{Severity: SeverityError, Code: CodeSyntax, Message: se.msg, Pos: se.pos, Source: d.src}}
		return nil, d.diags, &ParseError{Diagnostics: d.diags}
	}
	def := d.document(root)
	sortDiags(d.diags)
	if d.diags.HasErrors() {
		return nil, d.diags, &ParseError{Diagnostics: d.diags}
	}
	def.Source = opts.Source
	return def, d.diags, nil
}

// sortDiags orders diagnostics by position, keeping the order of equal ones.
func sortDiags(ds Diagnostics) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i].Pos, ds[j].Pos
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

type decoder struct {
	src     string
	strict  bool
	lenient bool
	compat  bool // the file says "compat": "statewright"
	diags   Diagnostics
}

func (d *decoder) add(sev Severity, pos Pos, code, format string, args ...any) {
	d.diags = append(d.diags, Diagnostic{Severity: sev, Code: code, Message: fmt.Sprintf(format, args...), Pos: pos, Source: d.src})
}

func (d *decoder) errorf(pos Pos, code, format string, args ...any) {
	d.add(SeverityError, pos, code, format, args...)
}

// lintf reports an unknown key or a dropped field: an error, unless the
// parse is lenient (a snapshot in flight) or the file opts into compat
// with statewright (and the caller is not strict).
func (d *decoder) lintf(pos Pos, code, format string, args ...any) {
	sev := SeverityError
	if d.lenient || (d.compat && !d.strict) {
		sev = SeverityWarning
	}
	d.add(sev, pos, code, format, args...)
}

// compatOf reports whether the object n says "compat": "statewright".
func compatOf(n *node) bool {
	if n == nil || n.kind != kObject {
		return false
	}
	m := n.get("compat")
	return m != nil && m.val.kind == kString && m.val.s == CompatStatewright
}

// handlers maps the known keys of an object to their decoders.
type handlers map[string]func(m *member)

// fields runs the handler of every key of the object n; keys without one
// are reported as unknown, with a suggestion when one is close.
func (d *decoder) fields(n *node, where string, h handlers) {
	for i := range n.keys {
		m := &n.keys[i]
		if f, ok := h[m.key]; ok {
			if f != nil {
				f(m)
			}
			continue
		}
		d.unknownKey(m, where, h)
	}
}

func (d *decoder) unknownKey(m *member, where string, h handlers) {
	known := make([]string, 0, len(h))
	for k := range h {
		known = append(known, k)
	}
	d.unknownKeyIn(m, where, known)
}

// unknownKeyIn reports an unknown key, suggesting the closest of known.
func (d *decoder) unknownKeyIn(m *member, where string, known []string) {
	if s := suggest(m.key, known); s != "" {
		d.lintf(m.keyPos, CodeUnknownKey, "unknown key %q %s (did you mean %q?)", m.key, where, s)
		return
	}
	d.lintf(m.keyPos, CodeUnknownKey, "unknown key %q %s", m.key, where)
}

// require reports every listed key that is absent or null.
func (d *decoder) require(n *node, where string, keys ...string) {
	for _, k := range keys {
		if m := n.get(k); m == nil || m.val.kind == kNull {
			d.errorf(n.pos, CodeMissingKey, "missing required key %q %s", k, where)
		}
	}
}

func (d *decoder) typeErr(m *member, where, want string) {
	d.errorf(m.val.pos, CodeTypeMismatch, "%q %s must be %s, got %s", m.key, where, want, m.val.describe())
}

// object checks that m holds an object (null counts as absent).
func (d *decoder) object(m *member, where string) bool {
	switch m.val.kind {
	case kObject:
		return true
	case kNull:
		return false
	}
	d.typeErr(m, where, "an object")
	return false
}

func (d *decoder) str(m *member, where string, fp fieldPos) string {
	switch m.val.kind {
	case kString:
		if fp != nil {
			fp[m.key] = m.val.pos
		}
		return m.val.s
	case kNull:
		return ""
	}
	d.typeErr(m, where, "a string")
	return ""
}

func (d *decoder) boolean(m *member, where string) bool {
	p := d.boolPtr(m, where)
	return p != nil && *p
}

func (d *decoder) boolPtr(m *member, where string) *bool {
	switch m.val.kind {
	case kBool:
		b := m.val.b
		return &b
	case kNull:
		return nil
	}
	d.typeErr(m, where, "a boolean")
	return nil
}

// strList decodes an array of strings; null means absent (nil), and an
// empty array is kept non-nil.
func (d *decoder) strList(m *member, where string, fp fieldPos, items bool) []string {
	switch m.val.kind {
	case kNull:
		return nil
	case kArray:
	default:
		d.typeErr(m, where, "an array of strings")
		return nil
	}
	out := make([]string, 0, len(m.val.items))
	for i, it := range m.val.items {
		if it.kind != kString {
			d.errorf(it.pos, CodeTypeMismatch, "%q %s must be an array of strings, but item %d is %s", m.key, where, i+1, it.describe())
			continue
		}
		if fp != nil && items {
			fp[m.key+"["+strconv.Itoa(len(out))+"]"] = it.pos
		}
		out = append(out, it.s)
	}
	if fp != nil {
		fp[m.key] = m.val.pos
	}
	return out
}

// unsigned decodes a non-negative integer no larger than max. Integral
// floats (5.0, 1e3) are accepted, as in JSON Schema's "integer".
func (d *decoder) unsigned(m *member, where string, max uint64) (uint64, bool) {
	n := m.val
	bad := func(why string) (uint64, bool) {
		d.errorf(n.pos, CodeInvalidValue, "%q %s must be an integer from 0 to %d, got %s (%s)", m.key, where, max, n.describe(), why)
		return 0, false
	}
	switch n.kind {
	case kNull:
		return 0, false
	case kInt:
		if n.i < 0 {
			return bad("negative")
		}
		if uint64(n.i) > max {
			return bad("too large")
		}
		return uint64(n.i), true
	case kUint:
		if n.u > max {
			return bad("too large")
		}
		return n.u, true
	case kFloat:
		if n.f != math.Trunc(n.f) {
			return bad("not a whole number")
		}
		if n.f < 0 {
			return bad("negative")
		}
		if n.f > float64(max) {
			return bad("too large")
		}
		return uint64(n.f), true
	}
	d.typeErr(m, where, "an integer")
	return 0, false
}

func (d *decoder) u32(m *member, where string, fp fieldPos) *uint32 {
	v, ok := d.unsigned(m, where, math.MaxUint32)
	if !ok {
		return nil
	}
	if fp != nil {
		fp[m.key] = m.val.pos
	}
	u := uint32(v)
	return &u
}

func (d *decoder) u64(m *member, where string) *uint64 {
	v, ok := d.unsigned(m, where, math.MaxUint64)
	if !ok {
		return nil
	}
	return &v
}

// enum decodes a string that must be one of allowed.
func (d *decoder) enum(m *member, where string, fp fieldPos, allowed ...string) string {
	s := d.str(m, where, fp)
	if m.val.kind != kString {
		return ""
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = strconv.Quote(a)
	}
	msg := fmt.Sprintf("%q %s must be one of %s, got %q", m.key, where, strings.Join(quoted, ", "), s)
	if sg := suggest(s, allowed); sg != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", sg)
	}
	d.errorf(m.val.pos, CodeInvalidValue, "%s", msg)
	return ""
}

// document decodes the top-level object, unwrapping statewright's
// {"definition": ..., "upstream_servers": ...} form.
func (d *decoder) document(root *node) *Definition {
	if root.kind != kObject {
		d.errorf(root.pos, CodeTypeMismatch, "a workflow must be an object, got %s", root.describe())
		return nil
	}
	d.compat = compatOf(root)
	if root.get("definition") != nil && root.get("states") == nil {
		if def := root.get("definition"); def != nil {
			d.compat = d.compat || compatOf(def.val)
		}
		var inner *node
		d.fields(root, "in the wrapper object", handlers{
			"definition": func(m *member) {
				if m.val.kind != kObject {
					d.typeErr(m, "in the wrapper object", "an object")
					return
				}
				inner = m.val
			},
			"upstream_servers": nil,
			"compat":           func(m *member) { d.enum(m, "in the wrapper object", nil, CompatStatewright) },
		})
		if inner == nil {
			return nil
		}
		root = inner
	}
	return d.definition(root)
}

func (d *decoder) definition(n *node) *Definition {
	const where = "at top level"
	def := &Definition{Context: map[string]any{}, States: map[string]*State{}, Pos: n.pos, fp: fieldPos{}}
	d.require(n, where, "id", "initial", "states")
	d.fields(n, where, handlers{
		"$schema":     func(m *member) { d.str(m, where, nil) },
		"description": func(m *member) { d.str(m, where, nil) },
		"id":          func(m *member) { def.ID = d.str(m, where, def.fp) },
		"initial":     func(m *member) { def.Initial = d.str(m, where, def.fp) },
		"context": func(m *member) {
			if d.object(m, where) {
				def.Context = m.val.value().(map[string]any)
			}
		},
		"states": func(m *member) {
			def.fp["states"] = m.val.pos
			if !d.object(m, where) {
				return
			}
			for i := range m.val.keys {
				sm := &m.val.keys[i]
				if sm.val.kind != kObject {
					d.errorf(sm.val.pos, CodeTypeMismatch, "state %q must be an object, got %s", sm.key, sm.val.describe())
					continue
				}
				def.States[sm.key] = d.state(sm.key, sm.val)
			}
		},
		"guards": func(m *member) {
			if !d.object(m, where) {
				return
			}
			def.Guards = map[string]*Guard{}
			for i := range m.val.keys {
				gm := &m.val.keys[i]
				gw := fmt.Sprintf("in guard %q", gm.key)
				if gm.val.kind != kObject {
					d.errorf(gm.val.pos, CodeTypeMismatch, "guard %q must be an object, got %s", gm.key, gm.val.describe())
					continue
				}
				if g := d.guard(gm.val, gw, 0); g != nil {
					def.Guards[gm.key] = g
				}
			}
		},
		"meta": func(m *member) {
			if d.object(m, where) {
				def.Meta = d.meta(m.val)
			}
		},
		"interrupts": func(m *member) {
			if !d.object(m, where) {
				return
			}
			def.Interrupts = map[string]*Interrupt{}
			for i := range m.val.keys {
				im := &m.val.keys[i]
				if im.val.kind != kObject {
					d.errorf(im.val.pos, CodeTypeMismatch, "interrupt %q must be an object, got %s", im.key, im.val.describe())
					continue
				}
				def.Interrupts[im.key] = d.interrupt(im.key, im.val)
			}
		},
		"secrets": func(m *member) {
			if !d.object(m, where) {
				return
			}
			sec := &Secrets{Pos: m.val.pos}
			const sw = "in secrets"
			d.fields(m.val, sw, handlers{
				"defaults": func(sm *member) { sec.Defaults = d.boolPtr(sm, sw) },
				"paths":    func(sm *member) { sec.Paths = d.strList(sm, sw, nil, true) },
			})
			def.Secrets = sec
		},
		"compat": func(m *member) {
			def.Compat = d.enum(m, where, def.fp, CompatStatewright)
		},
		"tool_privileges": func(m *member) { def.ToolPrivileges = d.toolPrivileges(m, where) },
		"permissions": func(m *member) {
			def.fp["permissions"] = m.val.pos
			if d.object(m, where) {
				def.Permissions = d.permissions(m.val, "in the workflow's permissions")
			}
		},
		"allowed_domains":     func(m *member) { def.AllowedDomains = d.strList(m, where, def.fp, true) },
		"mcp_read_only_hints": func(m *member) { def.MCPReadOnlyHints = d.boolPtr(m, where) },
		"examples": func(m *member) {
			if d.object(m, where) {
				def.Examples = d.examples(m.val, "in the workflow's examples")
			}
		},
		"trust_event_data": func(m *member) {
			def.TrustEventData = d.boolean(m, where)
			def.TrustEventDataSet = m.val.kind == kBool
		},
	})
	if def.Compat == "" && d.compat {
		def.Compat = CompatStatewright // set on the wrapper object
	}
	return def
}

// toolPrivileges decodes "tool_privileges": a map from tool name to the
// rung of the privilege ladder it stands on ("read", "write", "execute",
// "git", "external"), for tools no alias table rates.
func (d *decoder) toolPrivileges(m *member, where string) map[string]string {
	if !d.object(m, where) {
		return nil
	}
	out := map[string]string{}
	for i := range m.val.keys {
		e := &m.val.keys[i]
		if r := d.enum(e, "in tool_privileges", nil, LadderRungs...); r != "" {
			out[e.key] = r
		}
	}
	return out
}

// stateKeys are the keys a state object may have.
var stateKeys = []string{
	"on", "type", "allowed_tools", "disallowed_tools", "instructions", "max_iterations", "safe_next",
	"max_edit_lines", "allowed_commands", "allowed_commands_tool", "max_files_per_state",
	"context_budget_bytes", "blocked_env", "deny_env", "env_overrides", "env", "model",
	"thinking_level", "direct_execution", "model_ladder", "allowed_paths", "denied_paths", "sandbox",
	"permissions", "allowed_domains", "mcp_read_only_hints", "examples",
}

func (d *decoder) state(name string, n *node) *State {
	where := fmt.Sprintf("in state %q", name)
	s := &State{Name: name, Pos: n.pos, fp: fieldPos{}}
	alias := func(a, b string) {
		if n.get(a) != nil && n.get(b) != nil {
			m := n.get(b)
			if n.get(a).keyPos.Line > m.keyPos.Line || (n.get(a).keyPos.Line == m.keyPos.Line && n.get(a).keyPos.Col > m.keyPos.Col) {
				m = n.get(a)
			}
			d.errorf(m.keyPos, CodeDuplicateKey, "both %q and its alias %q are set %s", a, b, where)
		}
	}
	alias("blocked_env", "deny_env")
	alias("env_overrides", "env")
	env := func(m *member) {
		if !d.object(m, where) {
			return
		}
		s.EnvOverrides = map[string]string{}
		for _, e := range m.val.keys {
			if e.val.kind != kString {
				d.errorf(e.val.pos, CodeTypeMismatch, "%q %s must map names to strings, but %q is %s", m.key, where, e.key, e.val.describe())
				continue
			}
			s.EnvOverrides[e.key] = e.val.s
		}
	}
	for i := range n.keys {
		m := &n.keys[i]
		switch m.key {
		case "on":
			if !d.object(m, where) {
				continue
			}
			s.On = make(map[string]*Transition, len(m.val.keys))
			for i := range m.val.keys {
				em := &m.val.keys[i]
				if t := d.transition(name, em); t != nil {
					s.On[em.key] = t
				}
			}
		case "type":
			s.Type = StateType(d.enum(m, where, s.fp, "final", "parallel"))
		case "allowed_tools":
			s.AllowedTools = d.strList(m, where, s.fp, true)
		case "disallowed_tools":
			s.DisallowedTools = d.strList(m, where, s.fp, true)
		case "instructions":
			s.Instructions = d.str(m, where, nil)
		case "max_iterations":
			s.MaxIterations = d.u32(m, where, s.fp)
		case "safe_next":
			s.SafeNext = d.str(m, where, s.fp)
		case "max_edit_lines":
			s.MaxEditLines = d.u32(m, where, s.fp)
		case "allowed_commands":
			s.AllowedCommands = d.strList(m, where, s.fp, true)
		case "allowed_commands_tool":
			s.AllowedCommandsTool = d.str(m, where, nil)
		case "max_files_per_state":
			s.MaxFilesPerState = d.u32(m, where, s.fp)
		case "context_budget_bytes":
			s.ContextBudgetBytes = d.u64(m, where)
		case "blocked_env", "deny_env":
			s.BlockedEnv = d.strList(m, where, s.fp, false)
			s.fp["blocked_env"] = m.val.pos
		case "env_overrides", "env":
			env(m)
		case "model":
			s.Model = d.str(m, where, nil)
		case "thinking_level":
			s.ThinkingLevel = d.str(m, where, nil)
		case "direct_execution":
			s.DirectExecution = d.boolean(m, where)
		case "model_ladder":
			switch m.val.kind {
			case kNull:
			case kArray:
				s.ModelLadder = m.val.value().([]any)
			default:
				d.typeErr(m, where, "an array")
			}
		case "allowed_paths":
			s.AllowedPaths = d.strList(m, where, s.fp, true)
		case "denied_paths":
			s.DeniedPaths = d.strList(m, where, s.fp, true)
		case "sandbox":
			s.fp["sandbox"] = m.val.pos
			if m.val.kind == kNull {
				continue
			}
			if d.object(m, where) {
				s.Sandbox = d.sandbox(name, m.val)
			}
		case "permissions":
			s.fp["permissions"] = m.val.pos
			if d.object(m, where) {
				s.Permissions = d.permissions(m.val, fmt.Sprintf("in the permissions of state %q", name))
			}
		case "mcp_read_only_hints":
			s.MCPReadOnlyHints = d.boolPtr(m, where)
		case "allowed_domains":
			s.AllowedDomains = d.strList(m, where, s.fp, true)
		case "examples":
			if d.object(m, where) {
				s.Examples = d.examples(m.val, fmt.Sprintf("in the examples of state %q", name))
			}
		default:
			d.unknownKeyIn(m, where, stateKeys)
		}
	}
	return s
}

// transition decodes the value under one event, choosing its shape the way
// statewright does (string, object with target, array, object with fork,
// object with invoke) but reporting the fields statewright would drop.
func (d *decoder) transition(state string, em *member) *Transition {
	n := em.val
	where := fmt.Sprintf("in transition %q of state %q", em.key, state)
	t := &Transition{Pos: n.pos, fp: fieldPos{}}
	dropped := func(reason string) func(m *member) {
		return func(m *member) {
			d.lintf(m.keyPos, CodeDroppedField, "%q is ignored %s: %s", m.key, where, reason)
		}
	}
	switch n.kind {
	case kString:
		t.Kind, t.Target = TransitionSimple, n.s
		t.fp["target"] = n.pos
		return t
	case kArray:
		t.Kind = TransitionGuarded
		t.Branches = []*Branch{}
		for i, it := range n.items {
			bw := fmt.Sprintf("in branch %d of transition %q of state %q", i+1, em.key, state)
			if it.kind != kObject {
				d.errorf(it.pos, CodeTypeMismatch, "branch %d of transition %q of state %q must be an object, got %s", i+1, em.key, state, it.describe())
				continue
			}
			b := &Branch{Pos: it.pos, fp: fieldPos{}}
			d.require(it, bw, "target")
			dropBranch := func(m *member) {
				d.lintf(m.keyPos, CodeDroppedField, "%q is ignored %s: guarded branches cannot require approval", m.key, bw)
			}
			d.fields(it, bw, handlers{
				"target":            func(m *member) { b.Target = d.str(m, bw, b.fp) },
				"guard":             func(m *member) { b.Guard = d.str(m, bw, b.fp) },
				"guards":            func(m *member) { b.Guards = d.strList(m, bw, b.fp, true) },
				"requires_approval": dropBranch,
				"approval_message":  dropBranch,
			})
			t.Branches = append(t.Branches, b)
		}
		return t
	case kObject:
	default:
		d.errorf(n.pos, CodeBadShape, "transition %q of state %q must be a state name, an object with \"target\", \"fork\" or \"invoke\", or an array of branches; got %s", em.key, state, n.describe())
		return nil
	}
	switch {
	case n.get("target") != nil:
		t.Kind = TransitionFull
		d.require(n, where, "target")
		plain := dropped(`a transition with "target" is a plain transition`)
		d.fields(n, where, handlers{
			"target":            func(m *member) { t.Target = d.str(m, where, t.fp) },
			"guard":             func(m *member) { t.Guard = d.str(m, where, t.fp) },
			"guards":            func(m *member) { t.Guards = d.strList(m, where, t.fp, true) },
			"requires_approval": func(m *member) { t.RequiresApproval = d.boolean(m, where) },
			"approval_message":  func(m *member) { t.ApprovalMessage = d.str(m, where, nil) },
			"fork":              plain,
			"invoke":            plain,
			"on_complete":       plain,
			"on_fail":           plain,
			"input":             plain,
		})
	case n.get("fork") != nil:
		t.Kind = TransitionFork
		t.Fork = &Fork{Join: JoinAll, Branches: map[string]*ForkBranch{}, fp: fieldPos{}}
		d.require(n, where, "fork")
		noGuard := dropped("fork and invoke transitions cannot be guarded or approval-gated")
		inFork := dropped(`a transition with "fork" is a fork; put "on_complete" and "on_fail" inside "fork"`)
		d.fields(n, where, handlers{
			"fork": func(m *member) {
				if d.object(m, where) {
					d.fork(t.Fork, m.val, em.key, state)
				}
			},
			"guard":             noGuard,
			"guards":            noGuard,
			"requires_approval": noGuard,
			"approval_message":  noGuard,
			"invoke":            inFork,
			"on_complete":       inFork,
			"on_fail":           inFork,
			"input":             inFork,
		})
	case n.get("invoke") != nil:
		t.Kind = TransitionInvoke
		inv := &Invoke{Pos: n.pos, fp: fieldPos{}}
		t.Invoke = inv
		d.require(n, where, "invoke", "on_complete")
		noGuard := dropped("fork and invoke transitions cannot be guarded or approval-gated")
		d.fields(n, where, handlers{
			"invoke":      func(m *member) { inv.Machine = d.str(m, where, inv.fp) },
			"on_complete": func(m *member) { inv.OnComplete = d.str(m, where, inv.fp) },
			"on_fail":     func(m *member) { inv.OnFail = d.str(m, where, inv.fp) },
			"input": func(m *member) {
				if m.val.kind != kNull {
					inv.Input = m.val.value()
				}
			},
			"guard":             noGuard,
			"guards":            noGuard,
			"requires_approval": noGuard,
			"approval_message":  noGuard,
		})
	default:
		d.errorf(n.pos, CodeBadShape, "transition %q of state %q has none of \"target\", \"fork\" or \"invoke\"", em.key, state)
		return nil
	}
	return t
}

func (d *decoder) fork(f *Fork, n *node, event, state string) {
	where := fmt.Sprintf("in the fork of transition %q of state %q", event, state)
	f.Pos = n.pos
	d.require(n, where, "branches", "on_complete")
	d.fields(n, where, handlers{
		"branches": func(m *member) {
			if !d.object(m, where) {
				return
			}
			for i := range m.val.keys {
				bm := &m.val.keys[i]
				bw := fmt.Sprintf("in fork branch %q of transition %q of state %q", bm.key, event, state)
				if bm.val.kind != kObject {
					d.errorf(bm.val.pos, CodeTypeMismatch, "fork branch %q of transition %q of state %q must be an object, got %s", bm.key, event, state, bm.val.describe())
					continue
				}
				b := &ForkBranch{Pos: bm.val.pos, fp: fieldPos{}}
				d.require(bm.val, bw, "initial", "terminal")
				d.fields(bm.val, bw, handlers{
					"initial":  func(m *member) { b.Initial = d.str(m, bw, b.fp) },
					"terminal": func(m *member) { b.Terminal = d.str(m, bw, b.fp) },
				})
				f.Branches[bm.key] = b
			}
		},
		"join": func(m *member) {
			if j := d.enum(m, where, nil, "all", "any"); j != "" {
				f.Join = JoinStrategy(j)
			}
		},
		"on_complete": func(m *member) { f.OnComplete = d.str(m, where, f.fp) },
		"on_fail":     func(m *member) { f.OnFail = d.str(m, where, f.fp) },
	})
}

var guardOps = []string{"eq", "neq", "gt", "gte", "lt", "lte", "exists", "not_exists", "in", "contains", "matches"}

// guard decodes a guard object: a comparison or one combinator.
func (d *decoder) guard(n *node, where string, depth int) *Guard {
	g := &Guard{Pos: n.pos, fp: fieldPos{}}
	var forms []string
	if n.get("field") != nil || n.get("op") != nil || n.get("value") != nil {
		forms = append(forms, "comparison")
	}
	for _, k := range []string{"all", "any", "not"} {
		if n.get(k) != nil {
			forms = append(forms, strconv.Quote(k))
		}
	}
	switch {
	case len(forms) == 0:
		d.errorf(n.pos, CodeBadGuard, "%s needs \"field\" and \"op\", or one of \"all\", \"any\", \"not\"", strings.TrimPrefix(where, "in "))
	case len(forms) > 1:
		d.errorf(n.pos, CodeBadGuard, "%s mixes %s; use exactly one form", strings.TrimPrefix(where, "in "), strings.Join(forms, " and "))
	case forms[0] == "comparison":
		d.require(n, where, "field", "op")
	}
	list := func(m *member) []*Guard {
		if m.val.kind != kArray {
			d.typeErr(m, where, "an array of guards or guard names")
			return nil
		}
		out := []*Guard{}
		for _, it := range m.val.items {
			if sub := d.guardOrRef(it, where, depth+1); sub != nil {
				out = append(out, sub)
			}
		}
		return out
	}
	d.fields(n, where, handlers{
		"field": func(m *member) { g.Field = d.str(m, where, g.fp) },
		"op": func(m *member) {
			g.Op = GuardOp(d.enum(m, where, g.fp, guardOps...))
		},
		"value": func(m *member) {
			g.Value = m.val.value()
			g.fp["value"] = m.val.pos
		},
		"all": func(m *member) { g.All = list(m) },
		"any": func(m *member) { g.Any = list(m) },
		"not": func(m *member) { g.Not = d.guardOrRef(m.val, where, depth+1) },
	})
	return g
}

// guardOrRef decodes a combinator operand: a guard object or a guard name.
func (d *decoder) guardOrRef(n *node, where string, depth int) *Guard {
	if depth > maxDepth {
		d.errorf(n.pos, CodeBadGuard, "%s nests too deeply", strings.TrimPrefix(where, "in "))
		return nil
	}
	switch n.kind {
	case kString:
		return &Guard{Ref: n.s, Pos: n.pos}
	case kObject:
		return d.guard(n, where, depth)
	}
	d.errorf(n.pos, CodeTypeMismatch, "an operand of %s must be a guard object or a guard name, got %s", strings.TrimPrefix(where, "in "), n.describe())
	return nil
}

func (d *decoder) interrupt(name string, n *node) *Interrupt {
	where := fmt.Sprintf("in interrupt %q", name)
	in := &Interrupt{Pos: n.pos, fp: fieldPos{}}
	d.require(n, where, "trigger", "target")
	d.fields(n, where, handlers{
		"trigger": func(m *member) {
			if !d.object(m, where) {
				return
			}
			tw := fmt.Sprintf("in the trigger of interrupt %q", name)
			d.require(m.val, tw, "file_pattern")
			d.fields(m.val, tw, handlers{
				"file_pattern": func(fm *member) { in.Trigger.FilePattern = d.str(fm, tw, in.fp) },
			})
		},
		"target": func(m *member) { in.Target = d.str(m, where, in.fp) },
		"priority": func(m *member) {
			v := m.val
			switch {
			case v.kind == kNull:
			case v.kind == kInt && v.i >= math.MinInt32 && v.i <= math.MaxInt32:
				in.Priority = int(v.i)
			case v.kind == kFloat && v.f == math.Trunc(v.f) && v.f >= math.MinInt32 && v.f <= math.MaxInt32:
				in.Priority = int(v.f)
			default:
				d.errorf(v.pos, CodeInvalidValue, "%q %s must be an integer from %d to %d, got %s", m.key, where, math.MinInt32, math.MaxInt32, v.describe())
			}
		},
	})
	return in
}

func (d *decoder) meta(n *node) *Meta {
	const where = "in meta"
	mt := &Meta{Pos: n.pos, fp: fieldPos{}}
	h := handlers{
		"task_type":       func(m *member) { mt.TaskType = d.str(m, where, nil) },
		"estimated_steps": func(m *member) { mt.EstimatedSteps = d.u32(m, where, nil) },
		"danger_level": func(m *member) {
			mt.DangerLevel = DangerLevel(d.enum(m, where, mt.fp, "safe", "moderate", "dangerous"))
		},
		"requires_human_approval": func(m *member) { mt.RequiresHumanApproval = d.boolPtr(m, where) },
		"capture_output":          func(m *member) { mt.CaptureOutput = d.boolean(m, where) },
		"default_model":           func(m *member) { mt.DefaultModel = d.str(m, where, nil) },
		"workspace": func(m *member) {
			if d.object(m, where) {
				mt.Workspace = d.workspace(m.val)
			}
		},
		"preview": func(m *member) {
			if d.object(m, where) {
				mt.Preview = d.preview(m.val)
			}
		},
		"promotion": func(m *member) {
			if d.object(m, where) {
				mt.Promotion = d.promotion(m.val)
			}
		},
	}
	for i := range n.keys {
		m := &n.keys[i]
		if f, ok := h[m.key]; ok {
			f(m)
			continue
		}
		if mt.Extra == nil {
			mt.Extra = map[string]any{}
		}
		mt.Extra[m.key] = m.val.value()
	}
	return mt
}

func (d *decoder) version(m *member, where string, fp fieldPos) uint32 {
	if p := d.u32(m, where, fp); p != nil {
		return *p
	}
	return 0
}

func (d *decoder) sandbox(state string, n *node) *SandboxPolicy {
	where := fmt.Sprintf("in the sandbox block of state %q", state)
	p := &SandboxPolicy{Pos: n.pos, fp: fieldPos{}}
	d.fields(n, where, handlers{
		"writable": func(m *member) { p.Writable = d.strList(m, where, p.fp, true) },
		"hidden":   func(m *member) { p.Hidden = d.strList(m, where, p.fp, true) },
		"exec": func(m *member) {
			p.Exec = d.boolean(m, where)
			p.fp["exec"] = m.val.pos
		},
	})
	return p
}

// permissions decodes a permissions object: allow, ask and deny lists of
// rule strings (their syntax is checked when the law is compiled).
func (d *decoder) permissions(n *node, where string) *Permissions {
	p := &Permissions{Pos: n.pos, fp: fieldPos{}}
	d.fields(n, where, handlers{
		"allow": func(m *member) { p.Allow = d.strList(m, where, p.fp, true) },
		"ask":   func(m *member) { p.Ask = d.strList(m, where, p.fp, true) },
		"deny":  func(m *member) { p.Deny = d.strList(m, where, p.fp, true) },
	})
	return p
}

// examples decodes an examples object: allow, ask and deny lists of tool
// calls, each a rule-syntax string or an object {tool, input, state, harness}.
func (d *decoder) examples(n *node, where string) *Examples {
	ex := &Examples{Pos: n.pos}
	list := func(m *member) []*Example {
		switch m.val.kind {
		case kNull:
			return nil
		case kArray:
		default:
			d.typeErr(m, where, "an array of tool calls")
			return nil
		}
		out := []*Example{}
		for i, it := range m.val.items {
			iw := fmt.Sprintf("in %s example %d of %s", m.key, i+1, strings.TrimPrefix(where, "in "))
			switch it.kind {
			case kString:
				if strings.TrimSpace(it.s) == "" {
					d.errorf(it.pos, CodeInvalidValue, "an example must name a tool call, got an empty string (%s)", strings.TrimPrefix(iw, "in "))
					continue
				}
				out = append(out, &Example{Text: it.s, Pos: it.pos})
			case kObject:
				e := &Example{Pos: it.pos}
				d.require(it, iw, "tool")
				d.fields(it, iw, handlers{
					"tool":    func(em *member) { e.Tool = d.str(em, iw, nil) },
					"state":   func(em *member) { e.State = d.str(em, iw, nil) },
					"harness": func(em *member) { e.Harness = d.str(em, iw, nil) },
					"input": func(em *member) {
						if d.object(em, iw) {
							e.Input = em.val.value().(map[string]any)
						}
					},
				})
				out = append(out, e)
			default:
				d.errorf(it.pos, CodeTypeMismatch, "%q %s must hold tool calls (\"Bash(git push)\" or {tool, input}), but item %d is %s", m.key, where, i+1, it.describe())
			}
		}
		return out
	}
	d.fields(n, where, handlers{
		"allow": func(m *member) { ex.Allow = list(m) },
		"ask":   func(m *member) { ex.Ask = list(m) },
		"deny":  func(m *member) { ex.Deny = list(m) },
	})
	return ex
}

func (d *decoder) workspace(n *node) *WorkspacePolicy {
	const where = "in meta.workspace"
	p := &WorkspacePolicy{Pos: n.pos, fp: fieldPos{}}
	d.require(n, where, "version", "mode", "cleanup")
	d.fields(n, where, handlers{
		"version":  func(m *member) { p.Version = d.version(m, where, p.fp) },
		"mode":     func(m *member) { p.Mode = d.enum(m, where, nil, "git_worktree") },
		"required": func(m *member) { p.Required = d.boolean(m, where) },
		"cleanup":  func(m *member) { p.Cleanup = d.enum(m, where, nil, "never", "after_promoted") },
	})
	return p
}

func (d *decoder) preview(n *node) *PreviewPolicy {
	const where = "in meta.preview"
	p := &PreviewPolicy{Pos: n.pos, fp: fieldPos{}}
	d.require(n, where, "version", "mode", "prepare_state", "deploy_state", "validate_state")
	d.fields(n, where, handlers{
		"version":        func(m *member) { p.Version = d.version(m, where, p.fp) },
		"mode":           func(m *member) { p.Mode = d.enum(m, where, nil, "taskfile") },
		"required":       func(m *member) { p.Required = d.boolean(m, where) },
		"prepare_state":  func(m *member) { p.PrepareState = d.str(m, where, p.fp) },
		"deploy_state":   func(m *member) { p.DeployState = d.str(m, where, p.fp) },
		"validate_state": func(m *member) { p.ValidateState = d.str(m, where, p.fp) },
	})
	return p
}

func (d *decoder) promotion(n *node) *PromotionPolicy {
	const where = "in meta.promotion"
	p := &PromotionPolicy{Pos: n.pos, fp: fieldPos{}}
	d.require(n, where, "version", "mode", "promote_state")
	d.fields(n, where, handlers{
		"version":           func(m *member) { p.Version = d.version(m, where, p.fp) },
		"mode":              func(m *member) { p.Mode = d.enum(m, where, nil, "manual", "squash") },
		"required":          func(m *member) { p.Required = d.boolean(m, where) },
		"promote_state":     func(m *member) { p.PromoteState = d.str(m, where, p.fp) },
		"teardown_on_final": func(m *member) { p.TeardownOnFinal = d.boolean(m, where) },
	})
	return p
}

// Suggest returns the candidate closest to s (case-insensitive edit
// distance, transpositions counting one) when it is close enough to be a
// likely typo of it, or "".
func Suggest(s string, candidates []string) string { return suggest(s, candidates) }

// suggest returns the candidate closest to s when it is close enough to be
// a likely typo, or "".
func suggest(s string, candidates []string) string {
	candidates = append([]string(nil), candidates...)
	sort.Strings(candidates)
	best, bestDist := "", -1
	for _, c := range candidates {
		dist := editDistance(strings.ToLower(s), strings.ToLower(c))
		if bestDist < 0 || dist < bestDist {
			best, bestDist = c, dist
		}
	}
	limit := len(s) / 3
	if limit < 1 {
		limit = 1
	}
	if limit > 3 {
		limit = 3
	}
	if bestDist >= 0 && bestDist <= limit {
		return best
	}
	return ""
}

// editDistance is the optimal-string-alignment distance between a and b
// (Levenshtein plus adjacent transpositions, so "gaurd" is one edit from
// "guard"), in bytes.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 1 << 20
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := 0; j <= len(b); j++ {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
