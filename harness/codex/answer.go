package codex

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/statewright-go/statewright/harness/claudecode"
)

// Exit codes Codex gives meaning to.
const (
	// ExitOK: stdout, when not empty, is parsed as the event's JSON output.
	ExitOK = 0
	// ExitBlock: PreToolUse: the call is blocked and stderr is the reason
	// fed to the model. Any other non-zero code is a hook failure, after
	// which Codex lets the call run (it fails open).
	ExitBlock = 2
)

// Answer is what a hook process does: write Stdout and Stderr, exit with
// Exit. It is the same shape as Claude Code's.
type Answer = claudecode.Answer

// hookSpecific is hookSpecificOutput. Codex refuses unknown fields and some
// combinations (updatedInput without an allow; an allow without
// updatedInput; an ask), so only the fields set here are ever sent.
type hookSpecific struct {
	HookEventName      Event           `json:"hookEventName"`
	PermissionDecision string          `json:"permissionDecision,omitempty"`
	UpdatedInput       json.RawMessage `json:"updatedInput,omitempty"`
	AdditionalContext  string          `json:"additionalContext,omitempty"`
}

type output struct {
	Decision           string        `json:"decision,omitempty"`
	Reason             string        `json:"reason,omitempty"`
	SystemMessage      string        `json:"systemMessage,omitempty"`
	HookSpecificOutput *hookSpecific `json:"hookSpecificOutput,omitempty"`
}

func encode(o output) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		panic("codex: encode answer: " + err.Error())
	}
	return b.Bytes()
}

func line(s string) string { return strings.TrimRight(s, "\n") + "\n" }

// Pass lets the call or event through without an opinion: exit 0, no
// output. For PreToolUse this is the only "allow" Codex knows: the call
// goes on to Codex's own sandbox and approval policy, which statewright
// never loosens.
func Pass() Answer { return Answer{Exit: ExitOK} }

// Deny blocks a PreToolUse call: exit 2 with the reason on stderr, which
// Codex gives the model as the call's output ("Command blocked by
// PreToolUse hook: …"). Exit 2 blocks even if stdout were lost.
func Deny(reason string) Answer { return Answer{Exit: ExitBlock, Stderr: line(reason)} }

// AllowWithInput lets a PreToolUse call of statewright's MCP control tools
// through with its arguments replaced by updatedInput (the session stamp).
// It is the one allow statewright sends Codex: Codex refuses an allow that
// carries no updatedInput.
func AllowWithInput(updatedInput json.RawMessage) Answer {
	return Answer{Exit: ExitOK, Stdout: encode(output{HookSpecificOutput: &hookSpecific{
		HookEventName: PreToolUse, PermissionDecision: "allow", UpdatedInput: updatedInput}})}
}

// Context adds text to the model's context (SessionStart,
// UserPromptSubmit, PostToolUse). Empty text passes.
func Context(event Event, text string) Answer {
	if text == "" {
		return Pass()
	}
	return Answer{Exit: ExitOK, Stdout: encode(output{HookSpecificOutput: &hookSpecific{
		HookEventName: event, AdditionalContext: text}})}
}

// BlockStop keeps Codex working instead of ending the turn; the reason is
// fed to the model.
func BlockStop(reason string) Answer {
	return Answer{Exit: ExitOK, Stdout: encode(output{Decision: "block", Reason: reason})}
}

// Notice lets the event through and shows msg to the user.
func Notice(msg string) Answer {
	return Answer{Exit: ExitOK, Stdout: encode(output{SystemMessage: msg})}
}

// Failure is the answer when the hook cannot do its job for event (bad
// input, an unreadable or foreign store, a deadline), per DESIGN.md's
// fail-closed rules: PreToolUse denies; UserPromptSubmit and SessionStart
// keep the prompt and warn the user and the model (the next tool call is
// denied anyway); Stop lets the agent stop with a warning (blocking on an
// error would loop); PostToolUse warns (the call already ran).
func Failure(event Event, msg string) Answer {
	msg = "statewright: " + strings.TrimPrefix(msg, "statewright: ")
	switch event {
	case PreToolUse:
		return Deny(msg + "; the call is denied (statewright fails closed). A person must fix this; run `statewright doctor`.")
	case UserPromptSubmit, SessionStart:
		return Answer{Exit: ExitOK, Stdout: encode(output{
			SystemMessage: msg + " (run `statewright doctor`)",
			HookSpecificOutput: &hookSpecific{HookEventName: event,
				AdditionalContext: msg + ". Until a person fixes this, statewright denies every tool call."}})}
	case Stop:
		return Notice(msg + "; letting the agent stop (run `statewright doctor`)")
	default:
		return Notice(msg + " (run `statewright doctor`)")
	}
}
