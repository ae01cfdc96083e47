package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/workflow"
)

// Sub-workflows under every harness.
//
// An invoke transition pushes a frame for the run's current level (its
// workflow, state, context and interrupt stack) and the run continues in
// the invoked workflow's initial state, in the same session: the child's
// phases are the law until it reaches a final state. Then the frame is
// popped: the parent resumes at the transition's on_complete (or on_fail
// when the child ended in a failure state, engine.IsFailureState), and the
// child's result lands in the parent's context under
// subflows.<invoke name>. A fork pushes a frame too and runs its branches
// (states of the same workflow) one after another, in branch-name order,
// each from its initial state until it reaches its terminal state
// (completed) or another final state (failed); join "all" needs every
// branch to complete, "any" one (the rest are cancelled, docs/runtime.md).
// Branch results land under branches.<name>. A failure whose transition
// has no on_fail returns the parent to the state it invoked or forked
// from. Stacks are bounded by the run's max depth (a child that would
// nest deeper fails at once).
//
// The stack is kept in store.Run.History next to the interrupt stack of
// the current level, so a run keeps being one row that every process
// reads and writes in one transaction.

// Stack frame kinds.
const (
	KindInvoke = "invoke"
	KindFork   = "fork"
)

// Outcomes of child work.
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
	OutcomeRunning   = "running"
	OutcomePending   = "pending"
)

// Context keys under which child work's results land in the parent.
const (
	SubflowsKey = "subflows"
	BranchesKey = "branches"
)

// stackFrame is one suspended level of a run: the workflow that invoked a
// sub-workflow or forked, waiting for the child work to end.
type stackFrame struct {
	Kind string `json:"kind"`
	// Event is the event that started the child work.
	Event string `json:"event"`
	// Workflow is the bundle key of the suspended level's workflow ("" for
	// the run's root workflow); State, Context and Interrupts are where it
	// was when it started the child work.
	Workflow   string         `json:"workflow,omitempty"`
	State      string         `json:"state"`
	Context    map[string]any `json:"context,omitempty"`
	Interrupts []engine.Frame `json:"interrupts,omitempty"`
	OnComplete string         `json:"on_complete"`
	OnFail     string         `json:"on_fail,omitempty"`
	// Machine is the invoke's name; Child the bundle key it resolved to.
	Machine string `json:"machine,omitempty"`
	Child   string `json:"child,omitempty"`
	// Join, Branches and Current describe a fork.
	Join     string        `json:"join,omitempty"`
	Branches []branchState `json:"branches,omitempty"`
	Current  int           `json:"current,omitempty"`
}

// branchState is one fork branch's progress.
type branchState struct {
	Name       string         `json:"name"`
	Initial    string         `json:"initial"`
	Terminal   string         `json:"terminal"`
	Outcome    string         `json:"outcome"`
	FinalState string         `json:"final_state,omitempty"`
	Context    map[string]any `json:"context,omitempty"`
}

// historyDoc is store.Run.History while child work runs: the current
// level's interrupt stack and the suspended levels, outermost first.
// Without child work the runtime writes the interrupt stack alone, as a
// JSON array (the form runs have always had).
type historyDoc struct {
	Interrupts []engine.Frame `json:"interrupts,omitempty"`
	Stack      []stackFrame   `json:"stack"`
}

// readHistory decodes run.History: the current level's interrupt stack
// and the sub-workflow stack.
func readHistory(run *store.Run) ([]engine.Frame, []stackFrame, error) {
	h := bytes.TrimSpace(run.History)
	if len(h) == 0 || string(h) == "null" {
		return nil, nil, nil
	}
	if h[0] == '[' {
		var ints []engine.Frame
		if err := json.Unmarshal(h, &ints); err != nil {
			return nil, nil, fmt.Errorf("runtime: run %s: decode history: %w", run.ID, err)
		}
		return ints, nil, nil
	}
	var doc historyDoc
	if err := json.Unmarshal(h, &doc); err != nil {
		return nil, nil, fmt.Errorf("runtime: run %s: decode history: %w", run.ID, err)
	}
	return doc.Interrupts, doc.Stack, nil
}

// writeHistory encodes the current level's interrupt stack and the
// sub-workflow stack into run.History.
func writeHistory(run *store.Run, ints []engine.Frame, stack []stackFrame) error {
	var v any = ints
	switch {
	case len(stack) > 0:
		v = historyDoc{Interrupts: ints, Stack: stack}
	case len(ints) == 0:
		run.History = nil
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode history: %w", err)
	}
	run.History = b
	return nil
}

