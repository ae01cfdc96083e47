package policy

import (
	"path"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"
)

// FuzzIsCleanAbs: isCleanAbs and isCleanRel never call a path clean
// that path.Clean would change, and call every clean absolute path, and
// every clean relative one that does not climb, clean.
func FuzzIsCleanAbs(f *testing.F) {
	for _, s := range []string{"/", "//", "/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/.", "/..", "/...", "/.a", "/a.", "/a/..b", "a/b", "", "./a", "/repo/src/big.go", "/a/b/.", "/a/b/..", "src/a.go", "a", "a/", "a//b", "a/./b", "a/..", ".", "..", "../a", "a/.b", ".a/b", "a/b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if isCleanAbs(p) && path.Clean(p) != p {
			t.Fatalf("isCleanAbs(%q), but path.Clean gives %q", p, path.Clean(p))
		}
		if isCleanRel(p) && path.Clean(p) != p {
			t.Fatalf("isCleanRel(%q), but path.Clean gives %q", p, path.Clean(p))
		}
		if p != "" && !strings.HasPrefix(p, "/") && path.Clean(p) == p && !strings.HasPrefix(p+"/", "../") && p != "." && !isCleanRel(p) {
			t.Fatalf("isCleanRel(%q) is false of a clean relative path", p)
		}
		if strings.HasPrefix(p, "/") && path.Clean(p) == p && !isCleanAbs(p) {
			t.Fatalf("isCleanAbs(%q) is false of a clean absolute path", p)
		}
		if got := cleanPath(p); p != "" && got != path.Clean(p) {
			t.Fatalf("cleanPath(%q) = %q, path.Clean %q", p, got, path.Clean(p))
		}
	})
}

// FuzzFoldPath: foldPath's one pass over an ASCII path gives what the
// two passes before it gave (strings.ToLower after a look for non-ASCII),
// and the strings.Map fold for any other.
func FuzzFoldPath(f *testing.F) {
	for _, s := range []string{"", "/repo/src/a.go", "/Repo/Config/PROD.yaml", ".git/hookſ", ".gıt", "C:/Users/X", "\xff/A"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		want := strings.ToLower(p)
		for i := 0; i < len(p); i++ {
			if p[i] >= utf8.RuneSelf {
				want = norm.NFC.String(strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, p))
				break
			}
		}
		if got := foldPath(p); got != want {
			t.Fatalf("foldPath(%q) = %q, want %q", p, got, want)
		}
	})
}

// foldPathReference is foldPath one byte at a time, as FuzzFoldPath
// has it: strings.ToLower of an ASCII path, the strings.Map fold of any
// other.
func foldPathReference(p string) string {
	for i := 0; i < len(p); i++ {
		if p[i] >= utf8.RuneSelf {
			return norm.NFC.String(strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, p))
		}
	}
	return strings.ToLower(p)
}

// TestFoldPathWords: foldPath, which reads eight bytes at a time, folds
// every byte value at every place of a word and of the tail after the
// words as the one-byte reference does (the bytes around 'A' and 'Z',
// and those above 0x7f, included), and returns a lower-case ASCII path
// itself.
func TestFoldPathWords(t *testing.T) {
	const base = "/repo/src/abc.go/xy" // two words and a tail of three
	for pos := range len(base) {
		for c := range 256 {
			p := base[:pos] + string([]byte{byte(c)}) + base[pos+1:]
			if got, want := foldPath(p), foldPathReference(p); got != want {
				t.Fatalf("foldPath(%q) = %q, want %q", p, got, want)
			}
		}
	}
	for _, p := range []string{"@[`{@[`{@[`{", "/ſrc/abcdefgh", "/abcdefghijklmnoP", "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7fZ", "/REPO/SRC/ABC.GO"} {
		if got, want := foldPath(p), foldPathReference(p); got != want {
			t.Errorf("foldPath(%q) = %q, want %q", p, got, want)
		}
	}
	if got := foldPath(base); unsafe.StringData(got) != unsafe.StringData(base) {
		t.Errorf("foldPath(%q) copied a path that needs no folding", base)
	}
}
