package policy

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// rawString returns the value of the first of keys that the top-level JSON
// object input holds as a plain string (no escapes), without decoding or
// allocating. ok is false when input is not such an object, or a key's
// value is not a plain string, or escapes appear where the scan needs to
// read: callers then decode the input properly.
func rawString(input []byte, keys ...string) (string, bool) {
	s := unsafeString(input)
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return "", false
	}
	i++
	found, val := -1, ""
	var seen uint64
	for {
		i = skipWS(s, i)
		if i >= len(s) {
			return "", false
		}
		if s[i] == '}' {
			break
		}
		if s[i] == ',' {
			i++
			continue
		}
		key, next, ok := plainString(s, i)
		if !ok {
			return "", false
		}
		i = skipWS(s, next)
		if i >= len(s) || s[i] != ':' {
			return "", false
		}
		i = skipWS(s, i+1)
		idx := -1
		for k, want := range keys {
			if key == want {
				idx = k
				break
			}
		}
		if idx >= 0 {
			v, next, ok := plainString(s, i)
			if !ok || idx < 64 && seen&(1<<idx) != 0 {
				// An escape, or a key given twice (decoding keeps the
				// last): the caller decodes.
				return "", false
			}
			if idx < 64 {
				seen |= 1 << idx
			}
			if found < 0 || idx < found {
				found, val = idx, v
			}
			i = next
			continue
		}
		next, ok = skipValue(s, i)
		if !ok {
			return "", false
		}
		i = next
	}
	return val, found >= 0
}

func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// plainString reads a JSON string without escapes at s[i].
func plainString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			return "", i, false
		case '"':
			return s[i+1 : j], j + 1, true
		}
	}
	return "", i, false
}

// skipValue skips one JSON value at s[i] (strings with escapes included).
func skipValue(s string, i int) (int, bool) {
	depth := 0
	for i < len(s) {
		switch c := s[i]; c {
		case '"':
			j := i + 1
			for ; j < len(s); j++ {
				j = plainRun(s, j)
				if j >= len(s) {
					break
				}
				if s[j] == '\\' {
					j++
					continue
				}
				if s[j] == '"' {
					break
				}
			}
			if j >= len(s) {
				return i, false
			}
			i = j + 1
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i, true
			}
			depth--
			i++
			if depth == 0 {
				return i, true
			}
		case ',':
			if depth == 0 {
				return i, true
			}
			i++
		default:
			i++
		}
		if depth == 0 && i < len(s) && (s[i] == ',' || s[i] == '}') {
			return i, true
		}
	}
	return i, false
}

// flatKeys are the top-level fields parseFlatEdit reads; flatKeyIndex
// finds one.
var flatKeys = []string{"file_path", "filePath", "path", "notebook_path", "target_file", "file", "filename",
	"content", "contents", "text", "old_string", "oldString", "oldText", "old_str", "old",
	"new_string", "newString", "newText", "new_str", "new", "replace_all", "replaceAll", "new_source"}

func flatKeyIndex(key string) int {
	switch key {
	case "file_path":
		return 0
	case "filePath":
		return 1
	case "path":
		return 2
	case "notebook_path":
		return 3
	case "target_file":
		return 4
	case "file":
		return 5
	case "filename":
		return 6
	case "content":
		return 7
	case "contents":
		return 8
	case "text":
		return 9
	case "old_string":
		return 10
	case "oldString":
		return 11
	case "oldText":
		return 12
	case "old_str":
		return 13
	case "old":
		return 14
	case "new_string":
		return 15
	case "newString":
		return 16
	case "newText":
		return 17
	case "new_str":
		return 18
	case "new":
		return 19
	case "replace_all":
		return 20
	case "replaceAll":
		return 21
	case "new_source":
		return 22
	}
	return -1
}

// rawFields are the flat fields of a JSON object input, read in place: a
// fields source that answers as decoding the input into a map would (exact
// keys, the last of duplicate keys, a value only when it has the type
// asked for), without decoding the fields it does not read.
type rawFields struct {
	s     string
	spans [24][2]int // value start and end in s; end 0: absent
}

// scanFlat reads input's top-level members into a rawFields. ok is false
// when input is not a valid JSON object or a key holds an escape: then
// the caller decodes the input (and fails, or reads it) as before.
func scanFlat(input []byte, f *rawFields) bool {
	s := unsafeString(input)
	if len(flatKeys) > len(f.spans) || !validJSON(s) {
		return false
	}
	f.s = s
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i++
	for {
		i = skipWS(s, i)
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case '}':
			return true
		case ',':
			i++
			continue
		}
		key, next, ok := plainString(s, i)
		if !ok {
			return false
		}
		i = skipWS(s, next)
		if i >= len(s) || s[i] != ':' {
			return false
		}
		i = skipWS(s, i+1)
		end, ok := skipValue(s, i)
		if !ok {
			return false
		}
		if idx := flatKeyIndex(key); idx >= 0 {
			e := end
			for e > i && (s[e-1] == ' ' || s[e-1] == '\t' || s[e-1] == '\n' || s[e-1] == '\r') {
				e--
			}
			f.spans[idx] = [2]int{i, e}
		}
		i = end
	}
}

func (f *rawFields) value(key string) (string, bool) {
	idx := flatKeyIndex(key)
	if idx < 0 || f.spans[idx][1] == 0 {
		return "", false
	}
	return f.s[f.spans[idx][0]:f.spans[idx][1]], true
}

func (f *rawFields) str(keys ...string) (string, bool) {
	for _, k := range keys {
		v, ok := f.value(k)
		if !ok || len(v) < 2 || v[0] != '"' {
			continue
		}
		if strings.IndexByte(v, '\\') < 0 && utf8.ValidString(v) {
			return v[1 : len(v)-1], true
		}
		var out string
		if json.Unmarshal([]byte(v), &out) == nil {
			return out, true
		}
	}
	return "", false
}

