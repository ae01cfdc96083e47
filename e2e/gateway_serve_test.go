//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// startServe runs `statewright serve` on a free loopback port with extra
// flags and returns its base URL. The process group is killed at cleanup.
func (p *gwProject) startServe(t *testing.T, extra ...string) string {
	t.Helper()
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--store", p.storePath, "--project-dir", p.dir, "--poll", "100ms"}, extra...)
	cmd := exec.Command(p.sw, args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+p.cfg)
	setProcessGroup(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		killProcessGroup(cmd)
		cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`listening on (http://[0-9.:]+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log("serve: " + sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return a
	case <-time.After(30 * time.Second):
		t.Fatal("statewright serve did not start listening within 30s")
	}
	return ""
}

// storeFingerprint is what "no state change" compares: the run's revision
// and state, and the number of events in the log.
func (p *gwProject) storeFingerprint(t *testing.T) (int64, string, int) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), p.storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.LiveRun(context.Background(), "claude-code:"+p.session)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Events(context.Background(), store.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Revision, r.State, len(evs)
}

func post(t *testing.T, url, token, body string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// bearer adds a token and headers to every request of the go-sdk client.
type bearer struct {
	hdr http.Header
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range b.hdr {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeAuthAndHooks: a wrong or missing token gets 401 and changes
// nothing (operator API, MCP); the hook endpoint answers every refusal
// (no token, a wrong one, an agent or operator token) with 200 and a deny
// in Claude Code's JSON, and decides like the hook command for a hook
// credential; an agent token cannot approve; a rebinding Host is refused;
// an agent token over MCP moves the run, and the HTTP session hears
// list_changed; an operator token approves.
func TestServeAuthAndHooks(t *testing.T) {
	p := newGWProject(t)
	agent := strings.TrimSpace(p.cli(t, "tokens", "create", "--role", "agent"))
	operator := strings.TrimSpace(p.cli(t, "tokens", "create", "--role", "operator"))
	hookCred := strings.TrimSpace(p.cli(t, "tokens", "create", "--role", "hook"))
	fs := MCPServerBinary(t, "mcp-server-filesystem")
	base := p.startServe(t, "--upstream", "fs="+fs+" "+p.dir)

	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()

	rev0, state0, events0 := p.storeFingerprint(t)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	transition := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"statewright_transition","arguments":{"event":"PLAN_READY"}}}`
	preToolUse := `{"session_id":"gw","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"` +
		filepath.Join(p.dir, "src", "x.txt") + `","content":"x"},"tool_use_id":"toolu_1","cwd":"` + p.dir + `","transcript_path":"/dev/null"}`
	for _, c := range []struct{ name, url, token, body string }{
		{"mcp without token", "/mcp", "", initialize},
		{"mcp with a wrong token", "/mcp", agent + "0", initialize},
		{"mcp transition with a wrong token", "/mcp", "swa_" + strings.Repeat("ab", 32), transition},
		{"approve without token", "/api/sessions/gw/approve", "", "{}"},
		{"deactivate with a wrong token", "/api/sessions/gw/deactivate", wrongLastDigit(operator), "{}"},
	} {
		code, body := post(t, base+c.url, c.token, c.body, "Statewright-Session", "gw")
		if code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401: %s", c.name, code, body)
		}
	}
	// The hook endpoint fails closed: a refused hook is a 200 whose JSON
	// denies (Claude Code lets the call through on any other status).
	for _, c := range []struct{ name, token string }{
		{"hook without token", ""},
		{"hook with a revoked-looking token", "swh_nope"},
		{"hook with a wrong hook credential", wrongLastDigit(hookCred)},
		{"hook with an agent token", agent},
		{"hook with an operator token", operator},
	} {
		code, body := post(t, base+"/hook/claude-code/pre-tool-use", c.token, preToolUse)
		if code != 200 || !strings.Contains(body, `"permissionDecision":"deny"`) {
			t.Errorf("%s: %d %s; want 200 and a deny", c.name, code, body)
		}
	}
	// An agent token may not approve or weaken.
	for _, action := range []string{"approve", "deactivate", "pause"} {
		if code, body := post(t, base+"/api/sessions/gw/"+action, agent, "{}"); code != http.StatusForbidden {
			t.Errorf("%s with an agent token: %d, want 403: %s", action, code, body)
		}
	}
	// DNS rebinding: a foreign Host is refused even with a token.
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(initialize))
	req.Host = "attacker.example"
	req.Header.Set("Authorization", "Bearer "+agent)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign Host: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if rev, state, events := p.storeFingerprint(t); rev != rev0 || state != state0 || events != events0 {
		t.Fatalf("refused requests changed the store: revision %d→%d, state %s→%s, events %d→%d", rev0, rev, state0, state, events0, events)
	}

	// The hook endpoint decides like the hook: a Write in planning is denied
	// in Claude Code's HTTP-hook JSON.
	code, body := post(t, base+"/hook/claude-code/pre-tool-use", hookCred, preToolUse)
	if code != 200 || !strings.Contains(body, `"permissionDecision":"deny"`) || !strings.Contains(body, "planning") {
		t.Fatalf("hook endpoint: %d %s", code, body)
	}

	// The go-sdk client over streamable HTTP with an agent token.
	hdr := http.Header{}
	hdr.Set("Authorization", "Bearer "+agent)
	hdr.Set("Statewright-Session", "gw")
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{hdr}}}, nil)
	if err != nil {
		t.Fatalf("connect over HTTP: %v", err)
	}
	defer cs.Close()
	gc := &gatewayClient{cs: cs, changed: changed}
	if names := gc.toolNames(t); names["fs__write_file"] || !names["fs__read_text_file"] {
		t.Fatalf("planning over HTTP: %v", names)
	}
	res := gc.call(t, "fs__write_file", map[string]any{"path": filepath.Join(p.dir, "src", "x.txt"), "content": "x"})
	if !res.IsError {
		t.Fatalf("write in planning over HTTP allowed: %s", resultText(res))
	}
	if _, err := os.Stat(filepath.Join(p.dir, "src", "x.txt")); !os.IsNotExist(err) {
		t.Fatal("the denied write reached the disk")
	}
	res = gc.call(t, "statewright_transition", map[string]any{"event": "PLAN_READY"})
	if res.IsError {
		t.Fatalf("transition over HTTP: %s", resultText(res))
	}
	gc.waitChanged(t, "PLAN_READY over HTTP")
	if names := gc.toolNames(t); !names["fs__write_file"] {
		t.Fatalf("implementing over HTTP: %v", names)
	}
	// Another token cannot ride this MCP session.
	other := strings.TrimSpace(p.cli(t, "tokens", "create", "--role", "agent"))
	if code, _ := post(t, base+"/mcp", other, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, "Mcp-Session-Id", cs.ID()); code != http.StatusNotFound {
		t.Fatalf("another token on this MCP session: %d, want 404", code)
	}

	// Park on the approval gate; the operator approves over HTTP.
	if res := gc.call(t, "statewright_transition", map[string]any{"event": "DONE"}); res.IsError {
		t.Fatalf("DONE: %s", resultText(res))
	}
	if code, body := post(t, base+"/api/sessions/gw/approve", operator, "{}"); code != 200 {
		t.Fatalf("operator approve: %d %s", code, body)
	}
	st, err := sqlite.Open(context.Background(), p.storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), store.RunFilter{SessionKey: "claude-code:gw", Limit: 1})
	if err != nil || len(runs) != 1 || runs[0].State != "done" {
		t.Fatalf("after the operator's approval: %+v %v", runs, err)
	}
	evs, err := st.Events(context.Background(), store.EventFilter{SessionKey: "claude-code:gw", Kinds: []store.EventKind{store.KindApproval}})
	if err != nil {
		t.Fatal(err)
	}
	var byOperator bool
	for _, e := range evs {
		if strings.Contains(string(e.Data), "serve:operator-token") {
			byOperator = true
		}
	}
	if !byOperator {
		t.Fatalf("no approval event by the operator token's channel: %+v", evs)
	}
}

