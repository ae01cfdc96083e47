package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/statewright-go/statewright/agent/events"
	"github.com/statewright-go/statewright/agent/model"
	"github.com/statewright-go/statewright/agent/tools"
	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/workflow"
)

// Orchestrator defaults.
const (
	DefaultMaxDepth      = 3
	DefaultMaxChildSteps = 30
)

// Registry resolves the workflows an invoke may run as sub-machines.
type Registry interface {
	// Resolve returns what runtime.Service.Start loads for name (a
	// template name or a file path), or an error when there is no such workflow.
	Resolve(name string) (string, error)
}

// DefaultRegistry is the registry of bundled templates and the project's
// .statewright/workflows/NAME.{json,yaml,yml} files.
func DefaultRegistry(projectDir string) Registry { return defaultRegistry{projectDir} }

type defaultRegistry struct{ projectDir string }

func (d defaultRegistry) Resolve(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("invoke: %q is not a workflow name", name)
	}
	for _, ext := range []string{".json", ".yaml", ".yml"} {
		p := filepath.Join(d.projectDir, ".statewright", "workflows", name+ext)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if workflow.IsTemplate(name) {
		return name, nil
	}
	return "", fmt.Errorf("invoke: no workflow %q (bundled: %s; or .statewright/workflows/%s.json)", name, strings.Join(workflow.TemplateNames(), ", "), name)
}

// deferredKind reports whether ev resolves to an invoke or fork transition
// in the current state.
func (r *runner) deferredKind(ev string) *workflow.Transition {
	if r.cfg.Registry == nil {
		return nil
	}
	res, err := engine.Resolve(r.def, r.state, ev)
	if err != nil || res.Transition == nil {
		return nil
	}
	if k := res.Transition.Kind; k == workflow.TransitionInvoke && res.Transition.Invoke != nil || k == workflow.TransitionFork && res.Transition.Fork != nil {
		return res.Transition
	}
	return nil
}

// childOutcome is one child run's end.
type childOutcome struct {
	name string
	res  Result
	ctx  map[string]any
	err  error
}

func (c childOutcome) ok() bool { return c.err == nil && c.res.Outcome == events.OutcomeSuccess }

// deferred runs the child work of an invoke or fork event, then completes
// the event through the runtime: on_complete when it succeeded, on_fail
// when it failed (without on_fail the parent run fails).
func (r *runner) deferred(ctx context.Context, c model.ToolCall, ev string, tr *workflow.Transition) (events.RunEnd, bool) {
	from := r.state
	maxDepth := r.cfg.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	var outs []childOutcome
	var kind, note string
	failed := false
	childCtx := map[string]any{}
	switch {
	case r.cfg.Depth+1 > maxDepth:
		failed = true
		note = fmt.Sprintf("max invoke depth (%d) reached", maxDepth)
		kind = "invoke"
	case tr.Kind == workflow.TransitionInvoke:
		kind = "invoke"
		name, err := r.cfg.Registry.Resolve(tr.Invoke.Machine)
		if err != nil {
			outs = []childOutcome{{name: tr.Invoke.Machine, err: err}}
		} else {
			outs = []childOutcome{r.child(ctx, "invoke", tr.Invoke.Machine, "", name, tr.Invoke.Input)}
		}
		failed = !outs[0].ok()
		maps(childCtx, outs[0].ctx)
		note = "invoke " + tr.Invoke.Machine + ": " + describe(outs[0])
	default:
		kind = "fork"
		outs = r.fork(ctx, tr.Fork)
		passed := 0
		var parts []string
		for _, o := range outs {
			if o.ok() {
				passed++
				branch := map[string]any{}
				maps(branch, o.ctx)
				childCtx[o.name] = branch
			}
			parts = append(parts, o.name+": "+describe(o))
		}
		if tr.Fork.Join == workflow.JoinAny {
			failed = passed == 0
		} else {
			failed = passed < len(outs)
		}
		note = fmt.Sprintf("fork (join %s): %s", joinName(tr.Fork.Join), strings.Join(parts, "; "))
	}
	res, err := r.cfg.Service.CompleteDeferred(ctx, r.session, ev, runtime.ChildResult{Failed: failed, Context: childCtx, Note: note}, agentActor)
	if err != nil {
		reason := err.Error()
		r.emit(events.Event{Type: events.TypeTransition, Transition: &events.Transition{Event: ev, From: from, Refused: true, Reason: reason}})
		if failed {
			// No on_fail: the child's failure is the run's.
			r.result(c, tools.Result{Output: "The " + kind + " failed: " + note, Failed: true})
			return events.RunEnd{Outcome: events.OutcomeFailed, FinalState: from, Reason: note}, true
		}
		r.totals.Denials++
		r.failed()
		r.result(c, tools.Result{Output: fmt.Sprintf("The event %s was refused in phase %s: %s", ev, from, reason), Failed: true})
		return events.RunEnd{}, false
	}
	r.totals.Transitions++
	r.emit(events.Event{Type: events.TypeTransition, Transition: &events.Transition{Event: ev, From: from, To: res.To, Final: res.Final, Reason: note}})
	r.result(c, tools.Result{Output: fmt.Sprintf("The %s ran (%s). Moved from %s to %s.", kind, note, from, res.To), Failed: failed})
	r.enterState(res.To)
	return events.RunEnd{}, false
}

