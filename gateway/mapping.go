package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"

	"github.com/statewright-go/statewright/policy"
)

// Argument-mapping presets.
const (
	// PresetFilesystem maps @modelcontextprotocol/server-filesystem's tools.
	PresetFilesystem = "filesystem"
	// PresetNone decides every tool by its namespaced name.
	PresetNone = "none"
)

// AsNone decides a tool by its namespaced name (no canonical tool).
const AsNone = "none"

// canonicalTools are the tools a ToolMap may decide a call as. They are
// Claude Code's names, which the policy's claude-code alias table knows.
var canonicalTools = map[string]bool{
	"Read": true, "Write": true, "Edit": true, "MultiEdit": true, "LS": true, "Glob": true, "Grep": true,
	"Bash": true, "WebFetch": true, AsNone: true,
}

func canonicalList() string {
	var out []string
	for k := range canonicalTools {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// presets are the built-in mappings, by preset name.
var presets = map[string]map[string]ToolMap{
	PresetNone: {},
	PresetFilesystem: {
		"read_file":                 {As: "Read", Path: "path"},
		"read_text_file":            {As: "Read", Path: "path"},
		"read_media_file":           {As: "Read", Path: "path"},
		"read_multiple_files":       {As: "Read", Paths: "paths"},
		"get_file_info":             {As: "Read", Path: "path"},
		"write_file":                {As: "Write", Path: "path", Content: "content"},
		"edit_file":                 {As: "MultiEdit", Path: "path", Edits: "edits"},
		"create_directory":          {As: "Write", Path: "path"},
		"move_file":                 {As: "Write", Paths: "source,destination"},
		"list_directory":            {As: "LS", Path: "path"},
		"list_directory_with_sizes": {As: "LS", Path: "path"},
		"directory_tree":            {As: "LS", Path: "path"},
		"search_files":              {As: "Glob", Path: "path", Pattern: "pattern"},
		"list_allowed_directories":  {As: "LS"},
	},
}

// MappedCall is one decision a proxied call needs: the canonical tool and
// its input in that tool's shape.
type MappedCall struct {
	Tool  string
	Input json.RawMessage
}

// mapping returns how u's tool is decided (ok false: by its namespaced name).
func mapping(u *Upstream, tool string) (ToolMap, bool) {
	if m, ok := u.Tools[tool]; ok {
		return m, m.As != AsNone
	}
	m, ok := presets[u.Map][tool]
	return m, ok && m.As != AsNone
}

// MapCall turns a call of upstream u's tool (its own name, not namespaced)
// with args into the decisions it needs. A tool without a mapping is
// decided once by its namespaced name with the arguments unchanged. A
// mapped tool whose arguments lack what the mapping needs is an error
// (the caller denies).
func MapCall(u *Upstream, namespaced, tool string, args json.RawMessage) ([]MappedCall, error) {
	m, ok := mapping(u, tool)
	if !ok {
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		if !isObject(args) {
			return nil, fmt.Errorf("the arguments of %s are not a JSON object", namespaced)
		}
		// The law checks every value of the arguments as decoded (a
		// path anywhere in them), where the first of a key given twice
		// is gone; an upstream that keeps the first would read it.
		// (Keys that differ only in case are two values, both checked.)
		if err := repeatedKeysFast(args); err != nil {
			return nil, fmt.Errorf("%s: %w", namespaced, err)
		}
		return []MappedCall{{Tool: namespaced, Input: args}}, nil
	}
	var a map[string]any
	if len(args) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, fmt.Errorf("the arguments of %s are not a JSON object", namespaced)
		}
		if err := ambiguousKeys(args); err != nil {
			return nil, fmt.Errorf("%s: %w", namespaced, err)
		}
	}
	get := func(key string) (string, error) {
		v, ok := a[key]
		if !ok {
			return "", fmt.Errorf("%s: argument %q is missing", namespaced, key)
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s: argument %q is not a string", namespaced, key)
		}
		return s, nil
	}
	// The paths the call touches.
	var paths []string
	switch {
	case m.Paths != "":
		for _, key := range strings.Split(m.Paths, ",") {
			key = strings.TrimSpace(key)
			switch v := a[key].(type) {
			case string:
				paths = append(paths, v)
			case []any:
				for _, e := range v {
					s, ok := e.(string)
					if !ok {
						return nil, fmt.Errorf("%s: argument %q holds a non-string", namespaced, key)
					}
					paths = append(paths, s)
				}
			default:
				return nil, fmt.Errorf("%s: argument %q is missing or not a path", namespaced, key)
			}
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("%s: no path given", namespaced)
		}
	case m.Path != "":
		p, err := get(m.Path)
		if err != nil {
			return nil, err
		}
		paths = []string{p}
	}
	var out []MappedCall
	add := func(in map[string]any) error {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s: encode the mapped input: %w", namespaced, err)
		}
		as := m.As
		if as == "Edit" {
			// A list of edits is MultiEdit's input: the law's Edit reads
			// one flat old and new text, and would count none of these
			// (Edit grants MultiEdit).
			as = "MultiEdit"
		}
		out = append(out, MappedCall{Tool: as, Input: b})
		return nil
	}
	if len(paths) == 0 {
		// A tool with no path argument (list_allowed_directories): decided
		// on the working directory.
		paths = []string{"."}
	}
	for _, p := range paths {
		in := map[string]any{}
		switch m.As {
		case "Read", "Write", "Edit", "MultiEdit":
			in["file_path"] = p
		case "LS", "Glob", "Grep":
			in["path"] = p
		}
		switch m.As {
		case "Write":
			c := ""
			if m.Content != "" {
				var err error
				if c, err = get(m.Content); err != nil {
					return nil, err
				}
			}
			in["content"] = c
		case "MultiEdit", "Edit":
			edits, ok := a[m.Edits].([]any)
			if m.Edits == "" || !ok {
				return nil, fmt.Errorf("%s: argument %q is missing or not a list of edits", namespaced, m.Edits)
			}
			if err := lawEdits(edits); err != nil {
				return nil, fmt.Errorf("%s: argument %q: %w", namespaced, m.Edits, err)
			}
			in["edits"] = edits
		case "Glob", "Grep":
			if m.Pattern != "" {
				pat, err := get(m.Pattern)
				if err != nil {
					return nil, err
				}
				in["pattern"] = pat
			}
		}
		if m.Command != "" {
			c, err := get(m.Command)
			if err != nil {
				return nil, err
			}
			in["command"] = c
		}
		if err := add(in); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// probeArgs returns arguments that make a mapped tool decidable for the
// tools/list filter: a harmless path in the project for every path
// argument, so only whether the phase allows the tool at all matters.
func probeArgs(u *Upstream, tool, probePath string) json.RawMessage {
	m, ok := mapping(u, tool)
	if !ok {
		return json.RawMessage("{}")
	}
	a := map[string]any{}
	for _, key := range strings.Split(m.Paths, ",") {
		if key = strings.TrimSpace(key); key != "" {
			a[key] = probePath
		}
	}
	for _, key := range []string{m.Path, m.Content, m.Command, m.Pattern} {
		if key != "" {
			a[key] = ""
		}
	}
	if m.Path != "" {
		a[m.Path] = probePath
	}
	if m.Edits != "" {
		a[m.Edits] = []any{}
	}
	b, _ := json.Marshal(a)
	return b
}

// isObject reports whether args is one JSON object (as decoding it into a
// map would, without the map).
func isObject(args []byte) bool {
	t := bytes.TrimLeft(args, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// ambiguousKeys refuses arguments an upstream could read otherwise than
// the mapping does: a key that appears twice in one object (decoders keep
// the first or the last), or two keys that differ only in case (Go's
// encoding/json, among others, matches a struct field case-insensitively:
// a server reading {"path":"a","PATH":"/etc"} into a Path field writes to
// /etc, where the mapping decided on "a"). The mapped call is decided on
// the arguments as encoding/json reads them into a map, and forwarded as
// they came, so only arguments every reader reads alike are let through.
func ambiguousKeys(args []byte) error {
	return repeatedKeys(args, true)
}

// repeatedKeysFast is repeatedKeys(args, false) for valid JSON args (an
// unmapped call's, on every call), without a decoder: keys compared as
// written while every key is plain (no escape, ASCII) and an object has
// at most 32 of them; otherwise the decoder compares them.
// TestRepeatedKeysFast compares the two.
func repeatedKeysFast(args []byte) error {
	type frame struct {
		obj  bool
		keys [][]byte
	}
	var arr [8]frame
	stack := arr[:0]
	expectKey := false
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case '{':
			stack = append(stack, frame{obj: true})
			expectKey = true
		case '[':
			stack = append(stack, frame{})
			expectKey = false
		case '}', ']':
			if len(stack) == 0 {
				return repeatedKeys(args, false)
			}
			stack = stack[:len(stack)-1]
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].obj
		case '"':
			j, plain := i+1, true
			for ; j < len(args) && args[j] != '"'; j++ {
				switch {
				case args[j] == '\\':
					plain = false
					j++
				case args[j] >= 0x80:
					plain = false
				}
			}
			if expectKey {
				top := &stack[len(stack)-1]
				if !plain || len(top.keys) == 32 {
					return repeatedKeys(args, false)
				}
				k := args[i+1 : j]
				for _, o := range top.keys {
					if bytes.Equal(o, k) {
						return fmt.Errorf("argument %q appears twice in one object, and an upstream may read either", k)
					}
				}
				top.keys = append(top.keys, k)
				expectKey = false
			}
			i = j
		}
	}
	return nil
}

