package wire

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
)

// This file is the hook-output JSON Claude Code reads and Codex, whose hook
// contract follows Claude Code's, reads too: exit 0 with JSON on stdout,
// or exit 2 with the reason on stderr for a deny.

// Exit codes of the Claude Code and Codex hook contract.
const (
	// ExitOK: stdout, when not empty, is the event's JSON output.
	ExitOK = 0
	// ExitBlock: a blocking error; stderr is fed to the model and stdout
	// is ignored. PreToolUse: the call is blocked. UserPromptSubmit: the
	// prompt is erased. Stop: the agent keeps going. Any other non-zero
	// code is a non-blocking error: the harness fails open.
	ExitBlock = 2
)

// hookSpecific is hookSpecificOutput. Field order is the encoding order;
// only the fields set are sent (Codex refuses some combinations).
type hookSpecific struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
	AdditionalContext        string          `json:"additionalContext,omitempty"`
}

// output is the JSON a hook prints on stdout with exit code 0.
type output struct {
	Decision           string        `json:"decision,omitempty"`
	Reason             string        `json:"reason,omitempty"`
	SystemMessage      string        `json:"systemMessage,omitempty"`
	HookSpecificOutput *hookSpecific `json:"hookSpecificOutput,omitempty"`
}

func stdout(o output) harness.Answer { return harness.Answer{Exit: ExitOK, Stdout: Encode(o)} }

// Pass lets the call or event through without an opinion: exit 0, no
// output. For PreToolUse it leaves the decision to the harness's own
// permission rules and mode, so statewright never loosens them.
func Pass() harness.Answer { return harness.Answer{Exit: ExitOK} }

// Deny blocks a PreToolUse call: exit 2 with the reason on stderr, which
// the harness feeds to the model as the tool's error result. Exit 2 blocks
// even if stdout were lost or misparsed, which is why it is used rather
// than the JSON form; the JSON form is the answer's Body, for HTTP hooks.
func Deny(reason string) harness.Answer {
	return harness.Answer{Exit: ExitBlock, Stderr: Line(reason), Body: Encode(output{HookSpecificOutput: &hookSpecific{
		HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: reason}})}
}

// DenyJSON blocks a PreToolUse call with Claude Code's JSON answer: exit 0,
// permissionDecision "deny" and the reason, which Claude Code hands the
// model as the tool's result, word for word. (Exit 2 would make it
// "PreToolUse:TOOL hook error: [the whole hook command]: reason", so the
// lesson would read like a malfunction.) Exit 2 stays the fallback of the
// command's fail-closed wrapper, for when this process cannot answer.
func DenyJSON(reason string) harness.Answer {
	a := stdout(output{HookSpecificOutput: &hookSpecific{
		HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: reason}})
	a.Body = a.Stdout
	return a
}

// Allow allows a PreToolUse call with a replaced tool input (the session
// stamp on statewright's control tools); updatedInput is honoured only
// with an allow. reason may be empty (Codex sends none).
func Allow(updatedInput json.RawMessage, reason string) harness.Answer {
	return stdout(output{HookSpecificOutput: &hookSpecific{
		HookEventName: "PreToolUse", PermissionDecision: "allow", PermissionDecisionReason: reason, UpdatedInput: updatedInput}})
}

// Ask makes the harness ask its user. updatedInput may be nil.
func Ask(reason string, updatedInput json.RawMessage) harness.Answer {
	return stdout(output{HookSpecificOutput: &hookSpecific{
		HookEventName: "PreToolUse", PermissionDecision: "ask", PermissionDecisionReason: reason, UpdatedInput: updatedInput}})
}

// Context adds text to the model's context (a session start, a prompt, a
// tool result). Empty text passes.
func Context(event, text string) harness.Answer {
	if text == "" {
		return Pass()
	}
	return stdout(output{HookSpecificOutput: &hookSpecific{HookEventName: event, AdditionalContext: text}})
}

// BlockStop keeps the agent working instead of stopping; the reason is fed
// to the model.
func BlockStop(reason string) harness.Answer {
	return stdout(output{Decision: "block", Reason: reason})
}

// Notice lets the event through and shows msg to the user.
func Notice(msg string) harness.Answer { return stdout(output{SystemMessage: msg}) }

// Failure kinds: how an event of the hook-output contract fails closed.
type FailureKind int

