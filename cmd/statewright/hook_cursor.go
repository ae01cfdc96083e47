package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/harness/claudecode"
	"github.com/statewright-go/statewright/harness/cursor"
	"github.com/statewright-go/statewright/runtime"
)

func init() { registerHook(newHookCursorCmd) }

func cursorEventArgs() []string {
	out := make([]string, 0, len(cursor.Events))
	for _, e := range cursor.Events {
		out = append(out, e.Arg())
	}
	return out
}

func newHookCursorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cursor EVENT [flags]",
		Short: "Answer a Cursor hook: " + strings.Join(cursorEventArgs(), ", "),
		Long: "Answer a Cursor hook event (.cursor/hooks.json). Flags:\n" + hookFlagSet(new(hookOptions)).FlagUsages() +
			"\nThe gates (pre-tool-use, before-shell-execution, before-mcp-execution, before-read-file) answer " +
			`{"permission":"allow"|"deny"|"ask"} and exit 2 on a deny or any error (fail closed); after-file-edit records ` +
			"the edit; stop may ask the agent to go on. Written from Cursor's documentation, not verified against the real client. See docs/cursor.md.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
				return cmd.Help()
			}
			if code := runCursorHook(args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
}

// runCursorHook answers one Cursor hook: args are "EVENT [flags]".
func runCursorHook(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		return cursor.Failure(cursor.PreToolUse, "usage: statewright hook cursor EVENT [flags]; events: "+strings.Join(cursorEventArgs(), ", ")).Write(stdout, stderr)
	}
	event, err := cursor.ParseEvent(args[0])
	if err != nil {
		return cursor.Failure(cursor.PreToolUse, err.Error()).Write(stdout, stderr)
	}
	h := &hookRun{stdout: stdout, stderr: stderr}
	return answerWithin[claudecode.Answer](h, "cursor", args[1:],
		func(msg string) claudecode.Answer { return cursor.Failure(event, msg) },
		func(ctx context.Context, o *hookOptions) claudecode.Answer { return handleCursor(ctx, event, o, stdin) })
}

// handleCursor does one Cursor hook's work and returns its answer.
func handleCursor(ctx context.Context, ev cursor.Event, o *hookOptions, stdin io.Reader) claudecode.Answer {
	data, err := io.ReadAll(io.LimitReader(stdin, cursor.MaxInputBytes+1))
	if err != nil {
		return cursor.Failure(ev, "read hook input: "+err.Error())
	}
	in, err := cursor.Decode(ev, data)
	if err != nil {
		return cursor.Failure(ev, err.Error())
	}
	project := cursor.ProjectDir(in)
	svc, st, err := openHookStore(ctx, o, project, runtime.DefaultWorkflows(project))
	if err != nil {
		return cursor.Failure(ev, err.Error())
	}
	defer st.Close()
	if ev.Gate() && o.defaultWorkflow != "" {
		// Cursor's conversation id is known only to the hooks: the first
		// gate of a conversation that never had a run starts the
		// operator's default workflow (named on the hook command line).
		session := cursor.SessionKey(in.ConversationID)
		if _, err := svc.Status(ctx, session); errors.Is(err, runtime.ErrNoRun) {
			if _, _, err := svc.StartDefault(ctx, session,
				runtime.Actor{Kind: runtime.ActorHuman, Channel: "hook-config:cursor", Name: "--default-workflow"}); err != nil {
				return cursor.Failure(ev, "start the default workflow: "+err.Error())
			}
		}
	}
	return cursor.Respond(ctx, svc, ev, in, o.auditOnly)
}