// inForce is the bundle key of the workflow in force at the top of stack
// ("" for the run's root workflow).
func inForce(stack []stackFrame) string {
	if len(stack) == 0 {
		return ""
	}
	top := stack[len(stack)-1]
	if top.Kind == KindInvoke {
		return top.Child
	}
	return top.Workflow
}

// SubflowStep is one change of a run's stack of sub-workflows and forks.
type SubflowStep struct {
	// Action is "enter" (an invoked workflow, or a fork's first branch,
	// started), "branch" (the next branch of a fork started) or "return"
	// (the child work ended and its parent resumed).
	Action string `json:"action"`
	// Kind is KindInvoke or KindFork.
	Kind string `json:"kind"`
	// Workflow is the invoked workflow's id (invoke), or the forking one's.
	Workflow string `json:"workflow"`
	// Branch is the fork branch that started (enter, branch).
	Branch string `json:"branch,omitempty"`
	// Outcome is how the child work ended (return): completed or failed.
	Outcome string `json:"outcome,omitempty"`
	// State is the state the run is in after the step; Depth its depth
	// (0: the root workflow).
	State string `json:"state"`
	Depth int    `json:"depth"`
	// Reason says why child work failed before it ran (max depth).
	Reason string `json:"reason,omitempty"`
}

// String says what the step did, for the agent and for people.
func (sf SubflowStep) String() string {
	switch sf.Action {
	case "return":
		if sf.Reason != "" {
			return fmt.Sprintf("The %s %s failed before it started (%s); the workflow that started it is at '%s'.", sf.Kind, sf.Workflow, sf.Reason, sf.State)
		}
		if sf.Kind == KindFork {
			return fmt.Sprintf("The fork ended (%s); back in %s at '%s'.", sf.Outcome, sf.Workflow, sf.State)
		}
		return fmt.Sprintf("Sub-workflow %s ended (%s); back in the workflow that invoked it, at '%s'.", sf.Workflow, sf.Outcome, sf.State)
	case "branch":
		return fmt.Sprintf("The fork's next branch, %s, starts at '%s'.", sf.Branch, sf.State)
	}
	if sf.Kind == KindFork {
		return fmt.Sprintf("The fork runs its branches one after another: branch %s starts at '%s'; each branch ends at its terminal state.", sf.Branch, sf.State)
	}
	return fmt.Sprintf("Sub-workflow %s runs now, from '%s': its phases are the law until it reaches a final state, then the run returns to the workflow that invoked it.", sf.Workflow, sf.State)
}

// StackEntry describes one suspended level of a run for displays
// (statewright status, get_state, the TUI, the dashboard).
type StackEntry struct {
	// Kind is KindInvoke or KindFork.
	Kind string `json:"kind"`
	// Workflow is the suspended level's workflow id; State the state it
	// waits in; Event the event that started the child work.
	Workflow string `json:"workflow"`
	State    string `json:"state"`
	Event    string `json:"event"`
	// OnComplete and OnFail are where the level resumes.
	OnComplete string `json:"on_complete"`
	OnFail     string `json:"on_fail,omitempty"`
	// Invoked is the invoked workflow's id (invoke).
	Invoked string `json:"invoked,omitempty"`
	// Join and Branches describe a fork (branch name → outcome, in the
	// order they run); Current is the running branch.
	Join     string         `json:"join,omitempty"`
	Branches []BranchEntry  `json:"branches,omitempty"`
	Current  string         `json:"current,omitempty"`
	Context  map[string]any `json:"-"`
}

// BranchEntry is one fork branch in a StackEntry.
type BranchEntry struct {
	Name     string `json:"name"`
	Initial  string `json:"initial"`
	Terminal string `json:"terminal"`
	Outcome  string `json:"outcome"`
}

