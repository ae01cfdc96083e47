package claudecode

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// Exit codes Claude Code gives meaning to.
const (
	// ExitOK: stdout is parsed as JSON (or, for SessionStart and
	// UserPromptSubmit, plain text is added as context).
	ExitOK = 0
	// ExitBlock: a blocking error; stderr is fed to Claude and stdout is
	// ignored. PreToolUse: the call is blocked. UserPromptSubmit: the
	// prompt is erased. Stop: Claude keeps going. Any other non-zero code
	// is a non-blocking error: the harness fails open.
	ExitBlock = 2
)

// Answer is what a hook process does: write Stdout and Stderr, exit with
// Exit.
type Answer struct {
	Exit   int
	Stdout []byte
	Stderr string
}

// Write writes the answer's output and returns its exit code.
func (a Answer) Write(stdout, stderr io.Writer) int {
	if len(a.Stdout) > 0 {
		stdout.Write(a.Stdout)
	}
	if a.Stderr != "" {
		io.WriteString(stderr, a.Stderr)
	}
	return a.Exit
}

// hookSpecific is hookSpecificOutput. Field order is the encoding order.
type hookSpecific struct {
	HookEventName            Event           `json:"hookEventName"`
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

// encode renders o as one line of JSON (HTML characters unescaped, so deny
// reasons stay readable in transcripts).
func encode(o output) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		// Only an invalid updatedInput can fail; callers pass valid JSON.
		panic("claudecode: encode answer: " + err.Error())
	}
	return b.Bytes()
}

// line ends s with exactly one newline.
func line(s string) string { return strings.TrimRight(s, "\n") + "\n" }

// Pass lets the call or event through without an opinion: exit 0, no
// output. For PreToolUse it leaves the decision to Claude Code's own
// permission rules and mode, so statewright never loosens them.
func Pass() Answer { return Answer{Exit: ExitOK} }

// AllowWithInput allows a PreToolUse call with a replaced tool input (the
// session stamp on statewright's control tools). updatedInput is honoured
// only with an allow or ask decision.
func AllowWithInput(updatedInput json.RawMessage, reason string) Answer {
	return Answer{Exit: ExitOK, Stdout: encode(output{HookSpecificOutput: &hookSpecific{
		HookEventName: PreToolUse, PermissionDecision: "allow", PermissionDecisionReason: reason, UpdatedInput: updatedInput}})}
}

// Deny blocks a PreToolUse call: exit code 2 with the reason on stderr,
// which Claude Code feeds to the model as the tool's error result. Exit 2
// blocks even if stdout were lost or misparsed, which is why it is used
// rather than the JSON form.
func Deny(reason string) Answer {
	return Answer{Exit: ExitBlock, Stderr: line(reason)}
}

// Ask makes Claude Code ask its user (only sound in the default permission
// mode; see AskGrants). updatedInput may be nil.
func Ask(reason string, updatedInput json.RawMessage) Answer {
	return Answer{Exit: ExitOK, Stdout: encode(output{HookSpecificOutput: &hookSpecific{
		HookEventName: PreToolUse, PermissionDecision: "ask", PermissionDecisionReason: reason, UpdatedInput: updatedInput}})}
}

// Context adds text to the model's context (SessionStart,
// UserPromptSubmit, PostToolUse, PostToolUseFailure). Empty text passes.
func Context(event Event, text string) Answer {
	if text == "" {
		return Pass()
	}
	return Answer{Exit: ExitOK, Stdout: encode(output{HookSpecificOutput: &hookSpecific{
		HookEventName: event, AdditionalContext: text}})}
}

// BlockStop keeps Claude working instead of stopping (Stop, SubagentStop):
// the reason is fed to the model.
func BlockStop(reason string) Answer {
	return Answer{Exit: ExitOK, Stdout: encode(output{Decision: "block", Reason: reason})}
}

// Notice lets the event through and shows msg to the user (systemMessage).
func Notice(msg string) Answer {
	return Answer{Exit: ExitOK, Stdout: encode(output{SystemMessage: msg})}
}

// Failure is the answer when the hook cannot do its job for event (bad
// input, an unreadable or foreign store, a deadline), per DESIGN.md's fail
// closed rules:
//
//   - PreToolUse: deny, with why.
//   - UserPromptSubmit: keep the prompt, warn the user and the model (the
//     next tool call is denied anyway). Exit 2 would erase the prompt.
//   - SessionStart: warn the user and the model.
//   - Stop, SubagentStop: let the agent stop, with a warning. Blocking on
//     an error would loop forever.
//   - PostToolUse, PostToolUseFailure, SessionEnd: the call already ran or
//     the session is over; warn the user.
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
	case Stop, SubagentStop:
		return Notice(msg + "; letting the agent stop (run `statewright doctor`)")
	default:
		return Notice(msg + " (run `statewright doctor`)")
	}
}
