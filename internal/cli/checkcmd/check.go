// Package checkcmd is `statewright check` and `statewright test`: decide tool
// calls against a workflow without a harness, and run a workflow's decision
// tests.
package checkcmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/workflow"
)

// CheckOptions are `statewright check`'s options.
type CheckOptions struct {
	workflow string
	state    string
	harness  string
	runState string
	cwd      string
	batch    bool
	sandbox  string
}

// NewCmdCheck returns `statewright check`; runF, when set, runs instead of
// the check (tests).
func NewCmdCheck(f *cmdutil.Factory, runF func(*cobra.Command, *CheckOptions, []string) error) *cobra.Command {
	o := &CheckOptions{}
	cmd := &cobra.Command{
		Use:     "check --workflow FILE --state STATE [--harness NAME] [--run-state JSON|@FILE] TOOL [INPUT_JSON]",
		Example: "  statewright check --workflow wf.yaml --state planning Write '{\"file_path\":\"a.go\",\"content\":\"x\"}'\n  statewright check --workflow wf.yaml --state planning --harness opencode read '{\"filePath\":\"a.go\"}'",
		Short:   "Decide one tool call against a workflow and print the decision as one line of JSON",
		Long: `check decides a tool call exactly as the hooks do, and prints one line of JSON:

  {"decision":"allow"|"deny"|"ask","rule":"…","reason":"…","allowed_tools":[…],"next_events":[…]}

TOOL is the harness's own tool name (default harness claude-code), INPUT_JSON the
tool input object (default {}): statewright check --workflow w.yaml --state planning
Bash '{"command":"ls"}'. --run-state supplies the run's counters, files edited,
iterations, pending approval and interrupt stack as JSON (or @FILE); without it the
call is decided in a fresh run in STATE. {"active":false} decides with no run.

With --batch, each stdin line is {"state","tool","input"[,"run_state","harness"]}
and one decision line is printed for each, in order.

--sandbox on decides as the hooks do where the call's shell command runs under
the phase's OS sandbox (a phase with sandbox: {exec: true} then lets Exec-class
commands run); the default, off, is the static verdict (docs/sandbox.md).

Exit status: 0 when a decision was printed (whatever it is), 2 for usage errors and
unreadable input, 1 for an invalid workflow.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd, o, args)
			}
			return runCheck(cmd, o, args)
		},
	}
	cmd.Flags().StringVar(&o.workflow, "workflow", "", "workflow file (or bundled template name)")
	cmd.Flags().StringVar(&o.state, "state", "", "the run's current state")
	cmd.Flags().StringVar(&o.harness, "harness", "claude-code", "harness whose tool names TOOL uses: claude-code, codex, cursor, opencode, pi")
	cmd.Flags().StringVar(&o.runState, "run-state", "", "run state as JSON, or @FILE")
	cmd.Flags().StringVar(&o.cwd, "cwd", "", "working directory relative paths resolve against (default: the current directory)")
	cmd.Flags().BoolVar(&o.batch, "batch", false, "read JSONL tool calls on stdin, print one decision line each")
	cmd.Flags().StringVar(&o.sandbox, "sandbox", "off", "decide as if shell commands run under the phase's OS sandbox (on) or not (off: the static verdict)")
	return cmd
}

// checkRunState is the JSON form of --run-state; every field is optional.
type checkRunState struct {
	Active          *bool            `json:"active"`
	State           string           `json:"state"`
	Iterations      uint32           `json:"iterations"`
	FilesEdited     []string         `json:"files_edited"`
	PendingApproval *policy.Approval `json:"pending_approval"`
	History         []engine.Frame   `json:"history"`
}

func decodeJSONStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

// parseRunState reads --run-state (inline JSON or @FILE).
func parseRunState(s string) (*policy.CaseRunState, error) {
	if s == "" {
		return nil, nil
	}
	data := []byte(s)
	if strings.HasPrefix(s, "@") {
		b, err := os.ReadFile(s[1:])
		if err != nil {
			return nil, fmt.Errorf("--run-state: %w", err)
		}
		data = b
	}
	var rs checkRunState
	if err := decodeJSONStrict(data, &rs); err != nil {
		return nil, fmt.Errorf("--run-state: %v", err)
	}
	return &policy.CaseRunState{Active: rs.Active, State: rs.State, Iterations: rs.Iterations,
		FilesEdited: rs.FilesEdited, PendingApproval: rs.PendingApproval, History: rs.History}, nil
}

// compileLaw loads and compiles a workflow for deciding. The workflow file
// itself is protected, as the runtime protects it.
func compileLaw(stderr io.Writer, nameOrPath string) (*policy.Law, error) {
	def, err := loadValid(stderr, nameOrPath, false)
	if err != nil {
		return nil, err
	}
	return lawFor(def, nameOrPath)
}

// loadValid loads a workflow, printing its errors (warnings are not
// printed: check's stdout and stderr are for scripts). With
// examplesFailing, failing inline examples do not make the load fail (the
// caller reports them).
func loadValid(stderr io.Writer, nameOrPath string, examplesFailing bool) (*workflow.Definition, error) {
	def, diags, err := cmdutil.LoadWorkflow(nameOrPath, false)
	if err != nil && examplesFailing && def != nil && errors.Is(err, cmdutil.ErrInvalidWorkflow) {
		only := true
		for _, d := range diags {
			if d.Severity == workflow.SeverityError && d.Code != policy.CodeExampleFailed {
				only = false
			}
		}
		if only {
			return def, nil
		}
	}
	if err != nil {
		for _, d := range diags {
			if d.Severity == workflow.SeverityError {
				fmt.Fprintln(stderr, d.String())
			}
		}
		if errors.Is(err, cmdutil.ErrInvalidWorkflow) {
			return nil, cmdutil.Failure(fmt.Sprintf("%s is not a valid workflow", cmdutil.DisplayName(nameOrPath)))
		}
		return nil, err
	}
	return def, nil
}

// lawFor compiles a loaded workflow as check and test decide with it.
func lawFor(def *workflow.Definition, nameOrPath string) (*policy.Law, error) {
	var protected []string
	if !(cmdutil.LooksLikeTemplateName(nameOrPath) && workflow.IsTemplate(nameOrPath)) {
		if abs, err := filepath.Abs(nameOrPath); err == nil {
			protected = append(protected, filepath.ToSlash(abs))
		}
	}
	law, err := policy.Compile(def, policy.Options{ProtectedPaths: protected})
	if err != nil {
		return nil, cmdutil.Failure(err.Error())
	}
	return law, nil
}

func workDir(flag string) string {
	if flag != "" {
		if abs, err := filepath.Abs(flag); err == nil {
			return filepath.ToSlash(abs)
		}
		return flag
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return filepath.ToSlash(wd)
}

// writeDecision prints d as one line of JSON (no HTML escaping, so commands
// with > and & stay readable).
func writeDecision(w io.Writer, d policy.Decision) error {
	_, err := fmt.Fprintf(w, "%s\n", policy.MarshalDecision(d))
	return err
}

func runCheck(cmd *cobra.Command, o *CheckOptions, args []string) error {
	if o.workflow == "" {
		return cmdutil.Usagef("check: --workflow is required")
	}
	h, err := policy.ParseHarness(o.harness)
	if err != nil {
		return cmdutil.Usagef("check: %v", err)
	}
	if o.batch {
		if len(args) != 0 {
			return cmdutil.Usagef("check --batch takes no arguments (tool calls come on stdin)")
		}
	} else if len(args) < 1 || len(args) > 2 {
		return cmdutil.Usagef("check: want TOOL [INPUT_JSON], got %d arguments", len(args))
	}
	if o.sandbox != "on" && o.sandbox != "off" {
		return cmdutil.Usagef("check: --sandbox must be on or off, got %q", o.sandbox)
	}
	sandboxed := o.sandbox == "on"
	rs, err := parseRunState(o.runState)
	if err != nil {
		return cmdutil.Usage(err)
	}
	law, err := compileLaw(cmd.ErrOrStderr(), o.workflow)
	if err != nil {
		return err
	}
	cwd := workDir(o.cwd)
	if o.batch {
		return runBatch(cmd, law, h, o.state, rs, cwd, sandboxed)
	}
	input := "{}"
	if len(args) == 2 {
		input = args[1]
	}
	call, run, err := buildCall(law, h, o.state, args[0], []byte(input), rs, cwd)
	if err != nil {
		return cmdutil.Usage(err)
	}
	call.Sandboxed = sandboxed
	return writeDecision(cmd.OutOrStdout(), law.Decide(run, call))
}

// buildCall validates one call's parts and builds the policy inputs.
func buildCall(law *policy.Law, h policy.Harness, state, tool string, input []byte, rcs *policy.CaseRunState, cwd string) (*policy.ToolCall, *policy.RunState, error) {
	if tool == "" {
		return nil, nil, fmt.Errorf("no tool name")
	}
	var obj map[string]any
	if err := json.Unmarshal(input, &obj); err != nil || obj == nil {
		return nil, nil, fmt.Errorf("INPUT_JSON must be a JSON object: %s", clipText(string(input), 80))
	}
	run := rcs.RunState(state)
	if run.Active {
		if run.State == "" {
			return nil, nil, fmt.Errorf("--state is required (states: %s)", strings.Join(law.States(), ", "))
		}
		if !law.HasState(run.State) {
			return nil, nil, fmt.Errorf("unknown state %q (states: %s)", run.State, strings.Join(law.States(), ", "))
		}
	}
	return &policy.ToolCall{Harness: h, Tool: tool, Input: input, Cwd: cwd, ProjectDir: cwd}, run, nil
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// batchLine is one line of `check --batch` input.
type batchLine struct {
	State    string          `json:"state"`
	Tool     string          `json:"tool"`
	Input    json.RawMessage `json:"input"`
	RunState json.RawMessage `json:"run_state"`
	Harness  string          `json:"harness"`
	// Sandboxed overrides --sandbox for this line.
	Sandboxed *bool `json:"sandboxed"`
}

func runBatch(cmd *cobra.Command, law *policy.Law, h policy.Harness, defState string, defRun *policy.CaseRunState, cwd string, sandboxed bool) error {
	sc := bufio.NewScanner(cmd.InOrStdin())
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	out := bufio.NewWriter(cmd.OutOrStdout())
	defer out.Flush()
	bad := 0
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		d, err := batchDecide(law, h, defState, defRun, cwd, line, sandboxed)
		if err != nil {
			bad++
			fmt.Fprintf(cmd.ErrOrStderr(), "statewright: check --batch: line %d: %v\n", n, err)
			d = policy.Decision{Verdict: policy.Deny, Rule: policy.RuleBadInput, Reason: fmt.Sprintf("line %d: %v", n, err), AllowedTools: []string{}, NextEvents: []string{}}
		}
		if err := writeDecision(out, d); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return cmdutil.Usagef("check --batch: reading stdin: %v", err)
	}
	if bad > 0 {
		out.Flush()
		return cmdutil.Usagef("check --batch: %d unreadable line(s); each was answered with a bad-input deny", bad)
	}
	return nil
}

func batchDecide(law *policy.Law, h policy.Harness, defState string, defRun *policy.CaseRunState, cwd string, line []byte, sandboxed bool) (policy.Decision, error) {
	var bl batchLine
	if err := decodeJSONStrict(line, &bl); err != nil {
		return policy.Decision{}, err
	}
	if bl.Harness != "" {
		var err error
		if h, err = policy.ParseHarness(bl.Harness); err != nil {
			return policy.Decision{}, err
		}
	}
	rs := defRun
	if len(bl.RunState) > 0 && string(bl.RunState) != "null" {
		var err error
		if rs, err = parseRunState(string(bl.RunState)); err != nil {
			return policy.Decision{}, err
		}
	}
	state := bl.State
	if state == "" {
		state = defState
	}
	input := []byte(bl.Input)
	if len(input) == 0 || string(input) == "null" {
		input = []byte("{}")
	}
	call, run, err := buildCall(law, h, state, bl.Tool, input, rs, cwd)
	if err != nil {
		return policy.Decision{}, err
	}
	call.Sandboxed = sandboxed
	if bl.Sandboxed != nil {
		call.Sandboxed = *bl.Sandboxed
	}
	return law.Decide(run, call), nil
}
