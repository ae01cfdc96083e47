package model

import (
	"encoding/json"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	for _, tc := range []struct {
		in, base string
		api      API
		model    string
		bad      bool
	}{
		{in: "http://localhost:8000/v1#qwen", base: "http://localhost:8000/v1", api: OpenAI, model: "qwen"},
		{in: "http://localhost:11434#qwen2.5-coder:7b", base: "http://localhost:11434/v1", api: OpenAI, model: "qwen2.5-coder:7b"},
		{in: "https://api.example.com/v1/#gpt", base: "https://api.example.com/v1", api: OpenAI, model: "gpt"},
		{in: "ollama://localhost:11434#qwen", base: "http://localhost:11434", api: Ollama, model: "qwen"},
		{in: "http://box:11434/api#qwen", base: "http://box:11434", api: Ollama, model: "qwen"},
		{in: "qwen", bad: true},
		{in: "http://localhost:8000/v1", bad: true},
		{in: "http://localhost:8000/v1#", bad: true},
		{in: "ftp://x#m", bad: true},
		{in: "#m", bad: true},
	} {
		ep, err := ParseEndpoint(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseEndpoint(%q) = %+v, want an error", tc.in, ep)
			}
			continue
		}
		if err != nil || ep.BaseURL != tc.base || ep.API != tc.api || ep.Model != tc.model {
			t.Errorf("ParseEndpoint(%q) = %+v, %v", tc.in, ep, err)
		}
	}
}

func known(n string) bool { return n == "read_file" || n == "statewright_transition" }

