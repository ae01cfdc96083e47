package policy

import (
	"encoding/json"
	"math/bits"
	"strings"
)

// lazyFlat reads the top-level members of a flat edit's input (Write,
// Edit, NotebookEdit, a deletion) only as far as a question needs: which
// file the call names, and whether its content has more lines than a
// phase allows. It reads from both ends. From the start, in order, while
// each value it passes is short (lazyAhead): a Write that names its file
// first is answered without reading its content. Then from the end,
// member by member, the last first: a Write that names its file after
// its content is answered without reading the content either. A string
// read from the end ends at the nearest quote not escaped by an odd run
// of backslashes before it: in JSON every quote inside a string is
// escaped, so that quote is where the string starts.
//
// What it reads it does not validate: it answers self-protection and
// denies, which an input that is not JSON would get anyway. An allow reads
// and checks the whole input (prepared.editInfo, scanFlat or
// encoding/json), which must name the same files, or the call is denied.
//
// Which of a key given twice counts: the last, as encoding/json,
// JavaScript's JSON.parse and serde_json's maps read it. The reading from
// the end meets the last of a key first and keeps it; once it reaches the
// object's start it knows every key's value. The reading from the start
// keeps the first it meets: when a later one differs, the whole reading
// disagrees with it and the call is denied (fail closed). A flat key the
// reading from the start meets twice makes it unsure: the whole reading
// decides.
type lazyFlat struct {
	s string
	i int // where the scan from the start stands
	// st is the state of the reading from the start, bst of the reading
	// from the end (below; one word for both: prepared's size).
	st  lazyState
	bst backState
	// far is i+1 when the value at i was found longer than lazyAhead:
	// step does not read it again from the start until the end is read.
	far  int
	open int // the flat key whose value starts at i (lzOpen)
	// spans are where each flat key's value lies, as read from the start;
	// end 0: not met (yet), -1: met, its value starts at start and is not
	// skipped yet.
	spans [24]lazySpan
	// The reading from the end: back are the values of the flat keys it
	// met (the last of each; end 0: not met), b the index of the ',' or
	// '}' after the next member it reads, obj the object's '{'.
	b, obj int
	back   [24]lazySpan
	// The newline count of linesOver, kept between its calls (one per
	// simulated phase): ln is where the string it counts starts (+1; 0
	// for none).
	ln      int
	lnState lineCount
}

// lazySpan is where a value lies in the input, in 32 bits (lazyInput
// reads no input of 2 GiB or more lazily): lazyFlat is zeroed for every
// flat edit a decision reads.
type lazySpan struct{ start, end int32 }

type lazyState uint8

const (
	lzStart  lazyState = iota // nothing read
	lzMember                  // before a member: after '{' or ','
	lzOpen                    // at the value of flat key open
	lzDone                    // the object's '}' was read
	lzUnsure                  // not an object as far as read, or a flat key given twice: read the input whole
)

type backState uint8

const (
	lbStart  backState = iota // nothing read from the end
	lbMember                  // members before b are unread
	lbDone                    // every member was read from the end
	lbStuck                   // the end does not read as an object's: read from the start only
)

// lazyAhead is how long a value the reading from the start passes before
// it turns to the end of the input (tests set it to 0 or to a large value
// to exercise each reading). It passes only the values before the path
// (a path's own value it does not skip): one longer than this is likely
// the content, which the reading from the end does not read.
var lazyAhead = 32

// step reads one member further: from the start while the value it
// passes is shorter than lazyAhead, else from the end, else (the end
// read, or not readable) from the start whatever the value's length. It
// returns false once nothing more can be read.
func (f *lazyFlat) step() bool {
	if f.st == lzUnsure || f.st == lzDone {
		return false
	}
	if f.bst == lbDone || f.bst == lbStuck {
		return f.advance(-1)
	}
	if f.far != f.i+1 {
		if f.advance(lazyAhead) {
			return true
		}
		if f.st == lzOpen || f.st == lzMember {
			f.far = f.i + 1 // (advance stopped at a long value)
		}
	}
	if f.st == lzUnsure || f.st == lzDone {
		return false
	}
	if f.stepBack() {
		return true
	}
	return f.advance(-1)
}

