package dashboard

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/runtime"
	_ "modernc.org/sqlite"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

const testWorkflow = `{
  "id": "dash",
  "initial": "planning",
  "states": {
    "planning": {"allowed_tools": ["Read"], "on": {"PLANNED": "implementing"}},
    "implementing": {"allowed_tools": ["Read", "Edit"], "on": {"SHIP": {"target": "done", "requires_approval": true}}},
    "done": {"type": "final"}
  }
}`

const (
	operatorToken = "op-secret"
	agentToken    = "agent-secret"
	boundToken    = "bound-secret"
	testSession   = "claude-code:dash"
)

var human = runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}

type fixture struct {
	t   *testing.T
	st  store.Store
	svc *runtime.Service
	srv *httptest.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	wf := filepath.Join(dir, "wf.json")
	if err := os.WriteFile(wf, []byte(testWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := runtime.New(st, runtime.Options{ProjectDir: dir})
	if _, err := svc.Start(context.Background(), testSession, wf, human); err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Service: svc, Store: st, Poll: 20 * time.Millisecond, Verify: func(tok string) (Principal, error) {
		switch tok {
		case operatorToken:
			return Principal{Role: RoleOperator, Name: "ops"}, nil
		case agentToken:
			return Principal{Role: RoleAgent, Name: "agent"}, nil
		case boundToken:
			return Principal{Role: RoleAgent, Name: "bound", Session: "claude-code:other"}, nil
		}
		return Principal{}, ErrBadToken
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &fixture{t: t, st: st, svc: svc, srv: srv}
}

// park moves the run to implementing and parks it on SHIP's approval.
func (f *fixture) park() (runID, approvalID string) {
	f.t.Helper()
	ctx := context.Background()
	if _, err := f.svc.Transition(ctx, testSession, "PLANNED", nil, human); err != nil {
		f.t.Fatal(err)
	}
	res, err := f.svc.Transition(ctx, testSession, "SHIP", nil, runtime.Actor{Kind: runtime.ActorAgent, Channel: "test"})
	if err != nil || !res.Parked {
		f.t.Fatalf("SHIP: %+v %v", res, err)
	}
	r, err := f.st.LiveRun(ctx, testSession)
	if err != nil {
		f.t.Fatal(err)
	}
	return r.ID, res.ApprovalID
}

func (f *fixture) state() (string, store.Status) {
	f.t.Helper()
	runs, err := f.st.Runs(context.Background(), store.RunFilter{SessionKey: testSession})
	if err != nil || len(runs) == 0 {
		f.t.Fatalf("runs: %v", err)
	}
	return runs[0].State, runs[0].Status
}

type client struct {
	f      *fixture
	hc     *http.Client
	bearer string
	origin string
	csrf   string
}

func (f *fixture) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{f: f, hc: &http.Client{Jar: jar}, origin: f.srv.URL}
}

func (c *client) do(method, path string, body any, hdr map[string]string) (int, map[string]any, string) {
	c.f.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, c.f.srv.URL+path, rd)
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	if c.origin != "" && method != http.MethodGet {
		req.Header.Set("Origin", c.origin)
	}
	if c.csrf != "" && method != http.MethodGet {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, string(raw)
}

func (c *client) login(token string) int {
	code, m, _ := c.do("POST", "/api/login", map[string]string{"token": token}, nil)
	if s, ok := m["csrf"].(string); ok {
		c.csrf = s
	}
	return code
}

func TestNeedsAToken(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	for _, p := range []string{"/api/runs", "/api/session", "/api/stream", "/api/templates"} {
		if code, _, _ := c.do("GET", p, nil, nil); code != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: %d, want 401", p, code)
		}
	}
	c.bearer = "wrong"
	if code, _, _ := c.do("GET", "/api/runs", nil, nil); code != http.StatusUnauthorized {
		t.Errorf("wrong bearer: %d", code)
	}
	c.bearer = ""
	if code := c.login("wrong"); code != http.StatusUnauthorized {
		t.Errorf("login with a wrong token: %d", code)
	}
	// The page itself and its assets are public (they hold no data).
	for _, p := range []string{"/", "/static/app.js", "/static/app.css"} {
		if code, _, body := c.do("GET", p, nil, nil); code != http.StatusOK || body == "" {
			t.Errorf("GET %s: %d", p, code)
		}
	}
}

func TestLoginRefusesCrossOrigin(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	c.origin = "http://evil.example"
	if code := c.login(operatorToken); code != http.StatusForbidden {
		t.Fatalf("cross-origin login: %d, want 403", code)
	}
}

func TestApproveNeedsOperatorCSRFAndOrigin(t *testing.T) {
	f := newFixture(t)
	runID, apr := f.park()
	path := "/api/runs/" + runID + "/approve"
	body := map[string]string{"approval_id": apr}

	// An agent token, as a bearer: read yes, approve never.
	agent := f.client()
	agent.bearer = agentToken
	if code, _, _ := agent.do("GET", "/api/runs", nil, nil); code != http.StatusOK {
		t.Fatalf("agent read: %d", code)
	}
	if code, m, _ := agent.do("POST", path, body, nil); code != http.StatusForbidden {
		t.Fatalf("agent bearer approve: %d %v", code, m)
	}
	// An agent token signed in with a cookie and the CSRF token: still no.
	agentWeb := f.client()
	if code := agentWeb.login(agentToken); code != http.StatusOK {
		t.Fatalf("agent login: %d", code)
	}
	if code, _, _ := agentWeb.do("POST", path, body, nil); code != http.StatusForbidden {
		t.Fatalf("agent cookie approve: %d", code)
	}

	op := f.client()
	if code := op.login(operatorToken); code != http.StatusOK {
		t.Fatalf("operator login: %d", code)
	}
	csrf := op.csrf
	// Without the CSRF token.
	op.csrf = ""
	if code, _, _ := op.do("POST", path, body, nil); code != http.StatusForbidden {
		t.Fatalf("approve without CSRF: %d", code)
	}
	// With a wrong one.
	op.csrf = "0000"
	if code, _, _ := op.do("POST", path, body, nil); code != http.StatusForbidden {
		t.Fatalf("approve with a wrong CSRF token: %d", code)
	}
	// From another origin, with the right CSRF token.
	op.csrf, op.origin = csrf, "http://evil.example"
	if code, _, _ := op.do("POST", path, body, nil); code != http.StatusForbidden {
		t.Fatalf("cross-origin approve: %d", code)
	}
	// No Origin at all.
	op.origin = ""
	if code, _, _ := op.do("POST", path, body, nil); code != http.StatusForbidden {
		t.Fatalf("approve without Origin: %d", code)
	}
	if s, _ := f.state(); s != "implementing" {
		t.Fatalf("a refused request moved the run to %s", s)
	}
	op.origin = f.srv.URL
	// Bound to the approval id: another id, or none, is refused.
	if code, _, _ := op.do("POST", path, map[string]string{"approval_id": "apr_0000"}, nil); code != http.StatusConflict {
		t.Fatalf("approve of another id: %d", code)
	}
	if code, _, _ := op.do("POST", path, map[string]string{}, nil); code != http.StatusBadRequest {
		t.Fatalf("approve without an id: %d", code)
	}
	code, m, _ := op.do("POST", path, body, nil)
	if code != http.StatusOK || m["to"] != "done" {
		t.Fatalf("operator approve: %d %v", code, m)
	}
	if s, st := f.state(); s != "done" || st != store.StatusCompleted {
		t.Fatalf("after approve: %s %s", s, st)
	}
	// Recorded as a person through the web.
	evs, _ := f.st.Events(context.Background(), store.EventFilter{RunID: runID, Kinds: []store.EventKind{store.KindApproval}})
	var granted bool
	for _, e := range evs {
		var d struct {
			Action string        `json:"action"`
			Actor  runtime.Actor `json:"actor"`
		}
		json.Unmarshal(e.Data, &d)
		if d.Action == "granted" {
			granted = d.Actor.Kind == runtime.ActorHuman && d.Actor.Channel == "web" && d.Actor.Name == "ops"
		}
	}
	if !granted {
		t.Fatalf("no grant by human/web/ops in %d approval events", len(evs))
	}
	// A second approve finds nothing pending.
	if code, _, _ := op.do("POST", path, body, nil); code != http.StatusConflict {
		t.Fatalf("second approve: %d", code)
	}
}

func TestRejectKeepsTheRun(t *testing.T) {
	f := newFixture(t)
	runID, apr := f.park()
	op := f.client()
	op.bearer = operatorToken // bearer clients need no CSRF token
	code, _, raw := op.do("POST", "/api/runs/"+runID+"/reject", map[string]string{"approval_id": apr, "reason": "not yet"}, nil)
	if code != http.StatusOK {
		t.Fatalf("reject: %d %s", code, raw)
	}
	if s, st := f.state(); s != "implementing" || st != store.StatusActive {
		t.Fatalf("after reject: %s %s", s, st)
	}
}

func TestRunViewAndEvents(t *testing.T) {
	f := newFixture(t)
	runID, _ := f.park()
	c := f.client()
	c.bearer = agentToken
	code, m, _ := c.do("GET", "/api/runs/"+runID, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("run: %d", code)
	}
	svg, _ := m["svg"].(string)
	if !strings.Contains(svg, `class="node current" data-state="implementing" aria-current="step"`) {
		t.Errorf("the graph does not mark implementing:\n%s", svg)
	}
	if code, _, _ := c.do("GET", "/api/runs/nope", nil, nil); code != http.StatusNotFound {
		t.Errorf("unknown run: %d", code)
	}
	_, _, raw := c.do("GET", "/api/runs/"+runID+"/events?kind=transition,approval", nil, nil)
	var evs []store.Event
	if err := json.Unmarshal([]byte(raw), &evs); err != nil {
		t.Fatal(err)
	}
	kinds := map[store.EventKind]int{}
	for _, e := range evs {
		kinds[e.Kind]++
	}
	if kinds[store.KindTransition] != 2 || kinds[store.KindApproval] != 1 || len(kinds) != 2 {
		t.Errorf("events by kind: %v", kinds)
	}
	if code, _, _ := c.do("GET", "/api/runs/"+runID+"/events?decision=maybe", nil, nil); code != http.StatusBadRequest {
		t.Errorf("bad filter: %d", code)
	}
}

func TestValidate(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	if c.login(operatorToken) != http.StatusOK {
		t.Fatal("login")
	}
	src := "id: broken\ninitial: planning\nstates:\n  planning:\n    on: { GO: nowhere }\n  done: { type: final }\n"
	code, m, raw := c.do("POST", "/api/validate", map[string]string{"source": src}, nil)
	if code != http.StatusOK {
		t.Fatalf("validate: %d %s", code, raw)
	}
	var res ValidateResult
	json.Unmarshal([]byte(raw), &res)
	if res.Valid || !strings.Contains(res.SVG, `data-state="nowhere"`) {
		t.Fatalf("validate: %v", m)
	}
	var found bool
	for _, d := range res.Diagnostics {
		if d.Code == "unknown-target" && d.Line == 5 && d.Col == 15 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no unknown-target at 5:15: %+v", res.Diagnostics)
	}
	// A syntax error has a position and no preview.
	_, _, raw = c.do("POST", "/api/validate", map[string]string{"source": "{\"id\": \"x\",\n  \"initial\": }"}, nil)
	json.Unmarshal([]byte(raw), &res)
	if res.Valid || res.SVG != "" || len(res.Diagnostics) == 0 || res.Diagnostics[0].Line != 2 {
		t.Fatalf("syntax error: %+v", res)
	}
	// Validation changes nothing, but it is a POST: it needs the CSRF token too.
	c.csrf = ""
	if code, _, _ := c.do("POST", "/api/validate", map[string]string{"source": src}, nil); code != http.StatusForbidden {
		t.Fatalf("validate without CSRF: %d", code)
	}
}

func TestStreamSignalsChanges(t *testing.T) {
	f := newFixture(t)
	req, _ := http.NewRequest("GET", f.srv.URL+"/api/stream", nil)
	req.Header.Set("Authorization", "Bearer "+agentToken)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	next := func() string {
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				return d
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return ""
	}
	first := next()
	if _, err := f.svc.Transition(context.Background(), testSession, "PLANNED", nil, human); err != nil {
		t.Fatal(err)
	}
	if second := next(); second == first {
		t.Fatalf("no change signalled: %s", second)
	}
}

func TestParseEventFilter(t *testing.T) {
	for _, tc := range []struct {
		q    string
		ok   bool
		want EventFilter
	}{
		{q: "", ok: true, want: EventFilter{Limit: 200}},
		{q: "kind=decision,result&decision=deny&tool=Edit&q=x&limit=5", ok: true,
			want: EventFilter{Kinds: []store.EventKind{store.KindDecision, store.KindResult}, Decision: "deny", Tool: "Edit", Text: "x", Limit: 5}},
		{q: "limit=99999", ok: true, want: EventFilter{Limit: 2000}},
		{q: "kind=nope"}, {q: "decision=maybe"}, {q: "limit=-1"}, {q: "limit=x"},
	} {
		v, _ := url.ParseQuery(tc.q)
		got, err := ParseEventFilter(v)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v", tc.q, err)
			continue
		}
		if tc.ok {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tc.want)
			if string(gj) != string(wj) {
				t.Errorf("%q: got %s want %s", tc.q, gj, wj)
			}
		}
	}
}

