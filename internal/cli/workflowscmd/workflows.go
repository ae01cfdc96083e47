// Package workflowscmd is `statewright workflows`: list, show, validate and
// graph workflows (the graph through internal/wfgraph).
package workflowscmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/gateway"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/internal/wfgraph"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/workflow"
)

// NewCmdWorkflows returns `statewright workflows`.
func NewCmdWorkflows(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "workflows",
		Aliases: []string{"workflow"},
		Example: "  statewright workflows list\n  statewright workflows show bugfix",
		Short:   "List, show, validate and graph workflows",
		Long: "Work with workflow definitions: the bundled templates and your own files.\n\n" +
			"Commands that take NAME|FILE accept a bundled template name (see 'workflows list') or a path to a JSON or YAML workflow file.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newWorkflowsListCmd(f), newWorkflowsShowCmd(f), newWorkflowsValidateCmd(f), newWorkflowsGraphCmd(f))
	return cmd
}

// templateSummary is one row of 'workflows list'.
type templateSummary struct {
	Name        string               `json:"name"`
	ID          string               `json:"id"`
	Initial     string               `json:"initial"`
	States      int                  `json:"states"`
	TaskType    string               `json:"task_type,omitempty"`
	DangerLevel workflow.DangerLevel `json:"danger_level,omitempty"`
	Description string               `json:"description"`
}

