package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/agent"
	"github.com/statewright-go/statewright/agent/events"
	"github.com/statewright-go/statewright/agent/model"
	"github.com/statewright-go/statewright/agent/tools"
	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
)

func init() { register(newAgentCmd) }

// Exit codes of `statewright agent` beyond the shared ones.
const (
	exitBudget   = 3 // max_steps, time or tokens ran out
	exitApproval = 4 // waiting for a person's approval (or paused): resumable
)

// agentFlags are the flags of `statewright agent`.
type agentFlags struct {
	workflow, task, model, workspace, testCmd, events, resume string
	maxSteps, maxTokens, contextBudget, cmdTimeout, outputCap int
	maxDepth                                                  int
	timeout                                                   time.Duration
}

func newAgentCmd() *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "agent --workflow NAME --task TEXT --model URL#MODEL [--workspace DIR]",
		Short: "Run a model in a loop under a workflow (OpenAI-compatible or Ollama)",
		Long: `agent drives a model through a workflow: each phase offers the model only that
phase's tools (read_file, list_dir, grep, edit_file, write_file, run_command,
run_test, statewright_transition); every call is decided by the same runtime as
the harness hooks (one store, one audit log) before it runs. File tools stay
inside the workspace; commands run there under bubblewrap when the kernel
allows it (see statewright doctor).

--model is URL#MODEL: http://HOST:PORT/v1#NAME for an OpenAI-compatible
server (Chat Completions with tools), ollama://HOST:11434#NAME for Ollama's
native /api/chat. $OPENAI_API_KEY is sent as a bearer token when set.

Exit status: 0 the workflow reached a successful final state; 1 it reached
its failed state or the run failed; 2 usage; 3 a budget ran out (steps,
time, tokens); 4 waiting for a person's approval (resume with --resume RUN
after statewright approve).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAgentCmd(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.workflow, "workflow", "", "workflow: a bundled template name or a file")
	fl.StringVar(&f.task, "task", "", "the task for the model")
	fl.StringVar(&f.model, "model", "", "model endpoint URL#MODEL (http://localhost:11434/v1#qwen2.5-coder, ollama://localhost:11434#qwen2.5-coder)")
	fl.StringVar(&f.workspace, "workspace", ".", "the directory the model works in")
	fl.StringVar(&f.testCmd, "test-cmd", "", "run_test's default command (e.g. 'go test ./...')")
	fl.StringVar(&f.events, "events", "progress", "event output: progress (readable, on stderr) or jsonl (on stdout)")
	fl.StringVar(&f.resume, "resume", "", "resume the agent run with this run id (after a crash or an approval)")
	fl.IntVar(&f.maxSteps, "max-steps", agent.DefaultMaxSteps, "model turns before the run stops (exit 3)")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "prompt+completion tokens before the run stops (exit 3; 0: no limit)")
	fl.DurationVar(&f.timeout, "timeout", 0, "wall time before the run stops (exit 3; 0: no limit)")
	fl.IntVar(&f.contextBudget, "context-budget", agent.DefaultContextBudget, "bytes of conversation sent per request; older tool output is cut first")
	fl.IntVar(&f.cmdTimeout, "command-timeout", 120, "seconds a run_command/run_test may take")
	fl.IntVar(&f.outputCap, "output-cap", 16<<10, "bytes of command output kept (the middle is cut)")
	fl.IntVar(&f.maxDepth, "max-depth", runtime.DefaultMaxDepth, "how deep invoked sub-workflows and forks may nest (deeper ones fail to on_fail)")
	addStoreFlag(cmd)
	return cmd
}

func runAgentCmd(cmd *cobra.Command, f agentFlags) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.events != "progress" && f.events != "jsonl" {
		return usagef("--events %q: want progress or jsonl", f.events)
	}
	if f.resume == "" {
		if f.workflow == "" || f.task == "" || f.model == "" {
			return usagef("agent needs --workflow, --task and --model (or --resume RUN)")
		}
	}
	st, err := openStore(ctx, cmd, f.resume != "")
	if err != nil {
		return err
	}
	defer st.Close()
	if f.resume != "" {
		task, wf, mdl, ws, testCmd, err := agent.ReadMeta(ctx, st, f.resume)
		if err != nil {
			return usageError{err}
		}
		f.task, f.workflow, f.workspace = task, wf, ws
		if f.model == "" {
			f.model = mdl
		}
		if f.testCmd == "" {
			f.testCmd = testCmd
		}
	}
	ep, err := model.ParseEndpoint(f.model)
	if err != nil {
		return usageError{err}
	}
	ws, err := tools.NewWorkspace(f.workspace)
	if err != nil {
		return usageError{err}
	}
	sb := agentSandbox(ctx, ws, storeFile(st))
	// Commands run under the profile of the phase each is decided in.
	sbEnv := harness.HostEnv(ws.Root, storeFile(st))
	svc := runtime.New(st, runtime.Options{ProjectDir: ws.Root, MaxDepth: f.maxDepth, Policy: policy.Options{ProtectedPaths: agentProtected()}})
	var sink events.Sink
	if f.events == "jsonl" {
		sink = events.NewJSONL(cmd.OutOrStdout())
	} else {
		sink = events.NewProgress(cmd.ErrOrStderr())
	}
	apiKey := os.Getenv("OPENAI_API_KEY")
	res, err := agent.Run(ctx, agent.Config{
		Service:  svc,
		Store:    st,
		Workflow: f.workflow,
		Task:     f.task,
		Endpoint: ep,
		NewClient: func(e model.Endpoint) model.Client {
			return model.New(e, model.Options{APIKey: apiKey})
		},
		Tools: &tools.Set{WS: ws, Sandbox: &sb, TestCommand: f.testCmd, Limits: tools.Limits{Timeout: time.Duration(f.cmdTimeout) * time.Second, OutputCap: f.outputCap},
			SandboxEnv: &sbEnv},
		MaxSteps:      f.maxSteps,
		MaxTokens:     f.maxTokens,
		Timeout:       f.timeout,
		ContextBudget: f.contextBudget,
		Events:        events.NewStamper(sink, nil),
		Resume:        f.resume,
	})
	if err != nil {
		if errors.Is(err, runtime.ErrWorkflow) || errors.Is(err, runtime.ErrRunActive) {
			return usageError{err}
		}
		return err
	}
	if f.events == "jsonl" {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s in %s (run %s)\n", "statewright agent", res.Outcome, res.FinalState, res.RunID)
	}
	switch code := res.ExitCode(); code {
	case 0:
		return nil
	case exitBudget, exitApproval:
		return exitCode{code: code}
	default:
		return failure{}
	}
}

// exitCode is an error carrying a specific exit status (printed nothing more).
type exitCode struct{ code int }

func (e exitCode) Error() string { return fmt.Sprintf("exit %d", e.code) }

// agentProtected are further paths the runtime protects from the model's tools.
func agentProtected() []string {
	var out []string
	if exe, err := os.Executable(); err == nil {
		out = append(out, exe)
	}
	return out
}

// agentSandbox detects bubblewrap and configures it for ws: the
// workspace's .statewright directory and a store kept inside it are
// read-only, the store itself hidden. Each command then runs under the
// profile of the phase it was decided in (per-session caches, never the
// user's: DECISIONS 12).
func agentSandbox(ctx context.Context, ws *tools.Workspace, storePath string) tools.Sandbox {
	sb := tools.DetectSandbox(ctx)
	sb.ReadOnly = append(sb.ReadOnly, filepath.Join(ws.Root, ".statewright"))
	if storePath != "" {
		if real, err := filepath.EvalSymlinks(filepath.Dir(storePath)); err == nil && strings.HasPrefix(real+"/", ws.Root+"/") {
			sb.ReadOnly = append(sb.ReadOnly, real)
		}
		sb.Hidden = append(sb.Hidden, storePath, storePath+"-wal", storePath+"-shm", storePath+"-journal")
	}
	return sb
}
