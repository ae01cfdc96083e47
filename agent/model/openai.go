package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// maxBody bounds a model answer read into memory.
const maxBody = 16 << 20

type openaiClient struct {
	ep   Endpoint
	opts Options
	hc   *http.Client
}

func newOpenAI(ep Endpoint, opts Options) *openaiClient {
	if opts.Retries <= 0 {
		opts.Retries = 2
	}
	return &openaiClient{ep: ep, opts: opts, hc: &http.Client{Timeout: 10 * time.Minute}}
}

type oaMessage struct {
	Role       string       `json:"role"`
	Content    *string      `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
	Name       string       `json:"name,omitempty"`
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function Tool   `json:"function"`
}

type oaRequest struct {
	Model           string      `json:"model"`
	Messages        []oaMessage `json:"messages"`
	Tools           []oaTool    `json:"tools,omitempty"`
	ToolChoice      string      `json:"tool_choice,omitempty"`
	Stream          bool        `json:"stream"`
	MaxTokens       int         `json:"max_tokens,omitempty"`
	Temperature     *float64    `json:"temperature,omitempty"`
	ReasoningEffort string      `json:"reasoning_effort,omitempty"`
}

type oaResponse struct {
	Choices []struct {
		Message struct {
			Content          *string      `json:"content"`
			Reasoning        string       `json:"reasoning"`
			ReasoningContent string       `json:"reasoning_content"`
			ToolCalls        []oaToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// EncodeOpenAI returns the Chat Completions request body for req (exported
// for tests and fuzzing of the wire format).
func EncodeOpenAI(req Request) ([]byte, error) {
	body := oaRequest{Model: req.Model, MaxTokens: req.MaxTokens, Temperature: req.Temperature}
	switch strings.ToLower(req.ThinkingLevel) {
	case "low", "medium", "high":
		body.ReasoningEffort = strings.ToLower(req.ThinkingLevel)
	}
	for _, m := range req.Messages {
		c := m.Content
		om := oaMessage{Role: m.Role, Content: &c, ToolCallID: m.ToolCallID}
		if m.Role == "tool" {
			om.Name = m.Name
		}
		for _, tc := range m.ToolCalls {
			var w oaToolCall
			w.ID, w.Type = tc.ID, "function"
			w.Function.Name = tc.Name
			args, _ := json.Marshal(string(argsJSON(tc.Arguments)))
			w.Function.Arguments = args
			om.ToolCalls = append(om.ToolCalls, w)
		}
		if m.Role == "assistant" && len(om.ToolCalls) > 0 && c == "" {
			om.Content = nil
		}
		body.Messages = append(body.Messages, om)
	}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, oaTool{Type: "function", Function: t})
	}
	if len(body.Tools) > 0 {
		body.ToolChoice = "auto"
	}
	return json.Marshal(body)
}

// DecodeOpenAI parses a Chat Completions response body.
func DecodeOpenAI(b []byte) (Response, error) {
	var r oaResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return Response{}, fmt.Errorf("model: decode chat completion: %w", err)
	}
	if r.Error != nil {
		return Response{}, fmt.Errorf("model: %s", r.Error.Message)
	}
	if len(r.Choices) == 0 {
		return Response{}, errors.New("model: chat completion without choices")
	}
	ch := r.Choices[0]
	out := Response{FinishReason: ch.FinishReason, PromptTokens: r.Usage.PromptTokens, CompletionTokens: r.Usage.CompletionTokens}
	if ch.Message.Content != nil {
		out.Content = *ch.Message.Content
	}
	out.Reasoning = ch.Message.ReasoningContent
	if out.Reasoning == "" {
		out.Reasoning = ch.Message.Reasoning
	}
	for i, tc := range ch.Message.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: id, Name: tc.Function.Name, Arguments: argsJSON(tc.Function.Arguments)})
	}
	return out, nil
}

func (c *openaiClient) Chat(ctx context.Context, req Request) (Response, error) {
	return roundTrip(ctx, c.hc, c.ep, "/chat/completions", c.opts, req, EncodeOpenAI, DecodeOpenAI)
}

// roundTrip encodes req for one wire format, posts it to the endpoint's
// path and decodes the answer.
func roundTrip(ctx context.Context, hc *http.Client, ep Endpoint, path string, opts Options, req Request,
	encode func(Request) ([]byte, error), decode func([]byte) (Response, error)) (Response, error) {
	if req.Model == "" {
		req.Model = ep.Model
	}
	body, err := encode(req)
	if err != nil {
		return Response{}, fmt.Errorf("model: encode: %w", err)
	}
	b, err := post(ctx, hc, ep.BaseURL+path, opts, body)
	if err != nil {
		return Response{}, err
	}
	return decode(b)
}

// post sends body and returns the answer, retrying transport errors, 429
// and 5xx with a short backoff.
func post(ctx context.Context, hc *http.Client, url string, opts Options, body []byte) ([]byte, error) {
	var last error
	for attempt := 0; attempt <= opts.Retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(attempt*attempt) * 500 * time.Millisecond):
			}
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		hr.Header.Set("Content-Type", "application/json")
		if opts.APIKey != "" {
			hr.Header.Set("Authorization", "Bearer "+opts.APIKey)
		}
		resp, err := hc.Do(hr)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			last = fmt.Errorf("model: POST %s: %w", url, err)
			continue
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
		if err != nil {
			last = fmt.Errorf("model: read answer: %w", err)
			continue
		}
		if resp.StatusCode/100 != 2 {
			he := &HTTPError{Status: resp.StatusCode, Body: string(b)}
			if len(he.Body) > 500 {
				he.Body = he.Body[:500]
			}
			if he.Retryable() {
				last = he
				continue
			}
			return nil, he
		}
		return b, nil
	}
	return nil, last
}
