package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// NewAnthropic starts a fake Anthropic Messages API server replaying script.
// It serves POST /v1/messages (streamed as server-sent events when the
// request says "stream": true, plain JSON otherwise), POST
// /v1/messages/count_tokens, GET /v1/models[/ID] and HEAD/GET / and
// /api/hello; anything else is answered 404 and recorded as [KindUnknown].
// It panics if the script is invalid (a tool input that is not a JSON
// object, a tool call without a name, a thread without a name or Match).
// Point Claude Code at it with ANTHROPIC_BASE_URL=srv.URL.
func NewAnthropic(script Script, opts ...Option) *Server {
	return newServer(script, anthropic{}, opts)
}

// AnthropicMain is the default main-conversation test for the Anthropic
// handler: a Messages request that offers tools. Claude Code's side calls
// (title and topic generation, quota probes) offer none.
func AnthropicMain(r *Request) bool {
	a, err := r.Anthropic()
	return err == nil && len(a.Tools) > 0
}

// AnthropicRequest is the part of a Messages API request body tests look at.
type AnthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	Stream    bool               `json:"stream"`
	System    json.RawMessage    `json:"system,omitempty"`
	Messages  []AnthropicMessage `json:"messages"`
	Tools     []AnthropicTool    `json:"tools,omitempty"`
	Metadata  json.RawMessage    `json:"metadata,omitempty"`
}

// AnthropicTool is a tool offered to the model.
type AnthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// AnthropicMessage is one message of the conversation. String content is
// read as a single text block.
type AnthropicMessage struct {
	Role    string         `json:"role"`
	Content []ContentBlock `json:"content"`
}

// UnmarshalJSON accepts content as a string or an array of blocks.
func (m *AnthropicMessage) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	blocks, err := decodeBlocks(raw.Content)
	m.Content = blocks
	return err
}

