package model

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Recover looks for tool calls a model wrote as text (in the content, or in
// the reasoning when the content is empty) and returns them with the
// family they were found in: "harmony" (gpt-oss: `to=functions.NAME
// <|message|>{...}<|call|>`) or "json" (`{"name": ..., "arguments": ...}`,
// `{"tool_calls": [...]}`, `{"function": {...}}`, `<tool_call>{...}</tool_call>`,
// a fenced block, an array of those). Only names in known are accepted;
// ids are "text_N". Nothing found: nil, "".
func Recover(content, reasoning string, known func(name string) bool) ([]ToolCall, string) {
	for _, text := range []string{content, reasoning} {
		if strings.TrimSpace(text) == "" {
			continue
		}
		if calls := recoverHarmony(text, known); len(calls) > 0 {
			return calls, "harmony"
		}
		if calls := recoverJSON(stripThink(text), known); len(calls) > 0 {
			return calls, "json"
		}
	}
	return nil, ""
}

var harmonyCall = regexp.MustCompile(`to=functions\.([A-Za-z0-9_.\-]+)[^<]*(?:<\|constrain\|>[^<]*)?<\|message\|>`)

// recoverHarmony parses gpt-oss harmony tool calls written as text.
func recoverHarmony(text string, known func(string) bool) []ToolCall {
	if !strings.Contains(text, "to=functions.") {
		return nil
	}
	var out []ToolCall
	for _, m := range harmonyCall.FindAllStringSubmatchIndex(text, -1) {
		name := text[m[2]:m[3]]
		rest := text[m[1]:]
		end := len(rest)
		for _, stop := range []string{"<|call|>", "<|end|>", "<|return|>", "<|start|>"} {
			if i := strings.Index(rest, stop); i >= 0 && i < end {
				end = i
			}
		}
		body := strings.TrimSpace(rest[:end])
		if !known(name) || !json.Valid([]byte(body)) || !strings.HasPrefix(body, "{") {
			continue
		}
		out = append(out, ToolCall{ID: fmt.Sprintf("text_%d", len(out)), Name: name, Arguments: json.RawMessage(body)})
	}
	return out
}

var (
	thinkBlock = regexp.MustCompile(`(?s)<think>.*?</think>|\[THINK\].*?\[/THINK\]`)
	toolCallTg = regexp.MustCompile(`(?s)<tool_call>(.*?)</tool_call>`)
	fence      = regexp.MustCompile("(?s)```[A-Za-z]*\\s*\n(.*?)```")
)

func stripThink(s string) string { return thinkBlock.ReplaceAllString(s, "") }

// recoverJSON parses tool calls written as JSON.
func recoverJSON(text string, known func(string) bool) []ToolCall {
	var cands []string
	for _, m := range toolCallTg.FindAllStringSubmatch(text, -1) {
		cands = append(cands, m[1])
	}
	if len(cands) == 0 {
		cands = append(cands, text)
		for _, m := range fence.FindAllStringSubmatch(text, -1) {
			cands = append(cands, m[1])
		}
		cands = append(cands, balanced(text)...)
	}
	var out []ToolCall
	for _, c := range cands {
		var v any
		if json.Unmarshal([]byte(strings.TrimSpace(c)), &v) != nil {
			continue
		}
		for _, tc := range callsIn(v) {
			if known(tc.Name) {
				tc.ID = fmt.Sprintf("text_%d", len(out))
				out = append(out, tc)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// callsIn extracts tool calls from a decoded JSON value.
func callsIn(v any) []ToolCall {
	switch x := v.(type) {
	case []any:
		var out []ToolCall
		for _, e := range x {
			out = append(out, callsIn(e)...)
		}
		return out
	case map[string]any:
		if tcs, ok := x["tool_calls"]; ok {
			return callsIn(tcs)
		}
		if f, ok := x["function"].(map[string]any); ok {
			return callsIn(f)
		}
		name, _ := x["name"].(string)
		if name == "" {
			name, _ = x["tool"].(string)
		}
		if name == "" {
			return nil
		}
		var args any = map[string]any{}
		for _, k := range []string{"arguments", "args", "parameters", "input"} {
			if a, ok := x[k]; ok {
				args = a
				break
			}
		}
		if s, ok := args.(string); ok {
			var obj map[string]any
			if json.Unmarshal([]byte(s), &obj) == nil {
				args = obj
			}
		}
		b, err := json.Marshal(args)
		if err != nil {
			return nil
		}
		return []ToolCall{{Name: name, Arguments: argsJSON(b)}}
	}
	return nil
}

// balanced returns the top-level balanced {...} substrings of s, outside
// JSON strings.
func balanced(s string) []string {
	var out []string
	depth, start, inStr, esc := 0, -1, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			if depth > 0 {
				inStr = true
			}
		case '{':
			if depth == 0 {
				start = i
			}
			depth++
		case '}':
			if depth > 0 {
				depth--
				if depth == 0 && start >= 0 {
					out = append(out, s[start:i+1])
				}
			}
		}
	}
	return out
}
