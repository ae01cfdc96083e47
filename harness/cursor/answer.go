package cursor

import (
	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/internal/wire"
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

// output is the JSON a Cursor hook prints.
type output struct {
	Permission      string `json:"permission,omitempty"`
	UserMessage     string `json:"user_message,omitempty"`
	AgentMessage    string `json:"agent_message,omitempty"`
	FollowupMessage string `json:"followup_message,omitempty"`
}

// Allow lets a gated action through: {"permission":"allow"}, exit 0.
func Allow() harness.Answer {
	return harness.Answer{Exit: ExitOK, Stdout: wire.Encode(output{Permission: "allow"})}
}

// Deny blocks a gated action with exit 2 and {"permission":"deny"}: the
// reason goes to the user (user_message), to the agent (agent_message) and
// to stderr. beforeReadFile documents only "permission", so it gets no
// messages in its JSON.
func Deny(event Event, reason string) harness.Answer {
	o := output{Permission: "deny", UserMessage: reason, AgentMessage: reason}
	if event == BeforeReadFile {
		o.UserMessage, o.AgentMessage = "", ""
	}
	return harness.Answer{Exit: ExitBlock, Stdout: wire.Encode(o), Stderr: wire.Line(reason)}
}

// Ask makes Cursor ask its user: {"permission":"ask"} with the reason,
// exit 0.
func Ask(reason string) harness.Answer {
	return harness.Answer{Exit: ExitOK, Stdout: wire.Encode(output{Permission: "ask", UserMessage: reason, AgentMessage: reason})}
}

// Followup keeps the agent going after it stopped: stop's
// {"followup_message"}.
func Followup(msg string) harness.Answer {
	return harness.Answer{Exit: ExitOK, Stdout: wire.Encode(output{FollowupMessage: msg})}
}

// Empty answers an event that decides nothing ({}), exit 0.
func Empty() harness.Answer { return harness.Answer{Exit: ExitOK, Stdout: []byte("{}\n")} }

// Failure is the answer when the hook cannot do its job: the gates (and
// an unknown event) deny (exit 2, fail closed); afterFileEdit (the edit
// happened) and stop (a follow-up on an error would loop) answer {} with
// the error on stderr.
func Failure(event Event, msg string) harness.Answer {
	msg = wire.Prefixed(msg)
	if event == AfterFileEdit || event == Stop {
		a := Empty()
		a.Stderr = wire.Line(msg + " (run `statewright doctor`)")
		return a
	}
	return Deny(event, msg+wire.FailClosed)
}
