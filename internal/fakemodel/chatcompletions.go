package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// NewChatCompletions starts a fake OpenAI Chat Completions API server
// replaying script. It serves POST /v1/chat/completions (streamed as
// server-sent "data:" chunks ending in "data: [DONE]" when the request says
// "stream": true, plain JSON otherwise), GET /v1/models[/ID] and HEAD/GET /;
// the same routes without the /v1 prefix are served too, for clients whose
// base URL lacks it. Anything else is answered 404 and recorded as
// [KindUnknown]. It panics if the script is invalid.
//
// Point an OpenAI-compatible client at srv.URL+"/v1" (opencode's
// @ai-sdk/openai-compatible baseURL, Pi's models.json baseUrl).
//
// Chat Completions has no is_error flag on tool results: [ToolResult.IsError]
// is always false for this protocol, so tests assert on the result's text.
func NewChatCompletions(script Script, opts ...Option) *Server {
	return newServer(script, chatCompletions{}, opts)
}

// ChatMain is the default main-conversation test for the Chat Completions
// handler: a request that offers tools. Side calls (opencode's title
// generation, for one) offer none.
func ChatMain(r *Request) bool {
	c, err := r.Chat()
	return err == nil && len(c.Tools) > 0
}

// ChatRequest is the part of a Chat Completions request body tests look at.
type ChatRequest struct {
	Model         string          `json:"model"`
	Stream        bool            `json:"stream"`
	StreamOptions json.RawMessage `json:"stream_options,omitempty"`
	Messages      []ChatMessage   `json:"messages"`
	Tools         []ChatTool      `json:"tools,omitempty"`
	ToolChoice    json.RawMessage `json:"tool_choice,omitempty"`
	MaxTokens     int             `json:"max_tokens,omitempty"`
	// MaxCompletionTokens is the newer spelling of MaxTokens.
	MaxCompletionTokens int `json:"max_completion_tokens,omitempty"`
}

// ChatTool is a tool offered to the model ({"type":"function","function":{…}}).
type ChatTool struct {
	Type     string       `json:"type"`
	Function ChatFunction `json:"function"`
}

// ChatFunction describes an offered function tool.
type ChatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ChatMessage is one message of the conversation: role system, developer,
// user, assistant (possibly with ToolCalls) or tool (with ToolCallID).
type ChatMessage struct {
	Role string `json:"role"`
	// Content is a string, an array of content parts, or null.
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCalls  []ChatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
}

