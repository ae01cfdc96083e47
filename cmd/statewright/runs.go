package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/agent"
	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/internal/eventtext"
	"github.com/statewright-go/statewright/internal/person"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

func init() {
	register(newStartCmd, newTransitionCmd, newStatusCmd, newRunsCmd, newHistoryCmd, newApproveCmd, newRejectCmd,
		newPauseCmd, newResumeCmd, newDeactivateCmd, newOffCmd, newTokenCmd)
}

// EnvOperatorToken names the environment variable that carries an operator
// token for human-only commands (the --token flag wins).
const EnvOperatorToken = "STATEWRIGHT_OPERATOR_TOKEN"

// sessionKey turns a harness session id into the store's session key,
// "<harness>:<id>" (claude-code:0b5c...). An argument that already starts
// with a known harness (or demoSessionPrefix) and a colon is taken as a full key.
func sessionKey(harness, id string) (string, error) {
	if id == "" {
		return "", usagef("no session given")
	}
	if pre, _, ok := strings.Cut(id, ":"); ok {
		if pre == demoSessionPrefix || pre+":" == agent.SessionPrefix {
			return id, nil
		}
		if h, err := policy.ParseHarness(pre); err == nil && string(h) == pre {
			return id, nil
		}
	}
	h, err := policy.ParseHarness(harness)
	if err != nil {
		return "", usageError{err}
	}
	return string(h) + ":" + id, nil
}

func addHarnessFlag(cmd *cobra.Command) {
	cmd.Flags().String("harness", "claude-code", "the harness the session id comes from (claude-code, codex, cursor, opencode, pi); the session key is HARNESS:ID")
}

// sessionArg resolves a session id argument with cmd's --harness flag.
func sessionArg(cmd *cobra.Command, id string) (string, error) {
	h := "claude-code"
	if f := cmd.Flag("harness"); f != nil {
		h = f.Value.String()
	}
	return sessionKey(h, id)
}

// withService opens the store and runs fn with a Service over it.
func withService(cmd *cobra.Command, mustExist bool, fn func(ctx context.Context, svc *runtime.Service, st store.Store) error) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	st, err := openStore(ctx, cmd, mustExist)
	if err != nil {
		var u usageError
		if errors.As(err, &u) {
			return err
		}
		return failure{err.Error()}
	}
	defer st.Close()
	return fn(ctx, runtime.New(st, runtime.Options{}), st)
}

