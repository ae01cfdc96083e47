// Package events is the agent runner's event stream: the versioned JSONL
// records `statewright agent --events jsonl` writes (docs/agent-events.md),
// and the readable progress display the runner prints on stderr by default.
//
// The types are the schema. A consumer (the TUI, a CI script) decodes one
// Event per line, checks V, and switches on Type; exactly the payload field
// named after the type is set. Fields are only ever added within a version;
// a change of meaning or a removal bumps Version.
package events

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Version is the schema version every event carries in V.
const Version = 1

// Type names an event.
type Type string

// Event types, in the order they usually appear in a run.
const (
	// TypeRunStart: the run started or resumed (RunStart).
	TypeRunStart Type = "run_start"
	// TypeModelRequest: a request to the model is about to be sent (ModelRequest).
	TypeModelRequest Type = "model_request"
	// TypeModelResponse: the model answered (ModelResponse).
	TypeModelResponse Type = "model_response"
	// TypeToolCall: the model asked for a tool call (ToolCall).
	TypeToolCall Type = "tool_call"
	// TypeDecision: the runtime decided the call (Decision).
	TypeDecision Type = "decision"
	// TypeToolResult: the tool ran (or was refused) and this went back to the model (ToolResult).
	TypeToolResult Type = "tool_result"
	// TypeTransition: the run moved to another state, or a transition was refused (Transition).
	TypeTransition Type = "transition"
	// TypeApprovalWait: a transition needs a person's approval; the run waits (ApprovalWait).
	TypeApprovalWait Type = "approval_wait"
	// TypeNudge: the runner told the model something on its own (read loop, prose answer, escalation) (Nudge).
	TypeNudge Type = "nudge"
	// TypeChild: a sub-machine (invoke) or fork branch started or ended (Child).
	TypeChild Type = "child"
	// TypeError: something failed (Error); a fatal one is followed by run_end.
	TypeError Type = "error"
	// TypeRunEnd: the run ended, with its outcome and totals (RunEnd).
	TypeRunEnd Type = "run_end"
)

// Event is one line of the stream.
type Event struct {
	// V is the schema version (Version).
	V int `json:"v"`
	// Seq numbers the events of one stream from 1.
	Seq int64 `json:"seq"`
	// Time is when the event happened (UTC, RFC 3339 with nanoseconds).
	Time time.Time `json:"time"`
	// Type says which payload field is set.
	Type Type `json:"type"`
	// RunID is the store's run id; Session the run's session key.
	RunID   string `json:"run_id,omitempty"`
	Session string `json:"session,omitempty"`
	// Depth is 0 for the top run and 1, 2, ... for invoked sub-machines.
	Depth int `json:"depth,omitempty"`
	// State is the run's state when the event happened.
	State string `json:"state,omitempty"`
	// Step is the model turn the event belongs to (1-based; 0 before the first).
	Step int `json:"step,omitempty"`

	RunStart      *RunStart      `json:"run_start,omitempty"`
	ModelRequest  *ModelRequest  `json:"model_request,omitempty"`
	ModelResponse *ModelResponse `json:"model_response,omitempty"`
	ToolCall      *ToolCall      `json:"tool_call,omitempty"`
	Decision      *Decision      `json:"decision,omitempty"`
	ToolResult    *ToolResult    `json:"tool_result,omitempty"`
	Transition    *Transition    `json:"transition,omitempty"`
	ApprovalWait  *ApprovalWait  `json:"approval_wait,omitempty"`
	Nudge         *Nudge         `json:"nudge,omitempty"`
	Child         *Child         `json:"child,omitempty"`
	Error         *Error         `json:"error,omitempty"`
	RunEnd        *RunEnd        `json:"run_end,omitempty"`
}

// RunStart describes the run.
type RunStart struct {
	Workflow  string `json:"workflow"`
	Task      string `json:"task"`
	Model     string `json:"model"`
	Endpoint  string `json:"endpoint"`
	API       string `json:"api"` // "openai" or "ollama"
	Workspace string `json:"workspace"`
	Sandbox   string `json:"sandbox"` // "bwrap" or "none: <why>"
	MaxSteps  int    `json:"max_steps"`
	Resumed   bool   `json:"resumed,omitempty"`
	// Warnings are the workflow's warnings when the run was started from
	// it (a tool name no harness knows, with a did-you-mean).
	Warnings []string `json:"warnings,omitempty"`
}

