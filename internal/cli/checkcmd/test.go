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
		Use:     "test WORKFLOW [CASES]",
		Example: "  statewright test .statewright/workflows/release.yaml\n  statewright test bugfix cases.yaml",
		Short:   "Check a workflow's decisions: its inline examples and a file of expected decisions",
		Long: `test decides the workflow's inline examples (the "examples" of the workflow and
of each phase) and every case in CASES against WORKFLOW, and reports the ones whose
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
  granted: true              # optional: a person granted the call an ask rule asked for
  # also optional: files_edited, count_iteration, transition, interrupt ("-" for none)

Inline examples are decided in a project at /project with a home at /home/user
(docs/permissions.md). It prints one line per failing example or case and a summary
"N passed, N failed"; it exits 1 when any fails, 2 when WORKFLOW or CASES cannot be read.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 && len(args) != 2 {
				return cmdutil.Usagef("test: want WORKFLOW [CASES], got %d arguments", len(args))
			}
			var cf *policy.CaseFile
			if len(args) == 2 {
				data, err := os.ReadFile(args[1])
				if err != nil {
					return cmdutil.Usage(fmt.Errorf("read cases: %w", err))
				}
				if cf, err = policy.ParseCases(data); err != nil {
					return cmdutil.Usagef("%s: %v", args[1], err)
				}
			}
			def, err := loadValid(cmd.ErrOrStderr(), args[0], true)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			passed, failed := 0, 0
			report := func(name, where string, bad []string) {
				if len(bad) == 0 {
					passed++
					if verbose {
						fmt.Fprintf(out, "ok   %s\n", name)
					}
					return
				}
				failed++
				fmt.Fprintf(out, "FAIL %s (%s): %s\n", name, where, strings.Join(bad, "; "))
			}
			examples, diags := policy.ExampleCases(def)
			if cf == nil && len(examples) == 0 && len(diags) == 0 {
				return cmdutil.Usagef("test: %s has no inline examples; give a CASES file too", cmdutil.DisplayName(args[0]))
			}
			if len(diags) > 0 {
				cmdutil.PrintDiagnostics(cmd.ErrOrStderr(), diags)
				return cmdutil.Failure(fmt.Sprintf("%s has examples that cannot be decided", cmdutil.DisplayName(args[0])))
			}
			if len(examples) > 0 {
				elaw, err := policy.ExampleLaw(def)
				if err != nil {
					return cmdutil.Failure(err.Error())
				}
				for i := range examples {
					ec := &examples[i]
					_, bad := elaw.RunCase(&ec.Case)
					report(ec.Name, cmdutil.DisplayName(args[0])+":"+ec.Pos.String(), bad)
				}
			}
			if cf != nil {
				law, err := lawFor(def, args[0])
				if err != nil {
					return err
				}
				dir := workDir(cwd)
				for i := range cf.Cases {
					c := &cf.Cases[i]
					if c.Cwd == "" {
						c.Cwd = dir
					}
					if c.ProjectDir == "" {
						c.ProjectDir = dir
					}
					_, bad := law.RunCase(c)
					report(c.Name, fmt.Sprintf("%s:%d", args[1], c.Line), bad)
				}
			}
			fmt.Fprintf(out, "%d passed, %d failed\n", passed, failed)
			if failed > 0 {
				return cmdutil.Failure("")
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print passing examples and cases too")
	cmd.Flags().StringVar(&cwd, "cwd", "", "working directory for relative paths in cases (default: the current directory)")
	return cmd
}
