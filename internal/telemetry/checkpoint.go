package telemetry

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"

	"github.com/statewright-go/statewright/store"
)

// CheckpointEvent is the event name of a signed checkpoint's log record.
const CheckpointEvent = "statewright.checkpoint"

// Log record attribute keys of a checkpoint (store.Checkpoint's fields).
const (
	AttrCheckpointSeq       = "statewright.checkpoint.seq"
	AttrCheckpointTime      = "statewright.checkpoint.time"
	AttrCheckpointChains    = "statewright.checkpoint.chains"
	AttrCheckpointHeadsHash = "statewright.checkpoint.heads_hash"
	AttrCheckpointPrevHash  = "statewright.checkpoint.prev_hash"
	AttrCheckpointHash      = "statewright.checkpoint.hash"
	AttrCheckpointSignature = "statewright.checkpoint.signature"
	AttrCheckpointKeyID     = "statewright.checkpoint.key_id"
	AttrCheckpointPublicKey = "statewright.checkpoint.public_key"
	AttrCheckpointNextKeyID = "statewright.checkpoint.next_key_id"
	AttrCheckpointNextKey   = "statewright.checkpoint.next_public_key"
)

// ErrNoOTelLogs is CheckpointExporter's error when OpenTelemetry logs are
// not exported.
var ErrNoOTelLogs = errors.New("OpenTelemetry logs are not exported: set OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_LOGS_ENDPOINT (and OTEL_LOGS_EXPORTER unset or otlp)")

// CheckpointExporter returns a function that sends each signed checkpoint
// as one log record (event CheckpointEvent, severity INFO) through o's
// logger provider, whatever the level of the process's own logs. It is
// ErrNoOTelLogs when o exports no logs, so the misconfiguration is seen at
// start.
func CheckpointExporter(o *OTel) (func(context.Context, store.Checkpoint) error, error) {
	if o == nil || o.Logs == nil {
		return nil, ErrNoOTelLogs
	}
	l := o.Logs.Logger("github.com/statewright-go/statewright/checkpoint")
	return func(ctx context.Context, c store.Checkpoint) error {
		var r log.Record
		r.SetEventName(CheckpointEvent)
		r.SetTimestamp(c.Time)
		r.SetObservedTimestamp(time.Now())
		r.SetSeverity(log.SeverityInfo)
		r.SetSeverityText("INFO")
		r.SetBody(attribute.StringValue("checkpoint signed"))
		r.AddAttributes(
			attribute.Int64(AttrCheckpointSeq, c.Seq),
			attribute.String(AttrCheckpointTime, c.Time.UTC().Format(time.RFC3339Nano)),
			attribute.Int64(AttrCheckpointChains, c.Chains),
			attribute.String(AttrCheckpointHeadsHash, c.HeadsHash),
			attribute.String(AttrCheckpointPrevHash, c.PrevHash),
			attribute.String(AttrCheckpointHash, c.Hash),
			attribute.String(AttrCheckpointSignature, c.Signature),
			attribute.String(AttrCheckpointKeyID, c.KeyID),
			attribute.String(AttrCheckpointPublicKey, c.PublicKey))
		if c.NextKeyID != "" {
			r.AddAttributes(attribute.String(AttrCheckpointNextKeyID, c.NextKeyID), attribute.String(AttrCheckpointNextKey, c.NextPublicKey))
		}
		l.Emit(ctx, r)
		return nil
	}, nil
}