// TestGatewayApprovalByElicitation: with --approve-by-elicitation, a
// transition that needs approval is put to the client's person through MCP
// elicitation; accepting approves exactly that pending transition (the
// store records the elicitation channel).
func TestGatewayApprovalByElicitation(t *testing.T) {
	p := newGWProject(t)
	cmd := exec.Command(p.sw, "mcp", "--store", p.storePath, "--session", p.session, "--project-dir", p.dir, "--approve-by-elicitation")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+p.cfg)
	cmd.Stderr = &testLog{t: t, prefix: "gateway: "}
	var asked string
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-person", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = req.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	gc := &gatewayClient{cs: cs}
	if res := gc.call(t, "statewright_transition", map[string]any{"event": "PLAN_READY"}); res.IsError {
		t.Fatal(resultText(res))
	}
	res := gc.call(t, "statewright_transition", map[string]any{"event": "DONE"})
	if res.IsError || !strings.Contains(resultText(res), "A person approved the transition") {
		t.Fatalf("DONE with elicitation: %s", resultText(res))
	}
	if !strings.Contains(asked, "'implementing' to 'done'") {
		t.Fatalf("elicitation message: %q", asked)
	}
	st, err := sqlite.Open(context.Background(), p.storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), store.RunFilter{SessionKey: "claude-code:gw", Limit: 1})
	if err != nil || len(runs) != 1 || runs[0].State != "done" {
		t.Fatalf("after elicitation: %+v %v", runs, err)
	}
	evs, _ := st.Events(context.Background(), store.EventFilter{SessionKey: "claude-code:gw", Kinds: []store.EventKind{store.KindApproval}})
	var viaElicit bool
	for _, e := range evs {
		if strings.Contains(string(e.Data), "mcp-elicitation") {
			viaElicit = true
		}
	}
	if !viaElicit {
		t.Fatalf("no approval event through mcp-elicitation: %+v", evs)
	}
}

