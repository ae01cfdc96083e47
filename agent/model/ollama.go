package model

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

type ollamaClient struct {
	ep   Endpoint
	opts Options
	hc   *http.Client
}

func newOllama(ep Endpoint, opts Options) *ollamaClient {
	if opts.Retries <= 0 {
		opts.Retries = 2
	}
	return &ollamaClient{ep: ep, opts: opts, hc: &http.Client{Timeout: 10 * time.Minute}}
}

type olMessage struct {
	Role      string       `json:"role"`
	Content   string       `json:"content"`
	Thinking  string       `json:"thinking,omitempty"`
	ToolCalls []olToolCall `json:"tool_calls,omitempty"`
	ToolName  string       `json:"tool_name,omitempty"`
}

type olToolCall struct {
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type olRequest struct {
	Model    string         `json:"model"`
	Messages []olMessage    `json:"messages"`
	Tools    []oaTool       `json:"tools,omitempty"`
	Stream   bool           `json:"stream"`
	Think    any            `json:"think,omitempty"`
	Options  map[string]any `json:"options,omitempty"`
}

type olResponse struct {
	Message         olMessage `json:"message"`
	Done            bool      `json:"done"`
	DoneReason      string    `json:"done_reason"`
	PromptEvalCount int       `json:"prompt_eval_count"`
	EvalCount       int       `json:"eval_count"`
	Error           string    `json:"error"`
}

// EncodeOllama returns the /api/chat request body for req.
func EncodeOllama(req Request) ([]byte, error) {
	body := olRequest{Model: req.Model}
	switch l := strings.ToLower(req.ThinkingLevel); l {
	case "low", "medium", "high":
		body.Think = l
	case "none", "off":
		body.Think = false
	}
	opts := map[string]any{}
	if req.MaxTokens > 0 {
		opts["num_predict"] = req.MaxTokens
	}
	if req.Temperature != nil {
		opts["temperature"] = *req.Temperature
	}
	if len(opts) > 0 {
		body.Options = opts
	}
	for _, m := range req.Messages {
		om := olMessage{Role: m.Role, Content: m.Content}
		if m.Role == "tool" {
			om.ToolName = m.Name
		}
		for _, tc := range m.ToolCalls {
			var w olToolCall
			w.Function.Name = tc.Name
			w.Function.Arguments = argsJSON(tc.Arguments)
			om.ToolCalls = append(om.ToolCalls, w)
		}
		body.Messages = append(body.Messages, om)
	}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, oaTool{Type: "function", Function: t})
	}
	return json.Marshal(body)
}

// DecodeOllama parses an /api/chat response body (stream false).
func DecodeOllama(b []byte) (Response, error) {
	var r olResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return Response{}, fmt.Errorf("model: decode ollama chat: %w", err)
	}
	if r.Error != "" {
		return Response{}, fmt.Errorf("model: ollama: %s", r.Error)
	}
	out := Response{Content: r.Message.Content, Reasoning: r.Message.Thinking, FinishReason: r.DoneReason,
		PromptTokens: r.PromptEvalCount, CompletionTokens: r.EvalCount}
	for i, tc := range r.Message.ToolCalls {
		// Ollama gives tool calls no ids; the runner needs them to pair results.
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: fmt.Sprintf("call_%d", i), Name: tc.Function.Name, Arguments: argsJSON(tc.Function.Arguments)})
	}
	return out, nil
}

func (c *ollamaClient) Chat(ctx context.Context, req Request) (Response, error) {
	return roundTrip(ctx, c.hc, c.ep, "/api/chat", c.opts, req, EncodeOllama, DecodeOllama)
}