// ModelRequest summarises a request (not its messages).
type ModelRequest struct {
	Model         string   `json:"model"`
	Messages      int      `json:"messages"`
	Tools         []string `json:"tools"`
	ThinkingLevel string   `json:"thinking_level,omitempty"`
	// ContextBytes is the size of the messages' text after truncation.
	ContextBytes int `json:"context_bytes"`
	// Truncated counts old tool outputs shortened to fit the context budget.
	Truncated int `json:"truncated,omitempty"`
}

// ModelResponse summarises an answer.
type ModelResponse struct {
	Model            string   `json:"model"`
	Text             string   `json:"text,omitempty"` // the first 200 bytes
	ToolCalls        []string `json:"tool_calls,omitempty"`
	Recovered        string   `json:"recovered,omitempty"` // "json" or "harmony" when tool calls were recovered from text
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	DurationMS       int64    `json:"duration_ms"`
}

// ToolCall is one call the model asked for.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Decision is the runtime's answer for a call.
type Decision struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Verdict  string `json:"verdict"` // allow, deny, ask
	Rule     string `json:"rule"`
	Reason   string `json:"reason,omitempty"`
	Enforced bool   `json:"enforced"`
	// Runner is set when the runner itself refused the call before the
	// runtime (read loop, unknown tool, path outside the workspace, bad arguments).
	Runner string `json:"runner,omitempty"`
}

// ToolResult is what went back to the model.
type ToolResult struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	OK       bool   `json:"ok"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Bytes    int    `json:"bytes"`
	Preview  string `json:"preview,omitempty"` // the first 200 bytes
}

// Transition is a state change or a refused event.
type Transition struct {
	Event   string `json:"event"`
	From    string `json:"from"`
	To      string `json:"to,omitempty"`
	Refused bool   `json:"refused,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Final   bool   `json:"final,omitempty"`
}

// ApprovalWait is a parked transition.
type ApprovalWait struct {
	ApprovalID string `json:"approval_id"`
	Event      string `json:"event"`
	From       string `json:"from"`
	To         string `json:"to"`
	Message    string `json:"message,omitempty"`
}

// Nudge is something the runner told the model on its own.
type Nudge struct {
	Kind    string `json:"kind"` // read_loop, no_tool_call, escalate, max_iterations, resume
	Message string `json:"message"`
	Model   string `json:"model,omitempty"` // the new model after an escalation
}

// Child is a sub-machine or fork branch.
type Child struct {
	Phase    string `json:"phase"` // "start" or "end"
	Kind     string `json:"kind"`  // "invoke" or "fork"
	Workflow string `json:"workflow"`
	Branch   string `json:"branch,omitempty"`
	RunID    string `json:"run_id,omitempty"`
	Outcome  string `json:"outcome,omitempty"`
}

// Error is a failure.
type Error struct {
	Message string `json:"message"`
	Fatal   bool   `json:"fatal,omitempty"`
}

// Outcomes of a run (RunEnd.Outcome) and the exit codes the CLI maps them to.
const (
	OutcomeSuccess  = "success"  // a final state other than a failure state: exit 0
	OutcomeFailed   = "failed"   // the failed state, or an unrecoverable error: exit 1
	OutcomeBudget   = "budget"   // max_steps, time or tokens ran out: exit 3
	OutcomeApproval = "approval" // waiting for a person's approval, resumable: exit 4
)

