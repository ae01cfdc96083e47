//go:build unix

// Command sbupstream is a small stdio MCP server for the gateway's sandbox
// tests: it writes and reads files, reports who it is, and starts a
// process that keeps appending to a file (so that a test can see it stop).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"os/exec"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type pathIn struct {
	Path string `json:"path"`
	Text string `json:"text,omitempty"`
}

func result(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func failed(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}

func main() {
	var b [8]byte
	_, _ = rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	s := mcp.NewServer(&mcp.Implementation{Name: "sbupstream", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "write"}, func(_ context.Context, _ *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
		if err := os.WriteFile(in.Path, []byte(in.Text), 0o644); err != nil {
			return failed(err), nil, nil
		}
		return result("wrote %s", in.Path), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "read"}, func(_ context.Context, _ *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
		data, err := os.ReadFile(in.Path)
		if err != nil {
			return failed(err), nil, nil
		}
		return result("%s", data), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return result("nonce=%s pid=%d", nonce, os.Getpid()), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "loop"}, func(_ context.Context, _ *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
		// A process of its own that leaves the server's session and keeps
		// appending to path.
		cmd := exec.Command("/bin/sh", "-c", `while :; do echo x >> "$1"; sleep 0.05; done`, "sh", in.Path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return failed(err), nil, nil
		}
		go func() { _ = cmd.Wait() }()
		return result("looping, pid %d", cmd.Process.Pid), nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
