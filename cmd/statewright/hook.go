package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/harness/hook"
	"github.com/statewright-go/statewright/internal/person"
	"github.com/statewright-go/statewright/store"
)

func init() { register(newHookCmd) }

func newHookCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Answer a coding harness's hook (the harness runs this, not people)",
		Long: "hook is the command a harness's hooks run. It reads the hook's JSON input on stdin, decides against " +
			"the session's run in the store, and answers in the harness's convention. `statewright init` writes the hook commands.",
	}
	for _, a := range adapters.All {
		cmd.AddCommand(newHookHarnessCmd(a))
	}
	return cmd
}

// newHookHarnessCmd is `statewright hook NAME EVENT [flags]`.
func newHookHarnessCmd(a harness.Adapter) *cobra.Command {
	info := a.Info()
	return &cobra.Command{
		Use:   info.Name + " EVENT [flags]",
		Short: "Answer a " + info.Title + " hook: " + strings.Join(info.Events, ", "),
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
			if code := runHook(a, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
}

// runHook answers one hook for a: args are "EVENT [flags]". main calls it
// directly, before building the command tree, to keep the hook path lean.
func runHook(a harness.Adapter, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return hook.Run(context.Background(), a, args, stdin, stdout, stderr, hookEnv())
}

// hookEnv is what a hook process opens the store and runs control tools
// with.
func hookEnv() hook.Env {
	env := hook.Env{
		OpenStore: func(ctx context.Context, loc, id string, busy time.Duration) (store.Store, error) {
			// The harness that runs this hook is the agent's root: a
			// person's commands must not run below it (internal/person).
			_ = person.RegisterHarness(harnessRegistry(loc))
			return openStoreAt(ctx, loc, storeOptions{MustExist: true, ExpectID: id, BusyTimeout: busy, OneShot: true})
		},
	}
	if exe, err := os.Executable(); err == nil {
		env.Executable = exe
	}
	return env
}

// harnessRegistry is where the hooks of a store record their harnesses
// (beside an SQLite store; in the state directory for PostgreSQL).
func harnessRegistry(storePath string) string {
	if store.IsPostgresURL(storePath) {
		p, err := store.ResolvePath("", func(k string) string {
			if k == store.EnvStore {
				return ""
			}
			return os.Getenv(k)
		})
		if err != nil {
			return ""
		}
		storePath = p
	}
	return person.RegistryDir(filepath.Dir(storePath))
}
