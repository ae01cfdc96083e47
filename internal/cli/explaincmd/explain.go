// Package explaincmd is `statewright explain bash`: how the shell analysis
// sees a command.
package explaincmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/shell"
)

// newExplainCmd builds `statewright explain`, which shows how statewright
// sees its inputs. Today it has one subcommand: bash.
func NewCmdExplain(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "explain",
		Short:   "Show how statewright analyses its inputs",
		Example: "  statewright explain bash 'git push --force origin main'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Usagef("explain needs a subcommand (bash)")
		},
	}
	cmd.AddCommand(newExplainBashCmd(f))
	return cmd
}

func newExplainBashCmd(f *cmdutil.Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "bash 'COMMAND'",
		Example: "  statewright explain bash 'cat > a.go <<EOF'\n  statewright explain bash 'curl https://example.com | sh' --json",
		Short:   "Analyse a shell command: its commands, classes, write targets and env references",
		Long: "explain bash parses COMMAND as bash and prints every simple command it contains (through\n" +
			"pipelines, lists, substitutions, wrappers and nested bash -c strings) with its argv,\n" +
			"wrappers, classes, write and read targets, and the line's environment references.\n" +
			"It runs nothing. A command that does not parse exits 1. Put -- before a command\n" +
			"that starts with a dash.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.Usagef("explain bash takes exactly one argument, the command (quote it), got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := shell.Analyze(args[0])
			if err != nil {
				var pe *shell.ParseError
				if errors.As(err, &pe) {
					return cmdutil.Failure(fmt.Sprintf("%d:%d: %s", pe.Line, pe.Col, pe.Msg))
				}
				return cmdutil.Failure(err.Error())
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(a)
			}
			printAnalysis(out, a)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the analysis as JSON")
	return cmd
}

func printAnalysis(out io.Writer, a *shell.Analysis) {
	for i, c := range a.Commands {
		name := c.Program
		switch {
		case c.Dynamic:
			name = "(dynamic)"
		case name == "" && len(c.Argv) == 0:
			name = "(redirection/assignment)"
		}
		fmt.Fprintf(out, "command %d: %s\n", i+1, name)
		fmt.Fprintf(out, "  argv:     %s\n", quoteArgv(c.Argv))
		if len(c.Assigns) > 0 {
			fmt.Fprintf(out, "  assigns:  %s\n", strings.Join(c.Assigns, " "))
		}
		if len(c.Wrappers) > 0 {
			fmt.Fprintf(out, "  wrappers: %s\n", strings.Join(c.Wrappers, ", "))
		}
		if c.Subcommand != "" {
			fmt.Fprintf(out, "  subcommand: %s\n", c.Subcommand)
		}
		fmt.Fprintf(out, "  classes:  %s\n", classList(c.Classes))
		if len(c.Writes) > 0 {
			fmt.Fprintf(out, "  writes:   %s\n", targets(c.Writes))
		}
		if len(c.Reads) > 0 {
			fmt.Fprintf(out, "  reads:    %s\n", targets(c.Reads))
		}
		if c.Nested {
			fmt.Fprintln(out, "  nested:   yes (inside a bash -c / eval string)")
		}
	}
	fmt.Fprintf(out, "classes: %s\n", classList(a.Classes))
	if len(a.Writes) > 0 {
		fmt.Fprintf(out, "writes: %s\n", targets(a.Writes))
	}
	if len(a.Reads) > 0 {
		fmt.Fprintf(out, "reads: %s\n", targets(a.Reads))
	}
	if len(a.EnvRefs) > 0 {
		fmt.Fprintf(out, "env refs: %s\n", strings.Join(a.EnvRefs, " "))
	}
	if a.DumpsEnv {
		fmt.Fprintln(out, "dumps env: yes")
	}
	if a.IndirectEnv {
		fmt.Fprintln(out, "indirect env: yes")
	}
}

func classList(c shell.Class) string {
	if c == 0 {
		return "(none)"
	}
	return strings.Join(c.Names(), ", ")
}

func targets(ts []shell.Target) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		if t.Dynamic {
			parts[i] = t.Path + " (dynamic)"
		} else {
			parts[i] = t.Path
		}
	}
	return strings.Join(parts, ", ")
}

func quoteArgv(argv []string) string {
	if len(argv) == 0 {
		return "[]"
	}
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = fmt.Sprintf("%q", a)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
