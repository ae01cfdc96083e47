//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// mcpEnvKeys are the variables the probe MCP server records, to document
// what the harness hands an MCP server.
var mcpEnvKeys = []string{"CLAUDE_CODE_SESSION_ID", "CLAUDE_SESSION_ID", "CLAUDE_PROJECT_DIR", "CLAUDECODE",
	"CLAUDE_CODE_ENTRYPOINT", "PWD", "PROBE_FROM_CONFIG", "HOME", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"}

// runMCPProbe is a minimal MCP server over stdio (newline-delimited
// JSON-RPC) offering one tool, "echo". It appends one JSON line to logPath
// at start ({"event":"start","env":…,"cwd":…}) and one per tools/call
// ({"event":"call","params":…}), and answers "echo: <text>".
func runMCPProbe(logPath string, stdin io.Reader, stdout io.Writer) int {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return 1
	}
	defer logf.Close()
	record := func(v map[string]any) {
		b, _ := json.Marshal(v)
		logf.Write(append(b, '\n'))
	}
	env := map[string]string{}
	for _, k := range mcpEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	var claudeVars []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "CLAUDE") {
			claudeVars = append(claudeVars, kv)
		}
	}
	cwd, _ := os.Getwd()
	record(map[string]any{"event": "start", "env": env, "cwd": cwd, "claude_vars": claudeVars, "args": os.Args})

	out := json.NewEncoder(stdout)
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil {
			continue // notifications and garbage
		}
		reply := func(result any) {
			out.Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
		}
		switch msg.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(msg.Params, &p)
			record(map[string]any{"event": "initialize", "params": msg.Params})
			reply(map[string]any{"protocolVersion": p.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "probe", "version": "1.0.0"}})
		case "tools/list":
			reply(map[string]any{"tools": []any{map[string]any{
				"name": "echo", "description": "Echo the text back.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}},
					"required": []string{"text"}},
			}}})
		case "tools/call":
			var p struct {
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			}
			json.Unmarshal(msg.Params, &p)
			record(map[string]any{"event": "call", "params": msg.Params})
			reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": "echo: " + p.Arguments.Text}}})
		case "ping":
			reply(map[string]any{})
		default:
			out.Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID,
				"error": map[string]any{"code": -32601, "message": fmt.Sprintf("method %s not found", msg.Method)}})
		}
	}
	return 0
}
