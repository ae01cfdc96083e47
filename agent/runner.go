// Package agent is statewright's direct-to-model runner: it drives a model
// (OpenAI Chat Completions or Ollama's /api/chat) in a loop under a
// workflow. Each phase offers the model only that phase's tools; every call
// the model makes is decided by the same runtime.Service the harness hooks
// use (one store, one audit log) before it runs; transitions go through the
// runtime's engine, and approval gates wait for a person (the run stops,
// resumable).
//
// The loop emits a versioned event stream (package agent/events).
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/statewright-go/statewright/agent/events"
	"github.com/statewright-go/statewright/agent/model"
	"github.com/statewright-go/statewright/agent/tools"
	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/workflow"
)

// SessionPrefix starts the session key of every agent-runner run.
const SessionPrefix = "agent:"

// Defaults.
const (
	DefaultMaxSteps      = 60
	DefaultContextBudget = 48 << 10 // bytes of message text sent per request
	DefaultEscalateAfter = 3        // consecutive failures in a state before the next model_ladder rung
	// ReadLoopLimit: the same file window read this many times draws a
	// nudge; once more is denied.
	ReadLoopLimit = 3
)

// Config describes one run.
type Config struct {
	// Service decides and records; Store is the same store (run lookup and
	// the runner's own events).
	Service *runtime.Service
	Store   store.Store
	// Workflow names the workflow (a bundled template or a file).
	Workflow string
	// Task is the task text.
	Task string
	// Endpoint is the default model endpoint (--model).
	Endpoint model.Endpoint
	// NewClient makes a client for an endpoint (default model.New).
	NewClient func(model.Endpoint) model.Client
	// Tools carries calls out in the workspace.
	Tools *tools.Set
	// MaxSteps bounds model turns (default DefaultMaxSteps).
	MaxSteps int
	// MaxTokens bounds prompt+completion tokens over the run (0: no bound).
	MaxTokens int
	// Timeout bounds the run's wall time (0: no bound).
	Timeout time.Duration
	// ContextBudget bounds the bytes of message text per request; old tool
	// outputs are cut first (default DefaultContextBudget).
	ContextBudget int
	// EscalateAfter is how many consecutive failures (denials, failed tool
	// calls, answers without a tool call) in one state move to the next
	// rung of the state's model_ladder (default DefaultEscalateAfter).
	EscalateAfter int
	// Events receives the event stream (default events.Discard).
	Events events.Sink
	// Session is the session key for a new run (default agent:<random>).
	Session string
	// Resume names a run (id) to continue instead of starting one.
	Resume string
}

// Result is a run's outcome.
type Result struct {
	RunID   string `json:"run_id"`
	Session string `json:"session"`
	events.RunEnd
}

// ExitCode maps the outcome to the CLI's exit status: 0 success, 1
// failed, 3 budget, 4 waiting for a person.
func (r Result) ExitCode() int {
	switch r.Outcome {
	case events.OutcomeSuccess:
		return 0
	case events.OutcomeBudget:
		return 3
	case events.OutcomeApproval:
		return 4
	}
	return 1
}

var agentActor = runtime.Actor{Kind: runtime.ActorAgent, Channel: "agent-runner"}

// runner is one run in progress.
type runner struct {
	cfg     Config
	def     *workflow.Definition
	law     *policy.Law
	runID   string
	session string
	nonce   string
	msgs    []model.Message
	totals  events.RunEnd
	start   time.Time

	state       string
	depth       int // the run's stack of sub-workflows and forks
	readCounts  map[string]int
	failStreak  int
	rung        int // index into the state's model_ladder (-1: the state's own model)
	clients     map[string]model.Client
	lastPhase   string
	proseStreak int
}

