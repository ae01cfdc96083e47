// Package runscmd is the run commands: start, transition, status, runs,
// history, and the human-only approve, reject, pause, resume, deactivate, off
// and token.
package runscmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/statewright-go/statewright/sandbox"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/internal/eventtext"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// NewCmdStart returns `statewright start`.
func NewCmdStart(f *cmdutil.Factory) *cobra.Command {
	var session string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "start WORKFLOW --session ID",
		Example: "  statewright start bugfix --session abc\n  statewright start .statewright/workflows/release.yaml --session codex:abc --json",
		Short:   "Start a workflow run for a harness session",
		Long: "start starts WORKFLOW (a bundled template name or a workflow file) for the harness session ID. " +
			"The session key is HARNESS:ID (default harness claude-code, so --session abc governs claude-code:abc); " +
			"a full key such as codex:abc is accepted as well. The store is created when it does not exist.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteWorkflows,
		RunE: func(cmd *cobra.Command, args []string) error {
			if session == "" {
				return cmdutil.Usagef("start needs --session ID (the harness's session id)")
			}
			key, err := cmdutil.SessionArg(cmd, session)
			if err != nil {
				return err
			}
			return f.WithService(cmd, false, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				v, err := svc.Start(ctx, key, args[0], runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli", Name: os.Getenv("USER")})
				if err != nil {
					return cmdutil.RunErr(err)
				}
				for _, w := range v.Warnings {
					fmt.Fprintln(cmd.ErrOrStderr(), w)
				}
				if asJSON {
					v.Run = cmdutil.DisplayRun(v.Run)
					return cmdutil.PrintJSON(cmd.OutOrStdout(), v)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "started %s (%s) for %s in state %s\n", v.Run.WorkflowID, v.Run.ID, key, v.Run.State)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "the harness's session id (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run as JSON")
	cmdutil.AddHarnessFlag(cmd)
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

// NewCmdTransition returns `statewright transition`.
func NewCmdTransition(f *cmdutil.Factory) *cobra.Command {
	var data string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "transition SESSION EVENT [--data JSON]",
		Example: "  statewright transition claude-code:abc LOCALIZED\n  statewright transition abc TESTS_PASS --data '{\"note\":\"green\"}' --json",
		Short:   "Send an event to a session's run, as the agent's transition tool does",
		Long: "transition resolves EVENT in the run's state through the engine, exactly like the agent's transition " +
			"control tool: guards, approval gates and evidence still apply (it is not a way to force a state). " +
			"--data is event data, which lands under data.* in the context.",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: cmdutil.CompleteSessionEvent,
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := cmdutil.SessionArg(cmd, args[0])
			if err != nil {
				return err
			}
			var d map[string]any
			if data != "" {
				if err := json.Unmarshal([]byte(data), &d); err != nil {
					return cmdutil.Usagef("--data: not a JSON object: %v", err)
				}
			}
			// Firing an interrupt by name is for people only (the runtime
			// refuses agents): prove it like approve does, never claim it.
			by := runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli", Name: os.Getenv("USER")}
			if _, ok := engine.InterruptName(args[1]); ok {
				if by, err = cmdutil.ProveHuman(cmd, "Fire "+args[1]+" on "+key+"?", "yes"); err != nil {
					return err
				}
			}
			return f.WithService(cmd, true, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				res, err := svc.Transition(ctx, key, args[1], d, by)
				if err != nil {
					return cmdutil.RunErr(err)
				}
				out := cmd.OutOrStdout()
				if asJSON {
					return cmdutil.PrintJSON(out, res)
				}
				if res.Parked {
					fmt.Fprintf(out, "awaiting approval %s: %s → %s: %s\n", res.ApprovalID, res.From, res.To, res.Message)
					return nil
				}
				fmt.Fprintf(out, "%s → %s\n", res.From, res.To)
				if res.Final {
					fmt.Fprintln(out, "the run is complete")
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&data, "data", "", "event data, a JSON object (lands under data.*)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the transition's result as JSON")
	cmdutil.AddTokenFlag(cmd)
	cmdutil.AddHarnessFlag(cmd)
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

// NewCmdStatus returns `statewright status`.
func NewCmdStatus(f *cmdutil.Factory) *cobra.Command {
	var session string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "status [--session ID]",
		Example: "  statewright status\n  statewright status --session abc --json",
		Short:   "Show a session's live run, or list the live runs",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithService(cmd, true, func(ctx context.Context, svc *runtime.Service, st store.Store) error {
				out := cmd.OutOrStdout()
				if session == "" {
					runs, err := svc.Runs(ctx, store.RunFilter{LiveOnly: true})
					if err != nil {
						return cmdutil.RunErr(err)
					}
					if err := printRuns(out, runs, asJSON); err != nil || asJSON {
						return err
					}
					return printSilences(ctx, out, st, runs)
				}
				key, err := cmdutil.SessionArg(cmd, session)
				if err != nil {
					return err
				}
				v, err := svc.Status(ctx, key)
				if errors.Is(err, runtime.ErrNoRun) {
					// No live run: report the session's last one (completed,
					// deactivated, failed) when there is one.
					if runs, rerr := svc.Runs(ctx, store.RunFilter{SessionKey: key, Limit: 1}); rerr == nil && len(runs) == 1 {
						return printEnded(out, key, runs[0], asJSON)
					}
				}
				if err != nil {
					return cmdutil.RunErr(err)
				}
				v.Run = cmdutil.DisplayRun(v.Run)
				if asJSON {
					return cmdutil.PrintJSON(out, v)
				}
				printView(out, v)
				if note, err := hookSilence(ctx, st, v.Run); err != nil {
					return err
				} else if note != "" {
					fmt.Fprintf(out, "hooks:      %s\n", note)
				}
				printSandbox(out)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "the harness's session id (or a full HARNESS:ID key)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmdutil.AddHarnessFlag(cmd)
	cmdutil.AddStoreFlag(cmd)
	_ = cmd.RegisterFlagCompletionFunc("session", cmdutil.CompleteSessions)
	return cmd
}

// printEnded reports a session whose last run has ended: its workflow,
// final state and status (as JSON: live false and the run).
func printEnded(w io.Writer, key string, r *store.Run, asJSON bool) error {
	if asJSON {
		return cmdutil.PrintJSON(w, struct {
			Session string     `json:"session"`
			Live    bool       `json:"live"`
			LastRun *store.Run `json:"last_run"`
		}{key, false, cmdutil.DisplayRun(r)})
	}
	fmt.Fprintf(w, "session:    %s (no live run)\n", key)
	fmt.Fprintf(w, "last run:   %s (%s)\n", r.ID, r.WorkflowID)
	fmt.Fprintf(w, "state:      %s\n", r.State)
	fmt.Fprintf(w, "status:     %s (%s)\n", r.Status, r.UpdatedAt.Format(time.RFC3339))
	return nil
}

// printSandbox says whether shell commands can run under the OS sandbox
// here, and plainly what follows when they cannot (docs/threat-model.md).
func printSandbox(w io.Writer) {
	root, err := sandbox.DefaultRoot()
	if err != nil {
		return
	}
	if a := sandbox.DetectCached(root); a.OK() {
		fmt.Fprintf(w, "sandbox:    %s available (hooks use it with --sandbox or --require-sandbox)\n", a.String())
	} else {
		fmt.Fprintf(w, "sandbox:    none (%s): only the static law holds, and same-user secrecy is impossible\n", a.Why)
	}
}

// printView writes a run view for people.
func printView(w io.Writer, v *runtime.RunView) {
	r := v.Run
	fmt.Fprintf(w, "session:    %s\n", r.SessionKey)
	fmt.Fprintf(w, "run:        %s (%s)\n", r.ID, r.WorkflowSource)
	fmt.Fprintf(w, "workflow:   %s\n", r.WorkflowID)
	for i, e := range v.Stack {
		fmt.Fprintf(w, "stack %d:    %s\n", i+1, e)
	}
	if len(v.Stack) > 0 {
		fmt.Fprintf(w, "in force:   %s (depth %d)\n", v.Workflow, len(v.Stack))
	}
	fmt.Fprintf(w, "state:      %s\n", r.State)
	fmt.Fprintf(w, "status:     %s\n", r.Status)
	if r.AuditOnly {
		fmt.Fprintf(w, "mode:       audit-only (decisions are recorded, not enforced)\n")
	}
	iter := fmt.Sprint(r.Iterations)
	if v.MaxIterations != nil {
		iter += fmt.Sprintf(" of %d", *v.MaxIterations)
	}
	fmt.Fprintf(w, "iterations: %s\n", iter)
	if lc, ok := v.Runtime["last_command"].(map[string]any); ok {
		fmt.Fprintf(w, "last cmd:   %v (exit %v)\n", lc["program"], lc["exit_code"])
	}
	if lt, ok := v.Runtime["last_test"].(map[string]any); ok {
		fmt.Fprintf(w, "last test:  passed=%v (exit %v)\n", lt["passed"], lt["exit_code"])
	}
	if len(r.FilesEdited) > 0 {
		fmt.Fprintf(w, "edited:     %s\n", strings.Join(r.FilesEdited, ", "))
	}
	tools := "any"
	if v.AllowedTools != nil {
		tools = strings.Join(v.AllowedTools, ", ")
		if tools == "" {
			tools = "none"
		}
	}
	fmt.Fprintf(w, "tools:      %s\n", tools)
	if len(v.NextEvents) > 0 {
		var parts []string
		for _, e := range v.NextEvents {
			parts = append(parts, e.String())
		}
		fmt.Fprintf(w, "events:     %s\n", strings.Join(parts, "; "))
	}
	if ap := r.PendingApproval; ap != nil {
		fmt.Fprintf(w, "approval:   %s: %s → %s: %s (expires %s)\n", ap.ID, ap.From, ap.To, ap.Message, ap.ExpiresAt.Format(time.RFC3339))
	}
	if v.Instructions != "" {
		fmt.Fprintf(w, "instructions:\n  %s\n", v.Instructions)
	}
}

// printRuns writes runs as a table or JSON.
func printRuns(w io.Writer, runs []*store.Run, asJSON bool) error {
	if asJSON {
		out := make([]*store.Run, 0, len(runs))
		for _, r := range runs {
			out = append(out, cmdutil.DisplayRun(r))
		}
		return cmdutil.PrintJSON(w, out)
	}
	if len(runs) == 0 {
		fmt.Fprintln(w, "no runs")
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tWORKFLOW\tSTATE\tSTATUS\tITER\tUPDATED")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", r.SessionKey, r.WorkflowID, r.State, r.Status, r.Iterations, r.UpdatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

// NewCmdRuns returns `statewright runs`.
func NewCmdRuns(f *cmdutil.Factory) *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:     "runs [--all]",
		Example: "  statewright runs\n  statewright runs --all --json",
		Short:   "List runs (live ones unless --all)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithService(cmd, true, func(ctx context.Context, svc *runtime.Service, st store.Store) error {
				runs, err := svc.Runs(ctx, store.RunFilter{LiveOnly: !all})
				if err != nil {
					return cmdutil.RunErr(err)
				}
				if err := printRuns(cmd.OutOrStdout(), runs, asJSON); err != nil || asJSON {
					return err
				}
				return printSilences(ctx, cmd.OutOrStdout(), st, runs)
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "include ended runs (completed, deactivated, failed)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

// NewCmdHistory returns `statewright history`.
func NewCmdHistory(f *cmdutil.Factory) *cobra.Command {
	var asJSON bool
	var export string
	cmd := &cobra.Command{
		Use:     "history SESSION [--json] [--export jsonl]",
		Example: "  statewright history claude-code:abc\n  statewright history --export jsonl > log.jsonl",
		Short:   "Show a session's transitions and decisions, or export the event log",
		Long: "history lists a session's events: runs started and ended, transitions, decisions with their rule and reason, " +
			"results, approvals and operator actions. --export jsonl instead writes the store's whole hash-chained event log, " +
			"one JSON event per line (the whole log, so that the chain verifies; SESSION may be omitted).",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: cmdutil.CompleteSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if export != "" && export != "jsonl" {
				return cmdutil.Usagef("--export: unknown format %q (want jsonl)", export)
			}
			if export == "" && len(args) == 0 {
				return cmdutil.Usagef("history needs a SESSION (or --export jsonl)")
			}
			return f.WithService(cmd, true, func(ctx context.Context, svc *runtime.Service, st store.Store) error {
				out := cmd.OutOrStdout()
				if export == "jsonl" {
					return cmdutil.RunErr(st.ExportJSONL(ctx, out))
				}
				key, err := cmdutil.SessionArg(cmd, args[0])
				if err != nil {
					return err
				}
				evs, err := svc.History(ctx, key)
				if err != nil {
					return cmdutil.RunErr(err)
				}
				if asJSON {
					if evs == nil {
						evs = []store.Event{}
					}
					return cmdutil.PrintJSON(out, evs)
				}
				if len(evs) == 0 {
					fmt.Fprintf(out, "no events for %s\n", key)
					return nil
				}
				c := cmdutil.ColorsFor(out)
				for i := range evs {
					fmt.Fprintln(out, historyLine(c, &evs[i]))
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the events as a JSON array")
	cmd.Flags().StringVar(&export, "export", "", "write the whole event log in this format (jsonl)")
	cmdutil.AddHarnessFlag(cmd)
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

// historyLine renders one event for people; on a terminal a decision's
// verdict is coloured (deny red, ask yellow, allow green).
func historyLine(c cmdutil.Colors, e *store.Event) string {
	text := eventtext.Describe(e)
	if e.Kind == store.KindDecision && e.Decision != "" {
		paint := map[string]func(string) string{"deny": c.Red, "ask": c.Yellow, "allow": c.Green}[e.Decision]
		if paint != nil {
			text = strings.Replace(text, " "+e.Decision+" (", " "+paint(e.Decision)+" (", 1)
		}
	}
	return fmt.Sprintf("%d %s %-10s", e.Seq, e.Time.Format("2006-01-02T15:04:05Z07:00"), e.Kind) + " " + text
}

// pendingApproval returns the approval the session's run is parked on; id,
// when given, must name it.
func pendingApproval(ctx context.Context, svc *runtime.Service, key, id string) (*store.Approval, error) {
	v, err := svc.Status(ctx, key)
	if err != nil {
		return nil, cmdutil.RunErr(err)
	}
	ap := v.Run.PendingApproval
	if ap == nil {
		return nil, cmdutil.Failure("no approval is pending for " + key + " (state " + v.Run.State + ", status " + string(v.Run.Status) + ")")
	}
	if id != "" && id != ap.ID {
		return nil, cmdutil.Failure(fmt.Sprintf("approval %s is not pending for %s (pending: %s)", id, key, ap.ID))
	}
	return ap, nil
}

// NewCmdApprove returns `statewright approve`.
func NewCmdApprove(f *cmdutil.Factory) *cobra.Command {
	var id, call string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "approve SESSION [--id APPROVAL | --call ASK_ID] [--token TOKEN]",
		Example: "  statewright approve claude-code:abc\n  statewright approve abc --call ask_1a2b --token \"$OPERATOR_TOKEN\"",
		Short:   "Approve a run's pending transition, or a tool call an ask rule parked (people only)",
		Long: "approve grants the transition a run is parked on, or with --call a tool call that a permission ask rule " +
			"parked where no person answers the harness's prompts: the same call, made again within " + runtime.GrantTTL.String() +
			", then runs once (docs/permissions.md). A person must prove themselves: on a terminal, confirm by " +
			"typing yes or the approval id; elsewhere pass the operator token (--token or $" + cmdutil.EnvOperatorToken + ").",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := cmdutil.SessionArg(cmd, args[0])
			if err != nil {
				return err
			}
			if call != "" && id != "" {
				return cmdutil.Usagef("approve: --id and --call name different things; give one")
			}
			return f.WithService(cmd, true, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				if call != "" {
					return grantCall(ctx, cmd, svc, key, call)
				}
				ap, err := pendingApproval(ctx, svc, key, id)
				if err != nil {
					return err
				}
				by, err := cmdutil.ProveHuman(cmd, fmt.Sprintf("Approve %s for %s: %s → %s\n  %s\n  expires %s",
					ap.ID, key, ap.From, ap.To, ap.Message, ap.ExpiresAt.Format(time.RFC3339)), "yes", ap.ID)
				if err != nil {
					return err
				}
				res, err := svc.Approve(ctx, key, ap.ID, by)
				if err != nil {
					return cmdutil.RunErr(err)
				}
				if asJSON {
					return cmdutil.PrintJSON(cmd.OutOrStdout(), struct {
						Approved string `json:"approved"`
						runtime.TransitionResult
					}{ap.ID, res})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "approved %s: %s → %s\n", ap.ID, res.From, res.To)
				if res.Final {
					fmt.Fprintf(cmd.OutOrStdout(), "the run is complete\n")
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&id, "id", "", "the approval id to grant (default: the pending one, which the prompt shows)")
	cmd.Flags().StringVar(&call, "call", "", "grant the parked tool call with this id (ask_…, named in the deny the agent saw and in status)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the approved transition as JSON")
	cmdutil.AddTokenFlag(cmd)
	cmdutil.AddHarnessFlag(cmd)
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

// grantCall is `approve --call`: the person sees the parked call and
// grants it once.
func grantCall(ctx context.Context, cmd *cobra.Command, svc *runtime.Service, key, id string) error {
	calls, err := svc.ParkedCalls(ctx, key)
	if err != nil {
		return cmdutil.RunErr(err)
	}
	var pc *runtime.ParkedCall
	for i := range calls {
		if calls[i].ID == id {
			pc = &calls[i]
		}
	}
	if pc == nil {
		var ids []string
		for _, c := range calls {
			ids = append(ids, c.ID)
		}
		msg := "no tool call " + id + " waits for a person on " + key
		if len(ids) > 0 {
			msg += " (waiting: " + strings.Join(ids, ", ") + ")"
		}
		return cmdutil.Failure(msg)
	}
	by, err := cmdutil.ProveHuman(cmd, fmt.Sprintf("Let %s run this call once, in phase %s:\n  %s %s\n  %s", key, pc.State, pc.Tool, pc.InputDigest, pc.Reason), "yes", pc.ID)
	if err != nil {
		return err
	}
	until, err := svc.GrantCall(ctx, key, pc.ID, by)
	if err != nil {
		return cmdutil.RunErr(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "granted %s: the same %s call, made again before %s, runs once\n", pc.ID, pc.Tool, until.Format(time.RFC3339))
	return nil
}

// NewCmdReject returns `statewright reject`.
func NewCmdReject(f *cmdutil.Factory) *cobra.Command {
	var id, reason string
	cmd := &cobra.Command{
		Use:               "reject SESSION [--reason R] [--token TOKEN]",
		Example:           "  statewright reject claude-code:abc --reason 'tests first'",
		Short:             "Refuse a run's pending transition (people only)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := cmdutil.SessionArg(cmd, args[0])
			if err != nil {
				return err
			}
			return f.WithService(cmd, true, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				ap, err := pendingApproval(ctx, svc, key, id)
				if err != nil {
					return err
				}
				by, err := cmdutil.ProveHuman(cmd, fmt.Sprintf("Reject %s for %s: %s → %s", ap.ID, key, ap.From, ap.To), "yes", ap.ID)
				if err != nil {
					return err
				}
				if err := svc.Reject(ctx, key, ap.ID, reason, by); err != nil {
					return cmdutil.RunErr(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "rejected %s; the run stays in %s\n", ap.ID, ap.From)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&id, "id", "", "the approval id to refuse (default: the pending one)")
	cmd.Flags().StringVar(&reason, "reason", "", "why (recorded in the history)")
	cmdutil.AddTokenFlag(cmd)
	cmdutil.AddHarnessFlag(cmd)
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

// newAdminCmd builds pause, resume and deactivate.
func newAdminCmd(f *cmdutil.Factory, name, short, done string, op func(*runtime.Service, context.Context, string, runtime.Actor) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:               name + " SESSION [--token TOKEN]",
		Short:             short + " (people only)",
		Example:           "  statewright " + name + " claude-code:abc\n  statewright " + name + " abc --harness codex --token \"$OPERATOR_TOKEN\"",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := cmdutil.SessionArg(cmd, args[0])
			if err != nil {
				return err
			}
			return f.WithService(cmd, true, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				v, err := svc.Status(ctx, key)
				if err != nil {
					return cmdutil.RunErr(err)
				}
				by, err := cmdutil.ProveHuman(cmd, fmt.Sprintf("%s the run of %s (%s, state %s, %s)?", strings.ToUpper(name[:1])+name[1:], key, v.Run.WorkflowID, v.Run.State, v.Run.Status), "yes")
				if err != nil {
					return err
				}
				if err := op(svc, ctx, key, by); err != nil {
					return cmdutil.RunErr(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", done, key)
				return nil
			})
		},
	}
	cmdutil.AddTokenFlag(cmd)
	cmdutil.AddHarnessFlag(cmd)
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

// NewCmdPause returns `statewright pause`.
func NewCmdPause(f *cmdutil.Factory) *cobra.Command {
	return newAdminCmd(f, "pause", "Pause a run: only read-only control tools work until resume", "paused", (*runtime.Service).Pause)
}

// NewCmdResume returns `statewright resume`.
func NewCmdResume(f *cmdutil.Factory) *cobra.Command {
	return newAdminCmd(f, "resume", "Resume a paused run", "resumed", (*runtime.Service).Resume)
}

// NewCmdDeactivate returns `statewright deactivate`.
func NewCmdDeactivate(f *cmdutil.Factory) *cobra.Command {
	return newAdminCmd(f, "deactivate", "End a run; the session is dormant again", "deactivated", (*runtime.Service).Deactivate)
}

// NewCmdOff returns `statewright off`.
func NewCmdOff(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "off [--token TOKEN]",
		Example: "  statewright off",
		Short:   "Emergency stop: deactivate every live run (people only)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithService(cmd, true, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				runs, err := svc.Runs(ctx, store.RunFilter{LiveOnly: true})
				if err != nil {
					return cmdutil.RunErr(err)
				}
				if len(runs) == 0 {
					fmt.Fprintln(cmd.OutOrStdout(), "no live runs")
					return nil
				}
				by, err := cmdutil.ProveHuman(cmd, fmt.Sprintf("Deactivate all %d live runs?", len(runs)), "yes")
				if err != nil {
					return err
				}
				done, err := svc.Off(ctx, by)
				for _, s := range done {
					fmt.Fprintf(cmd.OutOrStdout(), "deactivated %s\n", s)
				}
				return cmdutil.RunErr(err)
			})
		},
	}
	cmdutil.AddTokenFlag(cmd)
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

// tokenDeprecated is what `statewright token` and its subcommands say
// when used: the one token system is `statewright tokens`.
const tokenDeprecated = "use `statewright tokens create --role operator` (stored hashed; approve, reject, pause, resume, " +
	"deactivate, off and serve accept it); the single-file token keeps working"

// NewCmdToken returns `statewright token`, the older single-file operator
// token: it keeps working, says it is deprecated, and is hidden from help.
func NewCmdToken(f *cmdutil.Factory) *cobra.Command {
	tok := &cobra.Command{
		Use:    "token",
		Short:  "Manage the single-file operator token (deprecated: `statewright tokens`)",
		Hidden: true,
		// cobra's Deprecated notice goes to stdout, where token create
		// prints the token: say it on stderr instead.
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.ErrOrStderr(), "statewright: `statewright token` is deprecated, "+tokenDeprecated)
		},
	}
	var force bool
	create := &cobra.Command{
		Use:     "create [--force]",
		Short:   "Create the operator token file (mode 0600) and print the token",
		Example: "  statewright tokens create --role operator   # instead",
		Long: "token create writes a new random operator token to $XDG_CONFIG_HOME/statewright/operator-token " +
			"(else ~/.config/statewright/operator-token), mode 0600, and prints it once. Pass it to approve, reject, pause, " +
			"resume, deactivate and off with --token or $" + cmdutil.EnvOperatorToken + " where no terminal is available. " +
			"Never put it in the environment the agent is started from. `statewright tokens create --role operator` makes operator tokens " +
			"that are stored hashed and also work with `statewright serve`; both kinds are accepted.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := cmdutil.OperatorTokenPath()
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			if _, err := os.Stat(p); err == nil && !force {
				return cmdutil.Failure("an operator token exists at " + p + " (use --force to replace it)")
			}
			var b [32]byte
			if _, err := rand.Read(b[:]); err != nil {
				return cmdutil.Failure("generate token: " + err.Error())
			}
			t := hex.EncodeToString(b[:])
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				return cmdutil.Failure("create token directory: " + err.Error())
			}
			tmp := p + ".tmp"
			if err := os.WriteFile(tmp, []byte(t+"\n"), 0o600); err != nil {
				return cmdutil.Failure("write token: " + err.Error())
			}
			if err := os.Chmod(tmp, 0o600); err != nil {
				return cmdutil.Failure("write token: " + err.Error())
			}
			if err := os.Rename(tmp, p); err != nil {
				return cmdutil.Failure("write token: " + err.Error())
			}
			fmt.Fprintln(cmd.OutOrStdout(), t)
			fmt.Fprintf(cmd.ErrOrStderr(), "operator token written to %s\n", p)
			return nil
		},
	}
	create.Flags().BoolVar(&force, "force", false, "replace an existing token")
	path := &cobra.Command{
		Use:     "path",
		Short:   "Print where the operator token file is",
		Example: "  statewright token path",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := cmdutil.OperatorTokenPath()
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			fmt.Fprintln(cmd.OutOrStdout(), p)
			return nil
		},
	}
	tok.AddCommand(create, path)
	return tok
}
