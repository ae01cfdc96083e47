package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// NewOllama starts a fake Ollama server replaying script over Ollama's
// native API: POST /api/chat (one JSON object when the request says
// "stream": false, else newline-delimited JSON chunks ending with
// "done": true — Ollama streams by default), GET /api/tags, GET
// /api/version and HEAD/GET /. Tool calls carry their arguments as JSON
// objects and no ids (as Ollama sends them); tool results come back as
// role "tool" messages, paired with calls by position. It panics if the
// script is invalid.
//
// Point a client at srv.URL (ollama://HOST:PORT for statewright agent).
func NewOllama(script Script, opts ...Option) *Server {
	return newServer(script, ollama{}, opts)
}

// OllamaMain is the default main-conversation test for the Ollama
// handler: a request that offers tools.
func OllamaMain(r *Request) bool {
	c, err := r.Conversation()
	return err == nil && len(c.Tools) > 0
}

// ollama is Ollama's native chat protocol.
type ollama struct{}

func (ollama) defaultIsMain(r *Request) bool { return OllamaMain(r) }

func (ollama) toolResults(r *Request) []ToolResult {
	c, err := r.Conversation()
	if err != nil {
		return nil
	}
	var out []ToolResult
	for _, m := range c.Messages {
		if m.Role == "tool" {
			out = append(out, ToolResult{ToolUseID: m.CallID, Content: m.Text})
		}
	}
	return out
}

// fakeOllamaModel is the model /api/tags lists.
const fakeOllamaModel = "fake-model:latest"

func (ollama) serve(s *Server, w http.ResponseWriter, r *http.Request, req *Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/chat":
		ollamaChat(s, w, req)
	case r.Method == http.MethodGet && r.URL.Path == "/api/tags":
		req.Kind = KindAux
		req.Status = writeJSON(w, http.StatusOK, map[string]any{"models": []any{map[string]any{"name": fakeOllamaModel, "model": fakeOllamaModel, "size": 1}}})
	case r.Method == http.MethodGet && r.URL.Path == "/api/version":
		req.Kind = KindAux
		req.Status = writeJSON(w, http.StatusOK, map[string]any{"version": "0.0.0-fake"})
	case (r.Method == http.MethodHead || r.Method == http.MethodGet) && r.URL.Path == "/":
		req.Kind = KindAux
		req.Status = http.StatusOK
		w.WriteHeader(http.StatusOK)
	default:
		req.Kind = KindUnknown
		req.Status = writeJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("fakemodel: no route for %s %s", r.Method, r.URL.Path)})
	}
}

func ollamaChat(s *Server, w http.ResponseWriter, req *Request) {
	var body struct {
		Model  string `json:"model"`
		Stream *bool  `json:"stream"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		req.Kind = KindUnknown
		req.Status = writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	stream := body.Stream == nil || *body.Stream
	req.Stream = stream
	model := body.Model
	if model == "" {
		model = fakeOllamaModel
	}
	r := s.respond(req)
	var calls []any
	for _, c := range r.Calls {
		calls = append(calls, map[string]any{"function": map[string]any{"name": c.Name, "arguments": c.Input}})
	}
	msg := map[string]any{"role": "assistant", "content": r.Text}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	prompt := len(req.Body) / 4
	completion := len(r.Text)/4 + 1
	for _, c := range r.Calls {
		completion += len(c.Input)/4 + 1
	}
	final := map[string]any{"model": model, "created_at": "2026-01-01T00:00:00Z", "done": true, "done_reason": "stop",
		"prompt_eval_count": prompt, "eval_count": completion}
	if !stream {
		final["message"] = msg
		req.Status = writeJSON(w, http.StatusOK, final)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	for _, part := range chunks(r.Text, 8) {
		_ = enc.Encode(map[string]any{"model": model, "created_at": "2026-01-01T00:00:00Z", "done": false,
			"message": map[string]any{"role": "assistant", "content": part}})
	}
	if len(calls) > 0 {
		_ = enc.Encode(map[string]any{"model": model, "created_at": "2026-01-01T00:00:00Z", "done": false,
			"message": map[string]any{"role": "assistant", "content": "", "tool_calls": calls}})
	}
	final["message"] = map[string]any{"role": "assistant", "content": ""}
	_ = enc.Encode(final)
	req.Status = http.StatusOK
}