// Run runs (or resumes) one workflow run to its end, a budget, or an
// approval gate. The error is for failures before the run exists (bad
// workflow, unknown run to resume); once it runs, problems end it with an
// outcome.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.ContextBudget <= 0 {
		cfg.ContextBudget = DefaultContextBudget
	}
	if cfg.EscalateAfter <= 0 {
		cfg.EscalateAfter = DefaultEscalateAfter
	}
	if cfg.Events == nil {
		cfg.Events = events.Discard
	}
	if cfg.NewClient == nil {
		cfg.NewClient = func(ep model.Endpoint) model.Client { return model.New(ep, model.Options{}) }
	}
	r := &runner{cfg: cfg, readCounts: map[string]int{}, clients: map[string]model.Client{}, rung: -1, start: time.Now()}
	nb := make([]byte, 4)
	_, _ = rand.Read(nb)
	r.nonce = hex.EncodeToString(nb)
	if err := r.open(ctx); err != nil {
		return Result{}, err
	}
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	end := r.loop(ctx)
	end.Steps, end.ToolCalls, end.Denials, end.Transitions = r.totals.Steps, r.totals.ToolCalls, r.totals.Denials, r.totals.Transitions
	end.PromptTokens, end.CompletionTokens = r.totals.PromptTokens, r.totals.CompletionTokens
	end.DurationMS = time.Since(r.start).Milliseconds()
	r.emit(events.Event{Type: events.TypeRunEnd, RunEnd: &end})
	return Result{RunID: r.runID, Session: r.session, RunEnd: end}, nil
}

// agentMeta is what the runner writes into the store when it starts a
// run, so --resume needs nothing but the run id.
type agentMeta struct {
	Task        string `json:"task"`
	Workflow    string `json:"workflow"`
	Model       string `json:"model"`
	Workspace   string `json:"workspace"`
	TestCommand string `json:"test_command,omitempty"`
	MaxSteps    int    `json:"max_steps"`
}

// open starts the run or finds the one to resume.
func (r *runner) open(ctx context.Context) error {
	cfg := r.cfg
	resumed := cfg.Resume != ""
	var run *store.Run
	var warnings []string
	if resumed {
		var err error
		run, err = cfg.Store.Run(ctx, cfg.Resume)
		if err != nil {
			return fmt.Errorf("agent: resume %s: %w", cfg.Resume, err)
		}
		if !strings.HasPrefix(run.SessionKey, SessionPrefix) {
			return fmt.Errorf("agent: resume %s: run belongs to session %s, not to an agent run", cfg.Resume, run.SessionKey)
		}
		r.session = run.SessionKey
		r.runID = run.ID
	} else {
		r.session = cfg.Session
		if r.session == "" {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			r.session = SessionPrefix + hex.EncodeToString(b)
		}
		human := runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli", Name: "statewright agent"}
		view, err := cfg.Service.Start(ctx, r.session, cfg.Workflow, human)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		run = view.Run
		warnings = view.Warnings
		r.runID = run.ID
		meta := agentMeta{Task: cfg.Task, Workflow: cfg.Workflow, Model: cfg.Endpoint.String(), Workspace: cfg.Tools.WS.Root,
			TestCommand: cfg.Tools.TestCommand, MaxSteps: cfg.MaxSteps}
		if err := r.appendEvent(ctx, store.KindRun, run.State, map[string]any{"event": "agent", "agent": meta}); err != nil {
			return fmt.Errorf("agent: record run: %w", err)
		}
	}
	if err := r.follow(run); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	r.emit(events.Event{Type: events.TypeRunStart, RunStart: &events.RunStart{
		Workflow: run.WorkflowID, Task: cfg.Task, Model: cfg.Endpoint.Model, Endpoint: cfg.Endpoint.BaseURL, API: string(cfg.Endpoint.API),
		Workspace: cfg.Tools.WS.Root, Sandbox: cfg.Tools.Sandbox.String(), MaxSteps: cfg.MaxSteps, Resumed: resumed,
		Warnings: warnings}})
	r.msgs = []model.Message{{Role: "system", Content: systemPrompt(cfg.Tools.WS.Root)}, {Role: "user", Content: taskPrompt(cfg.Task, cfg.Tools.TestCommand)}}
	if resumed {
		note, err := r.resumeNote(ctx)
		if err != nil {
			return err
		}
		r.msgs = append(r.msgs, model.Message{Role: "user", Content: note})
		r.emit(events.Event{Type: events.TypeNudge, Nudge: &events.Nudge{Kind: "resume", Message: firstLine(note)}})
	}
	return nil
}

