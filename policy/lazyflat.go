package policy

import (
	"encoding/json"
	"strings"
)

// lazyFlat reads the top-level members of a flat edit's input (Write,
// Edit, NotebookEdit, a deletion) in order, only as far as a question
// needs: which file the call names, and whether its content has more
// lines than a phase allows. A Write that names its file first is
// answered without reading its content; one that names it last skips the
// content a quote at a time (strings.IndexByte), without decoding it.
//
// What it reads it does not validate: it answers self-protection and
// denies, which an input that is not JSON would get anyway. An allow reads
// and checks the whole input (prepared.editInfo, scanFlat or
// encoding/json), which must name the same files, or the call is denied.
//
// Which of a key given twice counts: the last, as encoding/json,
// JavaScript's JSON.parse and serde_json's maps read it. The lazy reading
// stops at the first file_path it meets; when a later one differs, the
// whole reading disagrees with it and the call is denied (fail closed).
// A flat key the lazy reading meets twice makes it unsure: the whole
// reading decides.
type lazyFlat struct {
	s    string
	i    int // where the scan stands
	st   lazyState
	open int // the flat key whose value starts at i (lzOpen)
	// spans are where each flat key's value lies; end 0: not met (yet),
	// -1: met, its value starts at start and is not skipped yet.
	spans [24]lazySpan
}

type lazySpan struct{ start, end int }

type lazyState uint8

const (
	lzStart  lazyState = iota // nothing read
	lzMember                  // before a member: after '{' or ','
	lzOpen                    // at the value of flat key open
	lzDone                    // the object's '}' was read
	lzUnsure                  // not an object as far as read, or a flat key given twice: read the input whole
)

// advance reads one step further: the object's start, a member's key
// (a flat key's value is left open), or the open value. It returns false
// once the scan is done or unsure.
func (f *lazyFlat) advance() bool {
	s := f.s
	switch f.st {
	case lzStart:
		i := skipWS(s, 0)
		if i >= len(s) || s[i] != '{' {
			f.st = lzUnsure
			return false
		}
		i = skipWS(s, i+1)
		if i < len(s) && s[i] == '}' {
			f.i, f.st = i+1, lzDone
			return true
		}
		f.i, f.st = i, lzMember
		return true
	case lzOpen:
		end, ok := skipJSON(s, f.i)
		if !ok {
			f.st = lzUnsure
			return false
		}
		f.spans[f.open].end = end
		return f.afterValue(end)
	case lzMember:
		i := f.i
		if i >= len(s) || s[i] != '"' {
			f.st = lzUnsure
			return false
		}
		kend, ok := skipStr(s, i)
		if !ok {
			f.st = lzUnsure
			return false
		}
		key := s[i+1 : kend-1]
		if strings.IndexByte(key, '\\') >= 0 {
			// An escaped key (file\u005fpath): decoded, as a parser would.
			// None of the flat keys is longer than 13 bytes, six per escape.
			key = ""
			if kend-i <= 2+6*13 {
				var k string
				if json.Unmarshal([]byte(s[i:kend]), &k) != nil {
					f.st = lzUnsure
					return false
				}
				key = k
			}
		}
		i = skipWS(s, kend)
		if i >= len(s) || s[i] != ':' {
			f.st = lzUnsure
			return false
		}
		i = skipWS(s, i+1)
		if i >= len(s) {
			f.st = lzUnsure
			return false
		}
		if idx := flatKeyIndex(key); idx >= 0 {
			if f.spans[idx].end != 0 {
				f.st = lzUnsure // given twice
				return false
			}
			f.spans[idx] = lazySpan{start: i, end: -1}
			f.i, f.open, f.st = i, idx, lzOpen
			return true
		}
		end, ok := skipJSON(s, i)
		if !ok {
			f.st = lzUnsure
			return false
		}
		return f.afterValue(end)
	}
	return false
}

