package policy

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
			if !ok {
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
