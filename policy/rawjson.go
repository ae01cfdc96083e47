package policy

import (
	"encoding/json"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// rawString returns the value of the first of keys that the top-level JSON
// object input holds as a plain string (no escapes), without decoding or
// allocating. ok is false when input is not such an object, or a key's
// value is not a plain string, or escapes appear where the scan needs to
// read, or two of keys hold different values: callers then decode the
// input properly.
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
			if found >= 0 && v != val {
				// Two of keys with different values: the caller
				// decodes, and decides whether they agree.
				return "", false
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

// keyList is a list of flat keys, by name (for a decoded input) and as
// flat key indexes (for one read in place: no lookup of the name).
type keyList struct {
	names []string
	idx   []int
	// mask has bit idx[i] set for each key: which of a rawFields' members
	// the list names (rawFields.strs).
	mask uint32
}

func keyListOf(names ...string) keyList {
	kl := keyList{names: names, idx: make([]int, len(names))}
	for i, k := range names {
		if kl.idx[i] = flatKeyIndex(k); kl.idx[i] < 0 {
			panic("policy: " + k + " is not a flat key")
		}
		kl.mask |= 1 << kl.idx[i]
	}
	return kl
}

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
	spans [24]rawSpan
	// strs has bit idx set when flat key idx's value (the last given) is
	// a string: str, agree and lines look only at the keys it names.
	strs uint32
}

// rawSpan is where one member's value lies in the input (end 0: absent)
// and, for a string, the newlines it decodes to (nl) and whether it ends
// with one: countLines of the decoded string without decoding it.
type rawSpan struct {
	start, end, nl int32
	endNL          bool
}

// scanFlat reads input's top-level members into a rawFields, checking
// that input is valid JSON in the same pass (what json.Valid checks) and
// counting each string member's newlines as it goes: a large Write's
// content is read once. ok is false when input is not a valid JSON
// object, or a key holds an escape, or the input nests deeper than the
// scan follows: then the caller decodes the input (and fails, or reads
// it) as before.
func scanFlat(input []byte, f *rawFields) bool {
	s := unsafeString(input)
	if len(flatKeys) > len(f.spans) || len(s) >= 1<<31-1 {
		return false
	}
	f.s, f.strs = s, 0
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return skipWS(s, i+1) == len(s)
	}
	for {
		key, next, ok := plainKey(s, i)
		if !ok {
			return false
		}
		i = skipWS(s, next)
		if i >= len(s) || s[i] != ':' {
			return false
		}
		i = skipWS(s, i+1)
		var sp rawSpan
		if i >= len(s) {
			return false
		}
		if s[i] == '"' {
			end, nl, lastNL, ok := scanString(s, i)
			if !ok {
				return false
			}
			sp = rawSpan{start: int32(i), end: int32(end), nl: int32(nl), endNL: lastNL == end-2}
			i = end
		} else {
			end, ok, deep := validValue(s, i)
			if !ok || deep {
				return false
			}
			sp = rawSpan{start: int32(i), end: int32(end)}
			i = end
		}
		if idx := flatKeyIndex(key); idx >= 0 {
			f.spans[idx] = sp
			if s[sp.start] == '"' {
				f.strs |= 1 << idx
			} else {
				f.strs &^= 1 << idx
			}
		}
		i = skipWS(s, i)
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case ',':
			i = skipWS(s, i+1)
		case '}':
			return skipWS(s, i+1) == len(s)
		default:
			return false
		}
	}
}

// plainKey reads an object key at s[i]: a JSON string without escapes or
// control characters.
func plainKey(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20:
			return "", i, false
		}
	}
	return "", i, false
}

// value is flat key idx's value as written, and where it lies.
func (f *rawFields) value(idx int) (string, *rawSpan, bool) {
	if f.spans[idx].end == 0 {
		return "", nil, false
	}
	sp := &f.spans[idx]
	return f.s[sp.start:sp.end], sp, true
}

