// Package agentcmd is `statewright agent`, `eval` and `generate`: the
// direct-to-model agent runner, its evaluation suite, and a model drafting a
// workflow.
package agentcmd

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
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// Exit codes of `statewright agent` beyond the shared ones.
const (
	exitBudget   = 3 // max_steps, time or tokens ran out
	exitApproval = 4 // waiting for a person's approval (or paused): resumable
)

// AgentOptions are `statewright agent`'s options.
type AgentOptions struct {
	f                                                         *cmdutil.Factory
	workflow, task, model, workspace, testCmd, events, resume string
	maxSteps, maxTokens, contextBudget, cmdTimeout, outputCap int
	maxDepth                                                  int
	timeout                                                   time.Duration
}

// NewCmdAgent returns `statewright agent`; runF, when set, runs instead of
// the agent (tests).
func NewCmdAgent(f *cmdutil.Factory, runF func(*cobra.Command, *AgentOptions) error) *cobra.Command {
	o := &AgentOptions{f: f}
	cmd := &cobra.Command{
		Use:     "agent --workflow NAME --task TEXT --model URL#MODEL [--workspace DIR]",
		Example: "  statewright agent --workflow bugfix --task 'make the tests pass' --model http://127.0.0.1:11434#qwen3 --workspace .",
		Short:   "Run a model in a loop under a workflow (OpenAI-compatible or Ollama)",
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
			if runF != nil {
				return runF(cmd, o)
			}
			return runAgent(cmd, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.workflow, "workflow", "", "workflow: a bundled template name or a file")
	fl.StringVar(&o.task, "task", "", "the task for the model")
	fl.StringVar(&o.model, "model", "", "model endpoint URL#MODEL (http://localhost:11434/v1#qwen2.5-coder, ollama://localhost:11434#qwen2.5-coder)")
	fl.StringVar(&o.workspace, "workspace", ".", "the directory the model works in")
	fl.StringVar(&o.testCmd, "test-cmd", "", "run_test's default command (e.g. 'go test ./...')")
	fl.StringVar(&o.events, "events", "progress", "event output: progress (readable, on stderr) or jsonl (on stdout)")
	fl.StringVar(&o.resume, "resume", "", "resume the agent run with this run id (after a crash or an approval)")
	fl.IntVar(&o.maxSteps, "max-steps", agent.DefaultMaxSteps, "model turns before the run stops (exit 3)")
	fl.IntVar(&o.maxTokens, "max-tokens", 0, "prompt+completion tokens before the run stops (exit 3; 0: no limit)")
	fl.DurationVar(&o.timeout, "timeout", 0, "wall time before the run stops (exit 3; 0: no limit)")
	fl.IntVar(&o.contextBudget, "context-budget", agent.DefaultContextBudget, "bytes of conversation sent per request; older tool output is cut first")
	fl.IntVar(&o.cmdTimeout, "command-timeout", 120, "seconds a run_command/run_test may take")
	fl.IntVar(&o.outputCap, "output-cap", 16<<10, "bytes of command output kept (the middle is cut)")
	fl.IntVar(&o.maxDepth, "max-depth", runtime.DefaultMaxDepth, "how deep invoked sub-workflows and forks may nest (deeper ones fail to on_fail)")
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

func runAgent(cmd *cobra.Command, o *AgentOptions) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.events != "progress" && o.events != "jsonl" {
		return cmdutil.Usagef("--events %q: want progress or jsonl", o.events)
	}
	if o.resume == "" {
		if o.workflow == "" || o.task == "" || o.model == "" {
			return cmdutil.Usagef("agent needs --workflow, --task and --model (or --resume RUN)")
		}
	}
	st, err := o.f.OpenStore(ctx, cmd, store.Options{MustExist: o.resume != ""})
	if err != nil {
		return err
	}
	defer st.Close()
	if o.resume != "" {
		task, wf, mdl, ws, testCmd, err := agent.ReadMeta(ctx, st, o.resume)
		if err != nil {
			return cmdutil.Usage(err)
		}
		o.task, o.workflow, o.workspace = task, wf, ws
		if o.model == "" {
			o.model = mdl
		}
		if o.testCmd == "" {
			o.testCmd = testCmd
		}
	}
	ep, err := model.ParseEndpoint(o.model)
	if err != nil {
		return cmdutil.Usage(err)
	}
	ws, err := tools.NewWorkspace(o.workspace)
	if err != nil {
		return cmdutil.Usage(err)
	}
	sb := agentSandbox(ctx, ws, cmdutil.StoreFile(st))
	// Commands run under the profile of the phase each is decided in.
	sbEnv := harness.HostEnv(ws.Root, cmdutil.StoreFile(st))
	svc := runtime.New(st, runtime.Options{ProjectDir: ws.Root, MaxDepth: o.maxDepth, Policy: policy.Options{ProtectedPaths: agentProtected()}})
	var sink events.Sink
	if o.events == "jsonl" {
		sink = events.NewJSONL(cmd.OutOrStdout())
	} else {
		sink = events.NewProgress(cmd.ErrOrStderr())
	}
	apiKey := os.Getenv("OPENAI_API_KEY")
	res, err := agent.Run(ctx, agent.Config{
		Service:  svc,
		Store:    st,
		Workflow: o.workflow,
		Task:     o.task,
		Endpoint: ep,
		NewClient: func(e model.Endpoint) model.Client {
			return model.New(e, model.Options{APIKey: apiKey})
		},
		Tools: &tools.Set{WS: ws, Sandbox: &sb, TestCommand: o.testCmd, Limits: tools.Limits{Timeout: time.Duration(o.cmdTimeout) * time.Second, OutputCap: o.outputCap},
			SandboxEnv: &sbEnv},
		MaxSteps:      o.maxSteps,
		MaxTokens:     o.maxTokens,
		Timeout:       o.timeout,
		ContextBudget: o.contextBudget,
		Events:        events.NewStamper(sink, nil),
		Resume:        o.resume,
	})
	if err != nil {
		if errors.Is(err, runtime.ErrWorkflow) || errors.Is(err, runtime.ErrRunActive) {
			return cmdutil.Usage(err)
		}
		return err
	}
	if o.events == "jsonl" {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s in %s (run %s)\n", "statewright agent", res.Outcome, res.FinalState, res.RunID)
	}
	switch code := res.ExitCode(); code {
	case 0:
		return nil
	case exitBudget, exitApproval:
		return cmdutil.ExitError{Code: code}
	default:
		return cmdutil.Failure("")
	}
}

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
// user's: docs/sandbox.md, "Caches").
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
