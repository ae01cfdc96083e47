// Package model talks to a model endpoint for the agent runner: OpenAI's
// Chat Completions API with tools (`POST …/v1/chat/completions`, served by
// OpenAI, vLLM, llama.cpp, LM Studio, Ollama's compatibility layer, ...)
// and Ollama's native `POST /api/chat`. Requests are not streamed.
//
// Local models often write a tool call as text instead of using the API's
// tool calls; Recover finds such calls (JSON in the content, gpt-oss's
// harmony format) among the offered tools.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Message is one chat message, wire-neutral.
type Message struct {
	// Role is system, user, assistant or tool.
	Role string `json:"role"`
	// Content is the text.
	Content string `json:"content"`
	// ToolCalls are an assistant message's tool calls.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and Name tie a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
}

// ToolCall is one call the model made.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON object of arguments (or, when the model sent
	// something that is not JSON, that text as a JSON string).
	Arguments json.RawMessage `json:"arguments"`
}

// Tool is a function the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // a JSON Schema object
}

// Request is one model request.
type Request struct {
	Model    string
	Messages []Message
	Tools    []Tool
	// ThinkingLevel is the state's thinking_level ("low", "medium", "high",
	// "none"); sent where the API takes it (reasoning_effort; Ollama's think).
	ThinkingLevel string
	// MaxTokens bounds the answer (0: the server's default).
	MaxTokens int
	// Temperature is sent when not nil.
	Temperature *float64
}

// Response is the model's answer.
type Response struct {
	Content   string
	Reasoning string
	ToolCalls []ToolCall
	// Recovered is "json" or "harmony" when ToolCalls were found in the text
	// rather than in the API's tool calls.
	Recovered        string
	PromptTokens     int
	CompletionTokens int
	FinishReason     string
}

// Client sends requests to one endpoint.
type Client interface {
	Chat(ctx context.Context, req Request) (Response, error)
}

// API names a wire protocol.
type API string

// APIs.
const (
	OpenAI API = "openai" // Chat Completions
	Ollama API = "ollama" // Ollama's native /api/chat
)

// Endpoint is a parsed --model value.
type Endpoint struct {
	API API
	// BaseURL is the URL the API path is appended to.
	BaseURL string
	// Model is the model name sent in requests.
	Model string
}

// String renders the endpoint as it is written: URL#MODEL.
func (e Endpoint) String() string { return e.BaseURL + "#" + e.Model }

// ErrEndpoint reports a --model value that cannot be used.
var ErrEndpoint = errors.New("model: bad endpoint")

// ParseEndpoint parses URL#MODEL:
//
//	http://localhost:8000/v1#qwen2.5-coder      OpenAI Chat Completions at …/v1/chat/completions
//	http://localhost:11434#qwen2.5-coder        the same (/v1 is added)
//	ollama://localhost:11434#qwen2.5-coder      Ollama's native /api/chat over http
//	http://localhost:11434/api#qwen2.5-coder    the same
//
// A bare model name without a URL is refused: the runner never guesses an endpoint.
func ParseEndpoint(s string) (Endpoint, error) {
	raw, name, ok := strings.Cut(s, "#")
	if !ok || raw == "" || strings.TrimSpace(name) == "" {
		return Endpoint{}, fmt.Errorf("%w: %q: want URL#MODEL, e.g. http://localhost:11434/v1#qwen2.5-coder", ErrEndpoint, s)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return Endpoint{}, fmt.Errorf("%w: %q: not a URL with a host", ErrEndpoint, raw)
	}
	ep := Endpoint{API: OpenAI, Model: strings.TrimSpace(name)}
	switch u.Scheme {
	case "http", "https":
	case "ollama":
		ep.API, u.Scheme = Ollama, "http"
	case "ollamas":
		ep.API, u.Scheme = Ollama, "https"
	default:
		return Endpoint{}, fmt.Errorf("%w: %q: scheme %q (want http, https or ollama)", ErrEndpoint, raw, u.Scheme)
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case ep.API == Ollama:
		p = strings.TrimSuffix(p, "/api")
	case strings.HasSuffix(p, "/api"):
		ep.API, p = Ollama, strings.TrimSuffix(p, "/api")
	case !strings.HasSuffix(p, "/v1"):
		p += "/v1"
	}
	u.Path, u.RawQuery, u.Fragment = p, "", ""
	ep.BaseURL = u.String()
	return ep, nil
}

// New returns a client for the endpoint.
func New(ep Endpoint, opts Options) Client {
	if ep.API == Ollama {
		return newOllama(ep, opts)
	}
	return newOpenAI(ep, opts)
}

// Options configure a client.
type Options struct {
	// APIKey is sent as a bearer token when set ($OPENAI_API_KEY by default in the CLI).
	APIKey string
	// Retries is how many times a transport error, 429 or 5xx is retried (default 2).
	Retries int
}

// HTTPError is a non-2xx answer.
type HTTPError struct {
	Status int
	Body   string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("model: HTTP %d: %s", e.Status, strings.TrimSpace(e.Body))
}

// Retryable reports whether the request may succeed when sent again.
func (e *HTTPError) Retryable() bool { return e.Status == 429 || e.Status >= 500 }

// argsJSON normalises tool-call arguments: an object stays; a JSON string
// holding an object is decoded; anything else becomes {} with the raw text
// kept under "_raw" so the runner can tell the model its arguments were bad.
func argsJSON(raw json.RawMessage) json.RawMessage {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" {
		return json.RawMessage(`{}`)
	}
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	var s string
	if json.Unmarshal([]byte(t), &s) == nil {
		s = strings.TrimSpace(s)
		if s == "" {
			return json.RawMessage(`{}`)
		}
		if strings.HasPrefix(s, "{") && json.Valid([]byte(s)) {
			return json.RawMessage(s)
		}
		t = s
	}
	b, _ := json.Marshal(map[string]string{"_raw": t})
	return b
}