// String renders the entry on one line: "parent waits in work: invoked
// audit (event CHECK); then ship, or fix if it fails".
func (e StackEntry) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s waits in %s: ", e.Workflow, e.State)
	if e.Kind == KindInvoke {
		fmt.Fprintf(&b, "invoked %s", e.Invoked)
	} else {
		parts := make([]string, 0, len(e.Branches))
		for _, br := range e.Branches {
			parts = append(parts, br.Name+" "+br.Outcome)
		}
		fmt.Fprintf(&b, "fork, join %s (%s)", e.Join, strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, " (event %s); then %s", e.Event, e.OnComplete)
	if e.OnFail != "" {
		fmt.Fprintf(&b, ", or %s if it fails", e.OnFail)
	} else {
		fmt.Fprintf(&b, ", or back to %s if it fails", e.State)
	}
	return b.String()
}

// SubflowNote says, in one sentence for the agent, which sub-workflow or
// fork branch the run's phase belongs to and where the run returns when it
// ends ("" at the run's own level). Harness adapters add it to the phase
// context they give the agent.
func (v *RunView) SubflowNote() string {
	if v == nil || len(v.Stack) == 0 {
		return ""
	}
	top := v.Stack[len(v.Stack)-1]
	fail := top.OnFail
	if fail == "" {
		fail = top.State
	}
	if top.Kind == KindInvoke {
		return fmt.Sprintf("This phase belongs to sub-workflow %q (depth %d), invoked from %q in phase %s (event %s): its phases are the law until it reaches a final state; then the run returns to %q at %s (%s if it fails).",
			v.Workflow, len(v.Stack), top.Workflow, top.State, top.Event, top.Workflow, top.OnComplete, fail)
	}
	return fmt.Sprintf("This phase belongs to branch %s of a fork of %q (depth %d, join %s): branches run one after another, each until its terminal state; then the run returns to %s (%s if the join fails).",
		top.Current, top.Workflow, len(v.Stack), top.Join, top.OnComplete, fail)
}

// subflowNote is RunView.SubflowNote for a stored run ("" outside child work).
func (s *Service) subflowNote(run *store.Run) string {
	stack := s.stackView(run)
	if len(stack) == 0 {
		return ""
	}
	v := &RunView{Run: run, Workflow: run.WorkflowID, Stack: stack}
	if p, err := s.compiledFor(run); err == nil && p.Def.ID != "" {
		v.Workflow = p.Def.ID
	}
	return v.SubflowNote()
}

// stackView describes run's stack, outermost first (nil when none).
func (s *Service) stackView(run *store.Run) []StackEntry {
	_, stack, err := readHistory(run)
	if err != nil || len(stack) == 0 {
		return nil
	}
	id := func(key string) string {
		if p, err := s.preparedAt(run, key); err == nil && p.Def.ID != "" {
			return p.Def.ID
		}
		if key == "" {
			return run.WorkflowID
		}
		return key
	}
	out := make([]StackEntry, 0, len(stack))
	for _, f := range stack {
		e := StackEntry{Kind: f.Kind, Workflow: id(f.Workflow), State: f.State, Event: f.Event, OnComplete: f.OnComplete, OnFail: f.OnFail, Join: f.Join}
		if f.Kind == KindInvoke {
			e.Invoked = id(f.Child)
		}
		for i, b := range f.Branches {
			e.Branches = append(e.Branches, BranchEntry{Name: b.Name, Initial: b.Initial, Terminal: b.Terminal, Outcome: b.Outcome})
			if i == f.Current {
				e.Current = b.Name
			}
		}
		out = append(out, e)
	}
	return out
}

// cleanContext is a context without the runtime evidence and the pending
// transition (which are never stored as context).
func cleanContext(c map[string]any) map[string]any {
	out := maps.Clone(c)
	delete(out, engine.RuntimeKey)
	delete(out, pendingKey)
	return out
}

// childResult is what of a child's final context lands in its parent:
// everything but the agent's event data (data.*), which could otherwise
// satisfy a parent guard that does not name data.*.
func childResult(c map[string]any) map[string]any {
	out := cleanContext(c)
	delete(out, engine.DataKey)
	return out
}

// applyTx takes out, a step the engine resolved in the run's current
// level: an invoke or fork pushes its child work; any other move is
// written; then every sub-workflow or fork branch the move ended returns
// to its parent. It reports the stack changes.
func (s *Service) applyTx(tx store.Tx, run *store.Run, out engine.Outcome, by Actor, extra map[string]any) ([]SubflowStep, error) {
	var steps []SubflowStep
	if out.Invoke != nil || out.Fork != nil {
		st, err := s.pushTx(tx, run, out, by, extra)
		if err != nil {
			return nil, err
		}
		steps = st
	} else if err := s.moveTx(tx, run, out, by, extra); err != nil {
		return nil, err
	}
	more, err := s.settleTx(tx, run, by)
	return append(steps, more...), err
}

