package policy

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// fenceSetsForTest are the protected and secret sets of a host, with a
// workflow's own secret patterns, compiled as Compile does.
func fenceSetsForTest() []fenceSet {
	h := &Host{Home: "/home/u", ProjectDir: "/home/u/proj", GitDirs: []string{"/home/u/proj/.git"}, Store: "/home/u/.local/state/statewright/state.db",
		Binary: "/usr/local/bin/statewright", Secrets: []string{"/home/u/.config/statewright/decider"}}
	var out []fenceSet
	for _, rules := range []SecretRules{
		{},
		// Patterns the fast matcher takes.
		{Paths: []string{"*.key", "secrets/**", "/etc/sec?et*", "config/*.json", "~/.vault-token", "/etc/**/secret1", "/**/abd", "/home/u/**/proj/*"}},
		// And ones it leaves to doublestar.
		{Paths: []string{"a[bc]d", "x{y,z}", "/home/**/u/**/x.key"}},
	} {
		f := HostFences(h, rules)
		out = append(out, compileFences(f.Protected, nil), compileFences(f.Secret, f.NotSecret))
		out = append(out, compileFences(HostFences(nil, rules).Secret, f.NotSecret))
	}
	return out
}

var fenceWords = []string{"home", "u", "proj", ".env", ".env.local", ".env.example", "a.pem", "b.pem.sample", ".ssh", "id_rsa",
	"statewright", "signing-key.1", "operator-token", "tokens.json", ".claude", "projects", ".git", "config", "config.worktree",
	"worktrees", "w1", "hooks", "x.key", "secrets", "etc", "secret1", "sec_et", "abd", "xy", "ö.pem", "ÄB", "src", "main.go",
	".config", "gcloud", "decider", "key", ".", "..", ""}

func randomPath(r *rand.Rand) string {
	n := r.IntN(8)
	var parts []string
	for range n {
		parts = append(parts, fenceWords[r.IntN(len(fenceWords))])
	}
	p := strings.Join(parts, "/")
	if r.IntN(5) > 0 {
		p = "/" + p
	}
	if r.IntN(4) == 0 {
		return strings.ToUpper(p[:len(p)/2]) + p[len(p)/2:]
	}
	return p
}

// TestFenceMatchFast: the fast glob matcher answers as doublestar does,
// on every path (clean or not, absolute or relative).
func TestFenceMatchFast(t *testing.T) {
	sets := fenceSetsForTest()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		p := randomPath(r)
		for si := range sets {
			s := &sets[si]
			g1, ok1 := s.match(p)
			g2, ok2 := s.matchReference(strings.ToLower(p))
			if ok1 != ok2 || g1 != g2 {
				t.Fatalf("set %d, path %q (#%d): fast %q %v, reference %q %v", si, p, i, g1, ok1, g2, ok2)
			}
		}
	}
	for _, s := range sets[:6] {
		if !s.allFast {
			t.Errorf("the default fences do not all take the fast matcher: %v", s.globs)
		}
	}
}

func FuzzFenceMatch(f *testing.F) {
	for _, p := range []string{"/home/u/.env", "/a/b.pem", "proj/.git/worktrees/x/config.worktree", "/x/ö?", "//a/../b"} {
		f.Add(p)
	}
	sets := fenceSetsForTest()
	f.Fuzz(func(t *testing.T, p string) {
		for si := range sets {
			s := &sets[si]
			g1, ok1 := s.match(p)
			g2, ok2 := s.matchReference(strings.ToLower(p))
			if ok1 != ok2 || g1 != g2 {
				t.Fatalf("set %d, path %q: fast %q %v, reference %q %v", si, p, g1, ok1, g2, ok2)
			}
		}
	})
}

func TestWildMatch(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{"*", "", true}, {"*", "abc", true}, {".env*", ".env", true}, {".env*", ".envrc", true}, {".env*", "x.env", false},
		{"*.pem", "a.pem", true}, {"*.pem", "a.pem.x", false}, {"a?c", "abc", true}, {"a?c", "aöc", true}, {"a?c", "ac", false},
		{"*a*b", "xaxb", true}, {"*a*b", "xaxbx", false}, {"signing-key*", "signing-key", true}, {"", "", true}, {"", "a", false},
	} {
		if got := wildMatch(c.pat, c.s); got != c.want {
			t.Errorf("wildMatch(%q, %q) = %v", c.pat, c.s, got)
		}
	}
}
