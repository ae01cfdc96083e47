// Package hookcmd is `statewright hook HARNESS EVENT`: the command a
// harness's hooks run, one subcommand per harness of harness/adapters,
// answered by the hook runner (harness/hook).
package hookcmd

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/harness/hook"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/internal/person"
	"github.com/statewright-go/statewright/store"
)

// NewCmdHook returns `statewright hook`.
func NewCmdHook(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Answer a coding harness's hook (the harness runs this, not people)",
		Long: "hook is the command a harness's hooks run. It reads the hook's JSON input on stdin, decides against " +
			"the session's run in the store, and answers in the harness's convention. `statewright init` writes the hook commands.",
	}
	for _, a := range adapters.All {
		cmd.AddCommand(newHookHarnessCmd(f, a))
	}
	return cmd
}

// newHookHarnessCmd is `statewright hook NAME EVENT [flags]`.
func newHookHarnessCmd(f *cmdutil.Factory, a harness.Adapter) *cobra.Command {
	info := a.Info()
	return &cobra.Command{
		Use:     info.Name + " EVENT [flags]",
		Example: "  statewright hook " + info.Name + " " + info.Events[0] + " --store .statewright/state.db --store-id-file .statewright/store-id < input.json   # as `statewright init` writes it; the harness runs it",
		Short:   "Answer a " + info.Title + " hook: " + strings.Join(info.Events, ", "),
		Long: "Answer a " + info.Title + " hook event. Flags:\n" + hook.FlagSet(new(hook.Flags)).FlagUsages() +
			"\n" + info.HookHelp + " See " + info.Doc + ".",
		// Flags are parsed by the hook runner itself, so that even a bad
		// flag is answered in the event's fail-closed way (a usage error's
		// exit 2 would block a Stop forever or erase a prompt).
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
				return cmd.Help()
			}
			if code := Run(f, a, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				return cmdutil.ExitError{Code: code}
			}
			return nil
		},
	}
}

// Run answers one hook for a: args are "EVENT [flags]". It returns the
// exit code. main calls it directly, before building the command tree, to
// keep the hook path lean.
func Run(f *cmdutil.Factory, a harness.Adapter, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return hook.Run(context.Background(), a, args, stdin, stdout, stderr, hookEnv(f))
}

// hookEnv is what a hook process opens the store and runs control tools
// with.
func hookEnv(f *cmdutil.Factory) hook.Env {
	env := hook.Env{
		OpenStore: func(ctx context.Context, loc, id string, busy time.Duration) (store.Store, error) {
			// The harness that runs this hook is the agent's root: a
			// person's commands must not run below it (internal/person).
			_ = person.RegisterHarness(cmdutil.HarnessRegistry(loc))
			return f.OpenStoreAt(ctx, loc, store.Options{MustExist: true, ExpectID: id, BusyTimeout: busy, OneShot: true})
		},
	}
	env.Executable = cmdutil.Executable()
	return env
}
