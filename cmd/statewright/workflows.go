package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/workflow"
)

func init() { register(newWorkflowsCmd) }

func newWorkflowsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "workflows",
		Aliases: []string{"workflow"},
		Short:   "List, show, validate and graph workflows",
		Long: "Work with workflow definitions: the bundled templates and your own files.\n\n" +
			"Commands that take NAME|FILE accept a bundled template name (see 'workflows list') or a path to a JSON or YAML workflow file.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newWorkflowsListCmd(), newWorkflowsShowCmd(), newWorkflowsValidateCmd(), newWorkflowsGraphCmd())
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

func newWorkflowsListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the bundled workflow templates",
		Args:  cobra.NoArgs,
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
				return writeJSON(out, rows)
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

func newWorkflowsShowCmd() *cobra.Command {
	var asJSON, strict bool
	cmd := &cobra.Command{
		Use:   "show NAME|FILE",
		Short: "Show a workflow's states, tools, instructions and transitions",
		Long: "Show a workflow: each state's allowed tools and limits, its instructions, and which events lead where.\n" +
			"Diagnostics go to stderr; a workflow with validation errors is still shown, and the command exits 1.",
		Args: exactArgs(1, "a bundled template name or a workflow file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			def, loadErr := loadForCommand(cmd.ErrOrStderr(), args[0], strict, true)
			if def == nil {
				return loadErr
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, def); err != nil {
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
}

func newWorkflowsValidateCmd() *cobra.Command {
	var asJSON, strict bool
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Parse and validate workflow files",
		Long: "Parse and validate each workflow file (or bundled template name) and print every finding as\n" +
			"file:line:col: severity: message. Exits 1 when any file has an error, a warning under --strict,\n" +
			"or cannot be read; 0 otherwise.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("workflows validate: give at least one workflow file")
			}
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			results := make([]fileResult, 0, len(args))
			allValid := true
			for _, arg := range args {
				r := validateOne(arg, strict)
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
				printDiagnostics(out, r.Diagnostics)
				fmt.Fprintf(out, "%s: %s\n", r.File, summary(r, strict))
			}
			if asJSON {
				if err := writeJSON(out, struct {
					Valid bool         `json:"valid"`
					Files []fileResult `json:"files"`
				}{allValid, results}); err != nil {
					return err
				}
			}
			if !allValid {
				return failure{}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as one JSON object")
	cmd.Flags().BoolVar(&strict, "strict", false, "treat unknown keys and other warnings as errors")
	return cmd
}

// validateOne loads and validates one workflow for 'workflows validate'.
func validateOne(arg string, strict bool) fileResult {
	r := fileResult{File: displayName(arg)}
	def, diags, err := loadWorkflow(arg, strict)
	if def != nil {
		// Its invokes must resolve, as a run's start resolves them.
		if sub := runtime.CheckSubWorkflows(def); len(sub) > 0 {
			diags = append(diags, sub...)
			if err == nil {
				err = fmt.Errorf("%s: %w", def.Source, errInvalidWorkflow)
			}
		}
	}
	if err != nil && !errors.Is(err, errInvalidWorkflow) {
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

func newWorkflowsGraphCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "graph NAME|FILE",
		Short: "Draw a workflow as a Mermaid state diagram or a Graphviz digraph",
		Long: "Print a workflow's state machine as a Mermaid stateDiagram-v2 (--format mermaid, the default) or a\n" +
			"Graphviz digraph (--format dot). Every transition is labelled with its event, [guards], (approval),\n" +
			"invoke and fork marks; final states are marked; interrupts are dashed. The output is sorted, so it is stable.",
		Args: exactArgs(1, "a bundled template name or a workflow file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var render func(io.Writer, *workflow.Definition)
			switch format {
			case "mermaid":
				render = writeMermaid
			case "dot":
				render = writeDot
			default:
				return usagef("workflows graph: unknown --format %q (want mermaid or dot)", format)
			}
			def, loadErr := loadForCommand(cmd.ErrOrStderr(), args[0], false, true)
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

// exactArgs is cobra.ExactArgs with a usage error that says what is missing.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s: want %d argument (%s), got %d", cmd.CommandPath(), n, what, len(args))
		}
		return nil
	}
}

// writeJSON prints v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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
		for _, ev := range sortedKeys(s.On) {
			for _, t := range s.On[ev].Targets() {
				if ts := def.States[t]; ts != nil && !ts.IsFinal() && !seen[t] {
					seen[t] = true
					order = append(order, t)
				}
			}
		}
	}
	var finals []string
	for _, name := range sortedKeys(def.States) {
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
	}
	if len(def.Guards) > 0 {
		fmt.Fprintln(w, "\nguards:")
		for _, name := range sortedKeys(def.Guards) {
			fmt.Fprintf(w, "  %s: %s\n", name, guardString(def.Guards[name]))
		}
	}
	if len(def.Interrupts) > 0 {
		fmt.Fprintln(w, "\ninterrupts:")
		for _, name := range sortedKeys(def.Interrupts) {
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
		for _, ev := range sortedKeys(s.On) {
			for _, e := range transitionEdges(ev, s.On[ev]) {
				if e.note != "" {
					fmt.Fprintf(w, "    %s -> %s: %s\n", e.label, e.to, e.note)
				} else {
					fmt.Fprintf(w, "    %s -> %s\n", e.label, e.to)
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

// edgeStyle says how a graph draws an edge.
type edgeStyle int

const (
	edgeNormal   edgeStyle = iota
	edgeApproval           // a human must approve
	edgeFail               // an invoke's or fork's on_fail
	edgeBranch             // a fork branch starting
)

// edge is one drawn transition: its label and target state.
type edge struct {
	label string
	to    string
	style edgeStyle
	// note is extra text 'workflows show' prints (an approval message, an
	// invoke's input).
	note string
}

// transitionEdges expands the transition under event into the edges it
// draws, in a fixed order.
func transitionEdges(event string, t *workflow.Transition) []edge {
	switch t.Kind {
	case workflow.TransitionGuarded:
		out := make([]edge, 0, len(t.Branches))
		for _, b := range t.Branches {
			g := "else"
			if names := b.GuardNames(); len(names) > 0 {
				g = strings.Join(names, ", ")
			}
			out = append(out, edge{label: fmt.Sprintf("%s [%s]", event, g), to: b.Target})
		}
		return out
	case workflow.TransitionFork:
		f := t.Fork
		join := f.Join
		if join == "" {
			join = workflow.JoinAll
		}
		out := []edge{{label: fmt.Sprintf("%s fork(join %s)", event, join), to: f.OnComplete}}
		if f.OnFail != "" {
			out = append(out, edge{label: event + " fork failed", to: f.OnFail, style: edgeFail})
		}
		for _, name := range sortedKeys(f.Branches) {
			out = append(out, edge{label: fmt.Sprintf("%s branch %s", event, name), to: f.Branches[name].Initial, style: edgeBranch})
		}
		return out
	case workflow.TransitionInvoke:
		inv := t.Invoke
		out := []edge{{label: fmt.Sprintf("%s invoke(%s)", event, inv.Machine), to: inv.OnComplete}}
		if inv.Input != nil {
			if b, err := json.Marshal(inv.Input); err == nil {
				out[0].note = "input " + string(b)
			}
		}
		if inv.OnFail != "" {
			out = append(out, edge{label: fmt.Sprintf("%s invoke(%s) failed", event, inv.Machine), to: inv.OnFail, style: edgeFail})
		}
		return out
	}
	label := event
	if names := t.GuardNames(); len(names) > 0 {
		label += " [" + strings.Join(names, ", ") + "]"
	}
	e := edge{to: t.Target}
	if t.RequiresApproval {
		label += " (approval)"
		e.style = edgeApproval
		if t.ApprovalMessage != "" {
			e.note = strconv.Quote(t.ApprovalMessage)
		}
	}
	e.label = label
	return []edge{e}
}

// graphEdge is an edge with its source, for the renderers.
type graphEdge struct {
	from string
	edge
	safeNext bool
}

// graphEdges lists every edge of def: states sorted, events sorted, then
// safe_next fallbacks.
func graphEdges(def *workflow.Definition) []graphEdge {
	var out []graphEdge
	for _, name := range sortedKeys(def.States) {
		s := def.States[name]
		for _, ev := range sortedKeys(s.On) {
			for _, e := range transitionEdges(ev, s.On[ev]) {
				out = append(out, graphEdge{from: name, edge: e})
			}
		}
		if s.SafeNext != "" {
			out = append(out, graphEdge{from: name, edge: edge{label: "(safe_next)", to: s.SafeNext}, safeNext: true})
		}
	}
	return out
}

// usesReturn reports whether any edge leads to $return.
func usesReturn(edges []graphEdge) bool {
	return slices.ContainsFunc(edges, func(e graphEdge) bool { return e.to == workflow.ReturnTarget })
}

// uniqueName returns base, or base with underscores appended, so that it is
// no state's name.
func uniqueName(def *workflow.Definition, base string) string {
	for def.States[base] != nil {
		base += "_"
	}
	return base
}

var mermaidIdent = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// mermaidText makes s safe inside a Mermaid label or quoted name.
func mermaidText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer(`"`, "#quot;", ";", "#59;").Replace(s)
}

// writeMermaid renders def as a Mermaid stateDiagram-v2.
func writeMermaid(w io.Writer, def *workflow.Definition) {
	names := sortedKeys(def.States)
	ids := make(map[string]string, len(names))
	var decls []string
	for i, name := range names {
		if mermaidIdent.MatchString(name) && !strings.HasPrefix(name, "sw__") {
			ids[name] = name
			continue
		}
		ids[name] = fmt.Sprintf("sw__s%d", i)
		decls = append(decls, fmt.Sprintf("    state \"%s\" as %s", mermaidText(name), ids[name]))
	}
	edges := graphEdges(def)
	returnID := "sw__return"
	if usesReturn(edges) {
		ids[workflow.ReturnTarget] = returnID
		decls = append(decls, fmt.Sprintf("    state \"%s (back to the interrupted state)\" as %s", workflow.ReturnTarget, returnID))
	}
	id := func(name string) string {
		if v, ok := ids[name]; ok {
			return v
		}
		// A target that is no state (invalid workflow): draw it by a safe id.
		v := fmt.Sprintf("sw__missing%d", len(ids))
		ids[name] = v
		decls = append(decls, fmt.Sprintf("    state \"%s (missing)\" as %s", mermaidText(name), v))
		return v
	}

	var body []string
	if def.States[def.Initial] != nil {
		body = append(body, fmt.Sprintf("    [*] --> %s", id(def.Initial)))
	}
	for _, e := range edges {
		body = append(body, fmt.Sprintf("    %s --> %s: %s", id(e.from), id(e.to), mermaidText(e.label)))
	}
	var interruptIDs []string
	for i, name := range sortedKeys(def.Interrupts) {
		in := def.Interrupts[name]
		iid := fmt.Sprintf("sw__interrupt%d", i)
		interruptIDs = append(interruptIDs, iid)
		decls = append(decls, fmt.Sprintf("    state \"interrupt %s\" as %s", mermaidText(name), iid))
		body = append(body, fmt.Sprintf("    %s --> %s: edit %s", iid, id(in.Target), mermaidText(in.Trigger.FilePattern)))
	}
	for _, name := range names {
		if def.States[name].IsFinal() {
			body = append(body, fmt.Sprintf("    %s --> [*]", id(name)))
		}
	}

	fmt.Fprintln(w, "stateDiagram-v2")
	for _, l := range decls {
		fmt.Fprintln(w, l)
	}
	for _, l := range body {
		fmt.Fprintln(w, l)
	}
	if len(interruptIDs) > 0 {
		fmt.Fprintln(w, "    classDef interrupt stroke-dasharray:5 5")
		fmt.Fprintf(w, "    class %s interrupt\n", strings.Join(interruptIDs, ","))
	}
}

// dotQuote quotes s as a Graphviz string.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// writeDot renders def as a Graphviz digraph.
func writeDot(w io.Writer, def *workflow.Definition) {
	fmt.Fprintf(w, "digraph %s {\n", dotQuote(def.ID))
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, "  node [shape=box, style=rounded];")
	start := uniqueName(def, "__start")
	fmt.Fprintf(w, "  %s [shape=point, label=\"\"];\n", dotQuote(start))
	for _, name := range sortedKeys(def.States) {
		if def.States[name].IsFinal() {
			fmt.Fprintf(w, "  %s [peripheries=2];\n", dotQuote(name))
		}
	}
	edges := graphEdges(def)
	if usesReturn(edges) {
		fmt.Fprintf(w, "  %s [shape=circle, label=\"H\", tooltip=\"back to the interrupted state\"];\n", dotQuote(workflow.ReturnTarget))
	}
	if def.States[def.Initial] != nil {
		fmt.Fprintf(w, "  %s -> %s;\n", dotQuote(start), dotQuote(def.Initial))
	}
	for _, e := range edges {
		attrs := []string{"label=" + dotQuote(e.label)}
		switch {
		case e.safeNext:
			attrs = append(attrs, "style=dotted")
		case e.style == edgeApproval:
			attrs = append(attrs, "style=bold", "color=red")
		case e.style == edgeFail:
			attrs = append(attrs, "color=gray")
		case e.style == edgeBranch:
			attrs = append(attrs, "arrowhead=onormal")
		}
		fmt.Fprintf(w, "  %s -> %s [%s];\n", dotQuote(e.from), dotQuote(e.to), strings.Join(attrs, ", "))
	}
	for _, name := range sortedKeys(def.Interrupts) {
		in := def.Interrupts[name]
		node := uniqueName(def, "interrupt "+name)
		fmt.Fprintf(w, "  %s [shape=note, style=dashed];\n", dotQuote(node))
		fmt.Fprintf(w, "  %s -> %s [style=dashed, label=%s];\n", dotQuote(node), dotQuote(in.Target), dotQuote("edit "+in.Trigger.FilePattern))
	}
	fmt.Fprintln(w, "}")
}
