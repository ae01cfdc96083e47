package checkcmd

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/policy"
)

// NewCmdTest returns `statewright test`.
func NewCmdTest(f *cmdutil.Factory) *cobra.Command {
	var verbose bool
	var cwd string
	cmd := &cobra.Command{
		Use:   "test WORKFLOW CASES",
		Short: "Check a workflow's decisions against a file of expected decisions",
		Long: `test decides every case in CASES against WORKFLOW and reports the cases whose
decision differs from the expected one, so a team can check its law in CI.

CASES is YAML (a list of cases, or {cases: [...]}) or JSON lines. A case is

  name: edit while planning is denied
  state: planning            # the run's state
  tool: Edit                 # the harness's raw tool name
  harness: claude-code       # optional: claude-code, codex, cursor, opencode, pi
  input: {file_path: src/a.go, old_string: a, new_string: b}
  run_state: {iterations: 3, files_edited: [src/a.go]}   # optional
  expect: deny               # allow, deny or ask
  rule: tool-not-allowed     # optional: the expected rule id
  next_events: [PLAN_READY]  # optional
  reason_contains: [PLAN_READY]  # optional
  # also optional: files_edited, count_iteration, transition, interrupt ("-" for none)

It prints one line per failing case and a summary "N passed, N failed"; it exits
1 when any case fails, 2 when WORKFLOW or CASES cannot be read.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return cmdutil.Usagef("test: want WORKFLOW CASES, got %d arguments", len(args))
			}
			data, err := os.ReadFile(args[1])
			if err != nil {
				return cmdutil.Usage(fmt.Errorf("read cases: %w", err))
			}
			cf, err := policy.ParseCases(data)
			if err != nil {
				return cmdutil.Usagef("%s: %v", args[1], err)
			}
			law, err := compileLaw(cmd.ErrOrStderr(), args[0])
			if err != nil {
				return err
			}
			dir := workDir(cwd)
			out := cmd.OutOrStdout()
			passed, failed := 0, 0
			for i := range cf.Cases {
				c := &cf.Cases[i]
				if c.Cwd == "" {
					c.Cwd = dir
				}
				if c.ProjectDir == "" {
					c.ProjectDir = dir
				}
				_, bad := law.RunCase(c)
				if len(bad) == 0 {
					passed++
					if verbose {
						fmt.Fprintf(out, "ok   %s\n", c.Name)
					}
					continue
				}
				failed++
				fmt.Fprintf(out, "FAIL %s (%s:%d): %s\n", c.Name, args[1], c.Line, strings.Join(bad, "; "))
			}
			fmt.Fprintf(out, "%d passed, %d failed\n", passed, failed)
			if failed > 0 {
				return cmdutil.Failure("")
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print passing cases too")
	cmd.Flags().StringVar(&cwd, "cwd", "", "working directory for relative paths in cases (default: the current directory)")
	return cmd
}
