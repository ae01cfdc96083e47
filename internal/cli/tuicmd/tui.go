// Package tuicmd is `statewright tui`: the terminal UI over live runs and
// agent streams.
package tuicmd

import (
	"context"
	"github.com/statewright-go/statewright/tui"
	"os"
	"path/filepath"

	tea "charm.land/bubbletea/v2"
	lipgloss "charm.land/lipgloss/v2"
	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/internal/wfgraph"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/workflow"
)

// NewCmdTUI returns `statewright tui`.
func NewCmdTUI(f *cmdutil.Factory) *cobra.Command {
	var session string
	var print bool
	var width, height int
	cmd := &cobra.Command{
		Use:     "tui [-] [--session ID] [--token TOKEN]",
		Example: "  statewright tui\n  statewright tui --session abc --print\n  statewright agent --events jsonl ... | statewright tui -",
		Short:   "Watch runs, decisions and approvals in the terminal; approve or reject (people only)",
		Long: "tui shows the store's runs; Enter opens one: its workflow graph with the current phase highlighted, the phase's " +
			"allowed tools and next events, the live decision stream, the pending approval and the transition history. " +
			"a approves and r rejects the pending approval after you type yes (or the approval id), as `statewright approve` " +
			"asks on a terminal; without a terminal, pass the operator token (--token or $" + cmdutil.EnvOperatorToken + ").\n\n" +
			"`statewright tui -` instead renders a `statewright agent --events jsonl` stream read from stdin " +
			"(keys are read from the terminal). --print renders one screen as plain text and exits.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if args[0] != "-" {
					return cmdutil.Usagef("tui: the only argument is - (read an agent event stream from stdin)")
				}
				return runAgentStreamTUI(cmd)
			}
			var key string
			if session != "" {
				var err error
				if key, err = cmdutil.SessionArg(cmd, session); err != nil {
					return err
				}
			}
			return f.WithService(cmd, true, func(ctx context.Context, svc *runtime.Service, st store.Store) error {
				loader := &tui.Loader{Service: svc, Store: st}
				opts := tui.Options{Load: loader.Load, OpenSession: key}
				if print {
					_, err := lipgloss.Fprintln(cmd.OutOrStdout(), tui.Frame(ctx, opts, width, height))
					return err
				}
				if err := bindApprovals(cmd, svc, &opts); err != nil {
					return err
				}
				if !cmdutil.StdoutIsTerminal(cmd) {
					return cmdutil.Usagef("tui needs a terminal, and stdout is not one: `statewright tui --print` renders one screen as plain text")
				}
				_, err := tea.NewProgram(tui.New(opts), tea.WithContext(ctx)).Run()
				return cmdutil.RunErr(err)
			})
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "open this session's run at start (a harness session id or a full HARNESS:ID key)")
	cmd.Flags().BoolVar(&print, "print", false, "render one screen as plain text to stdout and exit")
	cmd.Flags().IntVar(&width, "width", 120, "screen width for --print")
	cmd.Flags().IntVar(&height, "height", 40, "screen height for --print")
	cmdutil.AddTokenFlag(cmd)
	cmdutil.AddHarnessFlag(cmd)
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

// bindApprovals gives the TUI its approve and reject functions, bound to
// an actor the command has proven to be a person, by the same rules as
// `statewright approve`: an operator token (--token or
// $STATEWRIGHT_OPERATOR_TOKEN) that matches the token file, or a terminal
// on stdin (not /dev/null), on which the TUI then asks the person to type
// yes or the approval id before each decision. Without either, the TUI
// still shows everything but approves nothing.
func bindApprovals(cmd *cobra.Command, svc *runtime.Service, opts *tui.Options) error {
	tok, _ := cmd.Flags().GetString("token")
	var by runtime.Actor
	switch {
	case tok != "" || os.Getenv(cmdutil.EnvOperatorToken) != "":
		a, err := cmdutil.ProveHuman(cmd, "", "yes")
		if err != nil {
			return err
		}
		by = runtime.Actor{Kind: runtime.ActorHuman, Channel: "tui-token", Name: a.Name}
	case cmdutil.StdinIsTerminal(cmd):
		by = runtime.Actor{Kind: runtime.ActorHuman, Channel: "tui", Name: os.Getenv("USER")}
	default:
		opts.NoApproval = "stdin is not a terminal and no operator token was given (--token or $" + cmdutil.EnvOperatorToken + ")"
		return nil
	}
	opts.Approve = func(ctx context.Context, session, id string) (runtime.TransitionResult, error) {
		return svc.Approve(ctx, session, id, by)
	}
	opts.Reject = func(ctx context.Context, session, id, reason string) error {
		return svc.Reject(ctx, session, id, reason, by)
	}
	return nil
}

// runAgentStreamTUI renders a `statewright agent --events jsonl` stream
// from stdin; keys come from the terminal.
func runAgentStreamTUI(cmd *cobra.Command) error {
	in := cmd.InOrStdin()
	graph := func(name string) *wfgraph.Graph {
		var src []byte
		var err error
		if workflow.IsTemplate(name) {
			src, err = workflow.TemplateSource(name)
		} else if filepath.IsAbs(name) || filepath.Ext(name) != "" {
			src, err = os.ReadFile(name)
		} else {
			return nil
		}
		if err != nil {
			return nil
		}
		def, _, err := workflow.Parse(src, workflow.ParseOptions{Source: name})
		if err != nil {
			return nil
		}
		return wfgraph.Build(def)
	}
	m := tui.NewStream(tui.StreamOptions{Input: in, Graph: graph})
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return cmdutil.Failure("statewright tui -: no terminal to read keys from (" + err.Error() + ")")
	}
	defer tty.Close()
	_, err = tea.NewProgram(m, tea.WithInput(tty)).Run()
	return cmdutil.RunErr(err)
}
