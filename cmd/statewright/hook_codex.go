package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/harness/claudecode"
	"github.com/statewright-go/statewright/harness/codex"
	"github.com/statewright-go/statewright/runtime"
)

func init() { registerHook(newHookCodexCmd) }

func codexEventArgs() []string {
	out := make([]string, 0, len(codex.Events))
	for _, e := range codex.Events {
		out = append(out, e.Arg())
	}
	return out
}

func newHookCodexCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "codex EVENT [flags]",
		Short: "Answer a Codex hook: " + strings.Join(codexEventArgs(), ", "),
		Long: "Answer a Codex hook event. Flags:\n" + hookFlagSet(new(hookOptions)).FlagUsages() +
			"\nCodex honours only deny from PreToolUse: an allow is silence, and an ask becomes a deny that says how a person " +
			"can act with the statewright CLI. Errors are answered per event, failing closed: PreToolUse denies (exit 2); " +
			"UserPromptSubmit and SessionStart warn and keep the prompt; Stop lets the agent stop with a warning. See docs/codex.md.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
				return cmd.Help()
			}
			if code := runCodexHook(args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
}

// runCodexHook answers one Codex hook: args are "EVENT [flags]".
func runCodexHook(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		return codex.Failure(codex.PreToolUse, "usage: statewright hook codex EVENT [flags]; events: "+strings.Join(codexEventArgs(), ", ")).Write(stdout, stderr)
	}
	event, err := codex.ParseEvent(args[0])
	if err != nil {
		return codex.Failure(codex.PreToolUse, err.Error()).Write(stdout, stderr)
	}
	h := &hookRun{stdout: stdout, stderr: stderr}
	return answerWithin[claudecode.Answer](h, "codex", args[1:],
		func(msg string) claudecode.Answer { return codex.Failure(event, msg) },
		func(ctx context.Context, o *hookOptions) claudecode.Answer { return handleCodex(ctx, event, o, stdin) })
}

// handleCodex does one Codex hook's work and returns its answer.
func handleCodex(ctx context.Context, ev codex.Event, o *hookOptions, stdin io.Reader) claudecode.Answer {
	data, err := io.ReadAll(io.LimitReader(stdin, codex.MaxInputBytes+1))
	if err != nil {
		return codex.Failure(ev, "read hook input: "+err.Error())
	}
	in, err := codex.Decode(ev, data)
	if err != nil {
		return codex.Failure(ev, err.Error())
	}
	// Codex tells hooks no project directory but the session's cwd.
	svc, st, err := openHookStore(ctx, o, in.Cwd, runtime.DefaultWorkflows(in.Cwd))
	if err != nil {
		return codex.Failure(ev, err.Error())
	}
	defer st.Close()
	session := codex.SessionKey(in.SessionID)

	switch ev {
	case codex.PreToolUse:
		res, err := svc.Decide(ctx, codex.ToolCall(in, ""))
		if err != nil {
			return codex.Failure(ev, "decide "+in.ToolName+": "+err.Error())
		}
		return codex.PreToolAnswer(in, res)

	case codex.PostToolUse:
		err := svc.RecordResult(ctx, codex.ToolResult(in, ""))
		if err != nil && !errors.Is(err, runtime.ErrNoRun) {
			return codex.Failure(ev, "record the result of "+in.ToolName+": "+err.Error())
		}
		if !codex.IsControlTool(in.ToolName) {
			return codex.Pass()
		}
		v, err := svc.Status(ctx, session)
		if err != nil {
			return codex.Pass()
		}
		return codex.Context(ev, codex.PhaseContext(v))

	case codex.SessionStart, codex.UserPromptSubmit:
		v, err := svc.Status(ctx, session)
		if errors.Is(err, runtime.ErrNoRun) && ev == codex.SessionStart && o.defaultWorkflow != "" {
			v, err = svc.Start(ctx, session, o.defaultWorkflow,
				runtime.Actor{Kind: runtime.ActorHuman, Channel: "hook-config:codex", Name: "--default-workflow"})
			if errors.Is(err, runtime.ErrRunActive) {
				v, err = svc.Status(ctx, session)
			}
		}
		switch {
		case errors.Is(err, runtime.ErrNoRun):
			if o.requireWorkflow {
				return codex.Context(ev, fmt.Sprintf("[statewright] No workflow run is active for this session (%s) and this project requires one: "+
					"every tool call is denied until a run starts (a person runs `statewright start WORKFLOW --session %s --harness codex`).",
					in.SessionID, in.SessionID))
			}
			return codex.Pass()
		case err != nil:
			return codex.Failure(ev, "read the run: "+err.Error())
		}
		return codex.Context(ev, codex.PhaseContext(v))

	case codex.Stop:
		if in.StopHookActive {
			return codex.Pass()
		}
		v, err := svc.Status(ctx, session)
		switch {
		case errors.Is(err, runtime.ErrNoRun):
			return codex.Pass()
		case err != nil:
			return codex.Failure(ev, "read the run: "+err.Error())
		}
		if o.auditOnly {
			return codex.Pass()
		}
		if reason := codex.StopReason(in, v); reason != "" {
			return codex.BlockStop(reason)
		}
		return codex.Pass()
	}
	return codex.Failure(ev, "unhandled event "+string(ev))
}
