package agentcmd

import (
	"errors"
	"fmt"
	"github.com/statewright-go/statewright/agent/generate"
	"github.com/statewright-go/statewright/internal/wfgraph"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/agent/model"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
)

// NewCmdGenerate returns `statewright generate`.
func NewCmdGenerate(f *cmdutil.Factory) *cobra.Command {
	var (
		task, modelSpec, out string
		rounds               int
		force                bool
	)
	cmd := &cobra.Command{
		Use:     "generate --task TEXT --model URL#MODEL [--out FILE]",
		Example: "  statewright generate --task 'fix a bug test-first' --model http://127.0.0.1:11434#qwen3 --out fix.yaml",
		Short:   "Have a model draft a workflow for a task; validated, errors fed back (at most 3 rounds)",
		Long: `generate asks the model to draft a workflow for the task, validates the draft (the format's
errors, plus a final "failed" state and events in every working state), sends the errors back for
another draft (at most --rounds, 3), writes the first valid draft to --out (default ID.json) and
prints it as a Mermaid graph. Review it before you use it: the model drafts, the engine enforces.
Exit 1 when no round produced a valid workflow.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if task == "" || modelSpec == "" {
				return cmdutil.Usagef("generate needs --task and --model")
			}
			ep, err := model.ParseEndpoint(modelSpec)
			if err != nil {
				return cmdutil.Usage(err)
			}
			client := model.New(ep, model.Options{APIKey: os.Getenv("OPENAI_API_KEY")})
			res, err := generate.Generate(cmd.Context(), client, ep.Model, task, rounds)
			for _, a := range res.Attempts {
				if len(a.Errors) > 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "round %d: %d error(s):\n  %s\n", a.Round, len(a.Errors), strings.Join(a.Errors, "\n  "))
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "round %d: valid\n", a.Round)
				}
			}
			if err != nil {
				if errors.Is(err, generate.ErrNoValidDraft) {
					return cmdutil.Failure(err.Error())
				}
				return err
			}
			for _, w := range res.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			path := out
			if path == "" {
				id := res.Definition.ID
				if id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
					id = "generated"
				}
				path = id + ".json"
			}
			if _, err := os.Stat(path); err == nil && !force {
				return cmdutil.Failure(fmt.Sprintf("%s exists (use --force to overwrite, or --out)", path))
			}
			if dir := filepath.Dir(path); dir != "." {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
			}
			src := res.Source
			if len(src) == 0 || src[len(src)-1] != '\n' {
				src = append(src, '\n')
			}
			if err := os.WriteFile(path, src, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (round %d of at most %d)\n", path, len(res.Attempts), generate.MaxRounds)
			wfgraph.Mermaid(cmd.OutOrStdout(), res.Definition)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&task, "task", "", "the task the workflow is for")
	fl.StringVar(&modelSpec, "model", "", "model endpoint URL#MODEL")
	fl.StringVar(&out, "out", "", "where to write the workflow (default ID.json)")
	fl.IntVar(&rounds, "rounds", generate.MaxRounds, "drafts to ask for at most (1-3)")
	fl.BoolVar(&force, "force", false, "overwrite --out")
	return cmd
}