// TestGatewayElicitationOffByDefault: without the operator's flag, an
// elicitation-capable client's "accept" is never asked for, and the run
// stays parked for the CLI.
//
// It also names --notify-webhook: the parked transition is posted to it.
func TestGatewayElicitationOffByDefault(t *testing.T) {
	p := newGWProject(t)
	hooked := make(chan map[string]any, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v map[string]any
		json.NewDecoder(r.Body).Decode(&v)
		hooked <- v
	}))
	defer hook.Close()
	cmd := exec.Command(p.sw, "mcp", "--store", p.storePath, "--session", p.session, "--project-dir", p.dir, "--notify-webhook", hook.URL)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+p.cfg)
	asked := false
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = true
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	gc := &gatewayClient{cs: cs}
	gc.call(t, "statewright_transition", map[string]any{"event": "PLAN_READY"})
	gc.call(t, "statewright_transition", map[string]any{"event": "DONE"})
	if asked {
		t.Fatal("the gateway elicited an approval without --approve-by-elicitation")
	}
	r := p.run(t)
	if r.Status != store.StatusAwaitingApproval || r.State != "implementing" {
		t.Fatalf("run %s in %s, want awaiting_approval in implementing", r.Status, r.State)
	}
	select {
	case v := <-hooked:
		ap, _ := v["approval"].(map[string]any)
		if v["type"] != "statewright.approval.pending" || ap["approval_id"] != r.PendingApproval.ID || ap["to"] != "done" ||
			ap["session"] != "claude-code:gw" || !strings.Contains(fmt.Sprint(ap["approve_with"]), "statewright approve claude-code:gw") {
			t.Fatalf("webhook payload: %v", v)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the pending approval was not posted to the webhook")
	}
}

// wrongLastDigit returns tok with its last character changed, so the result
// is never the real token (appending or overwriting with a fixed digit is
// the token itself when it already ends in that digit).
func wrongLastDigit(tok string) string {
	last := tok[len(tok)-1]
	repl := byte('0')
	if last == '0' {
		repl = '1'
	}
	return tok[:len(tok)-1] + string(repl)
}