// The kinds.
const (
	// FailGate: a tool gate (PreToolUse) denies.
	FailGate FailureKind = iota
	// FailPrompt: a prompt or session start keeps the prompt and warns the
	// user and the model (the next tool call is denied anyway); exit 2
	// would erase the prompt.
	FailPrompt
	// FailStop: a stop lets the agent stop with a warning; blocking on an
	// error would loop forever.
	FailStop
	// FailNotice: the call already ran or the session is over: warn.
	FailNotice
)

// Failure is the answer when the hook cannot do its job for event.
func Failure(kind FailureKind, event, msg string) harness.Answer {
	msg = Prefixed(msg)
	switch kind {
	case FailGate:
		return Deny(msg + FailClosed)
	case FailPrompt:
		return stdout(output{
			SystemMessage: msg + " (run `statewright doctor`)",
			HookSpecificOutput: &hookSpecific{HookEventName: event,
				AdditionalContext: msg + ". Until a person fixes this, statewright denies every tool call."}})
	case FailStop:
		return Notice(msg + "; letting the agent stop (run `statewright doctor`)")
	}
	return Notice(msg + " (run `statewright doctor`)")
}

// HookInput is what Claude Code's hooks, and Codex's, whose contract
// follows Claude Code's, write on stdin: the fields both carry. Each
// adapter's Input embeds it and adds its own. Fields absent for an event
// are zero; unknown fields are ignored (the harnesses add fields between
// versions).
type HookInput struct {
	// Common to every event.
	SessionID      string `json:"session_id"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode"`
	HookEventName  string `json:"hook_event_name"`
	// AgentID and AgentType are set inside a subagent; its calls are
	// decided like the main agent's, on the same session.
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`

	// Tool events. MCP tools are "mcp__SERVER__TOOL".
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolUseID    string          `json:"tool_use_id"`
	ToolResponse json.RawMessage `json:"tool_response"`

	// A prompt.
	Prompt string `json:"prompt"`
	// A stop: true when the agent already continues because a stop hook
	// blocked.
	StopHookActive bool `json:"stop_hook_active"`
	// A session start: startup, resume, clear, compact (or fork).
	Source string `json:"source"`
}

// fields gives DecodeHook the HookInput of an adapter's Input.
func (in *HookInput) fields() *HookInput { return in }

// HookErrors returns a harness's errors for hook input that is not a JSON
// object of the documented shape (malformed), and for input whose
// hook_event_name names another event than the hook was registered for
// (wrongEvent).
func HookErrors(harness string) (malformed, wrongEvent error) {
	return errors.New(harness + ": malformed hook input"), errors.New(harness + ": hook input is for another event")
}

// DecodeHook decodes data into an adapter's Input (a T embedding
// HookInput) and checks it for event (see Check). Every error wraps
// d.Malformed or wrongEvent; the caller answers it in the event's
// fail-closed way.
func DecodeHook[T any, P interface {
	*T
	fields() *HookInput
}](d Decoding, data []byte, event string, toolEvent bool, wrongEvent error) (*T, error) {
	var in T
	if err := d.Decode(data, &in); err != nil {
		return nil, err
	}
	if err := d.Check(P(&in).fields(), event, toolEvent, wrongEvent); err != nil {
		return nil, err
	}
	return &in, nil
}

// Check checks a decoded hook input for event: hook_event_name, when
// present, names event (else an error wrapping wrongEvent); a sane
// session_id always; and for a tool event (toolEvent) a tool_name, a
// tool_use_id and a tool_input object.
func (d Decoding) Check(in *HookInput, event string, toolEvent bool, wrongEvent error) error {
	if err := d.EventName(wrongEvent, in.HookEventName, event); err != nil {
		return err
	}
	if err := d.ID("session_id", in.SessionID); err != nil {
		return err
	}
	if !toolEvent {
		return nil
	}
	if err := d.ToolName(in.ToolName); err != nil {
		return err
	}
	if err := d.ID("tool_use_id", in.ToolUseID); err != nil {
		return err
	}
	if !IsObject(in.ToolInput) {
		return fmt.Errorf("%w: tool_input is not a JSON object", d.Malformed)
	}
	return nil
}

// The events of the hook-output contract, as Claude Code names them; Codex
// registers a subset under the same names.
const (
	SessionStartEvent       = "SessionStart"
	UserPromptSubmitEvent   = "UserPromptSubmit"
	PreToolUseEvent         = "PreToolUse"
	PostToolUseEvent        = "PostToolUse"
	PostToolUseFailureEvent = "PostToolUseFailure"
	StopEvent               = "Stop"
	SubagentStopEvent       = "SubagentStop"
	SessionEndEvent         = "SessionEnd"
)

// HookEvents are the events of the hook-output contract with their
// command-line spelling and how each fails closed: PreToolUse denies;
// UserPromptSubmit and SessionStart keep the prompt and warn the user and
// the model (the next tool call is denied anyway; exit 2 would erase the
// prompt); Stop and SubagentStop let the agent stop with a warning
// (blocking on an error would loop forever); the others warn (the call
// already ran, or the session is over).
var HookEvents = Events{
	{Arg: "session-start", Name: SessionStartEvent, Fail: FailPrompt},
	{Arg: "user-prompt-submit", Name: UserPromptSubmitEvent, Fail: FailPrompt},
	{Arg: "pre-tool-use", Name: PreToolUseEvent, Fail: FailGate},
	{Arg: "post-tool-use", Name: PostToolUseEvent, Fail: FailNotice},
	{Arg: "post-tool-use-failure", Name: PostToolUseFailureEvent, Fail: FailNotice},
	{Arg: "stop", Name: StopEvent, Fail: FailStop},
	{Arg: "subagent-stop", Name: SubagentStopEvent, Fail: FailStop},
	{Arg: "session-end", Name: SessionEndEvent, Fail: FailNotice},
}

// HookEvent is an event of the hook-output contract, named as the harness
// names it in its settings and in the input's hook_event_name.
type HookEvent string

// Arg returns the event's command-line spelling ("pre-tool-use").
func (e HookEvent) Arg() string { return HookEvents.Arg(string(e)) }

// ToolEvent reports whether the event concerns one tool call (a matcher in
// the settings, tool_name in the input).
func (e HookEvent) ToolEvent() bool {
	return e == PreToolUseEvent || e == PostToolUseEvent || e == PostToolUseFailureEvent
}

// StampControl returns the tool input with the session stamped in when
// control is set (the call is one of statewright's control tools), else
// nil. An input that cannot be stamped is an error wrapping malformed:
// the call is denied.
func (in *HookInput) StampControl(control bool, malformed error) (json.RawMessage, error) {
	if !control {
		return nil, nil
	}
	return Stamp(in.ToolInput, in.SessionID, malformed, "tool_input")
}

// ExitCode digs a shell exit status out of a tool_response object, under
// the first of keys it holds as a number.
func ExitCode(resp json.RawMessage, keys ...string) (int, bool) {
	var m map[string]json.RawMessage
	if !IsObject(resp) || json.Unmarshal(resp, &m) != nil {
		return 0, false
	}
	for _, k := range keys {
		var n int
		if raw, ok := m[k]; ok && json.Unmarshal(raw, &n) == nil {
			return n, true
		}
	}
	return 0, false
}

// ToolCall converts a tool event's input into the runtime's view of the
// call, for harness h: the session key "h:session_id", the tool as the
// harness names it, its input, the project directory (the input's cwd
// when empty), the permission mode, and the governed agent as the actor
// (through the hook; a subagent by its id).
func (in *HookInput) ToolCall(h policy.Harness, projectDir string) runtime.ToolCall {
	if projectDir == "" {
		projectDir = in.Cwd
	}
	return runtime.ToolCall{
		Session: string(h) + ":" + in.SessionID,
		Call: policy.ToolCall{Harness: h, Tool: in.ToolName, Input: in.ToolInput, Cwd: in.Cwd,
			ProjectDir: projectDir, ToolUseID: in.ToolUseID},
		Actor:          runtime.Actor{Kind: runtime.ActorAgent, Channel: "hook:" + string(h), Name: in.AgentID},
		PermissionMode: in.PermissionMode,
	}
}

// ToolResult converts a tool result event's input into the runtime's
// record of the call's outcome (exit status and failure left to the
// harness's adapter).
func (in *HookInput) ToolResult(h policy.Harness, projectDir string) runtime.ToolResult {
	tc := in.ToolCall(h, projectDir)
	return runtime.ToolResult{Session: tc.Session, ToolUseID: in.ToolUseID, Call: tc.Call, Output: in.ToolResponse, Actor: tc.Actor}
}
