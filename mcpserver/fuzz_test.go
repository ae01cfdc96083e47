package mcpserver

import (
	"errors"
	"strings"
	"testing"
	"unicode"
)

// FuzzResolveSession checks that whatever a stamp or the environment holds,
// a resolved key is exactly "<harness>:<id>" with a plain id (no separator,
// space or control character that could splice another key), the stamp
// wins when present, and every refusal is ErrNoSession or ErrBadSession.
func FuzzResolveSession(f *testing.F) {
	for _, s := range [][2]string{{"abc", ""}, {"", "env"}, {"a:b", "x"}, {"../x", ""}, {"a\nb", ""}, {" ", "y"}, {"0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", ""}} {
		f.Add(s[0], s[1], true)
		f.Add(s[0], s[1], false)
	}
	f.Fuzz(func(t *testing.T, stamp, env string, trust bool) {
		key, src, err := resolveSession("claude-code", stamp, trust, env)
		if err != nil {
			if !errors.Is(err, ErrNoSession) && !errors.Is(err, ErrBadSession) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			if key != "" {
				t.Fatalf("key %q with error %v", key, err)
			}
			return
		}
		id, ok := strings.CutPrefix(key, "claude-code:")
		if !ok || id == "" || len(id) > 128 || strings.ContainsAny(id, ":/\\") ||
			strings.IndexFunc(id, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r > unicode.MaxASCII }) >= 0 {
			t.Fatalf("resolved key %q from stamp %q env %q", key, stamp, env)
		}
		switch {
		case stamp != "" && (src != SourceStamp || id != stamp):
			t.Fatalf("stamp %q did not win: %q from %s", stamp, key, src)
		case stamp == "" && (!trust || src != SourceEnv || id != env):
			t.Fatalf("unstamped call resolved to %q from %s (trust=%v env %q)", key, src, trust, env)
		}
	})
}