func joinName(j workflow.JoinStrategy) string {
	if j == "" {
		return string(workflow.JoinAll)
	}
	return string(j)
}

func maps(dst, src map[string]any) {
	for k, v := range src {
		dst[k] = v
	}
}

func describe(o childOutcome) string {
	if o.err != nil {
		return "error: " + o.err.Error()
	}
	return o.res.Outcome + " in " + o.res.FinalState
}

// child runs one sub-machine to its end with its own run and session.
func (r *runner) child(ctx context.Context, kind, label, branch, workflowName string, input any) childOutcome {
	maxSteps := r.cfg.MaxChildSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxChildSteps
	}
	session := fmt.Sprintf("%s/%s%d", r.session, kind, r.totals.Steps)
	if branch != "" {
		session += "-" + branch
	}
	r.emit(events.Event{Type: events.TypeChild, Child: &events.Child{Phase: "start", Kind: kind, Workflow: label, Branch: branch}})
	cfg := r.cfg
	cfg.Workflow = workflowName
	cfg.Session = session
	cfg.Resume = ""
	cfg.Depth = r.cfg.Depth + 1
	cfg.MaxSteps = maxSteps
	cfg.InitialContext = input
	if branch != "" {
		cfg.Task = r.cfg.Task + "\n(Branch " + branch + " of a fork.)"
	}
	res, err := Run(ctx, cfg)
	o := childOutcome{name: branch, res: res, err: err}
	if o.name == "" {
		o.name = label
	}
	if err == nil {
		if run, rerr := r.cfg.Store.Run(ctx, res.RunID); rerr == nil && len(run.Context) > 0 {
			_ = json.Unmarshal(run.Context, &o.ctx)
		}
	}
	r.emit(events.Event{Type: events.TypeChild, Child: &events.Child{Phase: "end", Kind: kind, Workflow: label, Branch: branch, RunID: res.RunID, Outcome: describe(o)}})
	return o
}

// fork runs each branch of the current workflow from its initial state to
// its terminal state (made final in a derived workflow), in name order,
// one after the other unless Config.ForkParallel.
func (r *runner) fork(ctx context.Context, f *workflow.Fork) []childOutcome {
	names := make([]string, 0, len(f.Branches))
	for n := range f.Branches {
		names = append(names, n)
	}
	sort.Strings(names)
	outs := make([]childOutcome, len(names))
	dir, err := os.MkdirTemp("", "statewright-fork-")
	if err != nil {
		for i, n := range names {
			outs[i] = childOutcome{name: n, err: err}
		}
		return outs
	}
	defer os.RemoveAll(dir)
	var wg sync.WaitGroup
	for i, n := range names {
		path, err := r.branchWorkflow(dir, n, f.Branches[n])
		if err != nil {
			outs[i] = childOutcome{name: n, err: err}
			continue
		}
		runOne := func() { outs[i] = r.child(ctx, "fork", r.def.ID, n, path, nil) }
		if r.cfg.ForkParallel {
			wg.Add(1)
			go func() { defer wg.Done(); runOne() }()
		} else {
			runOne()
		}
	}
	wg.Wait()
	return outs
}

// branchWorkflow writes the workflow a fork branch runs: the run's own
// definition, starting at the branch's initial state, with its terminal
// state final.
func (r *runner) branchWorkflow(dir, name string, b *workflow.ForkBranch) (string, error) {
	if b == nil || r.def.States[b.Initial] == nil || r.def.States[b.Terminal] == nil {
		return "", errors.New("fork branch " + name + " names an unknown state")
	}
	raw, err := json.Marshal(r.def)
	if err != nil {
		return "", fmt.Errorf("fork branch %s: %w", name, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", fmt.Errorf("fork branch %s: %w", name, err)
	}
	m["initial"] = b.Initial
	if id, _ := m["id"].(string); id != "" {
		m["id"] = id + "-" + name
	}
	states, _ := m["states"].(map[string]any)
	term, _ := states[b.Terminal].(map[string]any)
	if term == nil {
		return "", errors.New("fork branch " + name + ": terminal state missing")
	}
	term["type"] = "final"
	delete(term, "on")
	// Keep only the states the branch reaches (validation refuses unreachable ones).
	keep := map[string]bool{b.Initial: true}
	queue := []string{b.Initial}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		st := r.def.States[name]
		if st == nil || name == b.Terminal {
			continue
		}
		next := []string{st.SafeNext}
		for _, t := range st.On {
			next = append(next, t.Targets()...)
		}
		for _, n := range next {
			if n != "" && !keep[n] && r.def.States[n] != nil {
				keep[n] = true
				queue = append(queue, n)
			}
		}
	}
	for name := range states {
		if !keep[name] {
			delete(states, name)
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("fork branch %s: %w", name, err)
	}
	p := filepath.Join(dir, name+".json")
	return p, os.WriteFile(p, out, 0o644)
}

// orchestrate is kept for the plain Transition path: the runtime moved the
// run already (no registry: invoke and fork complete at once).
func (r *runner) orchestrate(_ context.Context, _ runtime.TransitionResult) (events.RunEnd, bool) {
	return events.RunEnd{}, false
}
