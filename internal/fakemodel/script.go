// Package fakemodel provides scripted fake model servers for offline
// end-to-end tests of coding-agent harnesses (Claude Code, and later Codex,
// opencode and Pi).
//
// A server replays a [Script]: a list of [Turn]s, each the answer the model
// gives to the next request that carries the main conversation, and
// optionally [Thread]s, other conversations (subagents) with turns of their
// own. Requests of no scripted conversation (title generation, topic
// detection, quota probes and other side calls a harness makes) get a fixed
// short text and do not consume a turn.
// Every request is recorded, so a test can assert what the model was told:
// the tool_result of a denied call, its is_error flag, the tools offered.
//
// The script and the recording are wire-neutral; each wire protocol is a
// handler in this package. [NewAnthropic] serves the Anthropic Messages API;
// OpenAI Responses, Chat Completions and Ollama handlers fit beside it.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Script is what a fake model server replays.
type Script struct {
	// Turns are answered in order, one per main-conversation request.
	Turns []Turn

	// IsMain decides whether a request (that no thread claimed) carries the
	// main conversation and so consumes the next turn. Nil means the
	// protocol's default; for the Anthropic handler that is
	// [AnthropicMain] (the request offers tools).
	IsMain func(*Request) bool

	// SideText answers every model request of no scripted conversation.
	// Empty means "OK".
	SideText string

	// ExhaustedText answers main and thread requests that arrive after the
	// last turn of their conversation (with stop reason end_turn, so the
	// harness stops). Empty means "fakemodel: script exhausted". Such
	// requests are recorded with Turn == -1 and counted by
	// [Server.Overruns].
	ExhaustedText string

	// Respond, when set, computes each main-conversation turn from the
	// request instead of replaying Turns: a reactive policy that answers
	// what the harness told it (see reactive.go). Turns is then unused.
	Respond func(*Request) Turn

	// Threads are other conversations the harness holds with the model at
	// the same time, such as subagents (Claude Code runs them in the
	// background by default, so their requests interleave with the main
	// conversation's). A request that a thread's Match accepts is answered
	// from that thread's turns; threads are tried in order, before IsMain.
	Threads []Thread
}

// Thread is a conversation other than the main one, with its own turns.
type Thread struct {
	// Name identifies the thread: it is recorded in [Request.Thread] and
	// makes its default tool-use ids ("toolu_<name>_T_I"). It must be a
	// non-empty identifier other than "fake".
	Name string
	// Match reports whether a request belongs to this thread, e.g.
	// [AnthropicFirstUserContains] with a marker from the subagent's prompt.
	Match func(*Request) bool
	// Turns are answered in order, one per request of the thread.
	Turns []Turn
}

// Turn is one scripted model answer: optional text followed by zero or more
// tool calls. Several tool calls in one turn are parallel tool calls. A turn
// with tool calls ends with stop reason tool_use, otherwise end_turn.
type Turn struct {
	Text     string
	ToolUses []ToolUse
}

// ToolUse is one tool call the model makes.
type ToolUse struct {
	// ID is the tool-use id. Empty means a deterministic id derived from the
	// turn and position ("toolu_fake_T_I"), which [Server.ToolUseID] reports.
	ID string
	// Name is the tool name as the harness knows it ("Write", "Bash",
	// "mcp__statewright__transition").
	Name string
	// Input is the tool input; it must marshal to a JSON object.
	Input any
}

// Say returns a turn that only answers with text (end_turn).
func Say(text string) Turn { return Turn{Text: text} }

// Call returns a turn that makes the given tool calls in parallel.
func Call(uses ...ToolUse) Turn { return Turn{ToolUses: uses} }

// Tool returns a tool call of name with input.
func Tool(name string, input any) ToolUse { return ToolUse{Name: name, Input: input} }

// inputJSON marshals the tool input to a JSON object.
func (u ToolUse) inputJSON() (json.RawMessage, error) {
	var raw json.RawMessage
	switch in := u.Input.(type) {
	case nil:
		raw = json.RawMessage(`{}`)
	case json.RawMessage:
		raw = in
	case []byte:
		raw = json.RawMessage(in)
	case string:
		raw = json.RawMessage(in)
	default:
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("fakemodel: tool %s input: %w", u.Name, err)
		}
		raw = b
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("fakemodel: tool %s input is not a JSON object: %s", u.Name, raw)
	}
	return raw, nil
}

// mainThread names the main conversation in default tool-use ids.
const mainThread = "fake"

// toolUseID returns the id the server sends for tool call i of turn t of
// the named conversation.
func (u ToolUse) toolUseID(thread string, t, i int) string {
	if u.ID != "" {
		return u.ID
	}
	return fmt.Sprintf("toolu_%s_%d_%d", thread, t, i)
}

// validate checks every tool input once, when the server is made, so a bad
// script fails the test at once instead of confusing the harness.
func (s *Script) validate() error {
	if err := validateTurns("main", s.Turns); err != nil {
		return err
	}
	seen := map[string]bool{mainThread: true}
	for _, th := range s.Threads {
		if th.Name == "" || seen[th.Name] || strings.ContainsAny(th.Name, " \t\n") {
			return fmt.Errorf("fakemodel: thread name %q is empty, reserved, repeated or has spaces", th.Name)
		}
		seen[th.Name] = true
		if th.Match == nil {
			return fmt.Errorf("fakemodel: thread %s has no Match", th.Name)
		}
		if err := validateTurns("thread "+th.Name, th.Turns); err != nil {
			return err
		}
	}
	return nil
}

func validateTurns(what string, turns []Turn) error {
	for t, turn := range turns {
		for _, u := range turn.ToolUses {
			if u.Name == "" {
				return fmt.Errorf("fakemodel: %s turn %d: tool call without a name", what, t)
			}
			if _, err := u.inputJSON(); err != nil {
				return fmt.Errorf("fakemodel: %s turn %d: %w", what, t, err)
			}
		}
	}
	return nil
}