// ChatToolCall is a tool call an assistant message made.
type ChatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
		// Arguments is the call's input, a JSON object encoded as a string.
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Text returns the message's content as text: the string itself, or the
// text of its text parts joined by newlines.
func (m ChatMessage) Text() string {
	raw := m.Content
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return string(raw)
		}
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	var out []string
	for _, p := range parts {
		if p.Type == "text" || p.Type == "input_text" || p.Type == "output_text" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// Chat decodes the request body as a Chat Completions request.
func (r *Request) Chat() (*ChatRequest, error) {
	var c ChatRequest
	if err := json.Unmarshal(r.Body, &c); err != nil {
		return nil, fmt.Errorf("fakemodel: request #%d is not a Chat Completions request: %w", r.Seq, err)
	}
	return &c, nil
}

// HasTool reports whether the request offers a function tool named name.
func (c *ChatRequest) HasTool(name string) bool {
	for _, t := range c.Tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

// ToolNames returns the names of the offered tools, in order.
func (c *ChatRequest) ToolNames() []string {
	var out []string
	for _, t := range c.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// SystemText returns the text of the system and developer messages, joined
// by newlines.
func (c *ChatRequest) SystemText() string {
	var out []string
	for _, m := range c.Messages {
		if m.Role == "system" || m.Role == "developer" {
			out = append(out, m.Text())
		}
	}
	return strings.Join(out, "\n")
}

// ToolResults returns the tool messages of the conversation, in order.
func (c *ChatRequest) ToolResults() []ToolResult {
	var out []ToolResult
	for _, m := range c.Messages {
		if m.Role == "tool" {
			out = append(out, ToolResult{ToolUseID: m.ToolCallID, Content: m.Text()})
		}
	}
	return out
}

// ChatFirstUserContains returns a [Thread] Match that accepts Chat
// Completions requests whose first user message has text containing marker.
func ChatFirstUserContains(marker string) func(*Request) bool {
	return func(r *Request) bool {
		c, err := r.Chat()
		if err != nil {
			return false
		}
		for _, m := range c.Messages {
			if m.Role == "user" {
				return strings.Contains(m.Text(), marker)
			}
		}
		return false
	}
}

// chatCompletions is the OpenAI Chat Completions protocol.
type chatCompletions struct{}

func (chatCompletions) defaultIsMain(r *Request) bool { return ChatMain(r) }

func (chatCompletions) toolResults(r *Request) []ToolResult {
	c, err := r.Chat()
	if err != nil {
		return nil
	}
	return c.ToolResults()
}

func (chatCompletions) serve(s *Server, w http.ResponseWriter, r *http.Request, req *Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	switch {
	case r.Method == http.MethodPost && path == "/chat/completions":
		chatComplete(s, w, req)
	case r.Method == http.MethodGet && path == "/models":
		req.Kind = KindAux
		req.Status = writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{chatModel(fakeChatModelID)}})
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/models/"):
		req.Kind = KindAux
		req.Status = writeJSON(w, http.StatusOK, chatModel(strings.TrimPrefix(path, "/models/")))
	case (r.Method == http.MethodHead || r.Method == http.MethodGet) && (path == "/" || path == ""):
		req.Kind = KindAux
		req.Status = http.StatusOK
		w.WriteHeader(http.StatusOK)
	default:
		req.Kind = KindUnknown
		req.Status = writeJSON(w, http.StatusNotFound, chatError("not_found_error",
			fmt.Sprintf("fakemodel: no route for %s %s", r.Method, r.URL.Path)))
	}
}

// fakeChatModelID is the model /v1/models lists.
const fakeChatModelID = "fake-model"

func chatModel(id string) map[string]any {
	return map[string]any{"id": id, "object": "model", "created": 1735689600, "owned_by": "fakemodel"}
}

func chatError(typ, msg string) map[string]any {
	return map[string]any{"error": map[string]any{"type": typ, "message": msg, "code": nil, "param": nil}}
}

func chatComplete(s *Server, w http.ResponseWriter, req *Request) {
	c, err := req.Chat()
	if err != nil {
		req.Kind = KindUnknown
		req.Status = writeJSON(w, http.StatusBadRequest, chatError("invalid_request_error", err.Error()))
		return
	}
	req.Stream = c.Stream
	model := c.Model
	if model == "" {
		model = fakeChatModelID
	}
	r := s.respond(req)
	id := fmt.Sprintf("chatcmpl-fake-%d", s.msgSeq.Add(1))
	usage := chatUsage(r, len(req.Body)/4)
	if c.Stream {
		req.Status = streamChat(w, r, id, model, usage, chatIncludeUsage(c.StreamOptions))
		return
	}
	msg := map[string]any{"role": "assistant", "content": nil}
	if r.Text != "" || len(r.Calls) == 0 {
		msg["content"] = r.Text
	}
	if len(r.Calls) > 0 {
		msg["tool_calls"] = chatCalls(r.Calls)
	}
	req.Status = writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": "chat.completion", "created": 1735689600, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": chatFinish(r), "logprobs": nil}},
		"usage":   usage,
	})
}

func chatCalls(calls []call) []any {
	var out []any
	for _, c := range calls {
		out = append(out, map[string]any{"id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(c.Input)}})
	}
	return out
}

func chatFinish(r reply) string {
	if len(r.Calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func chatUsage(r reply, prompt int) map[string]int {
	out := len(r.Text)/4 + 1
	for _, c := range r.Calls {
		out += len(c.Input)/4 + 1
	}
	return map[string]int{"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}
}

func chatIncludeUsage(raw json.RawMessage) bool {
	var o struct {
		IncludeUsage bool `json:"include_usage"`
	}
	return json.Unmarshal(raw, &o) == nil && o.IncludeUsage
}

// streamChat writes r as Chat Completions chunks: a role chunk, text
// deltas, per tool call a chunk with its id and name then argument
// fragments, a finish chunk, a usage chunk if asked for, and [DONE].
func streamChat(w http.ResponseWriter, r reply, id, model string, usage map[string]int, includeUsage bool) int {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	write := func(s string) {
		fmt.Fprintf(w, "data: %s\n\n", s)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send := func(delta map[string]any, finish any, extra map[string]any) {
		chunk := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1735689600, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
		for k, v := range extra {
			chunk[k] = v
		}
		b, _ := json.Marshal(chunk)
		write(string(b))
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	for _, piece := range chunks(r.Text, 16) {
		send(map[string]any{"content": piece}, nil, nil)
	}
	for i, c := range r.Calls {
		send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil, nil)
		for _, piece := range chunks(string(c.Input), 32) {
			send(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": piece}}}}, nil, nil)
		}
	}
	if includeUsage {
		send(map[string]any{}, chatFinish(r), nil)
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1735689600,
			"model": model, "choices": []any{}, "usage": usage})
		write(string(b))
	} else {
		send(map[string]any{}, chatFinish(r), map[string]any{"usage": usage})
	}
	write("[DONE]")
	return http.StatusOK
}
