package workflow

import (
	"encoding/json"
	"fmt"
)

// fieldPos records where individual fields of a parsed object sit, keyed by
// the field name ("target", "guards[1]", ...). It lets validation point at
// the offending value rather than at the enclosing object.
type fieldPos map[string]Pos

// at returns the position recorded for key, or fallback.
func (f fieldPos) at(key string, fallback Pos) Pos {
	if p, ok := f[key]; ok {
		return p
	}
	return fallback
}

// MarshalJSON encodes a transition in the shape its Kind names, so that an
// encoded definition parses back to the same transitions.
func (t *Transition) MarshalJSON() ([]byte, error) {
	switch t.Kind {
	case TransitionSimple:
		return json.Marshal(t.Target)
	case TransitionFull:
		type full struct {
			Target           string   `json:"target"`
			Guard            string   `json:"guard,omitempty"`
			Guards           []string `json:"guards,omitempty"`
			RequiresApproval bool     `json:"requires_approval,omitempty"`
			ApprovalMessage  string   `json:"approval_message,omitempty"`
		}
		return json.Marshal(full{t.Target, t.Guard, t.Guards, t.RequiresApproval, t.ApprovalMessage})
	case TransitionGuarded:
		branches := t.Branches
		if branches == nil {
			branches = []*Branch{}
		}
		return json.Marshal(branches)
	case TransitionFork:
		if t.Fork == nil {
			return nil, fmt.Errorf("workflow: fork transition without fork")
		}
		return json.Marshal(struct {
			Fork *Fork `json:"fork"`
		}{t.Fork})
	case TransitionInvoke:
		if t.Invoke == nil {
			return nil, fmt.Errorf("workflow: invoke transition without invoke")
		}
		return json.Marshal(t.Invoke)
	default:
		return nil, fmt.Errorf("workflow: unknown transition kind %d", t.Kind)
	}
}

// MarshalJSON encodes a guard; a reference to a named guard (Ref) encodes as
// its name.
func (g *Guard) MarshalJSON() ([]byte, error) {
	if g.Ref != "" {
		return json.Marshal(g.Ref)
	}
	type plain struct {
		Field string   `json:"field,omitempty"`
		Op    GuardOp  `json:"op,omitempty"`
		Value any      `json:"value,omitempty"`
		All   []*Guard `json:"all,omitempty"`
		Any   []*Guard `json:"any,omitempty"`
		Not   *Guard   `json:"not,omitempty"`
	}
	p := plain{Field: g.Field, Op: g.Op, Value: g.Value, All: g.All, Any: g.Any, Not: g.Not}
	if g.Op != "" && g.All == nil && g.Any == nil && g.Not == nil {
		// A comparison: field is required, even when empty.
		return json.Marshal(struct {
			Field string  `json:"field"`
			Op    GuardOp `json:"op"`
			Value any     `json:"value,omitempty"`
		}{g.Field, g.Op, g.Value})
	}
	if g.Op == "" {
		// Combinators: keep an empty all/any explicit so it parses back.
		switch {
		case g.All != nil:
			return json.Marshal(struct {
				All []*Guard `json:"all"`
			}{g.All})
		case g.Any != nil:
			return json.Marshal(struct {
				Any []*Guard `json:"any"`
			}{g.Any})
		}
	}
	return json.Marshal(p)
}

// MarshalJSON encodes meta with the keys of Extra flattened next to the
// known fields, as statewright does.
func (m *Meta) MarshalJSON() ([]byte, error) {
	type known Meta // drops the methods, keeps the tags
	b, err := json.Marshal((*known)(m))
	if err != nil {
		return nil, err
	}
	if len(m.Extra) == 0 {
		return b, nil
	}
	out := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	for k, v := range m.Extra {
		if _, ok := out[k]; ok {
			continue // a known field wins
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("workflow: meta key %q: %w", k, err)
		}
		out[k] = raw
	}
	return json.Marshal(out)
}

// MarshalJSON encodes a definition; "trust_event_data" is written whenever
// the source set it, even to false, so that a round trip keeps the file's
// declaration of statewright-go semantics.
func (d *Definition) MarshalJSON() ([]byte, error) {
	type plain Definition // drops the methods, keeps the tags
	out := struct {
		*plain
		TrustEventData *bool `json:"trust_event_data,omitempty"`
	}{plain: (*plain)(d)}
	if d.TrustEventData || d.TrustEventDataSet {
		b := d.TrustEventData
		out.TrustEventData = &b
	}
	return json.Marshal(out)
}
