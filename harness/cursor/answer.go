package cursor

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/statewright-go/statewright/harness/claudecode"
)

// Exit codes Cursor documents.
const (
	// ExitOK: stdout is the event's JSON answer.
	ExitOK = 0
	// ExitBlock: the action is denied. Any other failure (a crash, a
	// timeout) blocks only where hooks.json sets "failClosed": true, which
	// `statewright init cursor` does for every gate.
	ExitBlock = 2
)

// Answer is what a hook process does: write Stdout and Stderr, exit with
// Exit (the same shape as Claude Code's).
type Answer = claudecode.Answer

// output is the JSON a Cursor hook prints.
type output struct {
	Permission      string `json:"permission,omitempty"`
	UserMessage     string `json:"user_message,omitempty"`
	AgentMessage    string `json:"agent_message,omitempty"`
	FollowupMessage string `json:"followup_message,omitempty"`
}

func encode(o output) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		panic("cursor: encode answer: " + err.Error())
	}
	return b.Bytes()
}

func line(s string) string { return strings.TrimRight(s, "\n") + "\n" }

// Allow lets a gated action through: {"permission":"allow"}, exit 0.
func Allow() Answer { return Answer{Exit: ExitOK, Stdout: encode(output{Permission: "allow"})} }

// Deny blocks a gated action with exit 2 and {"permission":"deny"}: the
// reason goes to the user (user_message), to the agent (agent_message) and
// to stderr. beforeReadFile documents only "permission", so it gets no
// messages in its JSON.
func Deny(event Event, reason string) Answer {
	o := output{Permission: "deny", UserMessage: reason, AgentMessage: reason}
	if event == BeforeReadFile {
		o.UserMessage, o.AgentMessage = "", ""
	}
	return Answer{Exit: ExitBlock, Stdout: encode(o), Stderr: line(reason)}
}

// Ask makes Cursor ask its user: {"permission":"ask"} with the reason,
// exit 0.
func Ask(reason string) Answer {
	return Answer{Exit: ExitOK, Stdout: encode(output{Permission: "ask", UserMessage: reason, AgentMessage: reason})}
}

// Followup keeps the agent going after it stopped: stop's
// {"followup_message"}.
func Followup(msg string) Answer {
	return Answer{Exit: ExitOK, Stdout: encode(output{FollowupMessage: msg})}
}

// Empty answers an event that decides nothing ({}), exit 0.
func Empty() Answer { return Answer{Exit: ExitOK, Stdout: []byte("{}\n")} }

// Failure is the answer when the hook cannot do its job: the gates deny
// (exit 2, fail closed); afterFileEdit (the edit happened) and stop (a
// follow-up on an error would loop) answer {} with the error on stderr.
func Failure(event Event, msg string) Answer {
	msg = "statewright: " + strings.TrimPrefix(msg, "statewright: ")
	if event.Gate() || event == "" {
		return Deny(event, msg+"; the call is denied (statewright fails closed). A person must fix this; run `statewright doctor`.")
	}
	a := Empty()
	a.Stderr = line(msg + " (run `statewright doctor`)")
	return a
}
