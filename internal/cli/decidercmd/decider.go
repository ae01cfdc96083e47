// Package decidercmd is `statewright decider`: the local decider the thin
// hook client talks to (internal/decider), its status, and stopping it.
package decidercmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/internal/decider"
	"github.com/statewright-go/statewright/internal/hookwire"
)

// NewCmdDecider returns `statewright decider`.
func NewCmdDecider(f *cmdutil.Factory) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "decider",
		Short: "The local decider that answers the thin hook client (started on first use)",
		Long: "The hooks `statewright init` writes run statewright-hook, a small client that hands each hook to the local decider: " +
			"a long-lived process of this binary that keeps the store open and workflows compiled, reached over a unix socket in " +
			hookwire.Dir(os.Getenv) + " (hidden from the agent) and authenticated with the per-install key there. " +
			"The client starts a decider when none answers and meanwhile decides with the full binary; nobody needs to start one by hand. " +
			"See docs/hooks.md.",
	}
	cmd.PersistentFlags().StringVar(&dir, "dir", "", "the decider directory (default "+hookwire.Dir(os.Getenv)+")")
	dirOf := func() (string, error) {
		if dir != "" {
			return filepath.Abs(dir)
		}
		if d := hookwire.Dir(os.Getenv); d != "" {
			return d, nil
		}
		return "", cmdutil.Usagef("no home or configuration directory: name the decider directory with --dir")
	}
	self := func() (string, error) {
		exe, err := os.Executable()
		if err != nil {
			return "", err
		}
		return filepath.EvalSymlinks(exe)
	}
	// target is the decider directory and this binary, whose decider the
	// command addresses.
	target := func() (dir, bin string, err error) {
		if dir, err = dirOf(); err != nil {
			return "", "", err
		}
		bin, err = self()
		return dir, bin, err
	}
	var o decider.Options
	serve := &cobra.Command{
		Use:     "serve",
		Example: "  statewright decider serve --store .statewright/state.db",
		Short:   "Run the decider (the thin hook client starts it)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Dir, o.Binary, err = target(); err != nil {
				return err
			}
			cmdutil.WidenTimerSlack()
			o.Registry = cmdutil.HarnessRegistry
			cmdutil.TuneGC()
			oneProc()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			err = decider.Serve(ctx, o)
			if errors.Is(err, decider.ErrRunning) {
				return nil
			}
			return err
		},
	}
	serve.Flags().DurationVar(&o.Idle, "idle", decider.DefaultIdle, "exit after this long without a hook")
	status := &cobra.Command{
		Use:     "status",
		Example: "  statewright decider status",
		Short:   "Show the decider of this binary, or that none runs",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, bin, err := target()
			if err != nil {
				return err
			}
			st, err := decider.StatusOf(d, bin)
			if err != nil {
				return cmdutil.Failure(fmt.Sprintf("no decider answers for %s (%v); the next hook starts one", bin, err))
			}
			b, _ := json.MarshalIndent(st, "", "  ")
			fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return nil
		},
	}
	stop := &cobra.Command{
		Use:     "stop",
		Example: "  statewright decider stop",
		Short:   "Stop the decider of this binary (the next hook starts a fresh one)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, bin, err := target()
			if err != nil {
				return err
			}
			if _, _, err := decider.Ask(d, bin, hookwire.OpQuit); err != nil {
				return cmdutil.Failure(fmt.Sprintf("no decider answers for %s (%v)", bin, err))
			}
			fmt.Fprintln(cmd.OutOrStdout(), "stopped the decider")
			return nil
		},
	}
	cmd.AddCommand(serve, status, stop)
	return cmd
}

// oneProc runs the decider on one P unless the operator set GOMAXPROCS.
// It answers one hook at a time (each runs in its hook's environment and
// working directory, which are the process's own), so a second P only
// wakes threads that spin, find nothing and sleep again on every hook:
// the decider's CPU per call 3.38 -> 2.81 ms, alternating in one run
// (bench/hook.txt, hooktail).
func oneProc() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
