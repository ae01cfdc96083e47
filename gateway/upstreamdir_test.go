package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/internal/mcpio"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store/sqlite"
)

// stdioUpstreamReaderEnv adds read_note to stdioUpstream.
const stdioUpstreamReaderEnv = "STATEWRIGHT_GATEWAY_TEST_STDIO_READER"

// addReadNote adds read_note to s: it answers the file its "path" names,
// a relative path read from the server's working directory, as most
// servers read one.
func addReadNote(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "read_note"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Path string `json:"path"`
	}) (*mcp.CallToolResult, any, error) {
		b, err := os.ReadFile(in.Path)
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
	})
}

// TestUpstreamDirRelativePaths: a stdio upstream configured with its own
// working directory (dir:) resolves a relative path there, so the law must
// too. It resolved every relative argument against the project: with the
// upstream in the home directory, {"path":".ssh/id_rsa"} was checked as
// <project>/.ssh/id_rsa, allowed, and the upstream answered ~/.ssh/id_rsa.
func TestUpstreamDirRelativePaths(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	t.Setenv("HOME", home)
	const key = "-----BEGIN OPENSSH PRIVATE KEY----- e2e-upstream-dir"
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "notes.txt"), []byte("plain notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	wf := filepath.Join(dir, "wf.json")
	os.WriteFile(wf, []byte(`{"id":"gwd","initial":"work","states":{
 "work":{"allowed_tools":["up__read_note"],"on":{"DONE":"done"}},
 "done":{"type":"final"}}}`), 0o644)
	svc := runtime.New(st, runtime.Options{ProjectDir: dir})
	if _, err := svc.Start(ctx, "claude-code:t", wf, runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Timeout: Duration(5 * time.Second), Upstreams: []Upstream{{Name: "up", Command: exe, Args: []string{"-test.run=^$"},
		Env: map[string]string{stdioUpstreamEnv: "1", stdioUpstreamReaderEnv: "1"}, Dir: home}}}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	m := NewManager(cfg, dir, nil)
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	g, err := New(Options{Runtime: svc, Store: st, Upstreams: m, ProjectDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Wait)
	for _, sdk := range []bool{false, true} {
		ct, stt := mcpio.NewInMemoryTransports()
		if sdk {
			srv, err := g.NewServer(SessionOptions{Session: "claude-code:t"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := srv.Connect(ctx, stt, nil); err != nil {
				t.Fatal(err)
			}
		} else {
			sv, err := g.NewSession(SessionOptions{Session: "claude-code:t"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sv.Connect(ctx, sv.Transport(stt), nil); err != nil {
				t.Fatal(err)
			}
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		call := func(p string) *mcp.CallToolResult {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__read_note", Arguments: map[string]any{"path": p}})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		if res := call("notes.txt"); res.IsError || text(res) != "plain notes" {
			t.Fatalf("sdk %v: read_note notes.txt: %v %q", sdk, res.IsError, text(res))
		}
		for _, p := range []string{".ssh/id_rsa", "./.ssh/id_rsa", "x/../.ssh/id_rsa"} {
			if res := call(p); !res.IsError || strings.Contains(text(res), key) {
				t.Errorf("sdk %v: read_note %s in the upstream's directory (home): %v %q; want a deny", sdk, p, res.IsError, text(res))
			}
		}
		cs.Close()
	}
}
