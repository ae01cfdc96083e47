package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Object is a JSON object that keeps its keys' order and its values'
// bytes, so that init can edit a user's settings file without reordering
// or reformatting what it does not own.
type Object struct {
	keys []string
	vals map[string]json.RawMessage
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]json.RawMessage{}} }

// ParseObject parses data as one JSON object. Empty (or blank) data is an
// empty object. Duplicate keys are refused: which one a harness honours is
// not ours to guess.
func ParseObject(data []byte) (*Object, error) {
	o := NewObject()
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := o.vals[k]; dup {
			return nil, fmt.Errorf("duplicate key %q", k)
		}
		o.keys = append(o.keys, k)
		o.vals[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON object")
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("trailing data after the JSON object")
	}
	return o, nil
}

// Get returns k's value.
func (o *Object) Get(k string) (json.RawMessage, bool) { v, ok := o.vals[k]; return v, ok }

// Set sets k, keeping its position or appending it.
func (o *Object) Set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// SetFirst sets k and moves it to the front (a key a format documents
// first, such as Cursor's "version").
func (o *Object) SetFirst(k string, v json.RawMessage) {
	o.Del(k)
	o.keys = append([]string{k}, o.keys...)
	o.vals[k] = v
}

// Put sets k to v marshalled without HTML escaping.
func (o *Object) Put(k string, v any) error {
	b, err := Marshal(v)
	if err != nil {
		return err
	}
	o.Set(k, b)
	return nil
}

// Del removes k.
func (o *Object) Del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// Keys returns the keys in order.
func (o *Object) Keys() []string { return append([]string(nil), o.keys...) }

// Empty reports whether the object has no keys.
func (o *Object) Empty() bool { return len(o.keys) == 0 }

// Object returns the object under k (empty when k is absent).
func (o *Object) Object(k string) (*Object, error) {
	raw, ok := o.Get(k)
	if !ok {
		return NewObject(), nil
	}
	c, err := ParseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", k, err)
	}
	return c, nil
}

// PutObject sets k to c, or removes k when c is empty.
func (o *Object) PutObject(k string, c *Object) error {
	if c.Empty() {
		o.Del(k)
		return nil
	}
	b, err := c.MarshalJSON()
	if err != nil {
		return err
	}
	o.Set(k, b)
	return nil
}

// MarshalJSON writes the object compactly in key order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		var c bytes.Buffer
		if err := json.Compact(&c, o.vals[k]); err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		b.Write(c.Bytes())
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Render renders o indented by two spaces with a final newline, the way
// the harnesses write their own settings, or nil (remove the file) when o
// is empty.
func (o *Object) Render() ([]byte, error) {
	if o.Empty() {
		return nil, nil
	}
	raw, err := Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// Marshal is json.Marshal without HTML escaping (hook commands hold '&'
// and '>').
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// lineDiff renders a unified-style line diff of a and b (no hunks: every
// line, marked " ", "-" or "+"), for --dry-run. Files are small.
func lineDiff(a, b string) string {
	x, y := splitKeep(a), splitKeep(b)
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			out.WriteString("  " + x[i] + "\n")
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+ " + y[j] + "\n")
			j++
		default:
			out.WriteString("- " + x[i] + "\n")
			i++
		}
	}
	return out.String()
}

func splitKeep(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// PutServer sets o[key][name] to v, where the object under key holds a
// harness's MCP servers by name. A server of that name that ours does not
// recognise as statewright's is refused, never overwritten.
func (o *Object) PutServer(key, name string, v any, ours func(json.RawMessage) bool) error {
	entries, err := o.Object(key)
	if err != nil {
		return err
	}
	if raw, ok := entries.Get(name); ok && !ours(raw) {
		return fmt.Errorf("an MCP server named %q exists and does not run statewright; rename or remove it first", name)
	}
	if err := entries.Put(name, v); err != nil {
		return err
	}
	return o.PutObject(key, entries)
}

// DeleteServer removes o[key][name] when ours recognises it as
// statewright's, and the object under key when that leaves it empty. It
// reports whether it removed the server.
func (o *Object) DeleteServer(key, name string, ours func(json.RawMessage) bool) (bool, error) {
	entries, err := o.Object(key)
	if err != nil {
		return false, err
	}
	raw, ok := entries.Get(name)
	if !ok || !ours(raw) {
		return false, nil
	}
	entries.Del(name)
	return true, o.PutObject(key, entries)
}
