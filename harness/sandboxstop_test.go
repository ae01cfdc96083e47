//go:build linux

package harness

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/sandbox"
)

// TestRouteStopsAnotherPhasesSandbox: a decision of any tool in another
// phase than the session's sandbox server stops that server (here a
// stand-in process recorded as it), so background commands do not outlive
// their phase; a decision in the same phase leaves it running.
func TestRouteStopsAnotherPhasesSandbox(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root, err := sandbox.DefaultRoot()
	if err != nil {
		t.Fatal(err)
	}
	const session = "claude-code:s1"
	server := exec.Command("sleep", "60")
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = server.Wait(); close(exited) }()
	defer server.Process.Kill()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(server.Process.Pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))[19]
	rec, _ := json.Marshal(map[string]any{"key": "k", "phase": "implementing", "pid": server.Process.Pid, "start": start})
	srv := sandbox.ServerDir(root)
	if err := os.MkdirAll(srv, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv, filepath.Base(sandbox.SessionDir(root, session))+".json"), rec, 0o600); err != nil {
		t.Fatal(err)
	}
	h := &Hook{Options: Options{Sandbox: true}}
	decide := func(state string) {
		tc := runtime.ToolCall{Session: session}
		r, deny := h.RouteShell(&tc, false)
		if deny != "" {
			t.Fatal(deny)
		}
		if _, _, err := r.Rewrite(runtime.DecideResult{State: state}, json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	decide("implementing")
	select {
	case <-exited:
		t.Fatal("a decision in the server's own phase stopped it")
	case <-time.After(200 * time.Millisecond):
	}
	decide("planning")
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("a decision in another phase left the server running")
	}
}
