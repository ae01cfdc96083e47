package count

import "strings"

// CountVowels counts the vowels of s, in either case.
func CountVowels(s string) int {
	n := 0
	for _, r := range s {
		if strings.ContainsRune("aeiou", r) {
			n++
		}
	}
	return n
}

// Words counts the space-separated words of s.
func Words(s string) int {
	return len(strings.Fields(s))
}
