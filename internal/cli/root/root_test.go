package root

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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

// TestFlagPlaceholders walks every command's flags: pflag shows the first
// `backquoted` word of a usage as the flag's value placeholder, so a usage
// quoting a command (`statewright trust`) printed "--gateway-config
// statewright trust" in --help. A placeholder is one word.
func TestFlagPlaceholders(t *testing.T) {
	root := NewCmdRoot(cmdutil.New("test"))
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		check := func(f *pflag.Flag) {
			if name, _ := pflag.UnquoteUsage(f); strings.ContainsAny(name, " \t") {
				t.Errorf("%s --%s: its help shows the placeholder %q (a backquoted phrase in the usage)", c.CommandPath(), f.Name, name)
			}
		}
		c.LocalFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
	}
	walk(root)
}
