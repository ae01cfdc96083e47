package policy

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// appendUnquoted appends to dst the string the JSON string literal v
// (quotes included, valid JSON: scanFlat checked it) decodes to, exactly
// as encoding/json decodes it: the escapes, a surrogate pair as one rune,
// a lone surrogate and every byte of invalid UTF-8 as U+FFFD. ok is false
// for text that is not a valid JSON string (the caller decodes it with
// encoding/json then, and fails as it fails).
func appendUnquoted(dst []byte, v string) (_ []byte, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return dst, false
	}
	s := v[1 : len(v)-1]
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			if r+1 >= len(s) {
				return dst, false
			}
			switch e := s[r+1]; e {
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := hex4(s, r+2)
				if rr < 0 {
					return dst, false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if r+1 < len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if rr1 := hex4(s, r+2); rr1 >= 0 {
							if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
								r += 6
								dst = utf8.AppendRune(dst, dec)
								continue
							}
						}
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default:
				return dst, false
			}
			r += 2
		case c == '"' || c < ' ':
			return dst, false
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRuneInString(s[r:])
			r += size
			dst = utf8.AppendRune(dst, rr)
		}
	}
	return dst, true
}

// hex4 is the value of the four hexadecimal digits at s[i:], or -1.
func hex4(s string, i int) rune {
	if i+4 > len(s) {
		return -1
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
