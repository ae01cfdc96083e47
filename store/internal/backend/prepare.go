// Package backend holds what store/sqlite and store/postgres do the same
// way: defaults and validation of what a Tx is given, the encoding and
// scanning of runs, calls and events, the queries behind Store.Runs and
// Store.Events, the bookkeeping of a transaction, and the fan-out of
// watched changes. It is internal so that package store exports only what
// the callers of a store use.
package backend

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/statewright-go/statewright/store"
)

// PrepareRun fills run's defaults for Tx.Put in a transaction on
// sessionKey (SessionKey, Status) and validates it; errors wrap
// store.ErrInvalid.
func PrepareRun(run *store.Run, sessionKey string) error {
	if run == nil {
		return fmt.Errorf("store: put run: %w: nil run", store.ErrInvalid)
	}
	if run.SessionKey == "" {
		run.SessionKey = sessionKey
	}
	if run.SessionKey != sessionKey {
		return fmt.Errorf("store: put run: %w: run session %q in a transaction on %q", store.ErrInvalid, run.SessionKey, sessionKey)
	}
	if run.Status == "" {
		run.Status = store.StatusActive
	}
	if !run.Status.Valid() {
		return fmt.Errorf("store: put run: %w: unknown status %q", store.ErrInvalid, run.Status)
	}
	if run.State == "" {
		return fmt.Errorf("store: put run: %w: empty state", store.ErrInvalid)
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
// columns; errors wrap store.ErrInvalid.
func PrepareCall(call *store.Call, sessionKey, runID string, now time.Time) (CallColumns, error) {
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
	if call.Status != store.CallReserved {
		call.SettledAt = now
		cols.SettledAt = now.UnixNano()
	}
	return cols, nil
}

func prepareCall(call *store.Call, sessionKey, runID string) error {
	if call == nil || call.ToolUseID == "" {
		return fmt.Errorf("store: record call: %w: empty tool_use_id", store.ErrInvalid)
	}
	if call.SessionKey == "" {
		call.SessionKey = sessionKey
	}
	if call.SessionKey != sessionKey {
		return fmt.Errorf("store: record call: %w: call session %q in a transaction on %q", store.ErrInvalid, call.SessionKey, sessionKey)
	}
	if call.RunID == "" {
		call.RunID = runID
	}
	switch call.Phase {
	case store.PhasePre:
		if call.Status == "" {
			call.Status = store.CallReserved
		}
	case store.PhasePost:
		if call.Status == "" {
			call.Status = store.CallSettled
		}
		if call.Status == store.CallReserved {
			return fmt.Errorf("store: record call: %w: a post record cannot be reserved", store.ErrInvalid)
		}
	default:
		return fmt.Errorf("store: record call: %w: unknown phase %q", store.ErrInvalid, call.Phase)
	}
	switch call.Status {
	case store.CallReserved, store.CallSettled, store.CallFailed, store.CallDone:
	default:
		return fmt.Errorf("store: record call: %w: unknown status %q", store.ErrInvalid, call.Status)
	}
	return nil
}

// PrepareEvent validates e for Tx.Append and fills its defaults: Data
// compacted, RunID and SessionKey from the transaction, Time now (UTC).
// The backend then links it into its chain (see Link).
func PrepareEvent(e *store.Event, runID, sessionKey string, now time.Time) error {
	if e == nil {
		return fmt.Errorf("store: append: %w: nil event", store.ErrInvalid)
	}
	if e.Kind == "" {
		return fmt.Errorf("store: append: %w: event without kind", store.ErrInvalid)
	}
	data, err := store.CompactData(e.Data)
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
// errors wrap store.ErrInvalid.
func EncodeRunColumns(run *store.Run) (RunColumns, error) {
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
			return fmt.Errorf("store: put run: %w: %s: %v", store.ErrInvalid, name, err)
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
// their stored JSON (empty for NULL); errors wrap store.ErrCorrupt.
func DecodeRunColumns(run *store.Run, counters, files, approval []byte) error {
	if len(counters) > 0 {
		if err := json.Unmarshal(counters, &run.Counters); err != nil {
			return fmt.Errorf("%w: run %s counters: %v", store.ErrCorrupt, run.ID, err)
		}
	}
	if len(files) > 0 {
		if err := json.Unmarshal(files, &run.FilesEdited); err != nil {
			return fmt.Errorf("%w: run %s files_edited: %v", store.ErrCorrupt, run.ID, err)
		}
	}
	if len(approval) > 0 {
		run.PendingApproval = new(store.Approval)
		if err := json.Unmarshal(approval, run.PendingApproval); err != nil {
			return fmt.Errorf("%w: run %s pending_approval: %v", store.ErrCorrupt, run.ID, err)
		}
	}
	return nil
}

// JSONColumn validates and compacts a JSON column value (nil for NULL);
// errors wrap store.ErrInvalid.
func JSONColumn(name string, b json.RawMessage) (*string, error) {
	c, err := store.CompactData(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", store.ErrInvalid, name, err)
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

// ValidRetention refuses a negative retention; the error wraps store.ErrInvalid.
func ValidRetention(op string, r store.Retention) error {
	if r.MaxAge < 0 || r.Keep < 0 {
		return fmt.Errorf("store: %s: %w: negative retention", op, store.ErrInvalid)
	}
	return nil
}

// EncodeRetention encodes a retention setting for the meta table.
func EncodeRetention(r store.Retention) (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("store: set retention: %w", err)
	}
	return string(b), nil
}

// DecodeRetention decodes a stored retention setting; errors wrap store.ErrCorrupt.
func DecodeRetention(v string) (store.Retention, error) {
	var r store.Retention
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		return store.Retention{}, fmt.Errorf("store: retention: %w: %v", store.ErrCorrupt, err)
	}
	return r, nil
}

// PruneData is the data of the admin event a prune appends.
func PruneData(p store.Pruned, r store.Retention) json.RawMessage {
	data, _ := json.Marshal(map[string]any{"action": "prune", "events": p.Events, "calls": p.Calls,
		"anchor_seq": p.AnchorSeq, "max_age": r.MaxAge.String(), "keep": r.Keep})
	return data
}

// PruneCut returns the last Seq a prune with r removes from a log whose
// newest event is head: cutByAge is the newest event older than r.MaxAge
// (0 when MaxAge is 0 or none is).
func PruneCut(r store.Retention, head, cutByAge int64) int64 {
	cut := cutByAge
	if r.Keep > 0 && head-r.Keep > cut {
		cut = head - r.Keep
	}
	return cut
}

// NewID returns prefix followed by n random bytes in hex.
func NewID(prefix string, n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("store: random id: %w", err)
	}
	return prefix + hex.EncodeToString(b), nil
}