// depthRefusal reports, before an invoke or fork is taken, that the child
// work would nest deeper than the run allows and the transition has no
// on_fail to go to: the transition is refused.
func (s *Service) depthRefusal(run *store.Run, out engine.Outcome) error {
	if out.Invoke == nil && out.Fork == nil {
		return nil
	}
	_, stack, err := readHistory(run)
	if err != nil {
		return err
	}
	c, err := s.preparedAt(run, inForce(stack))
	if err != nil {
		return err
	}
	onFail := ""
	if out.Invoke != nil {
		onFail = out.Invoke.OnFail
	} else {
		onFail = out.Fork.OnFail
	}
	if len(stack)+1 > c.maxDepth && onFail == "" {
		return fmt.Errorf("the %s would nest deeper than this run allows (max depth %d), and the transition has no on_fail", kindOf(out), c.maxDepth)
	}
	return nil
}

func kindOf(out engine.Outcome) string {
	if out.Invoke != nil {
		return KindInvoke
	}
	return KindFork
}

// pushTx starts the child work of an invoke or fork outcome.
func (s *Service) pushTx(tx store.Tx, run *store.Run, out engine.Outcome, by Actor, extra map[string]any) ([]SubflowStep, error) {
	ints, stack, err := readHistory(run)
	if err != nil {
		return nil, err
	}
	cur, err := s.preparedAt(run, inForce(stack))
	if err != nil {
		return nil, err
	}
	f := stackFrame{Event: out.Event, Workflow: inForce(stack), State: run.State, Context: cleanContext(out.Context), Interrupts: ints}
	var (
		to       string
		childCtx map[string]any
		step     = SubflowStep{Action: "enter", Depth: len(stack) + 1}
	)
	if out.Invoke != nil {
		inv := out.Invoke
		f.Kind, f.Machine, f.OnComplete, f.OnFail = KindInvoke, inv.Machine, inv.OnComplete, inv.OnFail
		f.Child = cur.invokes[inv.Machine]
		if f.Child == "" {
			return nil, fmt.Errorf("%w: the run's snapshot does not hold the workflow %q invokes (the run started before sub-workflows were snapshotted; start it again)", ErrWorkflow, inv.Machine)
		}
		child, err := s.preparedAt(run, f.Child)
		if err != nil {
			return nil, err
		}
		to = child.Def.Initial
		childCtx = maps.Clone(child.Def.Context)
		if childCtx == nil {
			childCtx = map[string]any{}
		}
		if in, ok := inv.Input.(map[string]any); ok {
			maps.Copy(childCtx, in)
		} else if inv.Input != nil {
			childCtx["input"] = inv.Input
		}
		step.Kind, step.Workflow = KindInvoke, child.Def.ID
	} else {
		fk := out.Fork
		f.Kind, f.OnComplete, f.OnFail, f.Join = KindFork, fk.OnComplete, fk.OnFail, string(fk.Join)
		if f.Join == "" {
			f.Join = string(workflow.JoinAll)
		}
		names := slices.Sorted(maps.Keys(fk.Branches))
		for _, n := range names {
			b := fk.Branches[n]
			if b == nil {
				continue
			}
			f.Branches = append(f.Branches, branchState{Name: n, Initial: b.Initial, Terminal: b.Terminal, Outcome: OutcomePending})
		}
		if len(f.Branches) == 0 {
			return nil, fmt.Errorf("%w: fork of event %s has no branches", ErrWorkflow, out.Event)
		}
		f.Branches[0].Outcome = OutcomeRunning
		to = f.Branches[0].Initial
		childCtx = maps.Clone(f.Context)
		step.Kind, step.Workflow, step.Branch = KindFork, cur.Def.ID, f.Branches[0].Name
	}
	if len(stack)+1 > cur.maxDepth {
		// The child work fails before it starts.
		reason := fmt.Sprintf("max depth %d reached", cur.maxDepth)
		res := map[string]any{}
		if f.Kind == KindInvoke {
			res = subflowResult(f, "", OutcomeFailed, nil, reason)
		}
		st, err := s.finishTx(tx, run, f, stack, OutcomeFailed, res, reason, by)
		if err != nil {
			return nil, err
		}
		return []SubflowStep{st}, nil
	}
	stack = append(stack, f)
	data := map[string]any{"from": run.State, "to": to, "event": out.Event, "match": out.Match, "actor": by,
		"subflow": "enter", "kind": f.Kind, "depth": len(stack)}
	if f.Kind == KindInvoke {
		data["invoke"] = f.Machine
		data["workflow"] = step.Workflow
	} else {
		data["fork"] = out.Fork
		data["branch"] = step.Branch
	}
	maps.Copy(data, extra)
	step.State = to
	return []SubflowStep{step}, s.putTx(tx, run, to, childCtx, nil, stack, false, data, by)
}

