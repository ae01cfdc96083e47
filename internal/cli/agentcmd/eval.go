package agentcmd

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/agent/eval"
	"github.com/statewright-go/statewright/agent/events"
	"github.com/statewright-go/statewright/agent/model"
	"github.com/statewright-go/statewright/agent/tools"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/store"
)

// NewCmdEval returns `statewright eval`.
func NewCmdEval(f *cmdutil.Factory) *cobra.Command {
	var (
		suiteDir, modelSpec, workflowName, jsonOut, eventsOut, storeFile string
		maxSteps                                                         int
	)
	cmd := &cobra.Command{
		Use:     "eval --suite DIR --model URL#MODEL",
		Example: "  statewright eval --suite evals/ --model http://127.0.0.1:11434#qwen3 --json results.json",
		Short:   "Run a suite of buggy-repo tasks with and without the workflow; report pass rates",
		Long: `eval runs every task of a suite (DIR/<id>/task.json and DIR/<id>/repo/) twice with
statewright agent: under the suite's workflow (DIR/workflow.json, else bugfix, or --workflow)
and unguarded (one phase, every tool). A run passes when the task's test command passes in the
workspace afterwards. It prints a table (pass rate, steps, tokens, denials) and writes the
report as JSON with --json. The exit status is 0 when the suite ran, whatever the pass rates.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if suiteDir == "" || modelSpec == "" {
				return cmdutil.Usagef("eval needs --suite and --model")
			}
			ep, err := model.ParseEndpoint(modelSpec)
			if err != nil {
				return cmdutil.Usage(err)
			}
			suite, err := eval.Load(suiteDir)
			if err != nil {
				return cmdutil.Usage(err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if storeFile == "" {
				dir, err := os.MkdirTemp("", "statewright-eval-store-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				storeFile = filepath.Join(dir, "eval.db")
			}
			st, err := f.OpenStoreAt(ctx, storeFile, store.Options{})
			if err != nil {
				return fmt.Errorf("eval: %w", err) // the store names the operation and the file
			}
			defer st.Close()
			sb := tools.DetectSandbox(ctx)
			if c := tools.GoBuildCache(); c != "" {
				sb.Writable = append(sb.Writable, c)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "eval: %d tasks × 2 modes against %s, sandbox %s\n", len(suite.Tasks), ep, sb.String())
			opts := eval.Options{Endpoint: ep, Store: st, Sandbox: &sb, MaxSteps: maxSteps, Workflow: workflowName, Progress: cmd.ErrOrStderr(),
				NewClient: func(e model.Endpoint) model.Client {
					return model.New(e, model.Options{APIKey: os.Getenv("OPENAI_API_KEY")})
				}}
			if eventsOut != "" {
				f, err := os.Create(eventsOut)
				if err != nil {
					return cmdutil.Usage(err)
				}
				defer f.Close()
				opts.Events = events.NewStamper(events.NewJSONL(f), nil)
			}
			rep, err := eval.Run(ctx, suite, opts)
			if err != nil {
				return err
			}
			rep.WriteTable(cmd.OutOrStdout())
			if jsonOut != "" {
				b, _ := json.MarshalIndent(rep, "", "  ")
				if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
					return err
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&suiteDir, "suite", "", "the suite directory")
	fl.StringVar(&modelSpec, "model", "", "model endpoint URL#MODEL")
	fl.StringVar(&workflowName, "workflow", "", "the guarded workflow (default: the suite's workflow.json, else bugfix)")
	fl.StringVar(&jsonOut, "json", "", "write the report as JSON to this file")
	fl.StringVar(&eventsOut, "events", "", "write every run's event stream (JSONL) to this file")
	fl.StringVar(&storeFile, "store", "", "record the runs in this store (default: a temporary one)")
	fl.IntVar(&maxSteps, "max-steps", 40, "model turns per run")
	return cmd
}