// afterValue reads what follows a member's value at i: ',' and the next
// member, or the object's end.
func (f *lazyFlat) afterValue(i int) bool {
	s := f.s
	i = skipWS(s, i)
	switch {
	case i < len(s) && s[i] == ',':
		f.i, f.st = skipWS(s, i+1), lzMember
		return true
	case i < len(s) && s[i] == '}':
		f.i, f.st = i+1, lzDone
		return true
	}
	f.st = lzUnsure
	return false
}

// pick returns the flat key index of the first of keys whose value is a
// string, reading only until that is certain: the key was met with a
// string value, and every key before it in keys was met with another
// value or the object ended. idx is -1 for none; ok is false when the
// scan became unsure.
func (f *lazyFlat) pick(keys []string) (idx int, ok bool) {
	for {
		decided := true
		for _, k := range keys {
			i := flatKeyIndex(k)
			sp := f.spans[i]
			if sp.end == 0 {
				if f.st == lzDone {
					continue
				}
				decided = false
				break
			}
			if f.s[sp.start] == '"' {
				return i, true
			}
		}
		if decided {
			return -1, true
		}
		if !f.advance() {
			return -1, false
		}
	}
}

// str returns the string value of flat key idx (met, a string), checked
// and decoded. ok is false when it is not a valid JSON string.
func (f *lazyFlat) str(idx int) (string, bool) {
	if f.spans[idx].end < 0 {
		if f.st != lzOpen || f.open != idx || !f.advance() {
			return "", false
		}
	}
	sp := f.spans[idx]
	if end, _, _, ok := scanString(f.s, sp.start); !ok || end != sp.end {
		return "", false
	}
	raw := rawFields{s: f.s}
	raw.spans[0] = rawSpan{start: int32(sp.start), end: int32(sp.end)}
	return raw.str(flatKeys[0])
}

// linesOver reports whether countLines of the string value of flat key
// idx is more than limit, reading the value only until that is certain
// (its escapes are followed, its other bytes not checked). ok is false
// when the value does not end as a JSON string would.
func (f *lazyFlat) linesOver(idx, limit int) (over, ok bool) {
	s := f.s
	start := f.spans[idx].start
	nl, lastNL := 0, -1 // newlines, and the index after the last
	q := -1             // the next quote at or after j
	for j := start + 1; ; {
		if q < j {
			k := strings.IndexByte(s[j:], '"')
			if k < 0 {
				return false, false
			}
			q = j + k
		}
		b := strings.IndexByte(s[j:q], '\\')
		if b < 0 {
			// The closing quote.
			lines := 0
			if q > start+1 {
				lines = nl + 1
				if lastNL == q {
					lines = nl
				}
			}
			return lines > limit, true
		}
		j += b
		if j+1 >= len(s) {
			return false, false
		}
		switch s[j+1] {
		case 'n':
			nl++
			j += 2
			lastNL = j
		case 'u':
			if j+6 > len(s) {
				return false, false
			}
			if h := s[j+2 : j+6]; h == "000a" || h == "000A" {
				nl++
				lastNL = j + 6
			}
			j += 6
		default:
			j += 2
		}
		if nl > limit {
			return true, true
		}
	}
}

// skipStr returns the index after the JSON string at s[i] (s[i] is '"'):
// the next quote not escaped by an odd run of backslashes.
func skipStr(s string, i int) (int, bool) {
	j := i + 1
	for {
		k := strings.IndexByte(s[j:], '"')
		if k < 0 {
			return 0, false
		}
		q := j + k
		n := 0
		for q-1-n > i && s[q-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
}

// skipJSON returns the index after the JSON value at s[i], following
// strings and brackets without checking the rest.
func skipJSON(s string, i int) (int, bool) {
	start, depth := i, 0
	for i < len(s) {
		switch c := s[i]; {
		case c == '"':
			end, ok := skipStr(s, i)
			if !ok {
				return 0, false
			}
			if i = end; depth == 0 {
				return i, true
			}
		case c == '{' || c == '[':
			depth++
			i++
		case c == '}' || c == ']':
			if depth == 0 {
				return i, i > start
			}
			depth--
			if i++; depth == 0 {
				return i, true
			}
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return i, i > start
		default:
			i++
		}
	}
	return i, depth == 0 && i > start
}
