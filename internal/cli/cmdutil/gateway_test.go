package cmdutil

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/gateway"
)

func stderrLoggerTo(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, nil))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

func TestCommandNotifier(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "notice")
	script := filepath.Join(dir, "notify.sh")
	// The script stores stdin, then its last argument.
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat > "+out+".tmp\nfor a; do last=$a; done\necho \"$last\" >> "+out+".tmp\nmv "+out+".tmp "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := &GatewayFlags{notifyCmd: script}
	n := f.Notifier(stderrLoggerTo(t))
	n(context.Background(), gateway.Pending{Session: "claude-code:s", From: "a", To: "b", ApprovalID: "apr_1", Approve: "statewright approve claude-code:s --id apr_1"})
	deadline := time.Now().Add(10 * time.Second)
	var b []byte
	for {
		var err error
		if b, err = os.ReadFile(out); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", 2)
	if len(lines) != 2 {
		t.Fatalf("notice file: %q", b)
	}
	var v struct {
		Type     string
		Approval gateway.Pending
	}
	if err := json.Unmarshal([]byte(lines[0]), &v); err != nil || v.Type != "statewright.approval.pending" || v.Approval.ApprovalID != "apr_1" {
		t.Fatalf("stdin: %q %v", lines[0], err)
	}
	if !strings.Contains(lines[1], "from a to b; approve with: statewright approve claude-code:s --id apr_1") {
		t.Fatalf("summary argument: %q", lines[1])
	}
	if (&GatewayFlags{}).Notifier(stderrLoggerTo(t)) != nil {
		t.Fatal("a notifier without flags")
	}
}