func newWorkflowsListCmd(f *cmdutil.Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Example: "  statewright workflows list",
		Short:   "List the bundled workflow templates",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var rows []templateSummary
			for _, name := range workflow.TemplateNames() {
				def, err := workflow.LoadTemplate(name)
				if err != nil {
					return fmt.Errorf("load bundled template: %w", err)
				}
				rows = append(rows, templateSummary{
					Name:        name,
					ID:          def.ID,
					Initial:     def.Initial,
					States:      len(def.States),
					TaskType:    metaTaskType(def),
					DangerLevel: metaDanger(def),
					Description: metaDescription(def),
				})
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return cmdutil.PrintJSON(out, rows)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tID\tSTATES\tDESCRIPTION")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", r.Name, r.ID, r.States, r.Description)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func newWorkflowsShowCmd(f *cmdutil.Factory) *cobra.Command {
	var asJSON, strict bool
	cmd := &cobra.Command{
		Use:     "show NAME|FILE",
		Example: "  statewright workflows show bugfix\n  statewright workflows show .statewright/workflows/release.yaml --json",
		Short:   "Show a workflow's states, tools, instructions and transitions",
		Long: "Show a workflow: each state's allowed tools and limits, its instructions, and which events lead where.\n" +
			"Diagnostics go to stderr; a workflow with validation errors is still shown, and the command exits 1.",
		Args:              cmdutil.ExactArgs(1, "a bundled template name or a workflow file"),
		ValidArgsFunction: cmdutil.CompleteWorkflows,
		RunE: func(cmd *cobra.Command, args []string) error {
			def, loadErr := cmdutil.LoadForCommand(cmd.ErrOrStderr(), args[0], strict, true)
			if def == nil {
				return loadErr
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := cmdutil.PrintJSON(out, def); err != nil {
					return err
				}
				return loadErr
			}
			writeShow(out, def)
			return loadErr
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the parsed definition as JSON")
	cmd.Flags().BoolVar(&strict, "strict", false, "treat unknown keys and other warnings as errors")
	return cmd
}

// fileResult is one file's result in 'workflows validate --json'.
type fileResult struct {
	File        string               `json:"file"`
	Valid       bool                 `json:"valid"`
	Errors      int                  `json:"errors"`
	Warnings    int                  `json:"warnings"`
	Diagnostics workflow.Diagnostics `json:"diagnostics"`
	// Error is set when the file could not be read.
	Error string `json:"error,omitempty"`
	// Upgrade is the upgrade report: what changed for a file written for
	// an older statewright (strict keys, ladder, narrowed tests, secrets).
	Upgrade []string `json:"upgrade,omitempty"`
}

func newWorkflowsValidateCmd(f *cmdutil.Factory) *cobra.Command {
	var asJSON, strict bool
	var harness string
	cmd := &cobra.Command{
		Use:     "validate FILE...",
		Example: "  statewright workflows validate .statewright/workflows/*.yaml",
		Short:   "Parse and validate workflow files",
		Long: "Parse and validate each workflow file (or bundled template name) and print every finding as\n" +
			"file:line:col: severity: message. Exits 1 when any file has an error, a warning under --strict,\n" +
			"or cannot be read; 0 otherwise. --harness NAME also warns about the fields that have no effect under\n" +
			"that harness (" + strings.Join(runtime.Harnesses, ", ") + "); without it, about those no harness honours.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.Usagef("workflows validate: give at least one workflow file")
			}
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			results := make([]fileResult, 0, len(args))
			allValid := true
			for _, arg := range args {
				r := validateOne(arg, strict, harness)
				if !r.Valid {
					allValid = false
				}
				results = append(results, r)
				if asJSON {
					continue
				}
				if r.Error != "" {
					fmt.Fprintf(errOut, "statewright: %s\n", r.Error)
					fmt.Fprintf(out, "%s: unreadable\n", r.File)
					continue
				}
				cmdutil.PrintDiagnostics(out, r.Diagnostics)
				for _, u := range r.Upgrade {
					fmt.Fprintf(out, "%s: upgrade: %s\n", r.File, u)
				}
				fmt.Fprintf(out, "%s: %s\n", r.File, summary(r, strict))
			}
			if asJSON {
				if err := cmdutil.PrintJSON(out, struct {
					Valid bool         `json:"valid"`
					Files []fileResult `json:"files"`
				}{allValid, results}); err != nil {
					return err
				}
			}
			if !allValid {
				return cmdutil.Failure("")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as one JSON object")
	cmd.Flags().BoolVar(&strict, "strict", false, "treat unknown keys and other warnings as errors")
	cmd.Flags().StringVar(&harness, "harness", "", "also warn about fields that have no effect under this harness")
	return cmd
}

// validateOne loads and validates one workflow for 'workflows validate'.
func validateOne(arg string, strict bool, harness string) fileResult {
	r := fileResult{File: cmdutil.DisplayName(arg)}
	def, diags, err := cmdutil.LoadWorkflow(arg, strict)
	if def != nil {
		// Its invokes must resolve, as a run's start resolves them, and
		// the fields that are not law say what they do under the harness.
		more := append(runtime.CheckSubWorkflows(def), runtime.FieldEffects(def, harness)...)
		diags = append(diags, more...)
		if err == nil && (more.HasErrors() || strict && len(more) > 0) {
			err = fmt.Errorf("%s: %w", def.Source, cmdutil.ErrInvalidWorkflow)
		}
	}
	if err != nil && !errors.Is(err, cmdutil.ErrInvalidWorkflow) {
		r.Error = err.Error()
		r.Diagnostics = workflow.Diagnostics{}
		return r
	}
	if diags == nil {
		diags = workflow.Diagnostics{}
	}
	r.Diagnostics = diags
	for _, d := range diags {
		if d.Severity == workflow.SeverityError {
			r.Errors++
		} else {
			r.Warnings++
		}
	}
	r.Valid = err == nil
	if def == nil || !def.TrustEventDataSet || def.Compat != "" {
		// Not declared as written for statewright-go (trust_event_data set
		// either way): an older file, which gets the upgrade report.
		r.Upgrade = upgradeReport(arg, diags)
	}
	return r
}

// summary is the one-line verdict printed after a file's diagnostics.
func summary(r fileResult, strict bool) string {
	var parts []string
	if r.Errors > 0 {
		parts = append(parts, plural(r.Errors, "error"))
	}
	if r.Warnings > 0 {
		parts = append(parts, plural(r.Warnings, "warning"))
	}
	counts := strings.Join(parts, ", ")
	switch {
	case r.Valid && r.Warnings == 0:
		return "ok"
	case r.Valid:
		return "ok (" + counts + ")"
	case r.Errors == 0 && strict:
		return "invalid under --strict (" + counts + ")"
	default:
		return "invalid (" + counts + ")"
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func newWorkflowsGraphCmd(f *cmdutil.Factory) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:     "graph NAME|FILE",
		Example: "  statewright workflows graph bugfix\n  statewright workflows graph wf.yaml --format dot",
		Short:   "Draw a workflow as a Mermaid state diagram or a Graphviz digraph",
		Long: "Print a workflow's state machine as a Mermaid stateDiagram-v2 (--format mermaid, the default) or a\n" +
			"Graphviz digraph (--format dot). Every transition is labelled with its event, [guards], (approval),\n" +
			"invoke and fork marks; final states are marked; interrupts are dashed. The output is sorted, so it is stable.",
		Args:              cmdutil.ExactArgs(1, "a bundled template name or a workflow file"),
		ValidArgsFunction: cmdutil.CompleteWorkflows,
		RunE: func(cmd *cobra.Command, args []string) error {
			var render func(io.Writer, *workflow.Definition)
			switch format {
			case "mermaid":
				render = wfgraph.Mermaid
			case "dot":
				render = wfgraph.Dot
			default:
				return cmdutil.Usagef("workflows graph: unknown --format %q (want mermaid or dot)", format)
			}
			def, loadErr := cmdutil.LoadForCommand(cmd.ErrOrStderr(), args[0], false, true)
			if def == nil {
				return loadErr
			}
			render(cmd.OutOrStdout(), def)
			return loadErr
		},
	}
	cmd.Flags().StringVar(&format, "format", "mermaid", "output format: mermaid or dot")
	return cmd
}

func metaDescription(def *workflow.Definition) string {
	if def.Meta == nil {
		return ""
	}
	d, _ := def.Meta.Extra["description"].(string)
	return d
}

func metaTaskType(def *workflow.Definition) string {
	if def.Meta == nil {
		return ""
	}
	return def.Meta.TaskType
}

func metaDanger(def *workflow.Definition) workflow.DangerLevel {
	if def.Meta == nil {
		return ""
	}
	return def.Meta.DangerLevel
}

// stateOrder lists states for reading: working states breadth-first from the
// initial state (events in sorted order), then working states the initial
// state does not reach, then final states; each group sorted where the walk
// gives no order.
func stateOrder(def *workflow.Definition) []string {
	seen := map[string]bool{}
	var order []string
	if s := def.States[def.Initial]; s != nil && !s.IsFinal() {
		seen[def.Initial] = true
		order = append(order, def.Initial)
	}
	for i := 0; i < len(order); i++ {
		s := def.States[order[i]]
		for _, ev := range cmdutil.SortedKeys(s.On) {
			for _, t := range s.On[ev].Targets() {
				if ts := def.States[t]; ts != nil && !ts.IsFinal() && !seen[t] {
					seen[t] = true
					order = append(order, t)
				}
			}
		}
	}
	var finals []string
	for _, name := range cmdutil.SortedKeys(def.States) {
		switch {
		case seen[name]:
		case def.States[name].IsFinal():
			finals = append(finals, name)
		default:
			order = append(order, name)
		}
	}
	return append(order, finals...)
}

// writeShow prints the human-readable description of def.
func writeShow(w io.Writer, def *workflow.Definition) {
	fmt.Fprintf(w, "workflow %s", def.ID)
	if def.Source != "" {
		fmt.Fprintf(w, " (%s)", def.Source)
	}
	fmt.Fprintln(w)
	if d := metaDescription(def); d != "" {
		fmt.Fprintf(w, "  %s\n", d)
	}
	fmt.Fprintf(w, "initial: %s\n", def.Initial)
	if tt, dl := metaTaskType(def), metaDanger(def); tt != "" || dl != "" {
		fmt.Fprintf(w, "task type: %s, danger level: %s\n", orDash(tt), orDash(string(dl)))
	}
	if def.TrustEventData {
		fmt.Fprintln(w, "trust_event_data: event data is merged into the context (statewright semantics)")
	}
	law, _ := policy.Compile(def, policy.Options{})
	hints := trustedHints()
	for _, name := range stateOrder(def) {
		s := def.States[name]
		fmt.Fprintln(w)
		var marks []string
		if name == def.Initial {
			marks = append(marks, "initial")
		}
		if s.IsFinal() {
			marks = append(marks, "final")
		}
		if len(marks) > 0 {
			fmt.Fprintf(w, "%s (%s)\n", name, strings.Join(marks, ", "))
		} else {
			fmt.Fprintln(w, name)
		}
		writeStateBody(w, s)
		if law != nil {
			writeEffective(w, law, name, hints)
		}
	}
	if len(def.Guards) > 0 {
		fmt.Fprintln(w, "\nguards:")
		for _, name := range cmdutil.SortedKeys(def.Guards) {
			fmt.Fprintf(w, "  %s: %s\n", name, guardString(def.Guards[name]))
		}
	}
	if len(def.Interrupts) > 0 {
		fmt.Fprintln(w, "\ninterrupts:")
		for _, name := range cmdutil.SortedKeys(def.Interrupts) {
			in := def.Interrupts[name]
			fmt.Fprintf(w, "  %s: on edit of %s -> %s", name, in.Trigger.FilePattern, in.Target)
			if in.Priority != 0 {
				fmt.Fprintf(w, " (priority %d)", in.Priority)
			}
			fmt.Fprintln(w)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeStateBody prints a state's fields, indented, skipping absent ones.
func writeStateBody(w io.Writer, s *workflow.State) {
	line := func(label, value string) { fmt.Fprintf(w, "  %s: %s\n", label, value) }
	list := func(label string, items []string) {
		if items != nil {
			line(label, listString(items))
		}
	}
	if !s.IsFinal() || s.AllowedTools != nil {
		switch {
		case s.IsFinal():
		case s.AllowedTools == nil:
			line("allowed tools", "any (unrestricted)")
		default:
			line("allowed tools", listString(s.AllowedTools))
		}
	}
	list("disallowed tools", s.DisallowedTools)
	list("allowed commands", s.AllowedCommands)
	if s.AllowedCommandsTool != "" {
		line("allowed commands tool", s.AllowedCommandsTool)
	}
	list("allowed paths", s.AllowedPaths)
	list("denied paths", s.DeniedPaths)
	list("blocked env", s.BlockedEnv)
	var limits []string
	if s.MaxIterations != nil {
		limits = append(limits, fmt.Sprintf("max_iterations %d", *s.MaxIterations))
	}
	if s.MaxEditLines != nil {
		limits = append(limits, fmt.Sprintf("max_edit_lines %d", *s.MaxEditLines))
	}
	if s.MaxFilesPerState != nil {
		limits = append(limits, fmt.Sprintf("max_files_per_state %d", *s.MaxFilesPerState))
	}
	if s.ContextBudgetBytes != nil {
		limits = append(limits, fmt.Sprintf("context_budget_bytes %d", *s.ContextBudgetBytes))
	}
	if len(limits) > 0 {
		line("limits", strings.Join(limits, ", "))
	}
	if s.Model != "" {
		line("model", s.Model)
	}
	if s.ThinkingLevel != "" {
		line("thinking level", s.ThinkingLevel)
	}
	if s.Instructions != "" {
		line("instructions", strings.Join(strings.Fields(s.Instructions), " "))
	}
	if s.SafeNext != "" {
		line("safe_next", s.SafeNext)
	}
	if len(s.On) > 0 {
		fmt.Fprintln(w, "  on:")
		for _, ev := range cmdutil.SortedKeys(s.On) {
			for _, e := range wfgraph.TransitionEdges("", ev, s.On[ev]) {
				if e.Note != "" {
					fmt.Fprintf(w, "    %s -> %s: %s\n", e.Label, e.To, e.Note)
				} else {
					fmt.Fprintf(w, "    %s -> %s\n", e.Label, e.To)
				}
			}
		}
	}
}

func listString(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

// guardString renders a guard as a compact expression.
func guardString(g *workflow.Guard) string {
	switch {
	case g == nil:
		return "?"
	case g.Ref != "":
		return g.Ref
	case g.All != nil:
		return "all(" + guardList(g.All) + ")"
	case g.Any != nil:
		return "any(" + guardList(g.Any) + ")"
	case g.Not != nil:
		return "not(" + guardString(g.Not) + ")"
	}
	if g.Op == workflow.OpExists || g.Op == workflow.OpNotExists {
		return fmt.Sprintf("%s %s", g.Field, g.Op)
	}
	v, err := json.Marshal(g.Value)
	if err != nil {
		v = []byte(fmt.Sprint(g.Value))
	}
	return fmt.Sprintf("%s %s %s", g.Field, g.Op, v)
}

func guardList(gs []*workflow.Guard) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = guardString(g)
	}
	return strings.Join(parts, ", ")
}

// writeEffective prints what a phase lets the agent use once its tools,
// rules, domains and the trusted MCP annotations are read together.
func writeEffective(w io.Writer, law *policy.Law, state string, hints map[string]policy.ToolHints) {
	pt, ok := law.Effective(state, hints)
	if !ok || pt.Tools == nil {
		return
	}
	line := func(label, value string) { fmt.Fprintf(w, "  %s: %s\n", label, value) }
	line("effective tools", pt.String())
	if len(pt.Capabilities) > 0 {
		line("capabilities", strings.Join(pt.Capabilities, ", "))
	}
	if len(pt.Ask) > 0 {
		line("ask", strings.Join(pt.Ask, ", "))
	}
	if len(pt.Deny) > 0 {
		line("deny", strings.Join(pt.Deny, ", "))
	}
	if pt.Domains != nil {
		line("domains", listString(pt.Domains))
	}
	if pt.ReadOnlyHints && hints == nil {
		line("mcp read-only hints", "on (no trusted gateway configuration here records any)")
	}
}

// trustedHints returns the MCP annotations snapshotted when the gateway
// configuration of the current directory's project was trusted (nil: no
// such configuration, or not trusted as it is now).
func trustedHints() map[string]policy.ToolHints {
	_, hash, err := gateway.LoadConfigFile(gateway.ConfigFile)
	if err != nil {
		return nil
	}
	tf, err := cmdutil.TrustFile("")
	if err != nil {
		return nil
	}
	h, _ := tf.Hints(gateway.ConfigFile, hash)
	return h
}
