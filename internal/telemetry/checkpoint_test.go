package telemetry_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	collectorlogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"

	"github.com/statewright-go/statewright/internal/telemetry"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// logCollector is an OTLP/HTTP log receiver on loopback: it decodes each
// export request (protobuf) and keeps every record's event name, severity,
// body and attributes.
type logCollector struct {
	mu      sync.Mutex
	records []map[string]string // attributes, plus "event", "severity" and "body"
}

func (c *logCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req collectorlogs.ExportLogsServiceRequest
	if !decodeOTLP(w, r, "/v1/logs", &req) {
		return
	}
	c.mu.Lock()
	for _, rl := range req.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				m := map[string]string{"event": lr.EventName, "severity": lr.SeverityText, "body": anyString(lr.Body)}
				for _, kv := range lr.Attributes {
					m[kv.Key] = anyString(kv.Value)
				}
				c.records = append(c.records, m)
			}
		}
	}
	c.mu.Unlock()
	answerOTLP(w, &collectorlogs.ExportLogsServiceResponse{})
}

// TestCheckpointReachesCollector sets up OTLP log export from the standard
// environment variables, pointed at a receiver on loopback, signs a real
// checkpoint of a SQLite store and sends it with CheckpointExporter: the
// receiver gets one record, event statewright.checkpoint, carrying the
// checkpoint's seq, chains, hashes, signature and key.
func TestCheckpointReachesCollector(t *testing.T) {
	col := &logCollector{}
	ts := httptest.NewServer(col)
	defer ts.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", ts.URL)
	t.Setenv("OTEL_TRACES_EXPORTER", "none")

	ctx := context.Background()
	o, err := telemetry.SetupOTel(ctx, telemetry.OTelOptions{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	send, err := telemetry.CheckpointExporter(o)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := runtime.New(st, runtime.Options{ProjectDir: dir})
	if _, err := svc.Start(ctx, "claude-code:s1", "bugfix", runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}); err != nil {
		t.Fatal(err)
	}
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Checkpoint(ctx, store.CheckpointOptions{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if err := send(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := o.Shutdown(ctx); err != nil { // flushes the batch
		t.Fatal(err)
	}

	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.records) != 1 {
		t.Fatalf("the receiver got %d log records, want 1: %v", len(col.records), col.records)
	}
	got := col.records[0]
	for k, v := range map[string]string{
		"event":                           telemetry.CheckpointEvent,
		"severity":                        "INFO",
		telemetry.AttrCheckpointSeq:       fmt.Sprint(c.Seq),
		telemetry.AttrCheckpointChains:    fmt.Sprint(c.Chains),
		telemetry.AttrCheckpointHeadsHash: c.HeadsHash,
		telemetry.AttrCheckpointPrevHash:  c.PrevHash,
		telemetry.AttrCheckpointHash:      c.Hash,
		telemetry.AttrCheckpointSignature: c.Signature,
		telemetry.AttrCheckpointKeyID:     c.KeyID,
		telemetry.AttrCheckpointPublicKey: c.PublicKey,
	} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (%v)", k, got[k], v, got)
		}
	}
	if c.Seq != 1 || c.Chains != 1 || c.Signature == "" || c.KeyID == "" {
		t.Errorf("the checkpoint signed is not the one expected: %+v", c)
	}
}

// TestCheckpointExporterNeedsLogs: without OTLP logs configured the
// exporter is refused at start.
func TestCheckpointExporterNeedsLogs(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "")
	t.Setenv("OTEL_LOGS_EXPORTER", "")
	o, err := telemetry.SetupOTel(context.Background(), telemetry.OTelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := telemetry.CheckpointExporter(o); !errors.Is(err, telemetry.ErrNoOTelLogs) {
		t.Fatalf("CheckpointExporter without OTLP logs: %v, want ErrNoOTelLogs", err)
	}
}
