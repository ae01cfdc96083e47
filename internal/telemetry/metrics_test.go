package telemetry_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/gateway/tokens"
	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/internal/telemetry"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/serve"
	"github.com/statewright-go/statewright/store/sqlite"
)

// TestMetricsAfterKnownDecisions posts Claude Code hook events to serve's
// real hook endpoint (a real SQLite store, the real runtime and adapter),
// then scrapes /metrics as an operator and checks the counts; /metrics
// refuses no token and agent tokens.
func TestMetricsAfterKnownDecisions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := telemetry.NewMetrics(telemetry.MetricsOptions{Pending: telemetry.PendingApprovals(st)})
	svc := runtime.New(m.Store(st), runtime.Options{Observer: telemetry.NewObserver(m, nil, false), ProjectDir: dir})
	if _, err := svc.Start(ctx, "claude-code:s1", "bugfix", runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}); err != nil {
		t.Fatal(err)
	}
	tf := tokens.Open(filepath.Join(dir, "tokens.json"))
	hook, _, err := tf.Create(tokens.Hook, "hook", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	op, _, _ := tf.Create(tokens.Operator, "me", "", time.Now())
	agent, _, _ := tf.Create(tokens.Agent, "agent", "", time.Now())
	scraper, _, _ := tf.Create(tokens.Metrics, "prometheus", "", time.Now())
	srv, err := serve.New(serve.Options{Tokens: tf})
	if err != nil {
		t.Fatal(err)
	}
	srv.MountHooks(serve.HookOptions{Adapters: adapters.All, Runtime: svc, ProjectDir: dir})
	srv.Handle("GET /metrics", serve.MetricsReaders, m.Handler())
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	post := func(id, tool, input string) {
		t.Helper()
		body := fmt.Sprintf(`{"session_id":"s1","hook_event_name":"PreToolUse","cwd":%q,"tool_name":%q,"tool_input":%s,"tool_use_id":%q,"permission_mode":"default"}`, dir, tool, input, id)
		req, _ := http.NewRequest("POST", ts.URL+"/hook/claude-code/pre-tool-use", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+hook)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("hook %s: %s %s", id, resp.Status, b)
		}
	}
	edit := fmt.Sprintf(`{"file_path":%q,"old_string":"a","new_string":"b"}`, filepath.Join(dir, "x.go"))
	read := fmt.Sprintf(`{"file_path":%q}`, filepath.Join(dir, "x.go"))
	post("t1", "Edit", edit) // localizing is read-only: deny
	post("t2", "Edit", edit)
	post("t3", "Read", read) // allow
	post("t3", "Read", read) // the same tool_use_id again: replayed, still one decision asked for

	scrape := func(token string) (int, string) {
		req, _ := http.NewRequest("GET", ts.URL+"/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := scrape(""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d", code)
	}
	if code, _ := scrape(agent); code != http.StatusForbidden {
		t.Errorf("/metrics with an agent token: %d", code)
	}
	if code, _ := scrape(hook); code != http.StatusForbidden {
		t.Errorf("/metrics with a hook credential: %d", code)
	}
	if code, _ := scrape(op); code != 200 {
		t.Errorf("/metrics as operator: %d", code)
	}
	code, text := scrape(scraper)
	if code != 200 {
		t.Fatalf("/metrics with a metrics token: %d %s", code, text)
	}
	// A metrics token reaches nothing else: the hook endpoint answers it
	// with a deny (serve's refusals there are 200s with a deny).
	req, _ := http.NewRequest("POST", ts.URL+"/hook/claude-code/pre-tool-use", strings.NewReader(`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{},"tool_use_id":"t9"}`))
	req.Header.Set("Authorization", "Bearer "+scraper)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "deny") {
		t.Errorf("a hook event with a metrics token: %s %s, want a deny", resp.Status, b)
	}
	got := samples(text)
	for series, want := range map[string]string{
		`statewright_decisions_total{decision="deny",harness="claude-code",rule="tool-not-allowed",state="localizing"}`: "2",
		`statewright_decisions_total{decision="allow",harness="claude-code",rule="allow",state="localizing"}`:           "2",
		`statewright_decision_duration_seconds_count{decision="deny",harness="claude-code"}`:                            "2",
		`statewright_decision_duration_seconds_count{decision="allow",harness="claude-code"}`:                           "2",
		`statewright_store_transaction_duration_seconds_count{backend="sqlite",outcome="ok"}`:                           "5",
		`statewright_approvals_pending`: "0",
	} {
		if got[series] != want {
			t.Errorf("%s = %q, want %s\n%s", series, got[series], want, grepStatewright(text))
		}
	}
	// Labels are bounded: no session id, path or input in any series.
	for _, leak := range []string{"s1\"", dir, "x.go"} {
		if strings.Contains(grepStatewright(text), leak) {
			t.Errorf("a metric carries %q:\n%s", leak, grepStatewright(text))
		}
	}
}

// samples maps "name{labels}" to its value in a text exposition.
func samples(text string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		if i := strings.LastIndexByte(l, ' '); i > 0 {
			out[l[:i]] = l[i+1:]
		}
	}
	return out
}

func grepStatewright(text string) string {
	var b bytes.Buffer
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "statewright_") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
