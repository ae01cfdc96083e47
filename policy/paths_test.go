package policy

import (
	"path"
	"strings"
	"testing"
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
