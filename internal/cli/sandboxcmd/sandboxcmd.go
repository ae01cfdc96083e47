// Package sandboxcmd is `statewright sandbox`: the launcher a harness's
// rewritten shell command runs (`sandbox exec`), and `sandbox status`,
// which says whether commands can run sandboxed here and why not.
package sandboxcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/testreport/testrun"
)

// NoSandboxWarning is what doctor, SessionStart, status and the README say
// where no sandbox is available (docs/threat-model.md).
const NoSandboxWarning = "no OS sandbox is available here, so only the static law holds: code the agent runs " +
	"(tests, builds, interpreters) runs as you, and approvals, operator tokens and the store are NOT protected " +
	"from it (same-user secrecy is impossible without a sandbox); install with --require-sandbox to deny shell calls instead"

// NewCmdSandbox returns `statewright sandbox`.
func NewCmdSandbox() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Run commands under the phase's OS sandbox (the launcher hooks call), and report availability",
	}
	cmd.AddCommand(newCmdExec(), newCmdStatus())
	return cmd
}

func newCmdExec() *cobra.Command {
	return &cobra.Command{
		Use:     "exec --call DIR (-c SCRIPT | -- ARGV...)",
		Example: "  statewright sandbox exec --call \"$CALL_DIR\" -c 'go test ./...'   # what a hook's rewritten shell call runs",
		Short:   "Run one command under the profile a hook prepared in DIR (harnesses run this, not people)",
		Long: "exec is the launcher: a hook that lets a shell call through rewrites it to run " +
			"`statewright sandbox exec --call DIR -c SCRIPT`. It reads the profile in force at the decision from DIR, " +
			"runs the command under bubblewrap in the current directory, records its exit status in DIR, and exits " +
			"with it. It never runs a command unsandboxed: without a profile or a working bubblewrap it exits 126. See docs/sandbox.md.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
				return cmd.Help()
			}
			os.Exit(RunExec(args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
			return nil
		},
	}
}

// RunExec runs `sandbox exec` with args (after "exec") and returns the exit
// status. main calls it before building the command tree. A test command
// the hook marked runs watched (testrun.Observe: its evidence comes from
// the runner's report); any other becomes bubblewrap.
func RunExec(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return sandbox.Main(args, stdin, stdout, stderr, testrun.Observe)
}

func newCmdStatus() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "status",
		Example: "  statewright sandbox status",
		Short:   "Say whether shell commands can run sandboxed here, and why not",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a := sandbox.Probe(cmd.Context())
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(map[string]any{"available": a.OK(), "bwrap": a.Bwrap, "why": a.Why})
			}
			if a.OK() {
				fmt.Fprintln(out, "sandbox: "+a.String())
				return nil
			}
			fmt.Fprintln(out, "sandbox: "+a.String())
			fmt.Fprintln(out, "warning: "+NoSandboxWarning)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