func (f *rawFields) str(keys keyList) (string, bool) {
	if f.strs&keys.mask == 0 {
		// (No string among keys: none of them would answer.)
		return "", false
	}
	for _, k := range keys.idx {
		v, _, ok := f.value(k)
		if !ok {
			continue
		}
		if s, ok := stringValue(v); ok {
			return s, true
		}
	}
	return "", false
}

// stringValue is the string the JSON value v (a member's, as scanned)
// decodes to; ok is false when v is not a string.
func stringValue(v string) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if v[len(v)-1] == '"' && plainASCII(v[1:len(v)-1]) {
		// (What the test below answers for the paths calls name, in one
		// look at each eight bytes.)
		return v[1 : len(v)-1], true
	}
	if strings.IndexByte(v, '\\') < 0 && utf8.ValidString(v) {
		return v[1 : len(v)-1], true
	}
	if b, ok := appendUnquoted(nil, v); ok {
		return string(b), true
	}
	var out string
	if json.Unmarshal([]byte(v), &out) == nil {
		return out, true
	}
	return "", false
}

// plainASCII reports whether s is ASCII without a backslash, eight
// bytes at a time (TestStringValuePlain compares stringValue with the
// byte-by-byte test).
func plainASCII(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		b8 := s[i : i+8] // (one bounds check, one load)
		x := uint64(b8[0]) | uint64(b8[1])<<8 | uint64(b8[2])<<16 | uint64(b8[3])<<24 |
			uint64(b8[4])<<32 | uint64(b8[5])<<40 | uint64(b8[6])<<48 | uint64(b8[7])<<56
		b := x ^ (ones * '\\')
		// A byte of 0x80 or more, or a backslash (zero after the xor: the
		// borrow sets its high bit; nothing is flagged where none is zero).
		if (x|(b-ones)&^b)&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '\\' {
			return false
		}
	}
	return true
}

// agree is fields.agree read in place: literals that differ are decoded
// to compare (only an input with two spellings of a field pays that).
func (f *rawFields) agree(keys keyList) bool {
	if f.strs&keys.mask&(f.strs&keys.mask-1) == 0 {
		// At most one of keys holds a string: nothing to compare.
		return true
	}
	first, have := "", false
	for _, k := range keys.idx {
		v, _, ok := f.value(k)
		switch {
		case !ok || len(v) < 2 || v[0] != '"':
		case !have:
			first, have = v, true
		case v != first:
			a, _ := stringValue(first)
			b, _ := stringValue(v)
			if a != b {
				return false
			}
		}
	}
	return true
}

// strRaw is str without decoding: the first of keys whose value is a
// string, as str returns it when it is plain (esc false), else as its
// JSON literal, quotes included (esc true), for unquoteIn.
func (f *rawFields) strRaw(keys keyList) (s string, esc, ok bool) {
	for _, k := range keys.idx {
		v, _, ok := f.value(k)
		if !ok || len(v) < 2 || v[0] != '"' {
			continue
		}
		if strings.IndexByte(v, '\\') < 0 && utf8.ValidString(v) {
			return v[1 : len(v)-1], false, true
		}
		return v, true, true
	}
	return "", false, false
}

// lines is countLines of the string str(keys...) returns, from the
// newlines scanFlat counted (a Write's content may be large). In JSON a
// newline is always escaped (\n or \u000a), and no other escape or byte
// decodes to one.
func (f *rawFields) lines(keys keyList) int {
	for _, k := range keys.idx {
		v, sp, ok := f.value(k)
		if !ok || len(v) < 2 || v[0] != '"' {
			continue
		}
		if len(v) == 2 {
			return 0
		}
		if sp.endNL {
			return int(sp.nl)
		}
		return int(sp.nl) + 1
	}
	return 0
}

// boolean reports whether the one key of keys is true.
func (f *rawFields) boolean(keys keyList) bool {
	v, _, ok := f.value(keys.idx[0])
	return ok && v == "true"
}