// repeatedKeys refuses a key given twice in one object, and (fold) two
// keys that differ only in case.
func repeatedKeys(args []byte, fold bool) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	type object struct {
		exact  map[string]bool
		folded map[string]string
		key    bool // the next token is a key
	}
	var stack []*object
	values := 0 // top-level values begun
	for {
		tok, err := dec.Token()
		if err == io.EOF && len(stack) == 0 && values == 1 {
			return nil
		}
		if err == nil && len(stack) == 0 {
			values++
		}
		if err == nil && values > 1 {
			err = errors.New("more than one value")
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("the arguments are not JSON: %w", err)
		}
		var top *object
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.key {
			if k, ok := tok.(string); ok {
				if top.exact[k] {
					return fmt.Errorf("argument %q appears twice in one object, and an upstream may read either", k)
				}
				if fold {
					f := strings.Map(func(r rune) rune { return unicode.ToUpper(unicode.ToLower(r)) }, k)
					if other, ok := top.folded[f]; ok {
						return fmt.Errorf("arguments %q and %q differ only in case, and an upstream may read either as the other", other, k)
					}
					top.folded[f] = k
				}
				top.exact[k] = true
				top.key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &object{exact: map[string]bool{}, folded: map[string]string{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, nil)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: in an object, a key comes next.
		if len(stack) > 0 && stack[len(stack)-1] != nil {
			stack[len(stack)-1].key = true
		}
	}
}

// lawEdits refuses a mapped list of edits whose lines the law could count
// otherwise than the upstream changes them: each edit must be an object
// that gives its old text and its new text each once, as a string, under
// one of the spellings the law reads. The law takes the first spelling it
// finds, an upstream its own (the filesystem server reads oldText and
// newText only): {"oldText":<50 lines>,"newText":"x","old_string":"a",
// "new_string":"a"} was counted as no line changed; text under a name the
// law does not read ("find"/"replace") was counted as none either.
func lawEdits(edits []any) error {
	oldKeys, newKeys := policy.MultiEditTextKeys()
	for i, e := range edits {
		em, ok := e.(map[string]any)
		if !ok {
			return fmt.Errorf("edit %d is not an object", i+1)
		}
		for _, names := range []struct {
			what  string
			names []string
		}{{"old text", oldKeys}, {"new text", newKeys}} {
			given := ""
			for _, n := range names.names {
				v, ok := em[n]
				if !ok {
					continue
				}
				if given != "" {
					return fmt.Errorf("edit %d gives its %s twice (%q and %q), and an upstream may read either", i+1, names.what, given, n)
				}
				if _, ok := v.(string); !ok {
					return fmt.Errorf("edit %d: its %s (%q) is not a string", i+1, names.what, n)
				}
				given = n
			}
			if given == "" {
				return fmt.Errorf("edit %d gives no %s the policy can count (%s)", i+1, names.what, strings.Join(names.names, ", "))
			}
		}
	}
	return nil
}
