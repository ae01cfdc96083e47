// Package eval measures what a workflow does for a model: every task of a
// suite (a small buggy repository with failing tests) is run by the agent
// runner twice — under the suite's workflow ("guarded") and under a flat
// workflow that allows every tool ("unguarded") — and the outcome is
// checked by running the task's tests afterwards, outside the model's
// control. The report gives pass rates, steps, tokens and denials.
package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/statewright-go/statewright/agent"
	"github.com/statewright-go/statewright/agent/events"
	"github.com/statewright-go/statewright/agent/model"
	"github.com/statewright-go/statewright/agent/tools"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// Task is one fixture: DIR/<id>/task.json and DIR/<id>/repo/.
type Task struct {
	ID          string `json:"id"`
	Language    string `json:"language"`
	Task        string `json:"task"`
	TestCommand string `json:"test_command"`
	// Oracle is the fixture's answer key, for simulated models only; the
	// runner never shows it (only repo/ is copied into the workspace).
	Oracle json.RawMessage `json:"oracle,omitempty"`
	// Repo is the fixture repository's directory.
	Repo string `json:"-"`
}

// Suite is a directory of tasks and, optionally, its workflow.json.
type Suite struct {
	Dir   string
	Tasks []Task
	// Workflow is DIR/workflow.json when it exists, else "bugfix".
	Workflow string
}

// Load reads a suite directory.
func Load(dir string) (*Suite, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("eval: suite %s: %w", dir, err)
	}
	s := &Suite{Dir: dir, Workflow: "bugfix"}
	if _, err := os.Stat(filepath.Join(dir, "workflow.json")); err == nil {
		s.Workflow = filepath.Join(dir, "workflow.json")
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "task.json"))
		if err != nil {
			continue
		}
		var t Task
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, fmt.Errorf("eval: %s/task.json: %w", e.Name(), err)
		}
		if t.ID == "" {
			t.ID = e.Name()
		}
		if t.Task == "" || t.TestCommand == "" {
			return nil, fmt.Errorf("eval: %s/task.json: task and test_command are required", e.Name())
		}
		t.Repo = filepath.Join(dir, e.Name(), "repo")
		if fi, err := os.Stat(t.Repo); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("eval: %s: no repo/ directory", e.Name())
		}
		s.Tasks = append(s.Tasks, t)
	}
	if len(s.Tasks) == 0 {
		return nil, fmt.Errorf("eval: suite %s has no tasks (DIR/<id>/task.json with repo/)", dir)
	}
	sort.Slice(s.Tasks, func(i, j int) bool { return s.Tasks[i].ID < s.Tasks[j].ID })
	return s, nil
}

// Modes.
const (
	Guarded   = "guarded"
	Unguarded = "unguarded"
)

// UnguardedWorkflow is the baseline: one phase, every tool, DONE to finish.
const UnguardedWorkflow = `{
  "id": "unguarded",
  "initial": "working",
  "states": {
    "working": {
      "instructions": "Do the task with any tool. Send DONE when it is finished, FAIL to give up.",
      "on": { "DONE": "done", "FAIL": "failed" }
    },
    "done": { "type": "final" },
    "failed": { "type": "final" }
  }
}
`

// Options configure a suite run.
type Options struct {
	Endpoint  model.Endpoint
	NewClient func(model.Endpoint) model.Client
	// Store records every run (one session per run).
	Store   store.Store
	Sandbox *tools.Sandbox
	// MaxSteps per run (default 40).
	MaxSteps int
	// Workflow overrides the suite's guarded workflow.
	Workflow string
	// Events receives every run's events (default: none).
	Events events.Sink
	// Progress, when set, gets one line per finished run.
	Progress io.Writer
}

