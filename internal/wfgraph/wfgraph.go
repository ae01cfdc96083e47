// Package wfgraph lays a workflow out as a graph for the human surfaces:
// states as nodes in ranks (columns) from the initial state, transitions
// as labelled edges. It is statewright's one graph renderer: the TUI draws
// the graph as text, the web dashboard as SVG (see SVG), `statewright
// workflows graph` as Mermaid or Graphviz (see Mermaid and Dot), and
// `workflows show` lists a state's edges (TransitionEdges). The package is
// pure: no clock, and output only to the writer it is given.
package wfgraph

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/statewright-go/statewright/workflow"
)

// EdgeKind says how an edge is drawn.
type EdgeKind int

// Edge kinds.
const (
	// EdgeNormal is an ordinary transition.
	EdgeNormal EdgeKind = iota
	// EdgeApproval needs a person's approval.
	EdgeApproval
	// EdgeFail is an invoke's or fork's on_fail.
	EdgeFail
	// EdgeSafeNext is a state's safe_next fallback.
	EdgeSafeNext
	// EdgeInterrupt is an interrupt's detour into its handler state.
	EdgeInterrupt
	// EdgeBranch starts a fork's branch.
	EdgeBranch
)

// Edge is one drawn transition.
type Edge struct {
	// From and To are state names (To may be "$return"; From is
	// "interrupt NAME" for EdgeInterrupt).
	From, To string
	// Label is the event with its guards ("FIXED [tests_pass]").
	Label string
	// Kind says how to draw it.
	Kind EdgeKind
	// Note is what `workflows show` prints after the edge: an approval's
	// message, an invoke's input.
	Note string
}

// Node is one state.
type Node struct {
	// Name is the state's name.
	Name string
	// Rank is the node's column: its distance from the initial state
	// (states the initial state does not reach come after the reached ones).
	Rank int
	// Row is the node's position within its rank, from 0.
	Row int
	// Initial and Final describe the state; Missing marks a transition
	// target that is no state (an invalid workflow), Return the "$return"
	// pseudo-state.
	Initial, Final, Missing, Return bool
}

// Graph is a laid-out workflow.
type Graph struct {
	// Nodes in rank order, then row order.
	Nodes []Node
	// Edges in a fixed order: states sorted, events sorted.
	Edges []Edge
	// Ranks is the number of ranks.
	Ranks int
}

// Node returns the node named name, or nil.
func (g *Graph) Node(name string) *Node {
	for i := range g.Nodes {
		if g.Nodes[i].Name == name {
			return &g.Nodes[i]
		}
	}
	return nil
}

