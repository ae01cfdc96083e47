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
