package mcpio

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain runs the test binary as a stdio MCP server when asked to (the
// upstream of TestCommandTransport).
func TestMain(m *testing.M) {
	if os.Getenv("MCPIO_TEST_SERVER") == "1" {
		s := newServer(make(chan struct{}, 8), make(chan struct{}, 8))
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCommandTransport: an SDK client on a stdio server process, and the
// end of the process when the session closes.
func TestCommandTransport(t *testing.T) {
	ctx := context.Background()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MCPIO_TEST_SERVER=1")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, &CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != text {
			t.Fatalf("echo %q: %v %+v", text, err, res)
		}
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Exited() {
		t.Fatalf("the server process did not exit: %v", cmd.ProcessState)
	}
}

// TestCommandTransportTerminates: a command that ignores the end of its
// stdin and SIGTERM is killed.
func TestCommandTransportTerminates(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap "" TERM; while :; do sleep 1; done`)
	conn, err := (&CommandTransport{Command: cmd, TerminateDuration: 50 * time.Millisecond}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if cmd.ProcessState == nil || cmd.ProcessState.Exited() {
		t.Fatalf("the command was not killed: %v", cmd.ProcessState)
	}
}