// validJSON reports what json.Valid reports (one JSON value, whitespace
// around it), for the shallow inputs tools have, without json.Valid's
// general state machine; deeper inputs go to json.Valid.
func validJSON(s string) bool {
	end, ok, deep := validValue(s, skipWS(s, 0))
	if deep {
		return json.Valid([]byte(s))
	}
	return ok && skipWS(s, end) == len(s)
}

// validValue checks the one JSON value at s[i] and returns the index after
// it. deep is set (and ok is not) when the value nests deeper than the
// check follows.
func validValue(s string, i int) (end int, ok, deep bool) {
	var stack [32]byte // open containers: '{' or '['
	depth := 0
	// expect: 'v' a value, 'k' an object key (or '}' right after '{'),
	// 'K' a key (after ','), 'c' a ',' or the closing bracket, 'e' end.
	expect := byte('v')
	first := false // the value may be the closing ']' of an empty array
	for {
		if expect == 'e' {
			return i, true, false
		}
		i = skipWS(s, i)
		if i >= len(s) {
			return i, false, false
		}
		c := s[i]
		switch expect {
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
					return i, false, true
				}
				stack[depth] = '{'
				depth++
				i++
				expect = 'k'
				continue
			case c == '[':
				if depth == len(stack) {
					return i, false, true
				}
				stack[depth] = '['
				depth++
				i++
				first = true
				continue
			case c == '"':
				j, _, _, ok := scanString(s, i)
				if !ok {
					return i, false, false
				}
				i = j
			case c == '-' || '0' <= c && c <= '9':
				j, ok := jsonNumber(s, i)
				if !ok {
					return i, false, false
				}
				i = j
			case strings.HasPrefix(s[i:], "true"):
				i += 4
			case strings.HasPrefix(s[i:], "false"):
				i += 5
			case strings.HasPrefix(s[i:], "null"):
				i += 4
			default:
				return i, false, false
			}
			expect = after(depth)
		case 'k', 'K':
			if c == '}' && expect == 'k' {
				depth--
				i++
				expect = after(depth)
				continue
			}
			if c != '"' {
				return i, false, false
			}
			j, _, _, ok := scanString(s, i)
			if !ok {
				return i, false, false
			}
			i = skipWS(s, j)
			if i >= len(s) || s[i] != ':' {
				return i, false, false
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
				return i, false, false
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

// scanString checks the JSON string at s[i] (s[i] is '"') and returns
// the index after it, the newline escapes in it (\n, \u000a: the
// newlines it decodes to), and the index of the last byte of the last
// of them (-1 for none).
func scanString(s string, i int) (end, nl, lastNL int, ok bool) {
	lastNL = -1
	for j := i + 1; j < len(s); j++ {
		if j = plainRun(s, j); j >= len(s) {
			break
		}
		switch c := s[j]; {
		case c == '"':
			return j + 1, nl, lastNL, true
		case c < 0x20:
			return 0, 0, 0, false
		case c == '\\':
			j++
			if j >= len(s) {
				return 0, 0, 0, false
			}
			switch s[j] {
			case 'n':
				nl++
				lastNL = j
			case '"', '\\', '/', 'b', 'f', 'r', 't':
			case 'u':
				if j+4 >= len(s) {
					return 0, 0, 0, false
				}
				for _, h := range []byte(s[j+1 : j+5]) {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return 0, 0, 0, false
					}
				}
				if s[j+1:j+4] == "000" && (s[j+4] == 'a' || s[j+4] == 'A') {
					nl++
					lastNL = j + 4
				}
				j += 4
			default:
				return 0, 0, 0, false
			}
		}
	}
	return 0, 0, 0, false
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
		// The lowest flagged byte is exact: a false flag only follows a
		// true one (the borrow of the subtraction).
		if m := ((x-ones*0x20)&^x | (q-ones)&^q | (b-ones)&^b) & highs; m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
	}
	for ; j < len(s); j++ {
		if c := s[j]; c < 0x20 || c == '"' || c == '\\' {
			return j
		}
	}
	return j
}
