package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// This file holds what every backend does the same way before and after
// touching its tables: defaults and validation of what a Tx is given, and
// the encoding of a run's structured columns. store/sqlite and
// store/postgres share it so their semantics cannot drift apart.

// PrepareRun fills run's defaults for Tx.Put in a transaction on
// sessionKey (SessionKey, Status) and validates it; errors wrap ErrInvalid.
func PrepareRun(run *Run, sessionKey string) error {
	if run == nil {
		return fmt.Errorf("store: put run: %w: nil run", ErrInvalid)
	}
	if run.SessionKey == "" {
		run.SessionKey = sessionKey
	}
	if run.SessionKey != sessionKey {
		return fmt.Errorf("store: put run: %w: run session %q in a transaction on %q", ErrInvalid, run.SessionKey, sessionKey)
	}
	if run.Status == "" {
		run.Status = StatusActive
	}
	if !run.Status.Valid() {
		return fmt.Errorf("store: put run: %w: unknown status %q", ErrInvalid, run.Status)
	}
	if run.State == "" {
		return fmt.Errorf("store: put run: %w: empty state", ErrInvalid)
	}
	return nil
}

// CallColumns is a call record's JSON columns encoded for storage (nil
// for SQL NULL) and its settlement time in Unix nanoseconds (0 while
// reserved).
type CallColumns struct {
	Outcome, Effects *string
	SettledAt        int64
}

// PrepareCall fills call's defaults for Tx.Record in a transaction on
// sessionKey whose run is runID at now (SessionKey, RunID, Status by phase,
// CreatedAt, SettledAt unless reserved), validates it and encodes its
// columns; errors wrap ErrInvalid.
func PrepareCall(call *Call, sessionKey, runID string, now time.Time) (CallColumns, error) {
	var cols CallColumns
	if err := prepareCall(call, sessionKey, runID); err != nil {
		return cols, err
	}
	var err error
	if cols.Outcome, err = JSONColumn("outcome", call.Outcome); err != nil {
		return cols, fmt.Errorf("store: record call: %w", err)
	}
	if cols.Effects, err = JSONColumn("effects", call.Effects); err != nil {
		return cols, fmt.Errorf("store: record call: %w", err)
	}
	call.CreatedAt = now
	if call.Status != CallReserved {
		call.SettledAt = now
		cols.SettledAt = now.UnixNano()
	}
	return cols, nil
}

func prepareCall(call *Call, sessionKey, runID string) error {
	if call == nil || call.ToolUseID == "" {
		return fmt.Errorf("store: record call: %w: empty tool_use_id", ErrInvalid)
	}
	if call.SessionKey == "" {
		call.SessionKey = sessionKey
	}
	if call.SessionKey != sessionKey {
		return fmt.Errorf("store: record call: %w: call session %q in a transaction on %q", ErrInvalid, call.SessionKey, sessionKey)
	}
	if call.RunID == "" {
		call.RunID = runID
	}
	switch call.Phase {
	case PhasePre:
		if call.Status == "" {
			call.Status = CallReserved
		}
	case PhasePost:
		if call.Status == "" {
			call.Status = CallSettled
		}
		if call.Status == CallReserved {
			return fmt.Errorf("store: record call: %w: a post record cannot be reserved", ErrInvalid)
		}
	default:
		return fmt.Errorf("store: record call: %w: unknown phase %q", ErrInvalid, call.Phase)
	}
	switch call.Status {
	case CallReserved, CallSettled, CallFailed, CallDone:
	default:
		return fmt.Errorf("store: record call: %w: unknown status %q", ErrInvalid, call.Status)
	}
	return nil
}

// SettlesAs returns the status a post record gives the reserved pre record
// of the same call: failed for a failed call, settled otherwise.
func (c *Call) SettlesAs() CallStatus {
	if c.Status == CallFailed {
		return CallFailed
	}
	return CallSettled
}

// PrepareEvent validates e for Tx.Append and fills its defaults: Data
// compacted, RunID and SessionKey from the transaction, Time now (UTC).
// The backend then assigns Seq, PrevHash and Hash (see ChainEvent).
func PrepareEvent(e *Event, runID, sessionKey string, now time.Time) error {
	if e == nil {
		return fmt.Errorf("store: append: %w: nil event", ErrInvalid)
	}
	if e.Kind == "" {
		return fmt.Errorf("store: append: %w: event without kind", ErrInvalid)
	}
	data, err := CompactData(e.Data)
	if err != nil {
		return fmt.Errorf("store: append %s event: %w", e.Kind, err)
	}
	e.Data = data
	if e.RunID == "" {
		e.RunID = runID
	}
	if e.SessionKey == "" {
		e.SessionKey = sessionKey
	}
	if e.Time.IsZero() {
		e.Time = now
	}
	e.Time = e.Time.UTC()
	return nil
}