// lines is countLines of the string str(keys...) returns, counted on the
// JSON text without decoding it (a Write's content may be large).
func (f *rawFields) lines(keys ...string) int {
	for _, k := range keys {
		v, ok := f.value(k)
		if !ok || len(v) < 2 || v[0] != '"' {
			continue
		}
		v = v[1 : len(v)-1]
		if strings.IndexByte(v, '\\') < 0 {
			return countLines(v)
		}
		// Escapes: count the newlines they decode to (\n, \u000a); no
		// other escape or byte decodes to one. IndexByte jumps from one
		// backslash to the next.
		n, lastNL := 0, -1 // lastNL: where the last newline escape ends
		for i := 0; ; {
			k := strings.IndexByte(v[i:], '\\')
			if k < 0 || i+k+1 >= len(v) {
				break
			}
			i += k + 1
			switch v[i] {
			case 'n':
				n++
				lastNL = i + 1
			case 'u':
				if i+4 < len(v) && v[i+1:i+4] == "000" && (v[i+4] == 'a' || v[i+4] == 'A') {
					n++
					lastNL = i + 5
				}
				i += 4
			}
			i++
		}
		if lastNL == len(v) {
			return n
		}
		return n + 1
	}
	return 0
}

func (f *rawFields) boolean(key string) bool {
	v, ok := f.value(key)
	return ok && v == "true"
}

// validJSON reports what json.Valid reports (one JSON value, whitespace
// around it), for the shallow inputs tools have, without json.Valid's
// general state machine; deeper inputs go to json.Valid.
func validJSON(s string) bool {
	var stack [32]byte // open containers: '{' or '['
	depth := 0
	i := skipWS(s, 0)
	// expect: 'v' a value, 'k' an object key (or '}' right after '{'),
	// 'K' a key (after ','), 'c' a ',' or the closing bracket, 'e' end.
	expect := byte('v')
	first := false // the value may be the closing ']' of an empty array
	for {
		i = skipWS(s, i)
		if i >= len(s) {
			return expect == 'e'
		}
		c := s[i]
		switch expect {
		case 'e':
			return false
		case 'v':
			if first && c == ']' {
				depth--
				i++
				expect = after(depth)
				first = false
				continue
			}
			first = false
			switch {
			case c == '{':
				if depth == len(stack) {
					return json.Valid([]byte(s))
				}
				stack[depth] = '{'
				depth++
				i++
				expect = 'k'
				continue
			case c == '[':
				if depth == len(stack) {
					return json.Valid([]byte(s))
				}
				stack[depth] = '['
				depth++
				i++
				first = true
				continue
			case c == '"':
				j, ok := jsonString(s, i)
				if !ok {
					return false
				}
				i = j
			case c == '-' || '0' <= c && c <= '9':
				j, ok := jsonNumber(s, i)
				if !ok {
					return false
				}
				i = j
			case strings.HasPrefix(s[i:], "true"):
				i += 4
			case strings.HasPrefix(s[i:], "false"):
				i += 5
			case strings.HasPrefix(s[i:], "null"):
				i += 4
			default:
				return false
			}
			expect = after(depth)
			if depth > 0 {
				expect = 'c'
			}
		case 'k', 'K':
			if c == '}' && expect == 'k' {
				depth--
				i++
				expect = after(depth)
				continue
			}
			if c != '"' {
				return false
			}
			j, ok := jsonString(s, i)
			if !ok {
				return false
			}
			i = skipWS(s, j)
			if i >= len(s) || s[i] != ':' {
				return false
			}
			i++
			expect = 'v'
		case 'c':
			switch {
			case c == ',':
				i++
				if stack[depth-1] == '{' {
					expect = 'K'
				} else {
					expect = 'v'
				}
			case c == '}' && stack[depth-1] == '{', c == ']' && stack[depth-1] == '[':
				depth--
				i++
				expect = after(depth)
			default:
				return false
			}
		}
	}
}

// after is what follows a complete value at depth.
func after(depth int) byte {
	if depth == 0 {
		return 'e'
	}
	return 'c'
}

// jsonString checks the string at s[i] (s[i] is '"') and returns the index
// after it.
func jsonString(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		if j = plainRun(s, j); j >= len(s) {
			break
		}
		switch c := s[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			j++
			if j >= len(s) {
				return 0, false
			}
			switch s[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s) {
					return 0, false
				}
				for _, h := range []byte(s[j+1 : j+5]) {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return 0, false
					}
				}
				j += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// jsonNumber checks the number at s[i] and returns the index after it.
func jsonNumber(s string, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i
	}
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = digits(i)
	default:
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

// plainRun returns the index of the first byte at or after j that is a
// quote, a backslash or a control character (len(s) if none), eight
// bytes at a time: a large Write's content is mostly such runs.
func plainRun(s string, j int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; j+8 <= len(s); j += 8 {
		x := uint64(s[j]) | uint64(s[j+1])<<8 | uint64(s[j+2])<<16 | uint64(s[j+3])<<24 |
			uint64(s[j+4])<<32 | uint64(s[j+5])<<40 | uint64(s[j+6])<<48 | uint64(s[j+7])<<56
		q, b := x^(ones*'"'), x^(ones*'\\')
		// A byte below 0x20, or equal to '"' or '\\' (zero after the xor).
		if ((x-ones*0x20)&^x|(q-ones)&^q|(b-ones)&^b)&highs != 0 {
			break
		}
	}
	for ; j < len(s); j++ {
		if c := s[j]; c < 0x20 || c == '"' || c == '\\' {
			return j
		}
	}
	return j
}
