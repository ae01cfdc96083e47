package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// NewResponses starts a fake OpenAI Responses API server replaying script.
// It serves POST /v1/responses and POST /responses (streamed as
// server-sent events when the request says "stream": true, one JSON
// response otherwise), GET /v1/models[/ID] and /models, and HEAD/GET /;
// anything else is answered 404 and recorded as [KindUnknown]. It panics
// if the script is invalid.
//
// A tool call is sent as a function_call item whose arguments are the
// tool input as a JSON string (with "namespace" and the inner name when
// the scripted name is NAMESPACE__TOOL of an offered namespace, as
// Codex offers MCP tools), except when the request offers a tool of
// that name with type "custom" (a freeform tool such as Codex's
// apply_patch): then it is sent as a custom_tool_call whose input is the
// string field "input" of the scripted tool input. Script such calls as
// Tool("apply_patch", map[string]any{"input": patch}).
//
// Point Codex at it with a model provider whose base_url is srv.URL+"/v1"
// and wire_api = "responses".
func NewResponses(script Script, opts ...Option) *Server {
	return newServer(script, responses{}, opts)
}

// ResponsesMain is the default main-conversation test for the Responses
// handler: a request that offers tools. Side calls (titles, summaries,
// memory writes) offer none.
func ResponsesMain(r *Request) bool {
	q, err := r.Responses()
	return err == nil && len(q.Tools) > 0
}

// ResponsesRequest is the part of a Responses API request body tests look
// at.
type ResponsesRequest struct {
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"`
	Input        ResponsesInput  `json:"input"`
	Tools        []ResponsesTool `json:"tools,omitempty"`
	Stream       bool            `json:"stream"`
	Store        bool            `json:"store"`
	// PromptCacheKey is the client's conversation key (Codex sends its
	// session id).
	PromptCacheKey string `json:"prompt_cache_key,omitempty"`
}

// ResponsesInput is a request's input: a list of items, or a string,
// which is read as one user message.
type ResponsesInput []ResponsesItem

// UnmarshalJSON accepts a string or an array of items.
func (in *ResponsesInput) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*in = ResponsesInput{{Type: "message", Role: "user", Content: append(json.RawMessage(nil), b...)}}
		return nil
	}
	var items []ResponsesItem
	if err := json.Unmarshal(b, &items); err != nil {
		return err
	}
	*in = items
	return nil
}

// ResponsesTool is a tool offered to the model: a "function" with a name
// and JSON parameters, a "custom" freeform tool, a "namespace" grouping
// tools (Codex offers each MCP server's tools as namespace
// "mcp__SERVER"), or a built-in such as "web_search" (no name).
type ResponsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	// Tools are a namespace's tools.
	Tools []ResponsesTool `json:"tools,omitempty"`
}