// Result is one run of one task in one mode.
type Result struct {
	Task             string `json:"task"`
	Language         string `json:"language"`
	Mode             string `json:"mode"`
	Passed           bool   `json:"passed"`
	Outcome          string `json:"outcome"`
	FinalState       string `json:"final_state"`
	RunID            string `json:"run_id"`
	Steps            int    `json:"steps"`
	ToolCalls        int    `json:"tool_calls"`
	Denials          int    `json:"denials"`
	Transitions      int    `json:"transitions"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	DurationMS       int64  `json:"duration_ms"`
	Error            string `json:"error,omitempty"`
}

// Summary aggregates one mode.
type Summary struct {
	Runs     int     `json:"runs"`
	Passed   int     `json:"passed"`
	PassRate float64 `json:"pass_rate"`
	Steps    int     `json:"steps"`
	Tokens   int     `json:"tokens"`
	Denials  int     `json:"denials"`
}

// Report is a suite run.
type Report struct {
	Suite    string             `json:"suite"`
	Model    string             `json:"model"`
	Workflow string             `json:"workflow"`
	Results  []Result           `json:"results"`
	Summary  map[string]Summary `json:"summary"`
}

// Run runs every task in both modes, sequentially.
func Run(ctx context.Context, s *Suite, opts Options) (*Report, error) {
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = 40
	}
	if opts.Events == nil {
		opts.Events = events.Discard
	}
	guarded := s.Workflow
	if opts.Workflow != "" {
		guarded = opts.Workflow
	}
	shown := guarded
	if abs, err := filepath.Abs(guarded); err == nil && strings.ContainsAny(guarded, "/.") {
		guarded = abs
	}
	tmp, err := os.MkdirTemp("", "statewright-eval-")
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer os.RemoveAll(tmp)
	flat := filepath.Join(tmp, "unguarded.json")
	if err := os.WriteFile(flat, []byte(UnguardedWorkflow), 0o644); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	rep := &Report{Suite: s.Dir, Model: opts.Endpoint.String(), Workflow: shown, Summary: map[string]Summary{}}
	for _, t := range s.Tasks {
		for _, mode := range []string{Guarded, Unguarded} {
			wf := guarded
			if mode == Unguarded {
				wf = flat
			}
			r := runOne(ctx, t, mode, wf, tmp, opts)
			rep.Results = append(rep.Results, r)
			if opts.Progress != nil {
				fmt.Fprintf(opts.Progress, "%-16s %-9s %-6s %s in %s, %d steps, %d denials\n", t.ID, mode, passWord(r.Passed), r.Outcome, r.FinalState, r.Steps, r.Denials)
			}
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
		}
	}
	for _, r := range rep.Results {
		sm := rep.Summary[r.Mode]
		sm.Runs++
		if r.Passed {
			sm.Passed++
		}
		sm.Steps += r.Steps
		sm.Tokens += r.PromptTokens + r.CompletionTokens
		sm.Denials += r.Denials
		sm.PassRate = float64(sm.Passed) / float64(sm.Runs)
		rep.Summary[r.Mode] = sm
	}
	return rep, nil
}

func passWord(ok bool) string {
	if ok {
		return "PASS"
	}
	return "fail"
}

func runOne(ctx context.Context, t Task, mode, wf, tmp string, opts Options) Result {
	res := Result{Task: t.ID, Language: t.Language, Mode: mode}
	dir, err := os.MkdirTemp(tmp, t.ID+"-"+mode+"-")
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer os.RemoveAll(dir)
	if err := copyTree(t.Repo, dir); err != nil {
		res.Error = err.Error()
		return res
	}
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	svc := runtime.New(opts.Store, runtime.Options{ProjectDir: ws.Root})
	set := &tools.Set{WS: ws, Sandbox: opts.Sandbox, TestCommand: t.TestCommand, Limits: tools.Limits{Timeout: 120 * time.Second}}
	out, err := agent.Run(ctx, agent.Config{
		Service: svc, Store: opts.Store, Workflow: wf, Task: t.Task, Endpoint: opts.Endpoint, NewClient: opts.NewClient,
		Tools: set, MaxSteps: opts.MaxSteps, Events: opts.Events,
	})
	if err != nil {
		res.Error = err.Error()
		return res
	}
	e := out.RunEnd
	res.Outcome, res.FinalState, res.RunID = e.Outcome, e.FinalState, out.RunID
	res.Steps, res.ToolCalls, res.Denials, res.Transitions = e.Steps, e.ToolCalls, e.Denials, e.Transitions
	res.PromptTokens, res.CompletionTokens, res.DurationMS = e.PromptTokens, e.CompletionTokens, e.DurationMS
	// The verdict is the task's own tests, run after the model is done.
	v, err := opts.Sandbox.Run(ctx, ws, t.TestCommand, tools.Limits{Timeout: 120 * time.Second})
	if err != nil {
		res.Error = "verify: " + err.Error()
		return res
	}
	res.Passed = v.ExitCode == 0
	return res
}

// copyTree copies the regular files and directories of src into dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// WriteTable writes the report as a readable table with a summary.
func (r *Report) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tLANG\tMODE\tRESULT\tOUTCOME\tFINAL\tSTEPS\tCALLS\tDENIALS\tTOKENS")
	for _, x := range r.Results {
		res := passWord(x.Passed)
		if x.Error != "" {
			res = "error"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", x.Task, x.Language, x.Mode, res, x.Outcome, x.FinalState, x.Steps, x.ToolCalls, x.Denials, x.PromptTokens+x.CompletionTokens)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, mode := range []string{Guarded, Unguarded} {
		s, ok := r.Summary[mode]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%-9s pass rate %d/%d (%.0f%%), %d steps, %d tokens, %d denials\n", mode, s.Passed, s.Runs, 100*s.PassRate, s.Steps, s.Tokens, s.Denials)
	}
}
