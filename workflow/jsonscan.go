package workflow

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// syntaxError is a failure to read the document at all.
type syntaxError struct {
	pos Pos
	msg string
}

// Error renders the position and the message.
func (e *syntaxError) Error() string { return e.pos.String() + ": " + e.msg }

// jsonScanner is a small recursive-descent JSON reader (RFC 8259) that
// builds a positioned node tree. It tracks line and column (in characters)
// as it goes, so every value and every syntax error has an exact position.
type jsonScanner struct {
	data  []byte
	off   int
	line  int
	col   int
	dup   func(string, Pos)
	count int
}

// parseJSONNode reads one JSON document into a node tree. Duplicate keys are
// reported through dup and the later value wins.
func parseJSONNode(data []byte, dup func(key string, pos Pos)) (*node, error) {
	s := &jsonScanner{data: data, line: 1, col: 1, dup: dup}
	n, err := s.value(0)
	if err != nil {
		return nil, err
	}
	s.skipSpace()
	if s.off < len(s.data) {
		return nil, s.errorf("unexpected data after the top-level value")
	}
	return n, nil
}

func (s *jsonScanner) pos() Pos { return Pos{Line: s.line, Col: s.col} }

func (s *jsonScanner) errorf(format string, args ...any) error {
	return &syntaxError{pos: s.pos(), msg: "invalid JSON: " + fmt.Sprintf(format, args...)}
}

// advance moves past one byte, keeping line and column.
func (s *jsonScanner) advance() {
	c := s.data[s.off]
	s.off++
	switch {
	case c == '\n':
		s.line++
		s.col = 1
	case c < utf8.RuneSelf || c >= 0xC0: // not a continuation byte
		s.col++
	}
}

func (s *jsonScanner) skipSpace() {
	for s.off < len(s.data) {
		switch s.data[s.off] {
		case ' ', '\t', '\r', '\n':
			s.advance()
		default:
			return
		}
	}
}

func (s *jsonScanner) unexpected() error {
	if s.off >= len(s.data) {
		return s.errorf("unexpected end of input")
	}
	r, _ := utf8.DecodeRune(s.data[s.off:])
	return s.errorf("unexpected character %q", r)
}

func (s *jsonScanner) value(depth int) (*node, error) {
	s.skipSpace()
	s.count++
	if s.count > maxNodes {
		return nil, s.errorf("document is too large")
	}
	if depth > maxDepth {
		return nil, s.errorf("document nests deeper than %d levels", maxDepth)
	}
	if s.off >= len(s.data) {
		return nil, s.unexpected()
	}
	n := &node{pos: s.pos()}
	switch c := s.data[s.off]; {
	case c == '{':
		return n, s.object(n, depth)
	case c == '[':
		return n, s.array(n, depth)
	case c == '"':
		str, err := s.str()
		n.kind, n.s = kString, str
		return n, err
	case c == 't':
		n.kind, n.b = kBool, true
		return n, s.literal("true")
	case c == 'f':
		n.kind = kBool
		return n, s.literal("false")
	case c == 'n':
		n.kind = kNull
		return n, s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return n, s.number(n)
	default:
		return nil, s.unexpected()
	}
}

func (s *jsonScanner) literal(word string) error {
	if !strings.HasPrefix(string(s.data[s.off:min(len(s.data), s.off+len(word))]), word) {
		return s.unexpected()
	}
	for range word {
		s.advance()
	}
	return nil
}

func (s *jsonScanner) object(n *node, depth int) error {
	n.kind = kObject
	ob := objectBuilder{keys: []member{}, dup: s.dup}
	defer func() { n.keys = ob.keys }()
	s.advance() // '{'
	s.skipSpace()
	if s.off < len(s.data) && s.data[s.off] == '}' {
		s.advance()
		return nil
	}
	for {
		s.skipSpace()
		if s.off >= len(s.data) || s.data[s.off] != '"' {
			if s.off < len(s.data) {
				return s.errorf("expected a string object key, found %q", rune(s.data[s.off]))
			}
			return s.unexpected()
		}
		kpos := s.pos()
		key, err := s.str()
		if err != nil {
			return err
		}
		s.skipSpace()
		if s.off >= len(s.data) || s.data[s.off] != ':' {
			if s.off >= len(s.data) {
				return s.unexpected()
			}
			return s.errorf("expected ':' after object key %q", key)
		}
		s.advance()
		val, err := s.value(depth + 1)
		if err != nil {
			return err
		}
		ob.add(member{key: key, keyPos: kpos, val: val})
		s.skipSpace()
		if s.off >= len(s.data) {
			return s.unexpected()
		}
		switch s.data[s.off] {
		case ',':
			s.advance()
		case '}':
			s.advance()
			return nil
		default:
			return s.errorf("expected ',' or '}' after object member, found %q", rune(s.data[s.off]))
		}
	}
}