// advance reads one step further from the start: the object's start, a
// member's key (a flat key's value is left open), or the open value. It
// returns false once the scan is done or unsure, or (limit >= 0) when the
// value to pass is longer than limit bytes; then the state is unchanged.
func (f *lazyFlat) advance(limit int) bool {
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
		end, ok, far := skipWithin(s, f.i, limit)
		if far {
			return false
		}
		if !ok {
			f.st = lzUnsure
			return false
		}
		f.spans[f.open].end = int32(end)
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
		key, ok := memberKey(s, i, kend)
		if !ok {
			f.st = lzUnsure
			return false
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
			f.spans[idx] = lazySpan{start: int32(i), end: -1}
			f.i, f.open, f.st = i, idx, lzOpen
			return true
		}
		end, ok, far := skipWithin(s, i, limit)
		if far {
			return false
		}
		if !ok {
			f.st = lzUnsure
			return false
		}
		return f.afterValue(end)
	}
	return false
}

// memberKey returns the key of the member whose key string is s[i:end]:
// as written, or decoded when it holds an escape (file\u005fpath), as a
// parser would; "" for an escaped key too long to be a flat key (none is
// longer than 13 bytes, six per escape). ok is false when an escaped key
// does not decode.
func memberKey(s string, i, end int) (string, bool) {
	key := s[i+1 : end-1]
	if strings.IndexByte(key, '\\') < 0 {
		return key, true
	}
	if end-i > 2+6*13 {
		return "", true
	}
	var k string
	if json.Unmarshal([]byte(s[i:end]), &k) != nil {
		return "", false
	}
	return k, true
}

// skipWithin is skipJSON of the value at s[i], or (limit >= 0) far when
// it does not end within limit bytes.
func skipWithin(s string, i, limit int) (end int, ok, far bool) {
	if limit < 0 || len(s)-i <= limit {
		end, ok = skipJSON(s, i)
		return end, ok, false
	}
	lim := i + limit
	if end, ok = skipJSON(s[:lim], i); ok && end < lim {
		return end, true, false
	}
	return 0, false, true
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

// stepBack reads one member from the end (the last unread one), or finds
// that the input does not end as an object does (lbStuck). It returns
// false once the reading from the end is done or stuck.
func (f *lazyFlat) stepBack() bool {
	s := f.s
	switch f.bst {
	case lbStart:
		obj := skipWS(s, 0)
		e := skipWSBack(s, len(s))
		if obj >= len(s) || s[obj] != '{' || e-1 <= obj || s[e-1] != '}' {
			f.bst = lbStuck
			return false
		}
		f.obj, f.b, f.bst = obj, e-1, lbMember
		if skipWSBack(s, e-1) == obj+1 {
			f.bst = lbDone // {}
		}
		return true
	case lbMember:
		lo := f.obj + 1
		vend := skipWSBack(s, f.b)
		vstart, ok := skipBackValue(s, lo, vend)
		if !ok {
			break
		}
		j := skipWSBack(s, vstart)
		if j <= lo || s[j-1] != ':' {
			break
		}
		kend := skipWSBack(s, j-1)
		if kend <= lo || s[kend-1] != '"' {
			break
		}
		kstart, ok := skipStrBack(s, lo, kend)
		if !ok {
			break
		}
		key, ok := memberKey(s, kstart, kend)
		if !ok {
			break
		}
		j = skipWSBack(s, kstart)
		switch {
		case j == lo:
			f.bst = lbDone
		case j > lo && s[j-1] == ',':
			f.b = j - 1
		default:
			f.bst = lbStuck
			return false
		}
		if idx := flatKeyIndex(key); idx >= 0 && f.back[idx].end == 0 {
			f.back[idx] = lazySpan{start: int32(vstart), end: int32(vend)}
		}
		return true
	default:
		return false
	}
	f.bst = lbStuck
	return false
}

// skipWSBack returns the index after the last byte before i that is not
// JSON whitespace.
func skipWSBack(s string, i int) int {
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t' || s[i-1] == '\n' || s[i-1] == '\r') {
		i--
	}
	return i
}

// escapedAt reports whether the quote at s[q] follows an odd run of
// backslashes (that start at or after lo).
func escapedAt(s string, lo, q int) bool {
	n := 0
	for q-1-n >= lo && s[q-1-n] == '\\' {
		n++
	}
	return n%2 == 1
}

// skipStrBack returns the index of the quote that opens the JSON string
// ending at end (s[end-1] is '"'), looking no further back than lo.
func skipStrBack(s string, lo, end int) (int, bool) {
	if escapedAt(s, lo, end-1) {
		return 0, false
	}
	j := end - 1
	for j > lo {
		k := strings.LastIndexByte(s[lo:j], '"')
		if k < 0 {
			return 0, false
		}
		q := lo + k
		if !escapedAt(s, lo, q) {
			return q, true
		}
		j = q
	}
	return 0, false
}

