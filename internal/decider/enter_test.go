//go:build unix

package decider

import (
	"os"
	"slices"
	"testing"

	"github.com/statewright-go/statewright/internal/hookwire"
)

// TestEnterEnvironment: each request's environment is the process's
// after enter, whether it differs from the previous one or repeats it,
// and a duplicate name ends with its last value, as setting it does.
func TestEnterEnvironment(t *testing.T) {
	saved, wd := os.Environ(), t.TempDir()
	t.Cleanup(func() {
		os.Clearenv()
		for _, kv := range saved {
			for i := 1; i < len(kv); i++ {
				if kv[i] == '=' {
					os.Setenv(kv[:i], kv[i+1:])
					break
				}
			}
		}
		envSet = false
	})
	for _, c := range []struct {
		env  []string
		want map[string]string
	}{
		{[]string{"A=1", "B=2"}, map[string]string{"A": "1", "B": "2"}},
		{[]string{"A=1", "B=2"}, map[string]string{"A": "1", "B": "2"}},
		{[]string{"A=1"}, map[string]string{"A": "1", "B": ""}},
		{[]string{"B=3", "A=1"}, map[string]string{"A": "1", "B": "3"}},
		{[]string{"A=1", "A=4"}, map[string]string{"A": "4", "B": ""}},
		{[]string{"A=1", "A=4"}, map[string]string{"A": "4", "B": ""}},
		{[]string{"A=1", "B=2"}, map[string]string{"A": "1", "B": "2"}},
	} {
		if err := enter(&hookwire.Request{Dir: wd, Env: c.env, Umask: 0o22}); err != nil {
			t.Fatal(err)
		}
		for k, v := range c.want {
			if got := os.Getenv(k); got != v {
				t.Errorf("after %q: %s=%q, want %q", c.env, k, got, v)
			}
		}
		if len(c.want) == 2 && c.want["B"] != "" && !slices.Contains(os.Environ(), "B="+c.want["B"]) {
			t.Errorf("after %q: environment %q", c.env, os.Environ())
		}
	}
}
