// Command fakemodel serves a scripted fake model on a loopback port, the
// way statewright's end-to-end tests drive the real harnesses offline
// (internal/fakemodel): point a harness at it and watch statewright deny
// and teach without an API key or a network.
//
//	go run ./cmd/fakemodel -api anthropic            # Claude Code: ANTHROPIC_BASE_URL
//	go run ./cmd/fakemodel -api responses            # Codex: a model provider's base_url
//	go run ./cmd/fakemodel -api chat                 # opencode, Pi: an OpenAI-compatible provider
//	go run ./cmd/fakemodel -api ollama               # statewright agent --model ollama://HOST:PORT#fake
//	go run ./cmd/fakemodel -api chat -script turns.json -log
//
// It prints the base URL, answers until interrupted, then prints one line
// per request it served. Without -script it plays a default script for the
// API: one turn that writes statewright-demo.txt with the harness's write
// tool (a read-only phase denies it and the model reads the lesson), then
// a text answer. A script is JSON:
//
//	{"turns": [{"tool_uses": [{"name": "Write", "input": {"file_path": "a.txt", "content": "x"}}]},
//	           {"text": "done"}]}
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(2)
	}
}

// scriptFile is the JSON form of a fakemodel.Script's turns.
type scriptFile struct {
	Turns []struct {
		Text     string `json:"text"`
		ToolUses []struct {
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"tool_uses"`
	} `json:"turns"`
}

// servers are the wire APIs, each with its default script's write call.
var servers = map[string]struct {
	new   func(fakemodel.Script, ...fakemodel.Option) *fakemodel.Server
	write fakemodel.ToolUse
	how   string
}{
	"anthropic": {fakemodel.NewAnthropic, fakemodel.Tool("Write", map[string]any{"file_path": "statewright-demo.txt", "content": "hello\n"}),
		"Claude Code: ANTHROPIC_BASE_URL=%s ANTHROPIC_API_KEY=fake claude -p 'try it'"},
	"responses": {fakemodel.NewResponses, fakemodel.Tool("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: statewright-demo.txt\n+hello\n*** End Patch\n"}),
		"Codex: a model provider with base_url = \"%s/v1\" and wire_api = \"responses\" in config.toml, " +
			"and a model whose metadata offers apply_patch (model_catalog_json: docs/e2e.md, Codex's facts)"},
	"chat": {fakemodel.NewChatCompletions, fakemodel.Tool("write", map[string]any{"filePath": "statewright-demo.txt", "path": "statewright-demo.txt", "content": "hello\n"}),
		"opencode, Pi: an OpenAI-compatible provider with baseURL %s/v1"},
	"ollama": {fakemodel.NewOllama, fakemodel.Tool("write_file", map[string]any{"path": "statewright-demo.txt", "content": "hello\n"}),
		"an Ollama client on its native /api/chat: statewright agent --model ollama://%s#fake, or OLLAMA_HOST=%[1]s"},
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fakemodel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	api := fs.String("api", "anthropic", "the wire API: anthropic, responses (Codex), chat (opencode, Pi) or ollama")
	scriptPath := fs.String("script", "", "a JSON script of turns (default: write statewright-demo.txt, then answer)")
	logReqs := fs.Bool("log", false, "print a line for every request as it is answered")
	if err := fs.Parse(args); err != nil {
		return err
	}
	srvKind, ok := servers[*api]
	if !ok {
		return fmt.Errorf("-api %q: want anthropic, responses, chat or ollama", *api)
	}
	script := fakemodel.Script{Turns: []fakemodel.Turn{fakemodel.Call(srvKind.write), fakemodel.Say("Done (fakemodel).")}}
	if *scriptPath != "" {
		b, err := os.ReadFile(*scriptPath)
		if err != nil {
			return err
		}
		var sf scriptFile
		if err := json.Unmarshal(b, &sf); err != nil {
			return fmt.Errorf("%s: %w", *scriptPath, err)
		}
		script.Turns = nil
		for _, t := range sf.Turns {
			turn := fakemodel.Turn{Text: t.Text}
			for _, u := range t.ToolUses {
				turn.ToolUses = append(turn.ToolUses, fakemodel.ToolUse{ID: u.ID, Name: u.Name, Input: u.Input})
			}
			script.Turns = append(script.Turns, turn)
		}
	}
	var opts []fakemodel.Option
	if *logReqs {
		opts = append(opts, fakemodel.WithLog(func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }))
	}
	srv, err := newServer(srvKind.new, script, opts)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, srv.URL)
	fmt.Fprintf(stderr, "fakemodel: serving %d turns at %s; %s\n", len(script.Turns), srv.URL, hint(srvKind.how, *api, srv.URL))
	<-ctx.Done()
	srv.Close()
	fmt.Fprint(stderr, srv.Summary())
	return nil
}

// newServer starts the server; a script the package refuses (a tool input
// that is not a JSON object) is an error, not a panic.
func newServer(mk func(fakemodel.Script, ...fakemodel.Option) *fakemodel.Server, s fakemodel.Script, opts []fakemodel.Option) (srv *fakemodel.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("script: %v", r)
		}
	}()
	return mk(s, opts...), nil
}

// hint fills the API's how-to with the server's URL: Ollama's clients name
// the host and port alone (ollama://HOST:PORT, OLLAMA_HOST), an http:// URL
// would be taken for an OpenAI-compatible server at /v1.
func hint(how, api, url string) string {
	if api == "ollama" {
		url = strings.TrimPrefix(url, "http://")
	}
	return fmt.Sprintf(how, url)
}
