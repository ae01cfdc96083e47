// Package testruncmd is `statewright testrun`: the command a hook's
// rewritten test command runs where no sandbox launcher runs commands. It
// runs the agent's test command so that the runner also writes its
// structured report, shows the agent the output it would have seen, and
// records the evidence for PostToolUse (package testreport/testrun).
package testruncmd

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/testreport/testrun"
)

// NewCmdTestrun returns `statewright testrun`.
func NewCmdTestrun() *cobra.Command {
	return &cobra.Command{
		Use:     "testrun --call DIR -c COMMAND",
		Example: "  statewright testrun --call \"$CALL_DIR\" -c 'go test ./...'   # what a hook's rewritten test command runs",
		Short:   "Run a test command so that it also writes a structured report (harness hooks run this, not people)",
		Long: "testrun is what a hook rewrites an allowed test command to where no sandbox launcher runs it: " +
			"`statewright testrun --call DIR -c COMMAND`. It runs COMMAND with bash in the current directory, " +
			"adding the runner's report option (go test -json rendered back to text, pytest --junitxml, jest --json, " +
			"vitest and node junit, unittest through a driver), and records how many tests ran and whether the run was narrowed " +
			"in DIR for the hook's PostToolUse. It exits with COMMAND's status. See docs/workflow-format.md (runtime evidence).",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
				return cmd.Help()
			}
			os.Exit(Run(args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
			return nil
		},
	}
}

// Run runs `testrun` with args (after "testrun") and returns the exit
// status. main calls it before building the command tree.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var callDir, script string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--call" && i+1 < len(args):
			i++
			callDir = args[i]
		case a == "-c" && i+1 < len(args):
			i++
			script = args[i]
		default:
			fmt.Fprintf(stderr, "statewright testrun: unexpected argument %q (usage: testrun --call DIR -c COMMAND)\n", a)
			return 2
		}
	}
	if callDir == "" || script == "" {
		fmt.Fprintln(stderr, "statewright testrun: usage: testrun --call DIR -c COMMAND")
		return 2
	}
	return testrun.RunCall(callDir, script, stdin, stdout, stderr)
}