// ReadMeta returns the task and settings the runner recorded for a run.
func ReadMeta(ctx context.Context, st store.Store, runID string) (task, workflowName, modelSpec, workspace, testCmd string, err error) {
	evs, err := st.Events(ctx, store.EventFilter{RunID: runID, Kinds: []store.EventKind{store.KindRun}})
	if err != nil {
		return "", "", "", "", "", fmt.Errorf("agent: read run %s: %w", runID, err)
	}
	for _, e := range evs {
		var d struct {
			Event string    `json:"event"`
			Agent agentMeta `json:"agent"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Event == "agent" {
			return d.Agent.Task, d.Agent.Workflow, d.Agent.Model, d.Agent.Workspace, d.Agent.TestCommand, nil
		}
	}
	return "", "", "", "", "", fmt.Errorf("agent: run %s was not started by the agent runner", runID)
}

func (r *runner) appendEvent(ctx context.Context, kind store.EventKind, state string, data map[string]any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return r.cfg.Store.Update(ctx, r.session, func(tx store.Tx) error {
		return tx.Append(&store.Event{Kind: kind, State: state, Data: b})
	})
}

func (r *runner) emit(e events.Event) {
	e.RunID, e.Session, e.Depth = r.runID, r.session, r.depth
	if e.State == "" {
		e.State = r.state
	}
	if e.Step == 0 {
		e.Step = r.totals.Steps
	}
	r.cfg.Events.Emit(e)
}

// loop runs model turns until the run ends.
func (r *runner) loop(ctx context.Context) events.RunEnd {
	for {
		run, err := r.cfg.Store.Run(ctx, r.runID)
		if err != nil {
			return r.fatal("read run: %v", err)
		}
		if err := r.follow(run); err != nil {
			return r.fatal("%v", err)
		}
		switch run.Status {
		case store.StatusCompleted:
			return r.finalEnd(run.State)
		case store.StatusAwaitingApproval:
			if ap := run.PendingApproval; ap != nil {
				r.emit(events.Event{Type: events.TypeApprovalWait, ApprovalWait: &events.ApprovalWait{ApprovalID: ap.ID, Event: ap.Event, From: ap.From, To: ap.To, Message: ap.Message}})
			}
			return events.RunEnd{Outcome: events.OutcomeApproval, FinalState: run.State, Reason: "waiting for a person's approval"}
		case store.StatusPaused:
			return events.RunEnd{Outcome: events.OutcomeApproval, FinalState: run.State, Reason: "paused by a person"}
		case store.StatusDeactivated, store.StatusFailed:
			return events.RunEnd{Outcome: events.OutcomeFailed, FinalState: run.State, Reason: "run " + string(run.Status)}
		}
		if r.totals.Steps >= r.cfg.MaxSteps {
			return events.RunEnd{Outcome: events.OutcomeBudget, FinalState: r.state, Reason: fmt.Sprintf("max_steps (%d) reached", r.cfg.MaxSteps)}
		}
		if r.cfg.MaxTokens > 0 && r.totals.PromptTokens+r.totals.CompletionTokens >= r.cfg.MaxTokens {
			return events.RunEnd{Outcome: events.OutcomeBudget, FinalState: r.state, Reason: fmt.Sprintf("token budget (%d) spent", r.cfg.MaxTokens)}
		}
		if ctx.Err() != nil {
			return events.RunEnd{Outcome: events.OutcomeBudget, FinalState: r.state, Reason: "time budget ran out"}
		}
		if end, done := r.turn(ctx); done {
			return end
		}
	}
}

func (r *runner) fatal(format string, args ...any) events.RunEnd {
	msg := fmt.Sprintf(format, args...)
	r.emit(events.Event{Type: events.TypeError, Error: &events.Error{Message: msg, Fatal: true}})
	return events.RunEnd{Outcome: events.OutcomeFailed, FinalState: r.state, Reason: msg}
}

// finalEnd is the outcome of a final state: success, unless the state is
// a failure state (named failed/failure/error/aborted, or listed in
// meta.failure_states).
func (r *runner) finalEnd(state string) events.RunEnd {
	if engine.IsFailureState(r.def, state) {
		return events.RunEnd{Outcome: events.OutcomeFailed, FinalState: state, Reason: "the workflow ended in its failure state"}
	}
	return events.RunEnd{Outcome: events.OutcomeSuccess, FinalState: state}
}

// follow makes the runner's view of the phase the run's: the workflow in
// force (an invoked sub-workflow's while one runs, as the runtime decides
// it), its law, the state and the stack depth.
func (r *runner) follow(run *store.Run) error {
	prep, err := r.cfg.Service.Prepared(run)
	if err != nil {
		return fmt.Errorf("run %s: %w", run.ID, err)
	}
	moved := prep.Def != r.def || run.State != r.state
	r.def, r.law = prep.Def, prep.Law
	if v, err := r.cfg.Service.View(run); err == nil {
		r.depth = len(v.Stack)
	}
	if moved {
		r.enterState(run.State)
	}
	return nil
}

// enterState resets per-state counters and tells the model where it is.
func (r *runner) enterState(state string) {
	r.state = state
	r.failStreak, r.rung, r.proseStreak = 0, -1, 0
	clear(r.readCounts)
}

// turn makes one model request and handles its answer.
func (r *runner) turn(ctx context.Context) (events.RunEnd, bool) {
	st := r.def.States[r.state]
	if st == nil {
		return r.fatal("state %q is not in the workflow", r.state), true
	}
	if phase := fmt.Sprintf("%s/%s/%d", r.def.ID, r.state, r.depth); r.lastPhase != phase {
		r.lastPhase = phase
		r.msgs = append(r.msgs, model.Message{Role: "user", Content: r.phasePrompt(st)})
	}
	offered := r.offered(st)
	defs := make([]model.Tool, 0, len(offered)+1)
	names := make([]string, 0, len(offered)+1)
	for _, n := range offered {
		d, _ := tools.Definition(n)
		defs = append(defs, d)
		names = append(names, n)
	}
	if evs := r.eventNames(); len(evs) > 0 {
		defs = append(defs, tools.TransitionDef(evs))
		names = append(names, tools.Transition)
	}
	ep := r.endpointFor(st)
	truncated := truncateContext(r.msgs, r.cfg.ContextBudget)
	r.totals.Steps++
	r.emit(events.Event{Type: events.TypeModelRequest, ModelRequest: &events.ModelRequest{Model: ep.Model, Messages: len(r.msgs), Tools: names,
		ThinkingLevel: st.ThinkingLevel, ContextBytes: contextBytes(r.msgs), Truncated: truncated}})
	t0 := time.Now()
	resp, err := r.client(ep).Chat(ctx, model.Request{Model: ep.Model, Messages: r.msgs, Tools: defs, ThinkingLevel: st.ThinkingLevel})
	if err != nil {
		if ctx.Err() != nil {
			return events.RunEnd{Outcome: events.OutcomeBudget, FinalState: r.state, Reason: "time budget ran out"}, true
		}
		return r.fatal("model %s: %v", ep, err), true
	}
	r.totals.PromptTokens += resp.PromptTokens
	r.totals.CompletionTokens += resp.CompletionTokens
	if len(resp.ToolCalls) == 0 {
		known := func(n string) bool { return contains(names, n) || contains(tools.Names, n) }
		if calls, fam := model.Recover(resp.Content, resp.Reasoning, known); len(calls) > 0 {
			resp.ToolCalls, resp.Recovered = calls, fam
			resp.Content = ""
		}
	}
	var callNames []string
	for _, c := range resp.ToolCalls {
		callNames = append(callNames, c.Name)
	}
	r.emit(events.Event{Type: events.TypeModelResponse, ModelResponse: &events.ModelResponse{Model: ep.Model, Text: clip(resp.Content, 200), ToolCalls: callNames,
		Recovered: resp.Recovered, PromptTokens: resp.PromptTokens, CompletionTokens: resp.CompletionTokens, DurationMS: time.Since(t0).Milliseconds()}})
	// Give every call an id unique in the run (models repeat ids; Ollama sends none).
	for i := range resp.ToolCalls {
		resp.ToolCalls[i].ID = fmt.Sprintf("ag_%s_%d_%d", r.nonce, r.totals.Steps, i)
	}
	r.msgs = append(r.msgs, model.Message{Role: "assistant", Content: resp.Content, ToolCalls: resp.ToolCalls})
	if len(resp.ToolCalls) == 0 {
		r.proseStreak++
		r.failed()
		msg := "Answer with a tool call. Use this phase's tools to do the work, and statewright_transition to move on" + eventHint(r.eventNames()) + "."
		r.emit(events.Event{Type: events.TypeNudge, Nudge: &events.Nudge{Kind: "no_tool_call", Message: msg}})
		r.msgs = append(r.msgs, model.Message{Role: "user", Content: msg})
		return events.RunEnd{}, false
	}
	r.proseStreak = 0
	stateAtTurn := r.state
	for i, c := range resp.ToolCalls {
		if r.state != stateAtTurn {
			// An earlier call of this turn moved the run: the rest were
			// planned for another phase.
			r.toolMessage(c, "Not run: the phase changed to "+r.state+" before this call; decide again in the new phase.")
			continue
		}
		if end, done := r.call(ctx, c); done {
			// Answer the remaining calls so the conversation stays well formed.
			for _, rest := range resp.ToolCalls[i+1:] {
				r.toolMessage(rest, "Not run: the run stopped.")
			}
			return end, true
		}
	}
	return events.RunEnd{}, false
}

func (r *runner) toolMessage(c model.ToolCall, text string) {
	r.msgs = append(r.msgs, model.Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: text})
}

// failed counts a failure toward model_ladder escalation.
func (r *runner) failed() {
	r.failStreak++
	st := r.def.States[r.state]
	if st == nil || len(st.ModelLadder) == 0 || r.failStreak < r.cfg.EscalateAfter {
		return
	}
	if r.rung+1 >= len(st.ModelLadder) {
		return
	}
	r.rung++
	r.failStreak = 0
	ep := r.endpointFor(st)
	r.emit(events.Event{Type: events.TypeNudge, Nudge: &events.Nudge{Kind: "escalate", Model: ep.String(),
		Message: fmt.Sprintf("%d failures in a row in %s: escalating to %s", r.cfg.EscalateAfter, r.state, ep)}})
}

func (r *runner) succeeded() { r.failStreak = 0 }

// endpointFor picks the model for a state: the current model_ladder rung
// after an escalation, else the state's model, else meta.default_model,
// else --model. A model is either URL#MODEL or a bare name on the
// --model endpoint.
func (r *runner) endpointFor(st *workflow.State) model.Endpoint {
	spec := ""
	if r.rung >= 0 && r.rung < len(st.ModelLadder) {
		switch v := st.ModelLadder[r.rung].(type) {
		case string:
			spec = v
		case map[string]any:
			if m, _ := v["model"].(string); m != "" {
				spec = m
				if u, _ := v["url"].(string); u != "" && !strings.Contains(m, "#") {
					spec = u + "#" + m
				}
			}
		}
	}
	if spec == "" {
		spec = st.Model
	}
	if spec == "" && r.def.Meta != nil {
		spec = r.def.Meta.DefaultModel
	}
	return resolveModel(r.cfg.Endpoint, spec)
}

func resolveModel(base model.Endpoint, spec string) model.Endpoint {
	if spec == "" {
		return base
	}
	if strings.Contains(spec, "#") {
		if ep, err := model.ParseEndpoint(spec); err == nil {
			return ep
		}
		return base
	}
	ep := base
	ep.Model = spec
	return ep
}

func (r *runner) client(ep model.Endpoint) model.Client {
	key := string(ep.API) + " " + ep.BaseURL
	c, ok := r.clients[key]
	if !ok {
		c = r.cfg.NewClient(ep)
		r.clients[key] = c
	}
	return c
}

// offered lists the file and command tools the state allows, by asking
// the compiled law (pure, nothing recorded) about a representative call
// of each: a tool the phase's tool list rules out is not offered.
func (r *runner) offered(st *workflow.State) []string {
	if st.IsFinal() {
		return nil
	}
	rs := &policy.RunState{Active: true, State: r.state}
	probe := map[string][2]string{
		tools.ReadFile:   {"Read", `{"file_path":"` + r.cfg.Tools.WS.Root + `/x"}`},
		tools.ListDir:    {"LS", `{"path":"` + r.cfg.Tools.WS.Root + `"}`},
		tools.Grep:       {"Grep", `{"pattern":"x","path":"` + r.cfg.Tools.WS.Root + `"}`},
		tools.EditFile:   {"Edit", `{"file_path":"` + r.cfg.Tools.WS.Root + `/x","old_string":"a","new_string":"b"}`},
		tools.WriteFile:  {"Write", `{"file_path":"` + r.cfg.Tools.WS.Root + `/x","content":"x"}`},
		tools.RunCommand: {"Bash", `{"command":"ls"}`},
		tools.RunTest:    {"Bash", `{"command":"go test ./..."}`},
	}
	var out []string
	for _, n := range tools.Names {
		p := probe[n]
		d := r.law.Decide(rs, &policy.ToolCall{Harness: policy.ClaudeCode, Tool: p[0], Input: json.RawMessage(p[1]), Cwd: r.cfg.Tools.WS.Root, ProjectDir: r.cfg.Tools.WS.Root})
		switch d.Rule {
		case policy.RuleToolNotAllowed, policy.RuleDisallowedTool, policy.RuleFinalState, policy.RuleUnknownState:
			continue
		}
		out = append(out, n)
	}
	return out
}

// eventNames lists the state's events.
func (r *runner) eventNames() []string {
	st := r.def.States[r.state]
	if st == nil || st.IsFinal() {
		return nil
	}
	var out []string
	for _, e := range nextEvents(r.def, r.state) {
		out = append(out, e.Event)
	}
	return out
}

// call handles one tool call.
func (r *runner) call(ctx context.Context, c model.ToolCall) (events.RunEnd, bool) {
	r.totals.ToolCalls++
	r.emit(events.Event{Type: events.TypeToolCall, ToolCall: &events.ToolCall{ID: c.ID, Name: c.Name, Args: c.Arguments}})
	args, err := tools.DecodeArgs(c.Arguments)
	if err != nil {
		r.runnerDeny(ctx, c, "bad-arguments", err.Error())
		return events.RunEnd{}, false
	}
	if c.Name == tools.Transition {
		return r.transition(ctx, c, args)
	}
	if !contains(tools.Names, c.Name) {
		r.runnerDeny(ctx, c, "unknown-tool", fmt.Sprintf("There is no tool %q. Tools in this phase: %s.", c.Name, strings.Join(r.offered(r.def.States[r.state]), ", ")))
		return events.RunEnd{}, false
	}
	ptool, input, err := r.cfg.Tools.PolicyCall(c.Name, args)
	if err != nil {
		rule := "bad-arguments"
		if errors.Is(err, tools.ErrOutside) {
			rule = "outside-workspace"
		}
		r.runnerDeny(ctx, c, rule, err.Error())
		return events.RunEnd{}, false
	}
	// Read-loop detection: the same window of the same file.
	var readKey string
	if c.Name == tools.ReadFile {
		s, e := tools.Window(args)
		readKey = fmt.Sprintf("%v:%d-%d", input["file_path"], s, e)
		r.readCounts[readKey]++
		if n := r.readCounts[readKey]; n > ReadLoopLimit {
			r.runnerDeny(ctx, c, "read-loop", fmt.Sprintf("You have read %s lines %d-%d %d times already; its content has not changed. Act on what you read: edit, run the tests, or send an event with statewright_transition%s.",
				args.Path, s, e, n-1, eventHint(r.eventNames())))
			return events.RunEnd{}, false
		}
	}
	inJSON, _ := json.Marshal(input)
	pcall := policy.ToolCall{Harness: policy.ClaudeCode, Tool: ptool, Input: inJSON, Cwd: r.cfg.Tools.WS.Root, ProjectDir: r.cfg.Tools.WS.Root, ToolUseID: c.ID}
	tc := runtime.ToolCall{Session: r.session, Call: pcall, Actor: agentActor}
	if r.cfg.Tools.Sandboxed(c.Name) {
		// The command runs under the profile of the phase it is decided
		// in; the sandbox is an input of the decision.
		env := *r.cfg.Tools.SandboxEnv
		if env.SessionDir == "" {
			root, err := sandbox.DefaultRoot()
			if err == nil {
				env.SessionDir = sandbox.SessionDir(root, r.session)
				env.CacheDir = sandbox.SharedCache(root)
			}
		}
		if env.SessionDir != "" {
			if err := sandbox.PrepareSession(env.SessionDir, env.CacheDir); err != nil {
				env.SessionDir = ""
			}
		}
		tc.Sandbox, tc.Call.Sandboxed = &env, true
		pcall.Sandboxed = true
	}
	res, err := r.cfg.Service.Decide(ctx, tc)
	if err != nil {
		// Fail closed: an error is a deny.
		r.emit(events.Event{Type: events.TypeDecision, Decision: &events.Decision{ID: c.ID, Name: c.Name, Verdict: "deny", Rule: string(policy.RuleInternal), Reason: err.Error(), Enforced: true}})
		r.totals.Denials++
		r.failed()
		r.result(c, tools.Result{Output: "statewright could not decide this call, so it is denied: " + err.Error(), Failed: true})
		return events.RunEnd{}, false
	}
	r.emit(events.Event{Type: events.TypeDecision, State: res.State, Decision: &events.Decision{ID: c.ID, Name: c.Name, Verdict: res.Verdict.String(), Rule: string(res.Rule), Reason: res.Reason, Enforced: res.Enforced}})
	if res.State != "" && res.State != r.state {
		// An implicit transition moved the run before the call.
		r.enterState(res.State)
		r.totals.Transitions++
	}
	if res.Verdict != policy.Allow && res.Enforced {
		r.totals.Denials++
		r.failed()
		why := res.Reason
		if res.Verdict == policy.Ask {
			why += " (a person must do this; the runner never grants it)"
		}
		r.result(c, tools.Result{Output: "statewright denied this call: " + why + r.eventsLine(), Failed: true})
		return events.RunEnd{}, false
	}
	if tc.Sandbox != nil && res.Sandbox == nil {
		// Allowed, but without its profile: never run it unconfined.
		r.result(c, tools.Result{Output: "statewright could not derive this phase's sandbox profile, so the command did not run", Failed: true})
		r.failed()
		return events.RunEnd{}, false
	}
	ectx, stopFollow := ctx, func() {}
	if res.Sandbox != nil && r.cfg.Store != nil {
		// A transition made elsewhere while the command runs (a person's
		// approve or transition) kills it with its sandbox.
		ectx, stopFollow = followPhase(ctx, r.cfg.Store, r.session, res.Sandbox.Phase)
	}
	out := r.cfg.Tools.ExecIn(ectx, c.Name, args, res.Sandbox)
	stopFollow()
	if c.Name == tools.EditFile || c.Name == tools.WriteFile {
		clear(r.readCounts) // the file changed: reading it again is not a loop
	}
	if readKey != "" && r.readCounts[readKey] == ReadLoopLimit && !out.Failed {
		msg := fmt.Sprintf("You have now read %s lines %d-%d %d times. Reading it again will be refused: act on it.", args.Path, args.StartLine, args.EndLine, ReadLoopLimit)
		out.Output += "\n[statewright] " + msg
		r.emit(events.Event{Type: events.TypeNudge, Nudge: &events.Nudge{Kind: "read_loop", Message: msg}})
	}
	outJSON, _ := json.Marshal(out.Output)
	if err := r.cfg.Service.RecordResult(ctx, runtime.ToolResult{Session: r.session, ToolUseID: c.ID, Call: pcall, Failed: out.Failed && out.ExitCode == nil,
		ExitCode: out.ExitCode, Output: outJSON, Actor: agentActor, TestReport: out.Test}); err != nil {
		r.emit(events.Event{Type: events.TypeError, Error: &events.Error{Message: "record result: " + err.Error()}})
	}
	if out.Failed {
		r.failed()
	} else {
		r.succeeded()
	}
	r.result(c, out)
	return events.RunEnd{}, false
}

// runnerDeny refuses a call before the runtime sees it (it could not be
// mapped to a decidable call), records the refusal in the store's log and
// tells the model why.
func (r *runner) runnerDeny(ctx context.Context, c model.ToolCall, rule, reason string) {
	r.totals.Denials++
	r.failed()
	r.emit(events.Event{Type: events.TypeDecision, Decision: &events.Decision{ID: c.ID, Name: c.Name, Verdict: "deny", Rule: "runner:" + rule, Reason: reason, Enforced: true, Runner: rule}})
	if err := r.cfg.Store.Update(ctx, r.session, func(tx store.Tx) error {
		d, _ := json.Marshal(map[string]any{"actor": agentActor, "harness": "agent-runner"})
		return tx.Append(&store.Event{Kind: store.KindDecision, State: r.state, Tool: c.Name, InputDigest: store.InputDigest(c.Arguments),
			Decision: "deny", Rule: "runner:" + rule, Reason: reason, ToolUseID: c.ID, Data: d})
	}); err != nil {
		r.emit(events.Event{Type: events.TypeError, Error: &events.Error{Message: "record runner deny: " + err.Error()}})
	}
	r.result(c, tools.Result{Output: "Refused: " + reason, Failed: true})
}

func (r *runner) result(c model.ToolCall, out tools.Result) {
	r.emit(events.Event{Type: events.TypeToolResult, ToolResult: &events.ToolResult{ID: c.ID, Name: c.Name, OK: !out.Failed, ExitCode: out.ExitCode, Bytes: len(out.Output), Preview: clip(out.Output, 200)}})
	r.toolMessage(c, out.Output)
}

// transition sends an event through the runtime.
func (r *runner) transition(ctx context.Context, c model.ToolCall, args tools.Args) (events.RunEnd, bool) {
	ev := strings.TrimSpace(args.Event)
	if ev == "" {
		r.runnerDeny(ctx, c, "bad-arguments", "statewright_transition needs an event"+eventHint(r.eventNames()))
		return events.RunEnd{}, false
	}
	// The call is decided like any control tool (and so recorded), then
	// resolved by the engine.
	in, _ := json.Marshal(map[string]any{"event": ev})
	pcall := policy.ToolCall{Harness: policy.ClaudeCode, Tool: "mcp__statewright__transition", Input: in, Cwd: r.cfg.Tools.WS.Root, ProjectDir: r.cfg.Tools.WS.Root, ToolUseID: c.ID}
	dec, err := r.cfg.Service.Decide(ctx, runtime.ToolCall{Session: r.session, Call: pcall, Actor: agentActor})
	if err == nil {
		r.emit(events.Event{Type: events.TypeDecision, Decision: &events.Decision{ID: c.ID, Name: c.Name, Verdict: dec.Verdict.String(), Rule: string(dec.Rule), Reason: dec.Reason, Enforced: dec.Enforced}})
	}
	if err != nil || dec.Verdict != policy.Allow {
		why := "statewright could not decide the transition"
		if err != nil {
			why += ": " + err.Error()
		} else {
			why = dec.Reason
		}
		r.totals.Denials++
		r.failed()
		r.result(c, tools.Result{Output: "statewright denied this transition: " + why, Failed: true})
		return events.RunEnd{}, false
	}
	from := r.state
	res, err := r.cfg.Service.Transition(ctx, r.session, ev, nil, agentActor)
	if err != nil {
		reason := err.Error()
		if i := strings.Index(reason, "transition refused: "); i >= 0 {
			reason = reason[i+len("transition refused: "):]
		}
		r.emit(events.Event{Type: events.TypeTransition, Transition: &events.Transition{Event: ev, From: from, Refused: true, Reason: reason}})
		r.totals.Denials++
		r.failed()
		r.result(c, tools.Result{Output: fmt.Sprintf("The event %s was refused in phase %s: %s.%s", ev, from, reason, eventHint(r.eventNames())), Failed: true})
		return events.RunEnd{}, false
	}
	r.succeeded()
	if res.Parked {
		r.emit(events.Event{Type: events.TypeTransition, Transition: &events.Transition{Event: ev, From: from, To: res.To, Reason: "awaiting approval " + res.ApprovalID}})
		r.result(c, tools.Result{Output: fmt.Sprintf("The move to %s needs a person's approval (%s). The run waits for it.", res.To, res.ApprovalID)})
		return events.RunEnd{}, false // the loop sees awaiting_approval and stops
	}
	r.totals.Transitions++
	r.emit(events.Event{Type: events.TypeTransition, Transition: &events.Transition{Event: ev, From: from, To: res.To, Final: res.Final}})
	msg := fmt.Sprintf("Moved from %s to %s.", from, res.To)
	for _, sf := range res.Subflows {
		msg += " " + r.subflowStep(sf)
	}
	r.depth = res.Depth
	r.result(c, tools.Result{Output: msg})
	return events.RunEnd{}, false // the loop follows the run into its new phase
}

// subflowStep reports one change of the run's stack (the runtime runs
// invoked sub-workflows and fork branches in this same run, as under
// every harness) as a child event, and says it for the model.
func (r *runner) subflowStep(sf runtime.SubflowStep) string {
	ch := &events.Child{Phase: "start", Kind: sf.Kind, Workflow: sf.Workflow, Branch: sf.Branch, RunID: r.runID}
	if sf.Action == "return" {
		ch.Phase, ch.Outcome = "end", sf.Outcome
	}
	r.emit(events.Event{Type: events.TypeChild, State: sf.State, Child: ch})
	return sf.String()
}

// eventsLine lists the current phase's events for a deny message, so the
// model always learns how to move on.
func (r *runner) eventsLine() string {
	evs := nextEvents(r.def, r.state)
	if len(evs) == 0 {
		return ""
	}
	parts := make([]string, 0, len(evs))
	for _, e := range evs {
		parts = append(parts, e.String())
	}
	return "\nEvents from " + r.state + ": " + strings.Join(parts, "; ") + " (send one with statewright_transition)."
}

func eventHint(evs []string) string {
	if len(evs) == 0 {
		return ""
	}
	return " (events here: " + strings.Join(evs, ", ") + ")"
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