// Out returns the edges leaving name, in order.
func (g *Graph) Out(name string) []Edge {
	var out []Edge
	for _, e := range g.Edges {
		if e.From == name {
			out = append(out, e)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// TransitionEdges expands the transition under event, leaving state from,
// into the edges it draws, in a fixed order.
func TransitionEdges(from, event string, t *workflow.Transition) []Edge {
	switch t.Kind {
	case workflow.TransitionGuarded:
		out := make([]Edge, 0, len(t.Branches))
		for _, b := range t.Branches {
			g := "else"
			if names := b.GuardNames(); len(names) > 0 {
				g = strings.Join(names, ", ")
			}
			out = append(out, Edge{From: from, To: b.Target, Label: fmt.Sprintf("%s [%s]", event, g)})
		}
		return out
	case workflow.TransitionFork:
		f := t.Fork
		join := f.Join
		if join == "" {
			join = workflow.JoinAll
		}
		out := []Edge{{From: from, To: f.OnComplete, Label: fmt.Sprintf("%s fork(join %s)", event, join)}}
		if f.OnFail != "" {
			out = append(out, Edge{From: from, To: f.OnFail, Label: event + " fork failed", Kind: EdgeFail})
		}
		for _, name := range sortedKeys(f.Branches) {
			out = append(out, Edge{From: from, To: f.Branches[name].Initial, Label: fmt.Sprintf("%s branch %s", event, name), Kind: EdgeBranch})
		}
		return out
	case workflow.TransitionInvoke:
		inv := t.Invoke
		out := []Edge{{From: from, To: inv.OnComplete, Label: fmt.Sprintf("%s invoke(%s)", event, inv.Machine)}}
		if inv.Input != nil {
			if b, err := json.Marshal(inv.Input); err == nil {
				out[0].Note = "input " + string(b)
			}
		}
		if inv.OnFail != "" {
			out = append(out, Edge{From: from, To: inv.OnFail, Label: fmt.Sprintf("%s invoke(%s) failed", event, inv.Machine), Kind: EdgeFail})
		}
		return out
	}
	e := Edge{From: from, To: t.Target, Label: event}
	if names := t.GuardNames(); len(names) > 0 {
		e.Label += " [" + strings.Join(names, ", ") + "]"
	}
	if t.RequiresApproval {
		e.Label += " (approval)"
		e.Kind = EdgeApproval
		if t.ApprovalMessage != "" {
			e.Note = strconv.Quote(t.ApprovalMessage)
		}
	}
	return []Edge{e}
}

// Build lays def out. It tolerates invalid definitions (missing targets
// become Missing nodes), so an editor can preview a workflow with errors.
func Build(def *workflow.Definition) *Graph {
	g := &Graph{}
	if def == nil {
		return g
	}
	for _, name := range sortedKeys(def.States) {
		s := def.States[name]
		if s == nil {
			continue
		}
		for _, ev := range sortedKeys(s.On) {
			if t := s.On[ev]; t != nil {
				g.Edges = append(g.Edges, TransitionEdges(name, ev, t)...)
			}
		}
		if s.SafeNext != "" {
			g.Edges = append(g.Edges, Edge{From: name, To: s.SafeNext, Label: "(safe_next)", Kind: EdgeSafeNext})
		}
	}

	// Ranks: breadth-first from the initial state.
	rank := map[string]int{}
	var order []string
	visit := func(name string, r int) {
		if _, ok := rank[name]; ok {
			return
		}
		rank[name] = r
		order = append(order, name)
	}
	if def.States[def.Initial] != nil {
		visit(def.Initial, 0)
	}
	for i := 0; i < len(order); i++ {
		for _, e := range g.Out(order[i]) {
			if e.To != "" {
				visit(e.To, rank[order[i]]+1)
			}
		}
	}
	maxRank := -1
	for _, r := range rank {
		maxRank = max(maxRank, r)
	}
	// States the initial state does not reach, then targets that are no
	// state, each group in name order, one rank after the reached ones.
	var unreached []string
	for _, name := range sortedKeys(def.States) {
		if _, ok := rank[name]; !ok {
			unreached = append(unreached, name)
		}
	}
	for _, name := range unreached {
		visit(name, maxRank+1)
		for _, e := range g.Out(name) {
			if e.To != "" {
				visit(e.To, maxRank+2)
			}
		}
	}
	// Interrupts: a pseudo-source per interrupt, edges into the handler.
	for _, name := range sortedKeys(def.Interrupts) {
		in := def.Interrupts[name]
		if in == nil {
			continue
		}
		g.Edges = append(g.Edges, Edge{From: "interrupt " + name, To: in.Target, Label: "edit " + in.Trigger.FilePattern, Kind: EdgeInterrupt})
		visit(in.Target, maxRank+1)
	}

	rows := map[int]int{}
	for _, name := range order {
		r := rank[name]
		s := def.States[name]
		n := Node{Name: name, Rank: r, Row: rows[r], Initial: name == def.Initial,
			Final: s.IsFinal(), Missing: s == nil && name != workflow.ReturnTarget, Return: name == workflow.ReturnTarget}
		rows[r]++
		g.Nodes = append(g.Nodes, n)
		g.Ranks = max(g.Ranks, r+1)
	}
	sort.SliceStable(g.Nodes, func(i, j int) bool { return g.Nodes[i].Rank < g.Nodes[j].Rank })
	return g
}