// skipBackValue returns the index where the JSON value ending at end
// starts, following strings and brackets without checking the rest.
func skipBackValue(s string, lo, end int) (int, bool) {
	if end <= lo {
		return 0, false
	}
	switch s[end-1] {
	case '"':
		return skipStrBack(s, lo, end)
	case '}', ']':
		depth := 0
		for i := end; i > lo; {
			switch s[i-1] {
			case '"':
				q, ok := skipStrBack(s, lo, i)
				if !ok {
					return 0, false
				}
				i = q
			case '}', ']':
				depth++
				i--
			case '{', '[':
				depth--
				i--
				if depth == 0 {
					return i, true
				}
				if depth < 0 {
					return 0, false
				}
			default:
				i--
			}
		}
		return 0, false
	}
	// A number or a literal: the bytes back to a separator.
	i := end
	for i > lo {
		switch s[i-1] {
		case ':', ',', '{', '[', '}', ']', '"', ' ', '\t', '\n', '\r':
			return i, i < end
		}
		i--
	}
	return 0, false
}

// span returns where flat key idx's value lies: the last of it, read from
// the end, or else the first, read from the start.
func (f *lazyFlat) span(idx int) lazySpan {
	if f.back[idx].end != 0 {
		return f.back[idx]
	}
	return f.spans[idx]
}