func FuzzParseEventFilter(f *testing.F) {
	for _, s := range []string{"kind=decision&decision=deny", "limit=5&tool=%00", "kind=,,,", "q=" + strings.Repeat("a", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		v, err := url.ParseQuery(q)
		if err != nil {
			return
		}
		fl, err := ParseEventFilter(v)
		if err == nil && (fl.Limit <= 0 || fl.Limit > 2000) {
			t.Fatalf("limit %d out of range", fl.Limit)
		}
		_ = fl.Match(&store.Event{Kind: store.KindDecision, Decision: "deny", Tool: "Edit"})
	})
}

func TestSessionBoundTokenSeesOnlyItsSession(t *testing.T) {
	f := newFixture(t)
	runID, _ := f.park()
	c := f.client()
	c.bearer = boundToken
	_, _, raw := c.do("GET", "/api/runs", nil, nil)
	if strings.TrimSpace(raw) != "[]" {
		t.Errorf("a token bound to another session listed runs: %s", raw)
	}
	for _, p := range []string{"/api/runs/" + runID, "/api/runs/" + runID + "/events", "/api/runs/" + runID + "/graph.svg"} {
		if code, _, _ := c.do("GET", p, nil, nil); code != http.StatusNotFound {
			t.Errorf("GET %s with a token bound to another session: %d, want 404", p, code)
		}
	}
}

