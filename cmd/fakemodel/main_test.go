package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/agent/model"
)

// TestRun starts the command with a script, sends it an Anthropic request
// as Claude Code would, and checks the scripted tool call comes back and
// the request is listed when it stops.
func TestRun(t *testing.T) {
	script := filepath.Join(t.TempDir(), "turns.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"tool_uses":[{"id":"toolu_1","name":"Write","input":{"file_path":"a.txt","content":"x"}}]},{"text":"done"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	outR, outW := io.Pipe()
	var errBuf strings.Builder
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-api", "anthropic", "-script", script}, outW, &errBuf) }()
	url, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, outR)
	body := `{"model":"claude-x","max_tokens":100,"stream":false,"tools":[{"name":"Write","input_schema":{"type":"object"}}],` +
		`"messages":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(strings.TrimSpace(url)+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"toolu_1"`) || !strings.Contains(string(b), `"a.txt"`) {
		t.Errorf("answer %d %s; want the scripted Write call", resp.StatusCode, b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	outW.Close()
	if !strings.Contains(errBuf.String(), "/v1/messages kind=turn") {
		t.Errorf("summary %q does not list the request", errBuf.String())
	}
}

// TestRunRefusesBadInput checks an unknown API and a bad script are errors.
func TestRunRefusesBadInput(t *testing.T) {
	if err := run(context.Background(), []string{"-api", "nope"}, io.Discard, io.Discard); err == nil {
		t.Error("-api nope: no error")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"turns":[{"tool_uses":[{"name":"Write","input":[1]}]}]}`), 0o644)
	if err := run(context.Background(), []string{"-script", bad}, io.Discard, io.Discard); err == nil {
		t.Error("a tool input that is no object: no error")
	}
}

// TestHintNamesAWorkingModel: the how-to line printed for -api ollama names
// a --model value that `statewright agent` parses as Ollama's native API at
// this server (an http:// URL would be taken for /v1/chat/completions, which
// the Ollama fake does not serve).
func TestHintNamesAWorkingModel(t *testing.T) {
	const url = "http://127.0.0.1:4321"
	h := hint(servers["ollama"].how, "ollama", url)
	i := strings.Index(h, "--model ")
	if i < 0 {
		t.Fatalf("hint %q names no --model", h)
	}
	arg := strings.Fields(h[i+len("--model "):])[0]
	ep, err := model.ParseEndpoint(strings.TrimSuffix(arg, ","))
	if err != nil {
		t.Fatalf("hint %q: %v", h, err)
	}
	if ep.API != model.Ollama || ep.BaseURL != url {
		t.Errorf("hint %q: --model %s is %s at %s, want ollama at %s", h, arg, ep.API, ep.BaseURL, url)
	}
	if !strings.Contains(h, "OLLAMA_HOST=127.0.0.1:4321") {
		t.Errorf("hint %q: OLLAMA_HOST should be host:port", h)
	}
	if h := hint(servers["chat"].how, "chat", url); !strings.Contains(h, url+"/v1") {
		t.Errorf("chat hint %q lost the URL", h)
	}
}