// ResponsesItem is one input item: a message, a function_call or
// custom_tool_call the model made earlier, or the function_call_output or
// custom_tool_call_output that answers it. Fields not used by a type are
// empty.
type ResponsesItem struct {
	Type string `json:"type"`
	// Role and Content are set for messages; Content is a string or an
	// array of parts ({"type":"input_text","text":...}).
	Role    string          `json:"role,omitempty"`
	Content json.RawMessage `json:"content,omitempty"`
	// CallID, Name, Arguments (function_call) and Input (custom_tool_call)
	// are set for calls; CallID and Output for their outputs. Output is a
	// string or an array of content parts.
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments string          `json:"arguments,omitempty"`
	Input     string          `json:"input,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
}

// Text returns a message's content, or an output's, as text: the string
// itself, or its text parts joined by newlines.
func (it ResponsesItem) Text() string {
	raw := it.Content
	if it.Type == "function_call_output" || it.Type == "custom_tool_call_output" {
		raw = it.Output
	}
	return partsText(raw)
}

func partsText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
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
		if p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// Responses decodes the request body as a Responses API request.
func (r *Request) Responses() (*ResponsesRequest, error) {
	var q ResponsesRequest
	if err := json.Unmarshal(r.Body, &q); err != nil {
		return nil, fmt.Errorf("fakemodel: request #%d is not a Responses request: %w", r.Seq, err)
	}
	return &q, nil
}

// HasTool reports whether the request offers a tool named name, at the
// top level or, spelled NAMESPACE__TOOL, inside a namespace.
func (q *ResponsesRequest) HasTool(name string) bool {
	if q.tool(name) != nil {
		return true
	}
	_, _, ok := q.namespaced(name)
	return ok
}

// namespaced splits a scripted tool name NAMESPACE__TOOL (Codex's
// spelling of an MCP tool: mcp__SERVER__TOOL) into the namespace the
// request offers and the tool inside it.
func (q *ResponsesRequest) namespaced(name string) (ns, tool string, ok bool) {
	for _, t := range q.Tools {
		if t.Type != "namespace" || t.Name == "" {
			continue
		}
		rest, found := strings.CutPrefix(name, strings.TrimSuffix(t.Name, "__")+"__")
		if !found {
			continue
		}
		for _, in := range t.Tools {
			if in.Name == rest {
				return t.Name, rest, true
			}
		}
	}
	return "", "", false
}

func (q *ResponsesRequest) tool(name string) *ResponsesTool {
	for i := range q.Tools {
		if q.Tools[i].Name == name {
			return &q.Tools[i]
		}
	}
	return nil
}

// ResponsesFirstUserContains returns a [Thread] Match that accepts
// Responses requests whose first user message contains marker (a
// subagent's conversation starts with its task).
func ResponsesFirstUserContains(marker string) func(*Request) bool {
	return func(r *Request) bool {
		q, err := r.Responses()
		if err != nil {
			return false
		}
		for _, it := range q.Input {
			if it.Type == "message" && it.Role == "user" || it.Type == "" && it.Role == "user" {
				return strings.Contains(it.Text(), marker)
			}
		}
		return false
	}
}

// responses is the OpenAI Responses API protocol.
type responses struct{}

func (responses) defaultIsMain(r *Request) bool { return ResponsesMain(r) }

// toolResults reports function_call_output and custom_tool_call_output
// items. The Responses API has no error flag: IsError is left false, and a
// test reads Content (Codex puts a hook's deny reason there).
func (responses) toolResults(r *Request) []ToolResult {
	q, err := r.Responses()
	if err != nil {
		return nil
	}
	var out []ToolResult
	for _, it := range q.Input {
		if it.Type == "function_call_output" || it.Type == "custom_tool_call_output" {
			out = append(out, ToolResult{ToolUseID: it.CallID, Content: it.Text()})
		}
	}
	return out
}

func (responses) serve(s *Server, w http.ResponseWriter, r *http.Request, req *Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	switch {
	case r.Method == http.MethodPost && path == "/responses":
		responsesCreate(s, w, req)
	case r.Method == http.MethodGet && path == "/models":
		req.Kind = KindAux
		req.Status = writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{openAIModel(fakeResponsesModel)}})
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/models/"):
		req.Kind = KindAux
		req.Status = writeJSON(w, http.StatusOK, openAIModel(strings.TrimPrefix(path, "/models/")))
	case (r.Method == http.MethodHead || r.Method == http.MethodGet) && (r.URL.Path == "/" || r.URL.Path == "/v1"):
		req.Kind = KindAux
		req.Status = http.StatusOK
		w.WriteHeader(http.StatusOK)
	default:
		req.Kind = KindUnknown
		req.Status = writeJSON(w, http.StatusNotFound, openAIError("not_found",
			fmt.Sprintf("fakemodel: no route for %s %s", r.Method, r.URL.Path)))
	}
}

const fakeResponsesModel = "gpt-fake"

func openAIModel(id string) map[string]any {
	return map[string]any{"id": id, "object": "model", "created": 1735689600, "owned_by": "fakemodel"}
}

func openAIError(code, msg string) map[string]any {
	return map[string]any{"error": map[string]any{"type": "invalid_request_error", "code": code, "message": msg}}
}

func responsesCreate(s *Server, w http.ResponseWriter, req *Request) {
	q, err := req.Responses()
	if err != nil {
		req.Kind = KindUnknown
		req.Status = writeJSON(w, http.StatusBadRequest, openAIError("invalid_json", err.Error()))
		return
	}
	req.Stream = q.Stream
	model := q.Model
	if model == "" {
		model = fakeResponsesModel
	}
	rep := s.respond(req)
	n := s.msgSeq.Add(1)
	resp := responsesAnswer(q, rep, fmt.Sprintf("resp_fake_%d", n), model, len(req.Body)/4)
	if q.Stream {
		req.Status = streamResponses(w, resp)
		return
	}
	req.Status = writeJSON(w, http.StatusOK, resp)
}

// responseObj is a Responses API response object.
type responseObj struct {
	ID        string           `json:"id"`
	Object    string           `json:"object"`
	CreatedAt int64            `json:"created_at"`
	Status    string           `json:"status"`
	Model     string           `json:"model"`
	Output    []map[string]any `json:"output"`
	Usage     map[string]any   `json:"usage"`
}

func responsesAnswer(q *ResponsesRequest, r reply, id, model string, inputTokens int) responseObj {
	var out []map[string]any
	outTokens := 0
	if r.Text != "" || len(r.Calls) == 0 {
		out = append(out, map[string]any{
			"type": "message", "id": id + "_msg", "status": "completed", "role": "assistant",
			"content": []map[string]any{{"type": "output_text", "text": r.Text, "annotations": []any{}}},
		})
		outTokens += len(r.Text)/4 + 1
	}
	for i, c := range r.Calls {
		itemID := fmt.Sprintf("%s_fc_%d", id, i)
		if t := q.tool(c.Name); t != nil && t.Type == "custom" {
			var in struct {
				Input string `json:"input"`
			}
			_ = json.Unmarshal(c.Input, &in)
			out = append(out, map[string]any{"type": "custom_tool_call", "id": itemID, "status": "completed",
				"call_id": c.ID, "name": c.Name, "input": in.Input})
		} else if ns, name, ok := q.namespaced(c.Name); ok && q.tool(c.Name) == nil {
			out = append(out, map[string]any{"type": "function_call", "id": itemID, "status": "completed",
				"call_id": c.ID, "namespace": ns, "name": name, "arguments": string(c.Input)})
		} else {
			out = append(out, map[string]any{"type": "function_call", "id": itemID, "status": "completed",
				"call_id": c.ID, "name": c.Name, "arguments": string(c.Input)})
		}
		outTokens += len(c.Input)/4 + 1
	}
	return responseObj{
		ID: id, Object: "response", CreatedAt: 1735689600, Status: "completed", Model: model, Output: out,
		Usage: map[string]any{
			"input_tokens": inputTokens, "input_tokens_details": map[string]int{"cached_tokens": 0},
			"output_tokens": outTokens, "output_tokens_details": map[string]int{"reasoning_tokens": 0},
			"total_tokens": inputTokens + outTokens,
		},
	}
}

// streamResponses writes resp as the Responses API's server-sent events:
// response.created, per output item output_item.added, its deltas and
// output_item.done, then response.completed.
func streamResponses(w http.ResponseWriter, resp responseObj) int {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	seq := 0
	send := func(event string, data map[string]any) {
		data["type"] = event
		data["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	start := resp
	start.Status, start.Output = "in_progress", []map[string]any{}
	send("response.created", map[string]any{"response": start})
	send("response.in_progress", map[string]any{"response": start})
	for i, item := range resp.Output {
		id, _ := item["id"].(string)
		switch item["type"] {
		case "message":
			text := item["content"].([]map[string]any)[0]["text"].(string)
			send("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{
				"type": "message", "id": id, "status": "in_progress", "role": "assistant", "content": []any{}}})
			part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
			send("response.content_part.added", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "part": part})
			for _, c := range chunks(text, 16) {
				send("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": c})
			}
			send("response.output_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "text": text})
			send("response.content_part.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
		case "function_call":
			args := item["arguments"].(string)
			added := map[string]any{"type": "function_call", "id": id, "status": "in_progress",
				"call_id": item["call_id"], "name": item["name"], "arguments": ""}
			if ns, ok := item["namespace"]; ok {
				added["namespace"] = ns
			}
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			for _, c := range chunks(args, 32) {
				send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": c})
			}
			send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i, "arguments": args})
		case "custom_tool_call":
			input := item["input"].(string)
			added := map[string]any{"type": "custom_tool_call", "id": id, "status": "in_progress",
				"call_id": item["call_id"], "name": item["name"], "input": ""}
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			for _, c := range chunks(input, 32) {
				send("response.custom_tool_call_input.delta", map[string]any{"item_id": id, "output_index": i, "delta": c})
			}
			send("response.custom_tool_call_input.done", map[string]any{"item_id": id, "output_index": i, "input": input})
		}
		send("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	send("response.completed", map[string]any{"response": resp})
	return http.StatusOK
}