// subflowResult is the parent's subflows key with the invoke's result added.
func subflowResult(f stackFrame, final, outcome string, ctx map[string]any, reason string) map[string]any {
	all := map[string]any{}
	if prev, ok := f.Context[SubflowsKey].(map[string]any); ok {
		maps.Copy(all, prev)
	}
	r := map[string]any{"outcome": outcome, "final_state": final, "context": ctx}
	if reason != "" {
		r["reason"] = reason
	}
	all[f.Machine] = r
	return map[string]any{SubflowsKey: all}
}

// finishTx lands the parent level of frame f (already popped: stack is
// what remains) after its child work ended with outcome: at on_complete,
// on_fail, or (a failure without on_fail) the state it started the work
// from, with result merged into its context.
func (s *Service) finishTx(tx store.Tx, run *store.Run, f stackFrame, stack []stackFrame, outcome string, result map[string]any, reason string, by Actor) (SubflowStep, error) {
	parent, err := s.preparedAt(run, f.Workflow)
	if err != nil {
		return SubflowStep{}, err
	}
	ctx := maps.Clone(f.Context)
	if ctx == nil {
		ctx = map[string]any{}
	}
	maps.Copy(ctx, result)
	target := f.OnComplete
	if outcome != OutcomeCompleted {
		target = f.OnFail
	}
	label := f.Event + ":" + outcome
	var out engine.Outcome
	if target == "" {
		out = engine.Outcome{From: f.State, To: f.State, Event: label, Context: ctx, History: f.Interrupts,
			Final: parent.Def.States[f.State].IsFinal()}
	} else if out, err = engine.Finish(parent.Def, engine.Snapshot{State: f.State, Context: ctx, History: f.Interrupts}, label, target); err != nil {
		return SubflowStep{}, fmt.Errorf("%w: return from the %s of %s: %w", ErrWorkflow, f.Kind, f.Event, err)
	}
	data := map[string]any{"from": run.State, "to": out.To, "event": label, "actor": by, "subflow": "return", "kind": f.Kind,
		"outcome": outcome, "depth": len(stack)}
	if reason != "" {
		data["reason"] = reason
	}
	if target == "" && outcome != OutcomeCompleted {
		data["note"] = "the transition has no on_fail: back to the state it started from"
	}
	step := SubflowStep{Action: "return", Kind: f.Kind, Outcome: outcome, State: out.To, Depth: len(stack), Reason: reason, Workflow: parent.Def.ID}
	if f.Kind == KindInvoke {
		if c, err := s.preparedAt(run, f.Child); err == nil {
			step.Workflow = c.Def.ID
		}
		data["invoke"] = f.Machine
	}
	return step, s.putTx(tx, run, out.To, out.Context, out.History, stack, out.Final, data, by)
}

