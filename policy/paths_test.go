package policy

import (
	"path"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
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
				want = strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, p)
				break
			}
		}
		if got := foldPath(p); got != want {
			t.Fatalf("foldPath(%q) = %q, want %q", p, got, want)
		}
	})
}
