package strs

import "strings"

// Reverse returns s with its runes in reverse order.
func Reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j-1; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// Shout returns s in upper case with an exclamation mark.
func Shout(s string) string {
	return strings.ToUpper(s) + "!"
}