// settleTx returns from every child work the run's current state ends:
// an invoked workflow in a final state, a fork branch at its terminal
// state or in another final one.
func (s *Service) settleTx(tx store.Tx, run *store.Run, by Actor) ([]SubflowStep, error) {
	var steps []SubflowStep
	for {
		_, stack, err := readHistory(run)
		if err != nil || len(stack) == 0 {
			return steps, err
		}
		top := stack[len(stack)-1]
		cur, err := s.preparedAt(run, inForce(stack))
		if err != nil {
			return steps, err
		}
		st := cur.Def.States[run.State]
		ctx, err := decodeContext(run)
		if err != nil {
			return steps, err
		}
		rest := stack[:len(stack)-1]
		if top.Kind == KindInvoke {
			if !st.IsFinal() {
				return steps, nil
			}
			outcome := OutcomeCompleted
			if engine.IsFailureState(cur.Def, run.State) {
				outcome = OutcomeFailed
			}
			step, err := s.finishTx(tx, run, top, rest, outcome, subflowResult(top, run.State, outcome, childResult(ctx), ""), "", by)
			if err != nil {
				return steps, err
			}
			steps = append(steps, step)
			continue
		}
		b := &top.Branches[top.Current]
		switch {
		case run.State == b.Terminal:
			b.Outcome = OutcomeCompleted
		case st.IsFinal():
			b.Outcome = OutcomeFailed
		default:
			return steps, nil
		}
		b.FinalState, b.Context = run.State, childResult(ctx)
		done, joined := 0, ""
		for _, x := range top.Branches {
			if x.Outcome == OutcomeCompleted {
				done++
			}
		}
		next := -1
		for i := top.Current + 1; i < len(top.Branches); i++ {
			if top.Branches[i].Outcome == OutcomePending {
				next = i
				break
			}
		}
		switch {
		case top.Join == string(workflow.JoinAny) && b.Outcome == OutcomeCompleted:
			joined = OutcomeCompleted
		case top.Join != string(workflow.JoinAny) && b.Outcome == OutcomeFailed:
			joined = OutcomeFailed
		case next < 0 && top.Join == string(workflow.JoinAny):
			joined = OutcomeFailed // no branch completed
		case next < 0:
			joined = OutcomeCompleted
		}
		if joined == "" {
			top.Current = next
			nb := &top.Branches[next]
			nb.Outcome = OutcomeRunning
			stack = append(rest, top)
			data := map[string]any{"from": run.State, "to": nb.Initial, "event": top.Event + ":" + b.Name + ":" + b.Outcome, "actor": by,
				"subflow": "branch", "kind": KindFork, "branch": nb.Name, "ended": b.Name, "outcome": b.Outcome, "depth": len(stack)}
			if err := s.putTx(tx, run, nb.Initial, maps.Clone(top.Context), nil, stack, false, data, by); err != nil {
				return steps, err
			}
			steps = append(steps, SubflowStep{Action: "branch", Kind: KindFork, Workflow: cur.Def.ID, Branch: nb.Name, State: nb.Initial, Depth: len(stack)})
			continue
		}
		res := map[string]any{}
		if prev, ok := top.Context[BranchesKey].(map[string]any); ok {
			maps.Copy(res, prev)
		}
		for i := range top.Branches {
			x := &top.Branches[i]
			if x.Outcome == OutcomePending {
				x.Outcome = OutcomeCancelled // join any met, or join all failed
			}
			res[x.Name] = map[string]any{"outcome": x.Outcome, "final_state": x.FinalState, "context": x.Context}
		}
		step, err := s.finishTx(tx, run, top, rest, joined, map[string]any{BranchesKey: res}, "", by)
		if err != nil {
			return steps, err
		}
		steps = append(steps, step)
	}
}

// putTx writes run in state to with context ctx, the level's interrupt
// stack ints and the sub-workflow stack: iterations, files edited,
// reservations and evidence reset; status completed when to is final in
// the root workflow, else active. It appends a transition event with data
// (plus a run event when the run completes).
func (s *Service) putTx(tx store.Tx, run *store.Run, to string, ctx map[string]any, ints []engine.Frame, stack []stackFrame, final bool, data map[string]any, by Actor) error {
	ctx = cleanContext(ctx)
	if len(ctx) == 0 {
		run.Context = nil
	} else {
		b, err := json.Marshal(ctx)
		if err != nil {
			return fmt.Errorf("encode context: %w", err)
		}
		run.Context = b
	}
	if err := writeHistory(run, ints, stack); err != nil {
		return err
	}
	run.State = to
	run.Iterations = 0
	run.FilesEdited = nil
	run.Counters = nil
	run.Evidence = nil
	run.PendingApproval = nil
	run.Status = store.StatusActive
	completed := final && len(stack) == 0
	if completed {
		run.Status = store.StatusCompleted
	}
	if err := tx.Put(run); err != nil {
		return fmt.Errorf("write run: %w", err)
	}
	evs := []*store.Event{event(store.KindTransition, to, data)}
	if completed {
		evs = append(evs, event(store.KindRun, to, map[string]any{"event": "completed", "state": to, "actor": by}))
	}
	if err := tx.Append(evs...); err != nil {
		return fmt.Errorf("append transition: %w", err)
	}
	return nil
}
