package wire

import (
	"encoding/json"

	"github.com/statewright-go/statewright/harness"
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
