package wfgraph

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/workflow"
)

// transitions lists every transition edge of def, interrupts left out:
// states sorted, events sorted, then each state's safe_next fallback.
func transitions(def *workflow.Definition) []Edge {
	return slices.DeleteFunc(Build(def).Edges, func(e Edge) bool { return e.Kind == EdgeInterrupt })
}

// usesReturn reports whether any edge leads to $return.
func usesReturn(edges []Edge) bool {
	return slices.ContainsFunc(edges, func(e Edge) bool { return e.To == workflow.ReturnTarget })
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

// Mermaid writes def as a Mermaid stateDiagram-v2, sorted, so that it can
// be compared with a golden file.
func Mermaid(w io.Writer, def *workflow.Definition) {
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
	edges := transitions(def)
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
		body = append(body, fmt.Sprintf("    %s --> %s: %s", id(e.From), id(e.To), mermaidText(e.Label)))
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

// Dot writes def as a Graphviz digraph, sorted like Mermaid.
func Dot(w io.Writer, def *workflow.Definition) {
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
	edges := transitions(def)
	if usesReturn(edges) {
		fmt.Fprintf(w, "  %s [shape=circle, label=\"H\", tooltip=\"back to the interrupted state\"];\n", dotQuote(workflow.ReturnTarget))
	}
	if def.States[def.Initial] != nil {
		fmt.Fprintf(w, "  %s -> %s;\n", dotQuote(start), dotQuote(def.Initial))
	}
	for _, e := range edges {
		attrs := []string{"label=" + dotQuote(e.Label)}
		switch e.Kind {
		case EdgeSafeNext:
			attrs = append(attrs, "style=dotted")
		case EdgeApproval:
			attrs = append(attrs, "style=bold", "color=red")
		case EdgeFail:
			attrs = append(attrs, "color=gray")
		case EdgeBranch:
			attrs = append(attrs, "arrowhead=onormal")
		}
		fmt.Fprintf(w, "  %s -> %s [%s];\n", dotQuote(e.From), dotQuote(e.To), strings.Join(attrs, ", "))
	}
	for _, name := range sortedKeys(def.Interrupts) {
		in := def.Interrupts[name]
		node := uniqueName(def, "interrupt "+name)
		fmt.Fprintf(w, "  %s [shape=note, style=dashed];\n", dotQuote(node))
		fmt.Fprintf(w, "  %s -> %s [style=dashed, label=%s];\n", dotQuote(node), dotQuote(in.Target), dotQuote("edit "+in.Trigger.FilePattern))
	}
	fmt.Fprintln(w, "}")
}
