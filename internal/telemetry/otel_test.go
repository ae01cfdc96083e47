package telemetry_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/statewright-go/statewright/internal/telemetry"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store/sqlite"
)

// collector is an OTLP/HTTP trace receiver on loopback: the stand-in for an
// OpenTelemetry collector. It decodes each export request (protobuf) and
// keeps every span's name and attributes.
type collector struct {
	mu    sync.Mutex
	spans []map[string]string // attributes, plus "name" and the resource's "service.name"
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req collectortrace.ExportTraceServiceRequest
	if !decodeOTLP(w, r, "/v1/traces", &req) {
		return
	}
	c.mu.Lock()
	for _, rs := range req.ResourceSpans {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				service = anyString(kv.Value)
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				m := map[string]string{"name": sp.Name, "service.name": service}
				for _, kv := range sp.Attributes {
					m[kv.Key] = anyString(kv.Value)
				}
				c.spans = append(c.spans, m)
			}
		}
	}
	c.mu.Unlock()
	answerOTLP(w, &collectortrace.ExportTraceServiceResponse{})
}

// decodeOTLP reads an OTLP/HTTP protobuf POST to path into req, or
// answers the request with an error and returns false.
func decodeOTLP(w http.ResponseWriter, r *http.Request, path string, req proto.Message) bool {
	if r.Method != "POST" || r.URL.Path != path || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf POST to "+path, http.StatusNotFound)
		return false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	if err := proto.Unmarshal(body, req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// answerOTLP writes resp as an OTLP/HTTP protobuf answer.
func answerOTLP(w http.ResponseWriter, resp proto.Message) {
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// anyString renders an OTLP attribute value.
func anyString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	}
	return fmt.Sprint(v)
}

// TestTracesReachCollector sets up OTLP export from the standard
// environment variables, pointed at a collector stand-in on loopback,
// decides known calls through the real runtime and SQLite store, and
// checks one span per decision with its session, harness, phase, tool,
// rule and outcome, and that the input and paths stay out of it.
func TestTracesReachCollector(t *testing.T) {
	col := &collector{}
	ts := httptest.NewServer(col)
	defer ts.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", ts.URL)
	t.Setenv("OTEL_SERVICE_NAME", "statewright-test")
	t.Setenv("OTEL_LOGS_EXPORTER", "none")

	ctx := context.Background()
	o, err := telemetry.SetupOTel(ctx, telemetry.OTelOptions{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Tracer == nil || o.Logs != nil {
		t.Fatalf("traces on and logs off were asked for; got tracer %v, logs %v", o.Tracer != nil, o.Logs != nil)
	}
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := runtime.New(st, runtime.Options{Observer: telemetry.NewObserver(nil, o, false), ProjectDir: dir})
	if _, err := svc.Start(ctx, "claude-code:s1", "bugfix", runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}); err != nil {
		t.Fatal(err)
	}
	secretPath := filepath.Join(dir, "x.go")
	call := func(id, tool, input string) {
		t.Helper()
		_, err := svc.Decide(ctx, runtime.ToolCall{Session: "claude-code:s1", Call: callOf(tool, input, id, dir)})
		if err != nil {
			t.Fatal(err)
		}
	}
	call("t1", "Edit", fmt.Sprintf(`{"file_path":%q,"old_string":"a","new_string":"b"}`, secretPath))
	call("t2", "Read", fmt.Sprintf(`{"file_path":%q}`, secretPath))
	if err := o.Shutdown(ctx); err != nil { // flushes the batch
		t.Fatal(err)
	}

	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.spans) != 2 {
		t.Fatalf("the collector received %d spans, want 2: %v", len(col.spans), col.spans)
	}
	want := []map[string]string{
		{"statewright.tool": "Edit", "statewright.outcome": "deny", "statewright.rule": "tool-not-allowed"},
		{"statewright.tool": "Read", "statewright.outcome": "allow", "statewright.rule": "allow"},
	}
	for i, sp := range col.spans {
		for k, v := range map[string]string{"name": telemetry.SpanName, "service.name": "statewright-test",
			"statewright.session": "claude-code:s1", "statewright.harness": "claude-code", "statewright.phase": "localizing",
			"statewright.enforced": "true"} {
			if sp[k] != v {
				t.Errorf("span %d: %s = %q, want %q (%v)", i, k, sp[k], v, sp)
			}
		}
		for k, v := range want[i] {
			if sp[k] != v {
				t.Errorf("span %d: %s = %q, want %q (%v)", i, k, sp[k], v, sp)
			}
		}
		if len(sp["statewright.input.sha256"]) != 64 {
			t.Errorf("span %d carries no input digest: %v", i, sp)
		}
		for k, v := range sp {
			if strings.Contains(v, dir) || k == "statewright.input" || k == "statewright.cwd" {
				t.Errorf("span %d carries the input or a path (%s=%q): telemetry is redacted by default", i, k, v)
			}
		}
	}
}

// callOf is a Claude Code tool call in dir.
func callOf(tool, input, id, dir string) policy.ToolCall {
	return policy.ToolCall{Harness: policy.ClaudeCode, Tool: tool, Input: []byte(input), ToolUseID: id, Cwd: dir, ProjectDir: dir}
}
