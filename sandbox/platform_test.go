package sandbox

import (
	"strings"
	"testing"
)

func TestUnsupported(t *testing.T) {
	if why := Unsupported("linux"); why != "" {
		t.Errorf("linux: %q", why)
	}
	for _, goos := range []string{"windows", "darwin", "freebsd"} {
		why := Unsupported(goos)
		for _, want := range []string{"no OS sandbox on " + goos, "not protected", "--require-sandbox"} {
			if !strings.Contains(why, want) {
				t.Errorf("%s: %q lacks %q", goos, why, want)
			}
		}
	}
}

func TestYamaRefusal(t *testing.T) {
	for _, tc := range []struct {
		scope  string
		refuse bool
	}{
		{"0\n", false},
		{"1\n", true},
		{"2\n", true},
		{"3\n", true},
		{"", true}, // unreadable contents: do not promise the fast path
	} {
		got := yamaRefusal(tc.scope)
		if (got != "") != tc.refuse {
			t.Errorf("yamaRefusal(%q) = %q, want refusal %v", tc.scope, got, tc.refuse)
		}
		if tc.refuse && !strings.Contains(got, "launcher") {
			t.Errorf("yamaRefusal(%q) = %q: does not say what happens instead", tc.scope, got)
		}
	}
}
