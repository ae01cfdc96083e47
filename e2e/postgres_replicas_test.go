//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/mcpserver"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/postgres/pgtest"
)

const approvalWorkflow = `{
  "id": "gate",
  "initial": "plan",
  "states": {
    "plan": {"allowed_tools": ["Read"], "on": {"SHIP": {"target": "ship", "requires_approval": true, "approval_message": "ship it?"}}},
    "ship": {"allowed_tools": ["Read", "Edit"], "on": {"DONE": "end"}},
    "end": {"type": "final"}
  }
}`

// An agent's MCP session on replica A parks its run for approval; an
// operator approves through replica B; A's MCP client is told at once
// (notifications/tools/list_changed). A's session polling is switched off
// (--poll 1h), so only the store's NOTIFY can have woken it. The approval
// retried with the same Idempotency-Key on A answers the first result, and
// the log holds one grant.
func TestPostgresApprovalSeenByOtherReplica(t *testing.T) {
	url := pgtest.Schema(t)
	sw := statewrightBinary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st := openLoadStore(t, url)
	wf := filepath.Join(dir, "gate.json")
	if err := os.WriteFile(wf, []byte(approvalWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := runtime.New(st, runtime.Options{ProjectDir: dir})
	const session = "appr-1"
	if _, err := svc.Start(ctx, "claude-code:"+session, wf, runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens.json")
	mint := func(role string) string {
		out, err := exec.Command(sw, "tokens", "create", "--role", role, "--tokens-file", tokens).Output()
		if err != nil {
			t.Fatalf("tokens create %s: %v", role, err)
		}
		return strings.TrimSpace(string(out))
	}
	agentTok, opTok, hookTok := mint("agent"), mint("operator"), mint("hook")
	a := startReplicaArgs(t, sw, url, st.StoreID(), tokens, dir, "a", "--poll", "1h")
	b := startReplicaArgs(t, sw, url, st.StoreID(), tokens, dir, "b", "--poll", "1h")

	changed := make(chan struct{}, 16)
	hdr := &headerTransport{base: http.DefaultTransport, set: map[string]string{
		"Authorization": "Bearer " + agentTok, "Statewright-Session": session}}
	client := mcp.NewClient(&mcp.Implementation{Name: "replica-test", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: a.base + "/mcp", HTTPClient: &http.Client{Transport: hdr}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolTransition, Arguments: map[string]any{"event": "SHIP"},
		Meta: mcp.Meta{mcpserver.ToolUseIDMetaKey: "toolu_ship"}})
	if err != nil || res.IsError {
		t.Fatalf("SHIP through A: %v %+v", err, res)
	}
	run, err := st.LiveRun(ctx, "claude-code:"+session)
	if err != nil || run.PendingApproval == nil {
		t.Fatalf("run after SHIP: %+v, %v; want parked", run, err)
	}
	apID := run.PendingApproval.ID
	// Let the notification of the park itself arrive, then start clean.
	time.Sleep(500 * time.Millisecond)
	for len(changed) > 0 {
		<-changed
	}

	approve := func(rp *replica) (int, string) {
		body, _ := json.Marshal(map[string]string{"approval_id": apID})
		req, _ := http.NewRequestWithContext(ctx, "POST", rp.base+"/api/sessions/"+session+"/approve", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+opTok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "approve-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("approve through %s: %v", rp.name, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	sent := time.Now()
	if code, body := approve(b); code != 200 || !strings.Contains(body, `"to": "ship"`) {
		t.Fatalf("approve through B = %d %s", code, body)
	}
	select {
	case <-changed:
		t.Logf("replica A told its MCP client %v after the approval through B", time.Since(sent).Round(time.Millisecond))
	case <-time.After(20 * time.Second): // a liveness bound; A's own polling is off
		t.Fatal("replica A never told its MCP client that the approval through B changed the phase")
	}
	run, err = st.LiveRun(ctx, "claude-code:"+session)
	if err != nil || run.State != "ship" || run.PendingApproval != nil {
		t.Fatalf("run after approval: %+v, %v", run, err)
	}
	// The operator's client retries on A (B's answer was lost): the same key answers the same.
	if code, body := approve(a); code != 200 || !strings.Contains(body, `"to": "ship"`) {
		t.Fatalf("approve retried through A = %d %s; want the first answer", code, body)
	}
	evs, err := st.Events(ctx, store.EventFilter{RunID: run.ID, Kinds: []store.EventKind{store.KindApproval}})
	if err != nil {
		t.Fatal(err)
	}
	granted := 0
	for _, e := range evs {
		if strings.Contains(string(e.Data), `"granted"`) {
			granted++
		}
	}
	if granted != 1 {
		t.Errorf("approval events granting: %d, want 1 (%d approval events)", granted, len(evs))
	}
	if run.State != "ship" || run.Revision != 3 {
		t.Errorf("run at %s revision %d; want ship at 3 (start, park, grant)", run.State, run.Revision)
	}
	// Killing B leaves A deciding for the session.
	b.dead.Store(true)
	b.cmd.Process.Signal(syscall.SIGKILL)
	body, _ := json.Marshal(map[string]any{"session_id": session, "hook_event_name": "PreToolUse", "permission_mode": "default",
		"cwd": dir, "tool_name": "Edit", "tool_input": map[string]any{"file_path": filepath.Join(dir, "x.go"), "old_string": "a", "new_string": "b"},
		"tool_use_id": "toolu_edit"})
	if err := postHook(ctx, http.DefaultClient, a, hookTok, body); err != nil {
		t.Fatalf("an Edit in ship through A after B died: %v", err)
	}
}
