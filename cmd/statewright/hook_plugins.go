package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/control"
	"github.com/statewright-go/statewright/harness/jsplugin"
	"github.com/statewright-go/statewright/harness/opencode"
	"github.com/statewright-go/statewright/harness/pi"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

func init() {
	registerHook(newPluginHookCmd("opencode", opencode.Adapter, "docs/opencode.md"),
		newPluginHookCmd("pi", pi.Adapter, "docs/pi.md"))
}

func pluginEventNames() string {
	names := make([]string, len(jsplugin.Events))
	for i, e := range jsplugin.Events {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}

// newPluginHookCmd makes `statewright hook NAME EVENT`, the command a
// harness plugin (opencode, Pi) runs with one JSON object on stdin.
func newPluginHookCmd(name string, a *jsplugin.Adapter, doc string) func() *cobra.Command {
	return func() *cobra.Command {
		return &cobra.Command{
			Use:   name + " EVENT [flags]",
			Short: "Answer the " + name + " plugin: " + pluginEventNames(),
			Long: "Answer the statewright " + name + " plugin. It sends one JSON object on stdin and reads one JSON answer on stdout. Flags:\n" +
				hookFlagSet(new(hookOptions)).FlagUsages() +
				"\nErrors fail closed: tool-before and control deny (exit 2); the other events answer with a notice. See " + doc + ".",
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
					return cmd.Help()
				}
				if code := runPluginHook(a, args, cmd.InOrStdin(), cmd.OutOrStdout()); code != 0 {
					os.Exit(code)
				}
				return nil
			},
		}
	}
}

// pluginRun is one plugin hook invocation; it answers exactly once.
type pluginRun struct {
	out  io.Writer
	mu   sync.Mutex
	done bool
}

func (p *pluginRun) tryAnswer(a jsplugin.Answer) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return 0, false
	}
	p.done = true
	p.out.Write(a.Encode())
	return a.Exit, true
}

func (p *pluginRun) answer(a jsplugin.Answer) int {
	if code, ok := p.tryAnswer(a); ok {
		return code
	}
	select {} // the watchdog answered and exits the process
}

// runPluginHook answers one plugin hook: args are "EVENT [flags]". It
// returns the exit code; every failure on a tool call denies.
func runPluginHook(a *jsplugin.Adapter, args []string, stdin io.Reader, stdout io.Writer) int {
	p := &pluginRun{out: stdout}
	if len(args) < 1 {
		return p.answer(jsplugin.Failure(jsplugin.ToolBefore, "usage: statewright hook "+string(a.Harness)+" EVENT [flags]; events: "+pluginEventNames()))
	}
	event, err := jsplugin.ParseEvent(args[0])
	if err != nil {
		return p.answer(jsplugin.Failure(jsplugin.ToolBefore, err.Error()))
	}
	return answerWithin[jsplugin.Answer](p, string(a.Harness), args[1:],
		func(msg string) jsplugin.Answer { return jsplugin.Failure(event, msg) },
		func(ctx context.Context, o *hookOptions) jsplugin.Answer {
			return handlePlugin(ctx, a, event, o, stdin)
		})
}

func handlePlugin(ctx context.Context, a *jsplugin.Adapter, event jsplugin.Event, o *hookOptions, stdin io.Reader) jsplugin.Answer {
	data, err := io.ReadAll(io.LimitReader(stdin, jsplugin.MaxInputBytes+1))
	if err != nil {
		return jsplugin.Failure(event, "read hook input: "+err.Error())
	}
	in, err := jsplugin.Decode(event, data)
	if err != nil {
		return jsplugin.Failure(event, err.Error())
	}
	workflows := runtime.DefaultWorkflows(in.Cwd)
	svc, st, err := openHookStore(ctx, o, in.Cwd, workflows)
	if err != nil {
		return jsplugin.Failure(event, err.Error())
	}
	defer st.Close()
	session := a.SessionKey(in.Session)

	switch event {
	case jsplugin.ToolBefore:
		res, err := svc.Decide(ctx, a.ToolCall(in))
		if err != nil {
			return jsplugin.Failure(event, "decide "+in.Tool+": "+err.Error())
		}
		return a.PreToolAnswer(in, res)

	case jsplugin.ToolAfter:
		err := svc.RecordResult(ctx, a.ToolResult(in))
		if err != nil && !errors.Is(err, runtime.ErrNoRun) {
			return jsplugin.Failure(event, "record the result of "+in.Tool+": "+err.Error())
		}
		if !a.IsControlTool(in.Tool) {
			return jsplugin.Done("")
		}
		v, err := svc.Status(ctx, session)
		if err != nil {
			return jsplugin.Done("")
		}
		return jsplugin.Done(a.PhaseContext(v))

	case jsplugin.SessionStart, jsplugin.Context:
		v, err := svc.Status(ctx, session)
		if errors.Is(err, runtime.ErrNoRun) && event == jsplugin.SessionStart && o.defaultWorkflow != "" {
			v, err = svc.Start(ctx, session, o.defaultWorkflow,
				runtime.Actor{Kind: runtime.ActorHuman, Channel: "hook-config:" + string(a.Harness), Name: "--default-workflow"})
			if errors.Is(err, runtime.ErrRunActive) {
				v, err = svc.Status(ctx, session)
			}
		}
		switch {
		case errors.Is(err, runtime.ErrNoRun):
			if o.requireWorkflow {
				return jsplugin.Done(fmt.Sprintf("[statewright] No workflow run is active for this session (%s) and this project requires one: "+
					"every tool call is denied until a run starts (a person runs `statewright start WORKFLOW --harness %s --session %s`).",
					in.Session, a.Harness, in.Session))
			}
			return jsplugin.Done("")
		case err != nil:
			return jsplugin.Failure(event, "read the run: "+err.Error())
		}
		return jsplugin.Done(a.PhaseContext(v))

	case jsplugin.Control:
		if !a.IsControlTool(in.Tool) {
			return jsplugin.Failure(event, in.Tool+" is not a statewright control tool")
		}
		args, err := jsplugin.Stamp(in.Args, in.Session)
		if err != nil {
			return jsplugin.Failure(event, err.Error())
		}
		text, isErr, err := callControl(ctx, svc, st, a, in, workflows, a.ControlOp(in.Tool), args)
		if err != nil {
			return jsplugin.Failure(event, "run "+in.Tool+": "+err.Error())
		}
		ans := jsplugin.Done("")
		ans.Text, ans.IsError = text, isErr
		if v, err := svc.Status(ctx, session); err == nil && !isErr {
			ans.Context = a.PhaseContext(v)
		}
		return ans
	}
	return jsplugin.Failure(event, "unhandled event "+string(event))
}

// callControl serves one control tool call through package control, as
// statewright's MCP server would: the text is the result's JSON, or the
// error that explains a refusal (isErr).
func callControl(ctx context.Context, svc *runtime.Service, st store.Store, a *jsplugin.Adapter, in *jsplugin.Input,
	workflows runtime.WorkflowSource, name string, args json.RawMessage) (string, bool, error) {
	ctl, err := control.New(svc, st, control.Options{ProjectDir: in.Cwd, Workflows: workflows})
	if err != nil {
		return "", false, err
	}
	res, err := ctl.Call(ctx, a.SessionKey(in.Session), name, args, in.CallID, a.Actor())
	if err != nil {
		return err.Error(), true, nil
	}
	text, err := control.Render(res)
	return text, false, err
}
