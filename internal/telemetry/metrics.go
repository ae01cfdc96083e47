// Package telemetry exports what statewright's long-lived servers (serve,
// mcp) do: Prometheus metrics, OpenTelemetry traces and logs over OTLP, and
// structured logs with log/slog (docs/telemetry.md).
//
// Decisions are instrumented once, at the runtime (runtime.Observer), for
// every adapter; store transactions by wrapping the store; upstream MCP
// calls through gateway.Observer. The decision core stays pure.
//
// Nothing here is built at package init: a command constructs what it asks
// for (NewMetrics, SetupOTel). The libraries it links (the Prometheus
// client, the OpenTelemetry SDK and its OTLP exporters) do run their own
// package init in every process of the binary they are linked into; the
// hook's thin client (cmd/statewright-hook) links none of them
// (bench/telemetry.txt measures both).
//
// Labels are bounded (DECISIONS 33): harness, state, decision, rule id,
// upstream name, outcome. Inputs, paths and session ids never become labels.
package telemetry

import (
	"context"
	"math"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// latencyBuckets are the decision and transaction latency buckets (s):
// from 100 µs (an in-memory decision) to 2.5 s (a store waiting on a lock).
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}

// Metrics holds statewright's collectors in a registry of its own.
type Metrics struct {
	reg             *prometheus.Registry
	decisions       *prometheus.CounterVec
	decisionLatency *prometheus.HistogramVec
	decisionErrors  *prometheus.CounterVec
	storeTx         *prometheus.HistogramVec
	upstreamLatency *prometheus.HistogramVec
	upstreamErrors  *prometheus.CounterVec
}

// MetricsOptions configure NewMetrics.
type MetricsOptions struct {
	// Pending, when set, counts the approvals pending now; it is asked at
	// each scrape (statewright_approvals_pending).
	Pending func(ctx context.Context) (int, error)
}

// NewMetrics returns the collectors, registered with the Go runtime's and
// the process's.
func NewMetrics(opts MetricsOptions) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "statewright", Name: "decisions_total",
			Help: "Tool-call decisions, by harness, workflow state (\"dormant\" without a run), decision (allow, deny, ask) and rule id.",
		}, []string{"harness", "state", "decision", "rule"}),
		decisionLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "statewright", Name: "decision_duration_seconds",
			Help:    "Time to decide one tool call, store transaction included, by harness and decision (\"error\" for a failed decision).",
			Buckets: latencyBuckets,
		}, []string{"harness", "decision"}),
		decisionErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "statewright", Name: "decision_errors_total",
			Help: "Decisions that failed (the adapter denied: fail closed), by harness.",
		}, []string{"harness"}),
		storeTx: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "statewright", Name: "store_transaction_duration_seconds",
			Help:    "Time of one store write transaction (waiting for the writer's lock included), by backend and outcome (ok, error).",
			Buckets: latencyBuckets,
		}, []string{"backend", "outcome"}),
		upstreamLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "statewright", Name: "upstream_call_duration_seconds",
			Help:    "Time of one upstream MCP tools/call the gateway forwarded, by upstream and outcome (ok, tool_error, error).",
			Buckets: latencyBuckets,
		}, []string{"upstream", "outcome"}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "statewright", Name: "upstream_call_errors_total",
			Help: "Upstream MCP calls that failed, by upstream and kind (tool_error: the tool's own error result; error: transport or protocol).",
		}, []string{"upstream", "kind"}),
	}
	m.reg.MustRegister(m.decisions, m.decisionLatency, m.decisionErrors, m.storeTx, m.upstreamLatency, m.upstreamErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opts.Pending != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "statewright", Name: "approvals_pending",
			Help: "Runs awaiting a person's approval of a transition, as of this scrape (NaN when the store cannot be read).",
		}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := opts.Pending(ctx)
			if err != nil {
				return math.NaN()
			}
			return float64(n)
		}))
	}
	return m
}

// PendingApprovals counts st's runs awaiting approval, for
// MetricsOptions.Pending.
func PendingApprovals(st store.Store) func(ctx context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		runs, err := st.Runs(ctx, store.RunFilter{Statuses: []store.Status{store.StatusAwaitingApproval}})
		return len(runs), err
	}
}

// Registry is the registry the collectors are in (for further ones).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in Prometheus's exposition formats. Mount it
// behind authentication (serve.MetricsReaders: metrics or operator tokens).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// decided counts one decision and its latency.
func (m *Metrics) decided(harness string, res runtime.DecideResult, err error, elapsed time.Duration) {
	if err != nil {
		m.decisionErrors.WithLabelValues(harness).Inc()
		m.decisionLatency.WithLabelValues(harness, "error").Observe(elapsed.Seconds())
		return
	}
	decision := res.Verdict.String()
	m.decisions.WithLabelValues(harness, stateLabel(res.State), decision, string(res.Rule)).Inc()
	m.decisionLatency.WithLabelValues(harness, decision).Observe(elapsed.Seconds())
}

// UpstreamCall implements gateway.Observer: it times one forwarded call.
func (m *Metrics) UpstreamCall(upstream string, elapsed time.Duration, toolError bool, err error) {
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "error"
	case toolError:
		outcome = "tool_error"
	}
	m.upstreamLatency.WithLabelValues(upstream, outcome).Observe(elapsed.Seconds())
	if outcome != "ok" {
		m.upstreamErrors.WithLabelValues(upstream, outcome).Inc()
	}
}

// Store returns st with every write transaction (Update) timed. The rest of
// the interface is st's own.
func (m *Metrics) Store(st store.Store) store.Store {
	backend := st.Identity().Backend
	if backend == "" {
		backend = "unknown"
	}
	return &timedStore{Store: st, ok: m.storeTx.WithLabelValues(backend, "ok"), failed: m.storeTx.WithLabelValues(backend, "error")}
}

// timedStore times Update.
type timedStore struct {
	store.Store
	ok, failed prometheus.Observer
}

// Update implements store.Store.
func (s *timedStore) Update(ctx context.Context, sessionKey string, fn func(tx store.Tx) error) error {
	start := time.Now()
	err := s.Store.Update(ctx, sessionKey, fn)
	if err != nil {
		s.failed.Observe(time.Since(start).Seconds())
	} else {
		s.ok.Observe(time.Since(start).Seconds())
	}
	return err
}

func harnessLabel(call *runtime.ToolCall) string {
	if h := string(call.Call.Harness); h != "" {
		return h
	}
	return "claude-code" // policy.ToolCall: "" means claude-code
}

func stateLabel(state string) string {
	if state == "" {
		return "dormant"
	}
	return state
}