// pick returns the flat key index of the first of keys whose value is a
// string, reading only until that is certain: the key was met with a
// string value, and every key before it in keys was met with another
// value or is absent (the object was read to its end from the start, or
// to its start from the end). idx is -1 for none; ok is false when the
// scan became unsure.
func (f *lazyFlat) pick(keys []int) (idx int, ok bool) {
	for {
		decided := true
		for _, i := range keys {
			sp := f.span(i)
			if sp.end == 0 {
				if f.st == lzDone || f.bst == lbDone {
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
		if !f.step() {
			return -1, false
		}
	}
}

// str returns the string value of flat key idx (met, a string), checked
// and decoded. ok is false when it is not a valid JSON string.
func (f *lazyFlat) str(idx int) (string, bool) {
	if f.span(idx).end < 0 {
		if f.st != lzOpen || f.open != idx || !f.advance(-1) {
			return "", false
		}
	}
	sp := f.span(idx)
	if end, _, _, ok := scanString(f.s, int(sp.start)); !ok || end != int(sp.end) {
		return "", false
	}
	return stringValue(f.s[sp.start:sp.end])
}

// lineCount is how far linesOver counted a string's newlines: from j on
// the string is unread; nl newlines so far; done when the closing quote
// was read (at lastQ). lastNL is where the last newline that could end
// the string ends (linesOver's words leave out one followed by more bytes
// of the word: the quote comes after them), to be compared with lastQ.
type lineCount struct {
	j, nl, lastNL, lastQ int
	done                 bool
}

// linesOver reports whether countLines of the string value of flat key
// idx is more than limit, reading the value only until that is certain
// (its escapes are followed, its other bytes not checked), and going on
// from where an earlier call stopped. ok is false when the value does not
// end as a JSON string would.
//
// It reads eight bytes at a time while they are plain (plainWords): no
// quote that no backslash escapes (the string's end), no two backslashes
// in a row, no \u; every backslash then escapes the byte after it, and
// the escaped n's are the newlines. Where the bytes are not plain it
// reads one quote or escape (lineStep). In code an escape comes every ten or twenty
// bytes: a search from one escape to the next costs more than reading
// all eight bytes without a branch. TestLinesOverAgrees compares the
// count with lineStep's alone.
func (f *lazyFlat) linesOver(idx, limit int) (over, ok bool) {
	s := f.s
	start := int(f.span(idx).start)
	c := &f.lnState
	if f.ln != start+1 {
		f.ln, *c = start+1, lineCount{j: start + 1, lastNL: -1}
	}
	for !c.done && c.nl <= limit {
		c.j, c.nl, c.lastNL = plainWords(s, c.j, c.nl, c.lastNL, limit)
		if c.nl > limit {
			break
		}
		if !f.lineStep(s) {
			f.ln = 0
			return false, false
		}
	}
	if !c.done {
		return true, true // more than limit newlines
	}
	lines := 0
	if c.lastQ > start+1 {
		lines = c.nl + 1
		if c.lastNL == c.lastQ {
			lines = c.nl
		}
	}
	return lines > limit, true
}

// plainWords is linesOver's reading of s eight bytes at a time from j
// on, with nl newlines and the last at lastNL so far: it stops before the
// first word that is not plain (or that the end cuts short), or once nl
// is over limit, and returns where it stopped and the count there. (A
// function of its own, with no state in memory: the loop keeps it all in
// registers.)
func plainWords(s string, j, nl, lastNL, limit int) (int, int, int) {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	// carry flags the first byte (0x80) when the word before ended with a
	// backslash that escapes it.
	var carry uint64
	if k, n, endNL, c := plainBlocks(s, j, nl, limit); k > 0 {
		// 64 bytes a step first, as far as they go (the same reading:
		// TestLinesOverBlocks); an escape carried out of the last block
		// read is read again from its backslash.
		j, nl = j+k, n
		if endNL {
			lastNL = j
		}
		if c {
			j--
		}
	}
	for nl <= limit && j+8 <= len(s) {
		b8 := s[j : j+8] // (one bounds check, one load)
		w := uint64(b8[0]) | uint64(b8[1])<<8 | uint64(b8[2])<<16 | uint64(b8[3])<<24 |
			uint64(b8[4])<<32 | uint64(b8[5])<<40 | uint64(b8[6])<<48 | uint64(b8[7])<<56
		// A byte b is flagged where b^pattern is zero (x-1 borrows into
		// its high bit), and may also be where the byte before it matched
		// and b is pattern^1 (the borrow runs on): never a byte after a
		// backslash but where that backslash is escaped itself or ends a
		// word before it, whose byte a flagged backslash escapes: then
		// bs&esc flags it, and the word is read by steps. So where the
		// words are read, the flags are exact at every escape.
		xb, xq := w^(lo*'\\'), w^(lo*'"')
		bs, q := (xb-lo)&^xb&hi, (xq-lo)&^xq&hi
		if bs|q|carry == 0 {
			j += 8 // no quote, no backslash
			continue
		}
		xu, xn := w^(lo*'u'), w^(lo*'n')
		esc := bs<<8 | carry
		if q&^esc|((xu-lo)&^xu|bs)&esc != 0 {
			break
		}
		n := (xn - lo) &^ xn & esc
		nl += int((n >> 7) * lo >> 56) // (at most eight flags)
		if n>>63 != 0 {
			// A newline that ends the word may end the string: the one
			// before the closing quote is all that lastNL is compared
			// with (lastQ is after this word).
			lastNL = j + 8
		}
		carry = bs >> 63 << 7
		j += 8
	}
	if carry != 0 {
		j-- // (the escape starts before the word)
	}
	return j, nl, lastNL
}

// lineStep reads the next quote or escape of the string linesOver counts,
// from c.j on: the closing quote (done), a newline (\n, \u000a), any
// other escape. It returns false when the string ends before it does.
func (f *lazyFlat) lineStep(s string) bool {
	c := &f.lnState
	j := quoteOrEscape(s, c.j)
	if j >= len(s) {
		return false
	}
	switch s[j] {
	case '"':
		c.done, c.lastQ = true, j
	default: // a backslash
		if j+1 >= len(s) {
			return false
		}
		switch s[j+1] {
		case 'n':
			c.nl++
			j += 2
			c.lastNL = j
		case 'u':
			if j+6 > len(s) {
				return false
			}
			if h := s[j+2 : j+6]; h == "000a" || h == "000A" {
				c.nl++
				c.lastNL = j + 6
			}
			j += 6
		default:
			j += 2
		}
	}
	c.j = j
	return true
}

// quoteOrEscape returns the index of the first '"' or '\\' in s from j on
// (len(s) for none), eight bytes at a time: in code an escape comes every
// ten or twenty bytes, too often for strings.IndexAny's set-up to pay, and
// a byte at a time is slower. (In a word, a byte b matches where b^pattern
// is zero; the lowest flagged byte of the zero-byte test is exact.)
func quoteOrEscape(s string, j int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for ; j+8 <= len(s); j += 8 {
		b8 := s[j : j+8] // (one bounds check, one load)
		w := uint64(b8[0]) | uint64(b8[1])<<8 | uint64(b8[2])<<16 | uint64(b8[3])<<24 |
			uint64(b8[4])<<32 | uint64(b8[5])<<40 | uint64(b8[6])<<48 | uint64(b8[7])<<56
		q, b := w^(lo*'"'), w^(lo*'\\')
		if m := ((q-lo)&^q | (b-lo)&^b) & hi; m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	for ; j < len(s); j++ {
		if s[j] == '"' || s[j] == '\\' {
			return j
		}
	}
	return len(s)
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