// TestRunViewShowsTheStack: while an invoked sub-workflow runs, the run
// view names it, lists what waits for it and draws its graph.
func TestRunViewShowsTheStack(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	for name, src := range map[string]string{
		"parent.json": `{"id":"parent","initial":"work","states":{"work":{"on":{"CHECK":{"invoke":"audit","on_complete":"done"}}},"done":{"type":"final"}}}`,
		"audit.json":  `{"id":"audit","initial":"look","states":{"look":{"allowed_tools":["Read"],"on":{"PASS":"passed"}},"passed":{"type":"final"}}}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	v, err := f.svc.Start(ctx, "claude-code:sub", filepath.Join(dir, "parent.json"), human)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Transition(ctx, "claude-code:sub", "CHECK", nil, human); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	c.bearer = operatorToken
	code, m, _ := c.do("GET", "/api/runs/"+v.Run.ID, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("run: %d", code)
	}
	stack, _ := m["stack"].([]any)
	if m["workflow_in_force"] != "audit" || len(stack) != 1 || !strings.Contains(stack[0].(string), "parent waits in work: invoked audit") {
		t.Fatalf("run view: workflow_in_force %v, stack %v", m["workflow_in_force"], m["stack"])
	}
	if svg, _ := m["svg"].(string); !strings.Contains(svg, `data-state="look" aria-current="step"`) {
		t.Errorf("the graph is not the sub-workflow's:\n%s", svg)
	}
}

// TestVerifyShowsTheLogsVerdict: the page's verdict on the event log is
// what `statewright verify` says, and a flipped event turns it red.
func TestVerifyShowsTheLogsVerdict(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	if c.login(agentToken) != http.StatusOK {
		t.Fatal("login")
	}
	code, m, raw := c.do("GET", "/api/verify", nil, nil)
	if code != http.StatusOK || m["ok"] != true || !strings.Contains(m["verdict"].(string), "no checkpoint and no trusted key") {
		t.Fatalf("verify: %d %s", code, raw)
	}
	db, err := sql.Open("sqlite", f.st.Identity().Location)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("DROP TRIGGER events_no_update; UPDATE events SET reason = 'edited' WHERE seq = 1"); err != nil {
		t.Fatal(err)
	}
	code, m, raw = c.do("GET", "/api/verify", nil, nil)
	if code != http.StatusOK || m["ok"] != false || !strings.Contains(m["verdict"].(string), "does NOT verify") {
		t.Fatalf("verify after a flip: %d %s", code, raw)
	}
}