func TestRecover(t *testing.T) {
	for _, tc := range []struct {
		name, content, reasoning string
		family, tool, args       string
	}{
		{"plain json", `{"name": "read_file", "arguments": {"path": "a.go"}}`, "", "json", "read_file", `{"path":"a.go"}`},
		{"stringified args", `{"name": "read_file", "arguments": "{\"path\": \"a.go\"}"}`, "", "json", "read_file", `{"path":"a.go"}`},
		{"tool_calls", `{"tool_calls":[{"name":"statewright_transition","args":{"event":"DONE"}}]}`, "", "json", "statewright_transition", `{"event":"DONE"}`},
		{"prose and fence", "I will read it.\n```json\n{\"function\": {\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}}\n```", "", "json", "read_file", `{"path":"x"}`},
		{"hermes", `<tool_call>{"name":"read_file","arguments":{"path":"b"}}</tool_call>`, "", "json", "read_file", `{"path":"b"}`},
		{"think stripped", `<think>{"name":"rm","arguments":{}}</think>{"name":"read_file","arguments":{"path":"c"}}`, "", "json", "read_file", `{"path":"c"}`},
		{"harmony", `<|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{"path":"d.go"}<|call|>`, "", "harmony", "read_file", `{"path":"d.go"}`},
		{"harmony in reasoning", "", `analysis... <|channel|>commentary to=functions.statewright_transition<|message|>{"event":"LOCALIZED"}<|call|>`, "harmony", "statewright_transition", `{"event":"LOCALIZED"}`},
		{"unknown tool", `{"name": "delete_everything", "arguments": {}}`, "", "", "", ""},
		{"prose", `I think the bug is in add().`, "", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, fam := Recover(tc.content, tc.reasoning, known)
			if fam != tc.family {
				t.Fatalf("family %q, want %q (%v)", fam, tc.family, calls)
			}
			if tc.tool == "" {
				return
			}
			if len(calls) != 1 || calls[0].Name != tc.tool {
				t.Fatalf("calls %v", calls)
			}
			var got, want any
			_ = json.Unmarshal(calls[0].Arguments, &got)
			_ = json.Unmarshal([]byte(tc.args), &want)
			if g, _ := json.Marshal(got); string(g) != mustJSON(want) {
				t.Fatalf("args %s, want %s", calls[0].Arguments, tc.args)
			}
		})
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestOpenAIRoundTrip(t *testing.T) {
	body, err := EncodeOpenAI(Request{Model: "m", ThinkingLevel: "high", Messages: []Message{
		{Role: "user", Content: "hi"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)}}},
		{Role: "tool", ToolCallID: "c1", Name: "read_file", Content: "data"},
	}, Tools: []Tool{{Name: "read_file", Parameters: json.RawMessage(`{"type":"object"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	if req["reasoning_effort"] != "high" || req["stream"] != false {
		t.Fatalf("request %s", body)
	}
	msgs := req["messages"].([]any)
	tc := msgs[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if tc["arguments"] != `{"path":"a"}` {
		t.Fatalf("arguments must be a JSON string: %s", body)
	}
	resp, err := DecodeOpenAI([]byte(`{"choices":[{"message":{"content":null,"reasoning_content":"hmm","tool_calls":[{"id":"x","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"b\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":7,"completion_tokens":3}}`))
	if err != nil || len(resp.ToolCalls) != 1 || string(resp.ToolCalls[0].Arguments) != `{"path":"b"}` || resp.PromptTokens != 7 || resp.Reasoning != "hmm" {
		t.Fatalf("%+v %v", resp, err)
	}
}

func TestOllamaRoundTrip(t *testing.T) {
	body, _ := EncodeOllama(Request{Model: "m", ThinkingLevel: "none", MaxTokens: 100, Messages: []Message{
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)}}},
		{Role: "tool", ToolCallID: "c1", Name: "read_file", Content: "data"},
	}})
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	if req["think"] != false || req["options"].(map[string]any)["num_predict"] != float64(100) {
		t.Fatalf("request %s", body)
	}
	msgs := req["messages"].([]any)
	if msgs[1].(map[string]any)["tool_name"] != "read_file" {
		t.Fatalf("tool message %s", body)
	}
	resp, err := DecodeOllama([]byte(`{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"read_file","arguments":{"path":"z"}}}]},"done":true,"prompt_eval_count":5,"eval_count":2}`))
	if err != nil || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID == "" || string(resp.ToolCalls[0].Arguments) != `{"path":"z"}` || resp.CompletionTokens != 2 {
		t.Fatalf("%+v %v", resp, err)
	}
}

func FuzzRecover(f *testing.F) {
	f.Add(`{"name": "read_file", "arguments": {"path": "a.go"}}`, "")
	f.Add(`<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{"path":"d.go"}<|call|>`, "")
	f.Add("```json\n[{\"tool\":\"read_file\",\"args\":\"{}\"}]\n```", "<think>x</think>")
	f.Fuzz(func(t *testing.T, content, reasoning string) {
		calls, fam := Recover(content, reasoning, known)
		if (len(calls) == 0) != (fam == "") {
			t.Fatalf("calls %v family %q", calls, fam)
		}
		for _, c := range calls {
			if !known(c.Name) || !json.Valid(c.Arguments) {
				t.Fatalf("bad call %+v", c)
			}
		}
	})
}

func FuzzDecodeOpenAI(f *testing.F) {
	f.Add([]byte(`{"choices":[{"message":{"content":"hi"}}]}`))
	f.Add([]byte(`{"choices":[{"message":{"tool_calls":[{"function":{"name":"x","arguments":"nope"}}]}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeOpenAI(b)
		if err != nil {
			return
		}
		for _, c := range r.ToolCalls {
			if !json.Valid(c.Arguments) || c.ID == "" {
				t.Fatalf("bad call %+v", c)
			}
		}
	})
}

func FuzzDecodeOllama(f *testing.F) {
	f.Add([]byte(`{"message":{"content":"hi"},"done":true}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeOllama(b)
		if err != nil {
			return
		}
		for _, c := range r.ToolCalls {
			if !json.Valid(c.Arguments) {
				t.Fatalf("bad call %+v", c)
			}
		}
	})
}
