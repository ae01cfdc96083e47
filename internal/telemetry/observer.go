package telemetry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/statewright-go/statewright/runtime"
)

// Observer is the runtime.Observer of a long-lived server: it counts each
// decision in Metrics and makes one span for it with Tracer. Either may be
// nil.
type Observer struct {
	Metrics *Metrics
	Tracer  trace.Tracer
	// Unredacted puts the call's input (at most 4 KiB), working directory and
	// the decision's reason on the span. Off by default: inputs and paths
	// stay out of telemetry (DECISIONS 33); a span carries the input's
	// SHA-256 instead, to match it with the audit log.
	Unredacted bool
}

var _ runtime.Observer = (*Observer)(nil)

// NewObserver returns the observer for what was set up, or nil (no
// observer: the decision path pays nothing) when neither metrics nor
// traces are on.
func NewObserver(m *Metrics, o *OTel, unredacted bool) runtime.Observer {
	var tr trace.Tracer
	if o != nil {
		tr = o.Tracer
	}
	if m == nil && tr == nil {
		return nil
	}
	return &Observer{Metrics: m, Tracer: tr, Unredacted: unredacted}
}

// SpanName is the name of a decision's span.
const SpanName = "statewright.decide"

// Span attribute keys of a decision.
const (
	AttrSession     = "statewright.session"
	AttrHarness     = "statewright.harness"
	AttrPhase       = "statewright.phase"
	AttrTool        = "statewright.tool"
	AttrRule        = "statewright.rule"
	AttrOutcome     = "statewright.outcome"
	AttrEnforced    = "statewright.enforced"
	AttrReplayed    = "statewright.replayed"
	AttrInputSHA256 = "statewright.input.sha256"
	AttrInput       = "statewright.input"
	AttrCwd         = "statewright.cwd"
	AttrReason      = "statewright.reason"
)

// maxInputAttr bounds an unredacted input on a span.
const maxInputAttr = 4 << 10

// Decision implements runtime.Observer.
func (o *Observer) Decision(ctx context.Context, call *runtime.ToolCall) (context.Context, func(runtime.DecideResult, error)) {
	start := time.Now()
	harness := harnessLabel(call)
	var span trace.Span
	if o.Tracer != nil {
		ctx, span = o.Tracer.Start(ctx, SpanName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(start))
		sum := sha256.Sum256(call.Call.Input)
		span.SetAttributes(
			attribute.String(AttrSession, call.Session),
			attribute.String(AttrHarness, harness),
			attribute.String(AttrTool, call.Call.Tool),
			attribute.String(AttrInputSHA256, hex.EncodeToString(sum[:])))
		if o.Unredacted {
			in := call.Call.Input
			if len(in) > maxInputAttr {
				in = in[:maxInputAttr]
			}
			span.SetAttributes(attribute.String(AttrInput, string(in)), attribute.String(AttrCwd, call.Call.Cwd))
		}
	}
	return ctx, func(res runtime.DecideResult, err error) {
		end := time.Now()
		if o.Metrics != nil {
			o.Metrics.decided(harness, res, err, end.Sub(start))
		}
		if span == nil {
			return
		}
		if err != nil {
			span.SetAttributes(attribute.String(AttrOutcome, "error"))
			msg := "the decision failed (the call was denied)"
			if o.Unredacted {
				msg = err.Error()
			}
			span.SetStatus(codes.Error, msg)
		} else {
			span.SetAttributes(
				attribute.String(AttrPhase, stateLabel(res.State)),
				attribute.String(AttrRule, string(res.Rule)),
				attribute.String(AttrOutcome, res.Verdict.String()),
				attribute.Bool(AttrEnforced, res.Enforced),
				attribute.Bool(AttrReplayed, res.Replayed))
			if o.Unredacted {
				span.SetAttributes(attribute.String(AttrReason, res.Reason))
			}
		}
		span.End(trace.WithTimestamp(end))
	}
}