// ContentBlock is one block of message content: text, tool_use, tool_result,
// image, thinking, and so on. Fields not used by a type are empty.
type ContentBlock struct {
	Type string `json:"type"`
	// Text is set for text blocks.
	Text string `json:"text,omitempty"`
	// ID, Name and Input are set for tool_use blocks.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, Content and IsError are set for tool_result blocks;
	// Content is a string or an array of blocks.
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// ResultText returns a tool_result block's content as text: the string
// itself, or its text blocks joined by newlines.
func (b ContentBlock) ResultText() string {
	blocks, err := decodeBlocks(b.Content)
	if err != nil {
		return string(b.Content)
	}
	var parts []string
	for _, c := range blocks {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func decodeBlocks(raw json.RawMessage) ([]ContentBlock, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []ContentBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []ContentBlock
	err := json.Unmarshal(raw, &blocks)
	return blocks, err
}

// SystemText returns the system prompt as text (a string, or the text of its
// blocks joined by newlines).
func (a *AnthropicRequest) SystemText() string {
	blocks, err := decodeBlocks(a.System)
	if err != nil {
		return string(a.System)
	}
	var parts []string
	for _, c := range blocks {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// AnthropicFirstUserContains returns a [Thread] Match that accepts Messages
// requests whose first user message has text containing marker. A Claude
// Code subagent's conversation starts with the Agent tool's prompt, so a
// marker in that prompt picks out the subagent's requests (the parent's own
// first message is the user's prompt).
func AnthropicFirstUserContains(marker string) func(*Request) bool {
	return func(r *Request) bool {
		a, err := r.Anthropic()
		if err != nil {
			return false
		}
		for _, m := range a.Messages {
			if m.Role != "user" {
				continue
			}
			for _, b := range m.Content {
				if b.Type == "text" && strings.Contains(b.Text, marker) {
					return true
				}
			}
			return false
		}
		return false
	}
}

// HasTool reports whether the request offers a tool named name.
func (a *AnthropicRequest) HasTool(name string) bool {
	for _, t := range a.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// SessionID returns the harness session id Claude Code puts in
// metadata.user_id (a JSON object with "session_id" in current versions,
// "…_session_<id>" in older ones), or "".
func (a *AnthropicRequest) SessionID() string {
	var md struct {
		UserID string `json:"user_id"`
	}
	if json.Unmarshal(a.Metadata, &md) != nil || md.UserID == "" {
		return ""
	}
	var obj struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal([]byte(md.UserID), &obj) == nil {
		return obj.SessionID
	}
	if _, id, ok := strings.Cut(md.UserID, "_session_"); ok {
		return id
	}
	return ""
}

// Anthropic decodes the request body as a Messages API request.
func (r *Request) Anthropic() (*AnthropicRequest, error) {
	var a AnthropicRequest
	if err := json.Unmarshal(r.Body, &a); err != nil {
		return nil, fmt.Errorf("fakemodel: request #%d is not a Messages request: %w", r.Seq, err)
	}
	return &a, nil
}

// anthropic is the Anthropic Messages API protocol.
type anthropic struct{}

func (anthropic) defaultIsMain(r *Request) bool { return AnthropicMain(r) }

func (anthropic) toolResults(r *Request) []ToolResult {
	a, err := r.Anthropic()
	if err != nil {
		return nil
	}
	var out []ToolResult
	for _, m := range a.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				out = append(out, ToolResult{ToolUseID: b.ToolUseID, Content: b.ResultText(), IsError: b.IsError})
			}
		}
	}
	return out
}

func (anthropic) serve(s *Server, w http.ResponseWriter, r *http.Request, req *Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		anthropicMessages(s, w, req)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		// A rough count, as a tokenizer would give: a quarter of the bytes.
		req.Kind = KindAux
		req.Status = writeJSON(w, http.StatusOK, map[string]any{"input_tokens": len(req.Body) / 4})
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		req.Kind = KindAux
		req.Status = writeJSON(w, http.StatusOK, map[string]any{
			"data":     []any{anthropicModel(fakeModelID)},
			"has_more": false, "first_id": fakeModelID, "last_id": fakeModelID,
		})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/models/"):
		req.Kind = KindAux
		req.Status = writeJSON(w, http.StatusOK, anthropicModel(strings.TrimPrefix(r.URL.Path, "/v1/models/")))
	case (r.Method == http.MethodHead || r.Method == http.MethodGet) && (r.URL.Path == "/" || r.URL.Path == "/api/hello"):
		// Claude Code probes HEAD /api/hello at startup.
		req.Kind = KindAux
		req.Status = http.StatusOK
		w.WriteHeader(http.StatusOK)
	default:
		req.Kind = KindUnknown
		req.Status = writeJSON(w, http.StatusNotFound, anthropicError("not_found_error",
			fmt.Sprintf("fakemodel: no route for %s %s", r.Method, r.URL.Path)))
	}
}

const fakeModelID = "claude-fake"

func anthropicModel(id string) map[string]any {
	return map[string]any{"type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z"}
}

func anthropicError(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

func anthropicMessages(s *Server, w http.ResponseWriter, req *Request) {
	a, err := req.Anthropic()
	if err != nil {
		req.Kind = KindUnknown
		req.Status = writeJSON(w, http.StatusBadRequest, anthropicError("invalid_request_error", err.Error()))
		return
	}
	req.Stream = a.Stream
	model := a.Model
	if model == "" {
		model = fakeModelID
	}
	r := s.respond(req)
	msg := anthropicAnswer(r, fmt.Sprintf("msg_fake_%d", s.msgSeq.Add(1)), model, len(req.Body)/4)
	if a.Stream {
		req.Status = streamAnthropic(w, msg)
		return
	}
	req.Status = writeJSON(w, http.StatusOK, msg)
}

// anthropicMsg is a Messages API response.
type anthropicMsg struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []map[string]any `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        map[string]int   `json:"usage"`
}

func anthropicAnswer(r reply, id, model string, inputTokens int) anthropicMsg {
	stop := "end_turn"
	content := []map[string]any{}
	out := 0
	if r.Text != "" || len(r.Calls) == 0 {
		content = append(content, map[string]any{"type": "text", "text": r.Text})
		out += len(r.Text)/4 + 1
	}
	for _, c := range r.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": c.Input})
		out += len(c.Input)/4 + 1
		stop = "tool_use"
	}
	return anthropicMsg{
		ID: id, Type: "message", Role: "assistant", Model: model,
		Content: content, StopReason: &stop,
		Usage: map[string]int{"input_tokens": inputTokens, "output_tokens": out,
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}
}

// streamAnthropic writes msg as the Messages API's server-sent events.
func streamAnthropic(w http.ResponseWriter, msg anthropicMsg) int {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	start := msg
	start.Content = []map[string]any{}
	start.StopReason = nil
	start.Usage = map[string]int{"input_tokens": msg.Usage["input_tokens"], "output_tokens": 1,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	send("message_start", map[string]any{"type": "message_start", "message": start})
	send("ping", map[string]any{"type": "ping"})
	for i, block := range msg.Content {
		switch block["type"] {
		case "text":
			text, _ := block["text"].(string)
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			for _, chunk := range chunks(text, 16) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": chunk}})
			}
		case "tool_use":
			in := string(block["input"].(json.RawMessage))
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
			for _, chunk := range chunks(in, 32) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": chunk}})
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": *msg.StopReason, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": msg.Usage["output_tokens"]}})
	send("message_stop", map[string]any{"type": "message_stop"})
	return http.StatusOK
}

// chunks splits s into pieces of at most n bytes, never inside a UTF-8
// sequence; an empty s gives no pieces.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && end > 0 && !utf8Start(s[end]) {
			end--
		}
		if end == 0 {
			end = min(n, len(s))
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func writeJSON(w http.ResponseWriter, status int, v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"type":"error","error":{"type":"api_error","message":"fakemodel: marshal"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
	return status
}
