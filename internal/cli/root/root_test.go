package root

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/internal/cli/cmdutil"
)

// TestEveryCommandHasExample walks the command tree: every command a
// person runs shows examples in its help (issue 18 item 5). Hidden and
// deprecated commands, and cobra's own help and completion, are exempt.
func TestEveryCommandHasExample(t *testing.T) {
	root := NewCmdRoot(cmdutil.New("test"))
	root.InitDefaultCompletionCmd()
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Hidden || c.Deprecated != "" || !c.Runnable() || c == root {
			return
		}
		if p := c.CommandPath(); strings.HasPrefix(p, "statewright completion") || strings.HasPrefix(p, "statewright help") {
			return
		}
		n++
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example", c.CommandPath())
		} else if !strings.Contains(c.Example, "statewright") {
			t.Errorf("%s: its Example does not show a command line: %q", c.CommandPath(), c.Example)
		}
	}
	walk(root)
	if n < 40 {
		t.Errorf("walked %d commands; the tree has more", n)
	}
}