func (s *jsonScanner) array(n *node, depth int) error {
	n.kind = kArray
	n.items = []*node{}
	s.advance() // '['
	s.skipSpace()
	if s.off < len(s.data) && s.data[s.off] == ']' {
		s.advance()
		return nil
	}
	for {
		it, err := s.value(depth + 1)
		if err != nil {
			return err
		}
		n.items = append(n.items, it)
		s.skipSpace()
		if s.off >= len(s.data) {
			return s.unexpected()
		}
		switch s.data[s.off] {
		case ',':
			s.advance()
		case ']':
			s.advance()
			return nil
		default:
			return s.errorf("expected ',' or ']' after array element, found %q", rune(s.data[s.off]))
		}
	}
}

// str reads a string literal; invalid UTF-8 becomes U+FFFD, as in
// encoding/json.
func (s *jsonScanner) str() (string, error) {
	s.advance() // opening quote
	start := s.off
	// Fast path: no escapes, valid UTF-8.
	for i := s.off; i < len(s.data); i++ {
		c := s.data[i]
		if c == '"' {
			if utf8.Valid(s.data[start:i]) {
				for s.off < i {
					s.advance()
				}
				s.advance()
				return string(s.data[start:i]), nil
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	var b strings.Builder
	for {
		if s.off >= len(s.data) {
			return "", s.errorf("unterminated string")
		}
		c := s.data[s.off]
		switch {
		case c == '"':
			s.advance()
			return b.String(), nil
		case c < 0x20:
			return "", s.errorf("control character %q in string", rune(c))
		case c == '\\':
			s.advance()
			if s.off >= len(s.data) {
				return "", s.errorf("unterminated string")
			}
			e := s.data[s.off]
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := s.hex4(s.off + 1)
				if !ok {
					return "", s.errorf("invalid \\u escape")
				}
				for range 4 {
					s.advance()
				}
				if utf16.IsSurrogate(r) {
					if s.off+6 < len(s.data) && s.data[s.off+1] == '\\' && s.data[s.off+2] == 'u' {
						if r2, ok := s.hex4(s.off + 3); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								for range 6 {
									s.advance()
								}
								r = dec
							} else {
								r = utf8.RuneError
							}
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				b.WriteRune(r)
			default:
				return "", s.errorf("invalid escape %q in string", "\\"+string(rune(e)))
			}
			s.advance()
		default:
			r, size := utf8.DecodeRune(s.data[s.off:])
			b.WriteRune(r) // RuneError for invalid bytes
			for range size {
				s.advance()
			}
		}
	}
}

func (s *jsonScanner) hex4(at int) (rune, bool) {
	if at+4 > len(s.data) {
		return 0, false
	}
	var r rune
	for _, c := range s.data[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number reads a number literal following the JSON grammar.
func (s *jsonScanner) number(n *node) error {
	start := s.off
	digits := func() int {
		k := 0
		for s.off < len(s.data) && s.data[s.off] >= '0' && s.data[s.off] <= '9' {
			s.advance()
			k++
		}
		return k
	}
	if s.data[s.off] == '-' {
		s.advance()
	}
	if s.off < len(s.data) && s.data[s.off] == '0' {
		s.advance()
	} else if digits() == 0 {
		return s.unexpected()
	}
	if s.off < len(s.data) && s.data[s.off] == '.' {
		s.advance()
		if digits() == 0 {
			return s.unexpected()
		}
	}
	if s.off < len(s.data) && (s.data[s.off] == 'e' || s.data[s.off] == 'E') {
		s.advance()
		if s.off < len(s.data) && (s.data[s.off] == '+' || s.data[s.off] == '-') {
			s.advance()
		}
		if digits() == 0 {
			return s.unexpected()
		}
	}
	if err := setNumber(n, string(s.data[start:s.off])); err != nil {
		return &syntaxError{pos: n.pos, msg: err.Error()}
	}
	return nil
}
