package telemetry_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/statewright-go/statewright/internal/telemetry"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// BenchmarkDecideTelemetry is the decision path (runtime.Service.Decide on
// a real SQLite store, one allowed Read per op, each a new tool_use_id)
// with telemetry off, with Prometheus metrics, and with metrics and OTLP
// traces exported to a collector stand-in on loopback. bench/telemetry.sh
// runs it and records the ratios (bench/telemetry.txt).
func BenchmarkDecideTelemetry(b *testing.B) {
	col := &collector{}
	ts := httptest.NewServer(col)
	defer ts.Close()
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", ts.URL)
	b.Setenv("OTEL_LOGS_EXPORTER", "none")
	for _, mode := range []string{"off", "metrics", "metrics+traces"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			// As serve wires it: the store's transactions timed, decisions
			// observed.
			var rst store.Store = st
			var obs runtime.Observer
			if mode != "off" {
				m := telemetry.NewMetrics(telemetry.MetricsOptions{})
				rst = m.Store(st)
				var o *telemetry.OTel
				if mode == "metrics+traces" {
					if o, err = telemetry.SetupOTel(ctx, telemetry.OTelOptions{}); err != nil {
						b.Fatal(err)
					}
					defer o.Shutdown(ctx)
				}
				obs = telemetry.NewObserver(m, o, false)
			}
			svc := runtime.New(rst, runtime.Options{Observer: obs, ProjectDir: dir})
			if _, err := svc.Start(ctx, "claude-code:s1", "bugfix", runtime.Actor{Kind: runtime.ActorHuman, Channel: "bench"}); err != nil {
				b.Fatal(err)
			}
			input := fmt.Sprintf(`{"file_path":%q}`, filepath.Join(dir, "x.go"))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := svc.Decide(ctx, runtime.ToolCall{Session: "claude-code:s1", Call: callOf("Read", input, fmt.Sprint("t", i), dir)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