// RunEnd is the outcome and totals.
type RunEnd struct {
	Outcome          string `json:"outcome"`
	FinalState       string `json:"final_state"`
	Reason           string `json:"reason,omitempty"`
	Steps            int    `json:"steps"`
	ToolCalls        int    `json:"tool_calls"`
	Denials          int    `json:"denials"`
	Transitions      int    `json:"transitions"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	DurationMS       int64  `json:"duration_ms"`
}

// Sink receives events. Implementations must be safe for concurrent use
// (fork branches emit from several goroutines).
type Sink interface {
	Emit(Event)
}

// Discard drops every event.
var Discard Sink = discard{}

type discard struct{}

func (discard) Emit(Event) {}

// Multi sends every event to each sink.
func Multi(sinks ...Sink) Sink { return multi(sinks) }

type multi []Sink

func (m multi) Emit(e Event) {
	for _, s := range m {
		s.Emit(e)
	}
}

// Stamper numbers events and fills V and Time before passing them on.
type Stamper struct {
	mu   sync.Mutex
	seq  int64
	next Sink
	now  func() time.Time
}

// NewStamper returns a Stamper over next; now may be nil (time.Now).
func NewStamper(next Sink, now func() time.Time) *Stamper {
	if now == nil {
		now = time.Now
	}
	return &Stamper{next: next, now: now}
}

// Emit implements Sink.
func (s *Stamper) Emit(e Event) {
	s.mu.Lock()
	s.seq++
	e.V, e.Seq = Version, s.seq
	if e.Time.IsZero() {
		e.Time = s.now().UTC()
	}
	s.next.Emit(e)
	s.mu.Unlock()
}

// JSONL writes one JSON object per line.
type JSONL struct {
	mu sync.Mutex
	w  io.Writer
}

// NewJSONL returns a sink writing to w.
func NewJSONL(w io.Writer) *JSONL { return &JSONL{w: w} }

// Emit implements Sink.
func (j *JSONL) Emit(e Event) {
	b, err := json.Marshal(e)
	if err != nil {
		b, _ = json.Marshal(Event{V: Version, Seq: e.Seq, Time: e.Time, Type: TypeError, Error: &Error{Message: "events: " + err.Error()}})
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	_, _ = j.w.Write(append(b, '\n'))
}

// Decode reads one JSONL line into an Event and checks its version.
func Decode(line []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(line, &e); err != nil {
		return Event{}, fmt.Errorf("events: decode: %w", err)
	}
	if e.V != Version {
		return Event{}, fmt.Errorf("events: version %d, this reader knows %d", e.V, Version)
	}
	if e.Type == "" {
		return Event{}, fmt.Errorf("events: no type")
	}
	if known(e.Type) && !e.hasPayload() {
		return Event{}, fmt.Errorf("events: %s without its %s payload", e.Type, e.Type)
	}
	return e, nil
}

// Progress renders events as short human lines (the default display on stderr).
type Progress struct {
	mu sync.Mutex
	w  io.Writer
}

// NewProgress returns a sink printing readable progress to w.
func NewProgress(w io.Writer) *Progress { return &Progress{w: w} }

// Emit implements Sink.
func (p *Progress) Emit(e Event) {
	line := Render(e)
	if line == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, line)
}

// Render returns the progress line for e ("" for events not shown).
func Render(e Event) string {
	ind := strings.Repeat("  ", e.Depth)
	step := ""
	if e.Step > 0 {
		step = fmt.Sprintf("#%d ", e.Step)
	}
	st := ""
	if e.State != "" {
		st = "[" + e.State + "] "
	}
	if !e.hasPayload() {
		return fmt.Sprintf("%s%s%s%s", ind, step, st, e.Type)
	}
	switch e.Type {
	case TypeRunStart:
		r := e.RunStart
		verb := "start"
		if r.Resumed {
			verb = "resume"
		}
		line := fmt.Sprintf("%s%s %s (%s) with %s via %s, workspace %s, sandbox %s", ind, verb, r.Workflow, e.RunID, r.Model, r.API, r.Workspace, r.Sandbox)
		for _, w := range r.Warnings {
			line += "\n" + ind + "  " + w
		}
		return line
	case TypeModelResponse:
		m := e.ModelResponse
		what := "text"
		if len(m.ToolCalls) > 0 {
			what = strings.Join(m.ToolCalls, ", ")
		}
		rec := ""
		if m.Recovered != "" {
			rec = " (recovered from " + m.Recovered + ")"
		}
		return fmt.Sprintf("%s%s%s%s → %s%s [%d+%d tok]", ind, step, st, m.Model, what, rec, m.PromptTokens, m.CompletionTokens)
	case TypeDecision:
		d := e.Decision
		if d.Verdict == "allow" {
			return ""
		}
		src := d.Rule
		if d.Runner != "" {
			src = "runner: " + d.Runner
		}
		return fmt.Sprintf("%s%s%s%s %s (%s): %s", ind, step, st, d.Verdict, d.Name, src, firstLine(d.Reason))
	case TypeToolResult:
		r := e.ToolResult
		mark := "ok"
		if !r.OK {
			mark = "failed"
		}
		if r.ExitCode != nil {
			mark += fmt.Sprintf(" exit %d", *r.ExitCode)
		}
		return fmt.Sprintf("%s%s%s%s %s (%d bytes)", ind, step, st, r.Name, mark, r.Bytes)
	case TypeTransition:
		t := e.Transition
		if t.Refused {
			return fmt.Sprintf("%s%s%srefused %s: %s", ind, step, st, t.Event, firstLine(t.Reason))
		}
		return fmt.Sprintf("%s%s%s → %s (%s)", ind, step, t.From, t.To, t.Event)
	case TypeApprovalWait:
		a := e.ApprovalWait
		return fmt.Sprintf("%swaiting for approval %s: %s → %s (%s); approve with `statewright approve %s --id %s`, then resume with `statewright agent --resume %s`", ind, a.ApprovalID, a.From, a.To, a.Event, e.Session, a.ApprovalID, e.RunID)
	case TypeNudge:
		return fmt.Sprintf("%s%s%snudge (%s): %s", ind, step, st, e.Nudge.Kind, firstLine(e.Nudge.Message))
	case TypeChild:
		c := e.Child
		s := fmt.Sprintf("%s%s %s %s", ind, c.Kind, c.Phase, c.Workflow)
		if c.Branch != "" {
			s += " branch " + c.Branch
		}
		if c.Outcome != "" {
			s += ": " + c.Outcome
		}
		return s
	case TypeError:
		return fmt.Sprintf("%s%s%serror: %s", ind, step, st, e.Error.Message)
	case TypeRunEnd:
		r := e.RunEnd
		s := fmt.Sprintf("%send: %s in %s after %d steps, %d tool calls, %d denials, %d transitions, %d+%d tokens",
			ind, r.Outcome, r.FinalState, r.Steps, r.ToolCalls, r.Denials, r.Transitions, r.PromptTokens, r.CompletionTokens)
		if r.Reason != "" {
			s += " (" + r.Reason + ")"
		}
		return s
	}
	return ""
}

// known reports whether t is a type of this version (a consumer must skip
// types it does not know).
func known(t Type) bool {
	switch t {
	case TypeRunStart, TypeModelRequest, TypeModelResponse, TypeToolCall, TypeDecision, TypeToolResult,
		TypeTransition, TypeApprovalWait, TypeNudge, TypeChild, TypeError, TypeRunEnd:
		return true
	}
	return false
}

// hasPayload reports whether the payload field of e's type is set (a
// decoded line may lack it).
func (e *Event) hasPayload() bool {
	switch e.Type {
	case TypeRunStart:
		return e.RunStart != nil
	case TypeModelRequest:
		return e.ModelRequest != nil
	case TypeModelResponse:
		return e.ModelResponse != nil
	case TypeToolCall:
		return e.ToolCall != nil
	case TypeDecision:
		return e.Decision != nil
	case TypeToolResult:
		return e.ToolResult != nil
	case TypeTransition:
		return e.Transition != nil
	case TypeApprovalWait:
		return e.ApprovalWait != nil
	case TypeNudge:
		return e.Nudge != nil
	case TypeChild:
		return e.Child != nil
	case TypeError:
		return e.Error != nil
	case TypeRunEnd:
		return e.RunEnd != nil
	}
	return false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 240 {
		s = s[:240] + "…"
	}
	return s
}