// runErr turns runtime errors into the command's exit status: every
// runtime refusal is exit 1 with its message.
func runErr(err error) error {
	if err == nil {
		return nil
	}
	return failure{err.Error()}
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// displayRun is a run without its snapshot bytes, for output.
func displayRun(r *store.Run) *store.Run {
	c := r.Clone()
	c.Snapshot = nil
	return c
}

func newStartCmd() *cobra.Command {
	var session string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "start WORKFLOW --session ID",
		Short: "Start a workflow run for a harness session",
		Long: "start starts WORKFLOW (a bundled template name or a workflow file) for the harness session ID. " +
			"The session key is HARNESS:ID (default harness claude-code, so --session abc governs claude-code:abc); " +
			"a full key such as codex:abc is accepted as well. The store is created when it does not exist.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if session == "" {
				return usagef("start needs --session ID (the harness's session id)")
			}
			key, err := sessionArg(cmd, session)
			if err != nil {
				return err
			}
			return withService(cmd, false, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				v, err := svc.Start(ctx, key, args[0], runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli", Name: os.Getenv("USER")})
				if err != nil {
					return runErr(err)
				}
				if asJSON {
					v.Run = displayRun(v.Run)
					return printJSON(cmd.OutOrStdout(), v)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "started %s (%s) for %s in state %s\n", v.Run.WorkflowID, v.Run.ID, key, v.Run.State)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "the harness's session id (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run as JSON")
	addHarnessFlag(cmd)
	addStoreFlag(cmd)
	return cmd
}

func newTransitionCmd() *cobra.Command {
	var data string
	cmd := &cobra.Command{
		Use:   "transition SESSION EVENT [--data JSON]",
		Short: "Send an event to a session's run, as the agent's transition tool does",
		Long: "transition resolves EVENT in the run's state through the engine, exactly like the agent's transition " +
			"control tool: guards, approval gates and evidence still apply (it is not a way to force a state). " +
			"--data is event data, which lands under data.* in the context.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := sessionArg(cmd, args[0])
			if err != nil {
				return err
			}
			var d map[string]any
			if data != "" {
				if err := json.Unmarshal([]byte(data), &d); err != nil {
					return usagef("--data: not a JSON object: %v", err)
				}
			}
			// Firing an interrupt by name is for people only (the runtime
			// refuses agents): prove it like approve does, never claim it.
			by := runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli", Name: os.Getenv("USER")}
			if _, ok := engine.InterruptName(args[1]); ok {
				if by, err = proveHuman(cmd, "Fire "+args[1]+" on "+key+"?", "yes"); err != nil {
					return err
				}
			}
			return withService(cmd, true, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				res, err := svc.Transition(ctx, key, args[1], d, by)
				if err != nil {
					return runErr(err)
				}
				out := cmd.OutOrStdout()
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
	addTokenFlag(cmd)
	addHarnessFlag(cmd)
	addStoreFlag(cmd)
	return cmd
}

func newStatusCmd() *cobra.Command {
	var session string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [--session ID]",
		Short: "Show a session's live run, or list the live runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withService(cmd, true, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				out := cmd.OutOrStdout()
				if session == "" {
					runs, err := svc.Runs(ctx, store.RunFilter{LiveOnly: true})
					if err != nil {
						return runErr(err)
					}
					return printRuns(out, runs, asJSON)
				}
				key, err := sessionArg(cmd, session)
				if err != nil {
					return err
				}
				v, err := svc.Status(ctx, key)
				if err != nil {
					return runErr(err)
				}
				v.Run = displayRun(v.Run)
				if asJSON {
					return printJSON(out, v)
				}
				printView(out, v)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "the harness's session id (or a full HARNESS:ID key)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	addHarnessFlag(cmd)
	addStoreFlag(cmd)
	return cmd
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
			out = append(out, displayRun(r))
		}
		return printJSON(w, out)
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

func newRunsCmd() *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "runs [--all]",
		Short: "List runs (live ones unless --all)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withService(cmd, true, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				runs, err := svc.Runs(ctx, store.RunFilter{LiveOnly: !all})
				if err != nil {
					return runErr(err)
				}
				return printRuns(cmd.OutOrStdout(), runs, asJSON)
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "include ended runs (completed, deactivated, failed)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	addStoreFlag(cmd)
	return cmd
}

func newHistoryCmd() *cobra.Command {
	var asJSON bool
	var export string
	cmd := &cobra.Command{
		Use:   "history SESSION [--json] [--export jsonl]",
		Short: "Show a session's transitions and decisions, or export the event log",
		Long: "history lists a session's events: runs started and ended, transitions, decisions with their rule and reason, " +
			"results, approvals and operator actions. --export jsonl instead writes the store's whole hash-chained event log, " +
			"one JSON event per line (the whole log, so that the chain verifies; SESSION may be omitted).",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if export != "" && export != "jsonl" {
				return usagef("--export: unknown format %q (want jsonl)", export)
			}
			if export == "" && len(args) == 0 {
				return usagef("history needs a SESSION (or --export jsonl)")
			}
			return withService(cmd, true, func(ctx context.Context, svc *runtime.Service, st store.Store) error {
				out := cmd.OutOrStdout()
				if export == "jsonl" {
					return runErr(st.ExportJSONL(ctx, out))
				}
				key, err := sessionArg(cmd, args[0])
				if err != nil {
					return err
				}
				evs, err := svc.History(ctx, key)
				if err != nil {
					return runErr(err)
				}
				if asJSON {
					if evs == nil {
						evs = []store.Event{}
					}
					return printJSON(out, evs)
				}
				if len(evs) == 0 {
					fmt.Fprintf(out, "no events for %s\n", key)
					return nil
				}
				for i := range evs {
					fmt.Fprintln(out, historyLine(&evs[i]))
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the events as a JSON array")
	cmd.Flags().StringVar(&export, "export", "", "write the whole event log in this format (jsonl)")
	addHarnessFlag(cmd)
	addStoreFlag(cmd)
	return cmd
}

// historyLine renders one event for people.
func historyLine(e *store.Event) string {
	return fmt.Sprintf("%d %s %-10s", e.Seq, e.Time.Format("2006-01-02T15:04:05Z07:00"), e.Kind) + " " + eventtext.Describe(e)
}

// operatorTokenPath is where `statewright token create` keeps the operator
// token: $XDG_CONFIG_HOME/statewright/operator-token, else
// ~/.config/statewright/operator-token.
func operatorTokenPath() (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return "", fmt.Errorf("no operator token location: set XDG_CONFIG_HOME or HOME")
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "statewright", "operator-token"), nil
}

// stdinIsTerminal reports whether cmd's stdin is a terminal.
func stdinIsTerminal(cmd *cobra.Command) bool {
	f, ok := cmd.InOrStdin().(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	// /dev/null is a character device too, and is what a harness's tool
	// runner usually gives a command.
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}

// proveHuman establishes that a person runs a human-only command, in one
// of two ways: an operator token (--token or $STATEWRIGHT_OPERATOR_TOKEN)
// that matches the token file, or, on a terminal, a confirmation typed at
// a prompt read from /dev/tty (one of accept). The agent's shell has no
// terminal, and self-protection keeps the agent's tools from reading the
// token file. Without either, the command is refused (exit 1).
func proveHuman(cmd *cobra.Command, prompt string, accept ...string) (runtime.Actor, error) {
	// Nothing the agent's processes run counts as a person, whatever
	// credential they hold (internal/person).
	flag, _ := cmd.Flags().GetString("store")
	registry := ""
	if p, err := store.ResolvePath(flag, nil); err == nil {
		registry = harnessRegistry(p)
	}
	if err := person.Check(registry, false); err != nil {
		return runtime.Actor{}, failure{"`statewright " + cmd.Name() + "` needs a person, and " + err.Error() + "; run it yourself in a terminal of your own"}
	}
	tok, _ := cmd.Flags().GetString("token")
	if tok == "" {
		tok = os.Getenv(EnvOperatorToken)
	}
	user := os.Getenv("USER")
	if tok != "" {
		// An operator token of `statewright tokens` (stored hashed) proves a person.
		if ok, err := operatorFromTokens(tok); err != nil {
			return runtime.Actor{}, failure{"read the token file: " + err.Error()}
		} else if ok {
			return runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli-token", Name: user}, nil
		}
		p, err := operatorTokenPath()
		if err != nil {
			return runtime.Actor{}, failure{err.Error()}
		}
		want, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return runtime.Actor{}, failure{"an operator token was given but no token file exists at " + p + " and it is no valid operator token of `statewright tokens` (create one with `statewright tokens create --role operator`)"}
		}
		if err != nil {
			return runtime.Actor{}, failure{"read operator token: " + err.Error()}
		}
		w := strings.TrimSpace(string(want))
		if w == "" || subtle.ConstantTimeCompare([]byte(w), []byte(strings.TrimSpace(tok))) != 1 {
			return runtime.Actor{}, failure{"the operator token does not match " + p}
		}
		return runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli-token", Name: user}, nil
	}
	noPerson := failure{"`statewright " + cmd.Name() + "` needs a person: run it in a terminal and confirm at the prompt, " +
		"or pass an operator token with --token or $" + EnvOperatorToken + " (see `statewright token create`)"}
	if !stdinIsTerminal(cmd) {
		return runtime.Actor{}, noPerson
	}
	// A terminal the agent's processes made (script, expect, a pty) is no person.
	if err := person.Check(registry, true); err != nil {
		return runtime.Actor{}, failure{"`statewright " + cmd.Name() + "` needs a person, and " + err.Error() + "; run it in a terminal of your own, or pass the operator token"}
	}
	// The confirmation is read from the controlling terminal, not from
	// stdin, so piping "yes" into the command proves nothing.
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return runtime.Actor{}, noPerson
	}
	defer tty.Close()
	fmt.Fprintf(tty, "%s\nType %s to confirm: ", prompt, strings.Join(quoteAll(accept), " or "))
	line, err := bufio.NewReader(tty).ReadString('\n')
	if err != nil && line == "" {
		return runtime.Actor{}, failure{"no confirmation read from the terminal"}
	}
	line = strings.TrimSpace(line)
	for _, a := range accept {
		if a != "" && line == a {
			return runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli-tty", Name: user}, nil
		}
	}
	return runtime.Actor{}, failure{"not confirmed; nothing changed"}
}

func quoteAll(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if s != "" {
			out = append(out, "'"+s+"'")
		}
	}
	return out
}

func addTokenFlag(cmd *cobra.Command) {
	cmd.Flags().String("token", "", "operator token proving a person runs this (default $"+EnvOperatorToken+"); without one, confirm on a terminal")
}

// pendingApproval returns the approval the session's run is parked on; id,
// when given, must name it.
func pendingApproval(ctx context.Context, svc *runtime.Service, key, id string) (*store.Approval, error) {
	v, err := svc.Status(ctx, key)
	if err != nil {
		return nil, runErr(err)
	}
	ap := v.Run.PendingApproval
	if ap == nil {
		return nil, failure{"no approval is pending for " + key + " (state " + v.Run.State + ", status " + string(v.Run.Status) + ")"}
	}
	if id != "" && id != ap.ID {
		return nil, failure{fmt.Sprintf("approval %s is not pending for %s (pending: %s)", id, key, ap.ID)}
	}
	return ap, nil
}

func newApproveCmd() *cobra.Command {
	var id string
	cmd := &cobra.Command{
		Use:   "approve SESSION [--id APPROVAL] [--token TOKEN]",
		Short: "Approve a run's pending transition (people only)",
		Long: "approve grants the transition a run is parked on. A person must prove themselves: on a terminal, confirm by " +
			"typing yes or the approval id; elsewhere pass the operator token (--token or $" + EnvOperatorToken + ").",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := sessionArg(cmd, args[0])
			if err != nil {
				return err
			}
			return withService(cmd, true, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				ap, err := pendingApproval(ctx, svc, key, id)
				if err != nil {
					return err
				}
				by, err := proveHuman(cmd, fmt.Sprintf("Approve %s for %s: %s → %s\n  %s\n  expires %s",
					ap.ID, key, ap.From, ap.To, ap.Message, ap.ExpiresAt.Format(time.RFC3339)), "yes", ap.ID)
				if err != nil {
					return err
				}
				res, err := svc.Approve(ctx, key, ap.ID, by)
				if err != nil {
					return runErr(err)
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
	addTokenFlag(cmd)
	addHarnessFlag(cmd)
	addStoreFlag(cmd)
	return cmd
}

func newRejectCmd() *cobra.Command {
	var id, reason string
	cmd := &cobra.Command{
		Use:   "reject SESSION [--reason R] [--token TOKEN]",
		Short: "Refuse a run's pending transition (people only)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := sessionArg(cmd, args[0])
			if err != nil {
				return err
			}
			return withService(cmd, true, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				ap, err := pendingApproval(ctx, svc, key, id)
				if err != nil {
					return err
				}
				by, err := proveHuman(cmd, fmt.Sprintf("Reject %s for %s: %s → %s", ap.ID, key, ap.From, ap.To), "yes", ap.ID)
				if err != nil {
					return err
				}
				if err := svc.Reject(ctx, key, ap.ID, reason, by); err != nil {
					return runErr(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "rejected %s; the run stays in %s\n", ap.ID, ap.From)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&id, "id", "", "the approval id to refuse (default: the pending one)")
	cmd.Flags().StringVar(&reason, "reason", "", "why (recorded in the history)")
	addTokenFlag(cmd)
	addHarnessFlag(cmd)
	addStoreFlag(cmd)
	return cmd
}

// newAdminCmd builds pause, resume and deactivate.
func newAdminCmd(name, short, done string, op func(*runtime.Service, context.Context, string, runtime.Actor) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   name + " SESSION [--token TOKEN]",
		Short: short + " (people only)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := sessionArg(cmd, args[0])
			if err != nil {
				return err
			}
			return withService(cmd, true, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				v, err := svc.Status(ctx, key)
				if err != nil {
					return runErr(err)
				}
				by, err := proveHuman(cmd, fmt.Sprintf("%s the run of %s (%s, state %s, %s)?", strings.ToUpper(name[:1])+name[1:], key, v.Run.WorkflowID, v.Run.State, v.Run.Status), "yes")
				if err != nil {
					return err
				}
				if err := op(svc, ctx, key, by); err != nil {
					return runErr(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", done, key)
				return nil
			})
		},
	}
	addTokenFlag(cmd)
	addHarnessFlag(cmd)
	addStoreFlag(cmd)
	return cmd
}

func newPauseCmd() *cobra.Command {
	return newAdminCmd("pause", "Pause a run: only read-only control tools work until resume", "paused", (*runtime.Service).Pause)
}

func newResumeCmd() *cobra.Command {
	return newAdminCmd("resume", "Resume a paused run", "resumed", (*runtime.Service).Resume)
}

func newDeactivateCmd() *cobra.Command {
	return newAdminCmd("deactivate", "End a run; the session is dormant again", "deactivated", (*runtime.Service).Deactivate)
}

func newOffCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "off [--token TOKEN]",
		Short: "Emergency stop: deactivate every live run (people only)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withService(cmd, true, func(ctx context.Context, svc *runtime.Service, _ store.Store) error {
				runs, err := svc.Runs(ctx, store.RunFilter{LiveOnly: true})
				if err != nil {
					return runErr(err)
				}
				if len(runs) == 0 {
					fmt.Fprintln(cmd.OutOrStdout(), "no live runs")
					return nil
				}
				by, err := proveHuman(cmd, fmt.Sprintf("Deactivate all %d live runs?", len(runs)), "yes")
				if err != nil {
					return err
				}
				done, err := svc.Off(ctx, by)
				for _, s := range done {
					fmt.Fprintf(cmd.OutOrStdout(), "deactivated %s\n", s)
				}
				return runErr(err)
			})
		},
	}
	addTokenFlag(cmd)
	addStoreFlag(cmd)
	return cmd
}

func newTokenCmd() *cobra.Command {
	tok := &cobra.Command{
		Use:   "token",
		Short: "Manage the single-file operator token (older form; see `statewright tokens`)",
	}
	var force bool
	create := &cobra.Command{
		Use:   "create [--force]",
		Short: "Create the operator token file (mode 0600) and print the token",
		Long: "token create writes a new random operator token to $XDG_CONFIG_HOME/statewright/operator-token " +
			"(else ~/.config/statewright/operator-token), mode 0600, and prints it once. Pass it to approve, reject, pause, " +
			"resume, deactivate and off with --token or $" + EnvOperatorToken + " where no terminal is available. " +
			"Never put it in the environment the agent is started from. `statewright tokens create --role operator` makes operator tokens " +
			"that are stored hashed and also work with `statewright serve`; both kinds are accepted.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := operatorTokenPath()
			if err != nil {
				return failure{err.Error()}
			}
			if _, err := os.Stat(p); err == nil && !force {
				return failure{"an operator token exists at " + p + " (use --force to replace it)"}
			}
			var b [32]byte
			if _, err := rand.Read(b[:]); err != nil {
				return failure{"generate token: " + err.Error()}
			}
			t := hex.EncodeToString(b[:])
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				return failure{"create token directory: " + err.Error()}
			}
			tmp := p + ".tmp"
			if err := os.WriteFile(tmp, []byte(t+"\n"), 0o600); err != nil {
				return failure{"write token: " + err.Error()}
			}
			if err := os.Chmod(tmp, 0o600); err != nil {
				return failure{"write token: " + err.Error()}
			}
			if err := os.Rename(tmp, p); err != nil {
				return failure{"write token: " + err.Error()}
			}
			fmt.Fprintln(cmd.OutOrStdout(), t)
			fmt.Fprintf(cmd.ErrOrStderr(), "operator token written to %s\n", p)
			return nil
		},
	}
	create.Flags().BoolVar(&force, "force", false, "replace an existing token")
	path := &cobra.Command{
		Use:   "path",
		Short: "Print where the operator token file is",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := operatorTokenPath()
			if err != nil {
				return failure{err.Error()}
			}
			fmt.Fprintln(cmd.OutOrStdout(), p)
			return nil
		},
	}
	tok.AddCommand(create, path)
	return tok
}
