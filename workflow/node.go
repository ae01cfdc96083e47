package workflow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// maxDepth bounds the nesting of a workflow document. Real workflows nest
// fewer than ten levels; the limit keeps hostile input from exhausting the
// stack.
const maxDepth = 200

// maxNodes bounds the number of values a document may expand to (YAML
// aliases can multiply a small file into a huge tree).
const maxNodes = 200_000

// nodeKind is the JSON type of a node.
type nodeKind int

const (
	kNull nodeKind = iota
	kBool
	kString
	kInt   // integer literal that fits int64
	kUint  // integer literal above math.MaxInt64 that fits uint64
	kFloat // any other number
	kArray
	kObject
)

// String names the JSON type, for messages.
func (k nodeKind) String() string {
	switch k {
	case kNull:
		return "null"
	case kBool:
		return "boolean"
	case kString:
		return "string"
	case kInt, kUint:
		return "integer"
	case kFloat:
		return "number"
	case kArray:
		return "array"
	default:
		return "object"
	}
}

// node is a positioned JSON value, built from either JSON or YAML source.
type node struct {
	kind  nodeKind
	pos   Pos
	b     bool
	s     string
	i     int64
	u     uint64
	f     float64
	items []*node
	keys  []member
}

// member is one key of an object node.
type member struct {
	key    string
	keyPos Pos
	val    *node
}

// get returns the member named key, or nil.
func (n *node) get(key string) *member {
	for i := range n.keys {
		if n.keys[i].key == key {
			return &n.keys[i]
		}
	}
	return nil
}

// value converts n to the plain Go value documented on Guard.Value.
func (n *node) value() any {
	switch n.kind {
	case kNull:
		return nil
	case kBool:
		return n.b
	case kString:
		return n.s
	case kInt:
		return n.i
	case kUint:
		return float64(n.u)
	case kFloat:
		return n.f
	case kArray:
		out := make([]any, len(n.items))
		for i, it := range n.items {
			out[i] = it.value()
		}
		return out
	default:
		out := make(map[string]any, len(n.keys))
		for _, m := range n.keys {
			out[m.key] = m.val.value()
		}
		return out
	}
}

// describe renders a short description of n for error messages.
func (n *node) describe() string {
	switch n.kind {
	case kString:
		s := n.s
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return fmt.Sprintf("string %q", s)
	case kInt:
		return fmt.Sprintf("integer %d", n.i)
	case kUint:
		return fmt.Sprintf("integer %d", n.u)
	case kFloat:
		return "number " + strconv.FormatFloat(n.f, 'g', -1, 64)
	case kBool:
		return fmt.Sprintf("boolean %t", n.b)
	default:
		return n.kind.String()
	}
}

// objectBuilder collects the members of an object, reporting (and
// replacing) duplicate keys. It indexes keys once an object grows, so large
// objects stay linear.
type objectBuilder struct {
	keys []member
	idx  map[string]int
	dup  func(string, Pos)
}

func (b *objectBuilder) add(m member) {
	if b.idx == nil && len(b.keys) >= 16 {
		b.idx = make(map[string]int, 2*len(b.keys))
		for i, k := range b.keys {
			b.idx[k.key] = i
		}
	}
	at := -1
	if b.idx != nil {
		if i, ok := b.idx[m.key]; ok {
			at = i
		}
	} else {
		for i := range b.keys {
			if b.keys[i].key == m.key {
				at = i
				break
			}
		}
	}
	if at >= 0 {
		if b.dup != nil {
			b.dup(m.key, m.keyPos)
		}
		b.keys[at] = m
		return
	}
	if b.idx != nil {
		b.idx[m.key] = len(b.keys)
	}
	b.keys = append(b.keys, m)
}

// setNumber decodes a JSON number literal, keeping integers distinct from
// floats.
func setNumber(n *node, lit string) error {
	if !strings.ContainsAny(lit, ".eE") {
		if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
			n.kind, n.i = kInt, i
			return nil
		}
		if u, err := strconv.ParseUint(lit, 10, 64); err == nil {
			n.kind, n.u = kUint, u
			return nil
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("invalid number %q", lit)
	}
	if math.IsInf(f, 0) {
		return fmt.Errorf("number %s is out of range", lit)
	}
	n.kind, n.f = kFloat, f
	return nil
}

// parseYAMLNode reads one YAML document into a node tree.
func parseYAMLNode(data []byte, dup func(string, Pos)) (n *node, err error) {
	defer func() {
		// yaml.v3 is well fuzzed but has panicked on hostile input in the
		// past; a workflow parser must never take the process down.
		if r := recover(); r != nil {
			n, err = nil, &syntaxError{pos: Pos{Line: 1, Col: 1}, msg: fmt.Sprintf("invalid YAML: %v", r)}
		}
	}()
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &syntaxError{pos: Pos{Line: 1, Col: 1}, msg: "empty document"}
		}
		return nil, yamlSyntaxError(data, err.Error())
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &syntaxError{pos: Pos{Line: extra.Line, Col: extra.Column}, msg: "a workflow file must hold exactly one YAML document"}
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlSyntaxError(data, err.Error())
	}
	c := &yamlConv{dup: dup}
	return c.conv(&doc, 0)
}