// ChainEvent links e after the event (or anchor) at headSeq/headHash:
// it sets Seq, PrevHash and Hash.
func ChainEvent(e *Event, headSeq int64, headHash string) {
	e.Seq = headSeq + 1
	e.PrevHash = headHash
	e.Hash = HashEvent(e)
}

// SnapshotDigestOf returns the sha256 (hex) of a workflow snapshot ("" for none).
func SnapshotDigestOf(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// RunColumns is a run's structured fields encoded for storage: compact JSON
// text, nil for SQL NULL.
type RunColumns struct {
	Context, History, Evidence, Counters, FilesEdited, PendingApproval *string
}

// EncodeRunColumns validates and encodes run's JSON and structured fields;
// errors wrap ErrInvalid.
func EncodeRunColumns(run *Run) (RunColumns, error) {
	var (
		c   RunColumns
		err error
	)
	raw := []struct {
		name string
		in   json.RawMessage
		out  **string
	}{{"context", run.Context, &c.Context}, {"history", run.History, &c.History}, {"evidence", run.Evidence, &c.Evidence}}
	for _, f := range raw {
		if *f.out, err = JSONColumn(f.name, f.in); err != nil {
			return c, fmt.Errorf("store: put run: %w", err)
		}
	}
	marshal := func(name string, v any, empty bool, out **string) error {
		if empty {
			return nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("store: put run: %w: %s: %v", ErrInvalid, name, err)
		}
		s := string(b)
		*out = &s
		return nil
	}
	if err := marshal("counters", run.Counters, len(run.Counters) == 0, &c.Counters); err != nil {
		return c, err
	}
	if err := marshal("files_edited", run.FilesEdited, len(run.FilesEdited) == 0, &c.FilesEdited); err != nil {
		return c, err
	}
	if err := marshal("pending_approval", run.PendingApproval, run.PendingApproval == nil, &c.PendingApproval); err != nil {
		return c, err
	}
	return c, nil
}

// DecodeRunColumns sets run's Counters, FilesEdited and PendingApproval from
// their stored JSON (empty for NULL); errors wrap ErrCorrupt.
func DecodeRunColumns(run *Run, counters, files, approval []byte) error {
	if len(counters) > 0 {
		if err := json.Unmarshal(counters, &run.Counters); err != nil {
			return fmt.Errorf("%w: run %s counters: %v", ErrCorrupt, run.ID, err)
		}
	}
	if len(files) > 0 {
		if err := json.Unmarshal(files, &run.FilesEdited); err != nil {
			return fmt.Errorf("%w: run %s files_edited: %v", ErrCorrupt, run.ID, err)
		}
	}
	if len(approval) > 0 {
		run.PendingApproval = new(Approval)
		if err := json.Unmarshal(approval, run.PendingApproval); err != nil {
			return fmt.Errorf("%w: run %s pending_approval: %v", ErrCorrupt, run.ID, err)
		}
	}
	return nil
}

// JSONColumn validates and compacts a JSON column value (nil for NULL);
// errors wrap ErrInvalid.
func JSONColumn(name string, b json.RawMessage) (*string, error) {
	c, err := CompactData(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, name, err)
	}
	if c == nil {
		return nil, nil
	}
	s := string(c)
	return &s, nil
}

// RawJSON returns b as a RawMessage, nil when empty (SQL NULL).
func RawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

// FromNanos converts stored Unix nanoseconds to a UTC time (zero for 0).
func FromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// ValidRetention refuses a negative retention; the error wraps ErrInvalid.
func ValidRetention(op string, r Retention) error {
	if r.MaxAge < 0 || r.Keep < 0 {
		return fmt.Errorf("store: %s: %w: negative retention", op, ErrInvalid)
	}
	return nil
}

// EventStream streams a store's whole event log in Seq order from one
// snapshot: it calls start once with the prune anchor, then fn for each
// event, stopping at fn's first error.
type EventStream func(start func(anchorSeq int64, anchorHash string), fn func(e *Event) error) error

// ExportStream writes each event of the stream as one JSON line: a
// backend's ExportJSONL.
func ExportStream(w io.Writer, each EventStream) error {
	return each(func(int64, string) {}, func(e *Event) error { return WriteEventJSONL(w, e) })
}

// VerifyStream verifies the stream's chain from its anchor: a backend's
// VerifyChain.
func VerifyStream(each EventStream) (ChainStatus, error) {
	var v *ChainVerifier
	err := each(func(seq int64, hash string) { v = NewChainVerifier(seq, hash) }, func(e *Event) error { return v.Next(e) })
	if v == nil {
		return ChainStatus{}, err
	}
	if err != nil {
		return v.Status(), fmt.Errorf("store: verify: %w", err)
	}
	return v.Status(), nil
}

// DecodeRetention decodes a stored retention setting; errors wrap ErrCorrupt.
func DecodeRetention(v string) (Retention, error) {
	var r Retention
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		return Retention{}, fmt.Errorf("store: retention: %w: %v", ErrCorrupt, err)
	}
	return r, nil
}
