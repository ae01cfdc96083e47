package fakemodel

import (
	"encoding/json"
	"fmt"
)

// Reactive policies: instead of replaying a fixed list of turns, a server
// whose [Script.Respond] is set computes each main-conversation turn from
// the request — the conversation so far, including what the harness said
// about earlier tool calls. The same policy then behaves differently under
// different harness answers (a deny, a refused transition, a nudge),
// which is what a comparison of guarded and unguarded runs needs.

// respondDynamic answers a main-conversation request with Script.Respond.
func (s *Server) respondDynamic(req *Request) reply {
	s.mu.Lock()
	index := s.next[""]
	s.next[""]++
	s.mu.Unlock()
	req.Turn = index
	turn := s.script.Respond(req)
	r := reply{Text: turn.Text}
	for i, u := range turn.ToolUses {
		in, err := u.inputJSON()
		if err != nil {
			s.log("fakemodel: reactive turn %d: %v", index, err)
			in = json.RawMessage(`{}`)
		}
		r.Calls = append(r.Calls, call{ID: u.toolUseID(mainThread, index, i), Name: u.Name, Input: in})
	}
	return r
}

// Conversation is a wire-neutral view of a Chat Completions or Ollama
// /api/chat request: the offered tools and the messages, with each tool
// result paired to the call it answers.
type Conversation struct {
	Tools    []string
	Messages []ConvMessage
}

// ConvMessage is one message of a Conversation.
type ConvMessage struct {
	Role string
	Text string
	// Calls are an assistant message's tool calls.
	Calls []ConvCall
	// CallID is the id of the call a tool message answers (paired by
	// position when the wire format has no ids, as Ollama's).
	CallID string
}

// ConvCall is one tool call of an assistant message.
type ConvCall struct {
	ID    string
	Name  string
	Input map[string]any
}

// Conversation decodes the request body as a Chat Completions or Ollama
// chat request.
func (r *Request) Conversation() (*Conversation, error) {
	var body struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		return nil, fmt.Errorf("fakemodel: request #%d is not a chat request: %w", r.Seq, err)
	}
	c := &Conversation{}
	for _, t := range body.Tools {
		c.Tools = append(c.Tools, t.Function.Name)
	}
	var pending []string // ids of the last assistant message's calls not yet answered
	for _, m := range body.Messages {
		cm := ConvMessage{Role: m.Role, Text: ChatMessage{Content: m.Content}.Text(), CallID: m.ToolCallID}
		for i, tc := range m.ToolCalls {
			id := tc.ID
			if id == "" {
				id = fmt.Sprintf("pos_%d_%d", len(c.Messages), i)
			}
			in := map[string]any{}
			args := tc.Function.Arguments
			var s string
			if json.Unmarshal(args, &s) == nil {
				args = json.RawMessage(s)
			}
			_ = json.Unmarshal(args, &in)
			cm.Calls = append(cm.Calls, ConvCall{ID: id, Name: tc.Function.Name, Input: in})
		}
		switch m.Role {
		case "assistant":
			pending = pending[:0]
			for _, cc := range cm.Calls {
				pending = append(pending, cc.ID)
			}
		case "tool":
			if cm.CallID == "" && len(pending) > 0 {
				cm.CallID = pending[0]
			}
			for i, id := range pending {
				if id == cm.CallID {
					pending = append(pending[:i:i], pending[i+1:]...)
					break
				}
			}
		}
		c.Messages = append(c.Messages, cm)
	}
	return c, nil
}

// Step is a tool call paired with the text of its result ("" when
// unanswered) and the index of the assistant message that made it.
type Step struct {
	ConvCall
	Result string
	At     int
}

// Steps returns every tool call of the conversation, in order, with its result.
func (c *Conversation) Steps() []Step {
	var out []Step
	index := map[string]int{}
	for i, m := range c.Messages {
		switch m.Role {
		case "assistant":
			for _, cc := range m.Calls {
				index[cc.ID] = len(out)
				out = append(out, Step{ConvCall: cc, At: i})
			}
		case "tool":
			if j, ok := index[m.CallID]; ok {
				out[j].Result = m.Text
			}
		}
	}
	return out
}

// FirstUser returns the text of the first user message.
func (c *Conversation) FirstUser() string {
	for _, m := range c.Messages {
		if m.Role == "user" {
			return m.Text
		}
	}
	return ""
}

// HasTool reports whether the request offers the tool.
func (c *Conversation) HasTool(name string) bool {
	for _, t := range c.Tools {
		if t == name {
			return true
		}
	}
	return false
}