// yamlSyntaxError turns a yaml.v3 error (which names a line only) into a
// syntax error with a line and a column: a tab in the line's indentation
// is named as such at its column (YAML indents with spaces only), else the
// column is the line's first non-blank character.
func yamlSyntaxError(data []byte, msg string) *syntaxError {
	pos := yamlErrPos(msg)
	text := "invalid YAML: " + trimYAMLErr(msg)
	lines := strings.Split(string(data), "\n")
	if pos.Line <= len(lines) && strings.Contains(msg, "line ") {
		line := strings.TrimSuffix(lines[pos.Line-1], "\r")
		indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		if i := strings.IndexByte(indent, '\t'); i >= 0 {
			return &syntaxError{pos: Pos{Line: pos.Line, Col: i + 1},
				msg: "invalid YAML: a tab character indents this line; YAML indents with spaces only (" + trimYAMLErr(msg) + ")"}
		}
		if t := strings.TrimLeft(line, " \t"); t != "" {
			pos.Col = utf8.RuneCountInString(indent) + 1
		}
	}
	return &syntaxError{pos: pos, msg: text}
}

// yamlErrPos extracts "line N" from a yaml.v3 error message.
func yamlErrPos(msg string) Pos {
	i := strings.Index(msg, "line ")
	if i < 0 {
		return Pos{Line: 1, Col: 1}
	}
	j := i + len("line ")
	k := j
	for k < len(msg) && msg[k] >= '0' && msg[k] <= '9' {
		k++
	}
	line, err := strconv.Atoi(msg[j:k])
	if err != nil || line < 1 {
		return Pos{Line: 1, Col: 1}
	}
	return Pos{Line: line, Col: 1}
}

func trimYAMLErr(msg string) string {
	msg = strings.TrimPrefix(msg, "yaml: ")
	if i := strings.Index(msg, "line "); i == 0 {
		if j := strings.Index(msg, ": "); j > 0 {
			msg = msg[j+2:]
		}
	}
	return msg
}

type yamlConv struct {
	dup   func(string, Pos)
	count int
}

func (c *yamlConv) conv(y *yaml.Node, depth int) (*node, error) {
	pos := Pos{Line: y.Line, Col: y.Column}
	c.count++
	if c.count > maxNodes {
		return nil, &syntaxError{pos: pos, msg: "document is too large (alias expansion)"}
	}
	if depth > maxDepth {
		return nil, &syntaxError{pos: pos, msg: fmt.Sprintf("document nests deeper than %d levels", maxDepth)}
	}
	switch y.Kind {
	case yaml.DocumentNode:
		if len(y.Content) == 0 {
			return nil, &syntaxError{pos: Pos{Line: 1, Col: 1}, msg: "empty document"}
		}
		return c.conv(y.Content[0], depth)
	case yaml.AliasNode:
		if y.Alias == nil {
			return nil, &syntaxError{pos: pos, msg: "invalid YAML: unknown alias"}
		}
		n, err := c.conv(y.Alias, depth+1)
		if err != nil {
			return nil, err
		}
		return n, nil
	case yaml.SequenceNode:
		n := &node{kind: kArray, pos: pos, items: []*node{}}
		for _, it := range y.Content {
			v, err := c.conv(it, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		return n, nil
	case yaml.MappingNode:
		ob := objectBuilder{keys: []member{}, dup: c.dup}
		for i := 0; i+1 < len(y.Content); i += 2 {
			k, v := y.Content[i], y.Content[i+1]
			kpos := Pos{Line: k.Line, Col: k.Column}
			if k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				return nil, &syntaxError{pos: kpos, msg: "mapping keys must be strings"}
			}
			if k.Tag == "!!merge" {
				return nil, &syntaxError{pos: kpos, msg: "YAML merge keys (<<) are not supported in workflow files"}
			}
			val, err := c.conv(v, depth+1)
			if err != nil {
				return nil, err
			}
			ob.add(member{key: k.Value, keyPos: kpos, val: val})
		}
		return &node{kind: kObject, pos: pos, keys: ob.keys}, nil
	case yaml.ScalarNode:
		return yamlScalar(y, pos)
	default:
		return nil, &syntaxError{pos: pos, msg: "invalid YAML node"}
	}
}

func yamlScalar(y *yaml.Node, pos Pos) (*node, error) {
	n := &node{pos: pos}
	switch y.ShortTag() {
	case "!!null":
		n.kind = kNull
	case "!!bool":
		if y.Value == "true" || y.Value == "false" { // fast path, no reflection
			n.kind, n.b = kBool, y.Value == "true"
			break
		}
		var b bool
		if err := y.Decode(&b); err != nil {
			return nil, &syntaxError{pos: pos, msg: "invalid boolean " + strconv.Quote(y.Value)}
		}
		n.kind, n.b = kBool, b
	case "!!int":
		if i, err := strconv.ParseInt(y.Value, 10, 64); err == nil {
			n.kind, n.i = kInt, i
			break
		}
		var i int64
		if err := y.Decode(&i); err == nil {
			n.kind, n.i = kInt, i
			break
		}
		var u uint64
		if err := y.Decode(&u); err == nil {
			n.kind, n.u = kUint, u
			break
		}
		return nil, &syntaxError{pos: pos, msg: "integer " + strconv.Quote(y.Value) + " is out of range"}
	case "!!float":
		f, err := strconv.ParseFloat(y.Value, 64)
		if err != nil {
			err = y.Decode(&f)
		}
		if err != nil {
			return nil, &syntaxError{pos: pos, msg: "invalid number " + strconv.Quote(y.Value)}
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, &syntaxError{pos: pos, msg: "number " + strconv.Quote(y.Value) + " is not a finite JSON number"}
		}
		n.kind, n.f = kFloat, f
	case "!!str", "!!binary", "!!timestamp":
		n.kind, n.s = kString, y.Value
	default:
		n.kind, n.s = kString, y.Value
	}
	return n, nil
}
