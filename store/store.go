// Package store is statewright's durable state: runs (one live run per
// session), an append-only, hash-chained event log, and per-tool-call records
// that make every write idempotent on the harness's tool_use_id and carry
// effect reservations from PreToolUse to PostToolUse.
//
// The package defines the backend-neutral types and the Store interface;
// store/sqlite is the default backend (embedded, pure Go). Nothing above a
// backend may assume SQLite: every state-changing operation is one
// Store.Update transaction on a session, and a run is written with
// compare-and-swap on its revision, so a PostgreSQL backend (SELECT ... FOR
// UPDATE or CAS retry) fits the same interface. store/storetest holds the
// conformance suite every backend runs.
//
// See docs/store.md for the schema, the guarantees and the environment.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"time"
)

// Errors. Backends wrap them with context ("store: open PATH: ..."), so
// their own text carries no "store: " prefix; test with errors.Is.
var (
	// ErrNotFound: no such run, no live run for the session, no such call record.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a compare-and-swap failed (the run's revision moved on), or
	// a second live run for a session was about to be created.
	ErrConflict = errors.New("conflict")
	// ErrDuplicate: a call record for this (session, tool_use_id, phase) exists already.
	ErrDuplicate = errors.New("duplicate call record")
	// ErrStoreMismatch: the store's id is not the one the caller expected
	// (the store was deleted and recreated, or another store was named).
	ErrStoreMismatch = errors.New("store id mismatch")
	// ErrNoStore: the store does not exist (or was never initialised) and
	// the caller asked not to create it.
	ErrNoStore = errors.New("no store")
	// ErrCorrupt: the store file is not a statewright store, is damaged, or
	// has a schema newer than this binary understands.
	ErrCorrupt = errors.New("corrupt or unknown store")
	// ErrBusy: the store stayed locked by other writers for longer than the
	// busy timeout.
	ErrBusy = errors.New("busy")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store closed")
	// ErrChainBroken: the event log's hash chain does not verify.
	ErrChainBroken = errors.New("event chain broken")
	// ErrInvalid: the caller passed a value the store refuses (a run without
	// a session key, an event with invalid JSON data, ...).
	ErrInvalid = errors.New("invalid argument")
)

// Status is a run's lifecycle status.
type Status string

// Run statuses. Active, AwaitingApproval and Paused are live: a session has
// at most one live run.
const (
	StatusActive           Status = "active"
	StatusAwaitingApproval Status = "awaiting_approval"
	StatusPaused           Status = "paused"
	StatusCompleted        Status = "completed"
	StatusDeactivated      Status = "deactivated"
	StatusFailed           Status = "failed"
)

// LiveStatuses lists the statuses that occupy a session.
var LiveStatuses = []Status{StatusActive, StatusAwaitingApproval, StatusPaused}

// Live reports whether s occupies its session (active, awaiting_approval, paused).
func (s Status) Live() bool {
	return s == StatusActive || s == StatusAwaitingApproval || s == StatusPaused
}

// Valid reports whether s is one of the known statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusActive, StatusAwaitingApproval, StatusPaused, StatusCompleted, StatusDeactivated, StatusFailed:
		return true
	}
	return false
}

// Approval is a pending human approval of a transition, parked on a run.
type Approval struct {
	// ID names the approval; an approver must quote it.
	ID string `json:"id"`
	// Event is the event that requested the transition.
	Event string `json:"event,omitempty"`
	// From is the state the run is in; To the state it moves to once approved.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Message is shown to the approver.
	Message string `json:"message,omitempty"`
	// Context is the guard context the transition was requested with (JSON).
	Context json.RawMessage `json:"context,omitempty"`
	// RequestedAt and ExpiresAt bound the request's validity.
	RequestedAt time.Time `json:"requested_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	// Revision is the run revision the request was made at; an approval of a
	// different revision is stale.
	Revision int64 `json:"revision"`
}

// Run is one workflow run, as stored. It is a plain value: the runtime maps
// policy and engine types into it (Context, History and Evidence are JSON the
// store does not interpret).
type Run struct {
	// ID is assigned by the store when the run is first written.
	ID string `json:"id"`
	// SessionKey is the harness session the run governs ("claude-code:<session_id>", ...).
	SessionKey string `json:"session_key"`
	// WorkflowID names the workflow (its id or file stem).
	WorkflowID string `json:"workflow_id"`
	// WorkflowSource is where the definition was loaded from (a path, a template name).
	WorkflowSource string `json:"workflow_source,omitempty"`
	// Snapshot is the exact definition the run started with: the run keeps
	// its law even when the file changes. Its bytes are never modified in
	// place: to change the workflow, set a new slice.
	Snapshot []byte `json:"snapshot,omitempty"`
	// SnapshotDigest is the sha256 (hex) of Snapshot, set by the store; the
	// runtime may cache compiled definitions under it.
	SnapshotDigest string `json:"snapshot_digest,omitempty"`
	// State is the current state name.
	State string `json:"state"`
	// Context is the guard context (JSON object).
	Context json.RawMessage `json:"context,omitempty"`
	// History is the interrupt return stack (JSON of the engine's frames, innermost last).
	History json.RawMessage `json:"history,omitempty"`
	// Iterations counts the tool calls made in the current state.
	Iterations int64 `json:"iterations"`
	// Counters holds further per-state counters the runtime keeps (for
	// example visits per state or edited lines), by name.
	Counters map[string]int64 `json:"counters,omitempty"`
	// FilesEdited lists the distinct files edited in the current state.
	FilesEdited []string `json:"files_edited,omitempty"`
	// PendingApproval is set while the run awaits a human approval.
	PendingApproval *Approval `json:"pending_approval,omitempty"`
	// Status is the lifecycle status.
	Status Status `json:"status"`
	// AuditOnly marks a run whose decisions are recorded but not enforced.
	AuditOnly bool `json:"audit_only,omitempty"`
	// Evidence holds runtime.* facts guards may read (JSON object).
	Evidence json.RawMessage `json:"evidence,omitempty"`
	// Revision increases by one on every write; it is the compare-and-swap token.
	Revision int64 `json:"revision"`
	// CreatedAt and UpdatedAt are set by the store.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Clone returns a copy of r (nil for nil) that shares nothing with r but
// the snapshot: a snapshot's bytes are never changed in place (a new
// workflow is a new slice), so copying it on every read would only cost.
func (r *Run) Clone() *Run {
	if r == nil {
		return nil
	}
	c := *r
	c.Context = slices.Clone(r.Context)
	c.History = slices.Clone(r.History)
	c.Evidence = slices.Clone(r.Evidence)
	c.FilesEdited = slices.Clone(r.FilesEdited)
	if r.Counters != nil {
		c.Counters = make(map[string]int64, len(r.Counters))
		for k, v := range r.Counters {
			c.Counters[k] = v
		}
	}
	if r.PendingApproval != nil {
		a := *r.PendingApproval
		a.Context = slices.Clone(a.Context)
		c.PendingApproval = &a
	}
	return &c
}

// EventKind classifies an event.
type EventKind string

// Event kinds.
const (
	// KindDecision: a tool call was decided (PreToolUse).
	KindDecision EventKind = "decision"
	// KindResult: a tool call's outcome was recorded (PostToolUse / PostToolUseFailure).
	KindResult EventKind = "result"
	// KindTransition: the run changed state.
	KindTransition EventKind = "transition"
	// KindApproval: an approval was requested, granted, denied or expired.
	KindApproval EventKind = "approval"
	// KindRun: a run was started, completed, failed.
	KindRun EventKind = "run"
	// KindAdmin: an operator action (pause, deactivate, force state, retention).
	KindAdmin EventKind = "admin"
)

// Event is one entry of the append-only event log. The store assigns Seq,
// Chain, ChainSeq, PrevHash and Hash, fills Time, RunID and SessionKey
// when empty, and compacts Data.
//
// The log is not one chain but many: each run's events form their own
// hash chain, and so do a session's events outside any run and the
// store's own (see ChainOf), so that sessions never queue behind one
// another. Signed checkpoints over every chain's head make the whole log
// tamper-evident (see Checkpoint). Events written before per-run chains
// existed keep their place in the legacy global chain (Chain "").
type Event struct {
	// Seq is the event's place in the store's whole log: unique and
	// increasing in the order events were appended (gapless on SQLite; on
	// PostgreSQL a sequence, so rolled-back transactions leave gaps and
	// concurrent sessions' transactions may commit out of Seq order).
	Seq int64 `json:"seq"`
	// Chain names the hash chain the event belongs to: ChainOf(RunID,
	// SessionKey), or "" for an event of the legacy global chain.
	Chain string `json:"chain,omitempty"`
	// ChainSeq is the event's place in its chain: 1, 2, 3, ... with no
	// gaps (0 in the legacy chain, which is ordered by Seq).
	ChainSeq int64 `json:"chain_seq,omitempty"`
	// RunID is the run the event belongs to ("" for store-wide events).
	RunID string `json:"run_id,omitempty"`
	// SessionKey is the session the event belongs to.
	SessionKey string `json:"session_key,omitempty"`
	// Time is when the event was recorded.
	Time time.Time `json:"time"`
	// Kind classifies the event.
	Kind EventKind `json:"kind"`
	// State is the run's state when the event happened.
	State string `json:"state,omitempty"`
	// Tool is the tool name the event is about.
	Tool string `json:"tool,omitempty"`
	// InputDigest is the sha256 (hex) of the tool input; see InputDigest.
	InputDigest string `json:"input_digest,omitempty"`
	// Decision is allow, deny or ask, for decision events.
	Decision string `json:"decision,omitempty"`
	// Rule is the policy rule id that decided.
	Rule string `json:"rule,omitempty"`
	// Reason is the human explanation.
	Reason string `json:"reason,omitempty"`
	// ToolUseID is the harness's id for the call.
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Data holds kind-specific details (JSON), such as a transition's from,
	// to and event.
	Data json.RawMessage `json:"data,omitempty"`
	// PrevHash is the Hash of the preceding event of the same chain (""
	// for a chain's first event; the chain's anchor after pruning).
	PrevHash string `json:"prev_hash"`
	// Hash is sha256 over PrevHash and the event's canonical fields; see HashEvent.
	Hash string `json:"hash"`
}

// Phase is the hook phase a call record belongs to.
type Phase string

// Phases.
const (
	// PhasePre: PreToolUse — the decision, and the effects it reserves.
	PhasePre Phase = "pre"
	// PhasePost: PostToolUse / PostToolUseFailure — the settlement.
	PhasePost Phase = "post"
)

// CallStatus is the state of a call record's reservation.
type CallStatus string

// Call statuses.
const (
	// CallReserved: a PreToolUse record whose effects are not settled yet.
	CallReserved CallStatus = "reserved"
	// CallSettled: the call went ahead (PostToolUse); effects are final.
	CallSettled CallStatus = "settled"
	// CallFailed: the call failed (PostToolUseFailure).
	CallFailed CallStatus = "failed"
	// CallDone: a record with nothing to settle (a denied call, a post record).
	CallDone CallStatus = "done"
)

// Call records one hook phase of one tool call. A (session, tool_use_id,
// phase) is recorded at most once: a retried hook finds the record and
// replays its Outcome instead of counting the call again.
type Call struct {
	// ToolUseID is the harness's id for the call.
	ToolUseID string `json:"tool_use_id"`
	// Phase is pre or post.
	Phase Phase `json:"phase"`
	// SessionKey and RunID tie the call to its run (RunID may be "" when no
	// run was live). The store fills both from the transaction when empty.
	SessionKey string `json:"session_key"`
	RunID      string `json:"run_id,omitempty"`
	// State is the run's state at the call.
	State string `json:"state,omitempty"`
	// Outcome is what the runtime answered (JSON), replayed verbatim on a retry.
	Outcome json.RawMessage `json:"outcome,omitempty"`
	// Effects are the effects a pre record reserves (JSON).
	Effects json.RawMessage `json:"effects,omitempty"`
	// Status is reserved, settled, failed or done.
	Status CallStatus `json:"status"`
	// CreatedAt is when the record was written; SettledAt when a post
	// record settled it (zero while reserved).
	CreatedAt time.Time `json:"created_at"`
	SettledAt time.Time `json:"settled_at,omitzero"`
}

// Tx is one write transaction on one session, opened by Store.Update. It is
// valid only inside the function passed to Update and must not be used from
// other goroutines. Writes happen in order; an error returned by the
// function rolls all of them back.
type Tx interface {
	// SessionKey is the session the transaction is on.
	SessionKey() string
	// Now is the store's clock, read once when the transaction began.
	Now() time.Time
	// Run returns a copy of the session's live run as of the transaction's
	// start (or its last Put), or nil when the session has none.
	Run() *Run
	// Last returns a copy of the session's newest run when it has no live
	// one (the run that ended last), or nil: with a live run, or when the
	// session never had a run.
	Last() *Run
	// Call returns the record of toolUseID's phase in this session, or
	// ErrNotFound.
	Call(toolUseID string, phase Phase) (*Call, error)
	// Put writes run. A run without an ID is created: the store assigns ID,
	// CreatedAt, SnapshotDigest and Revision 1; it fails with ErrConflict when
	// the session already has a live run (write the old one with a final
	// status first). A run with an ID is updated with compare-and-swap: its
	// Revision must be the stored one (else ErrConflict); the store
	// increments it. Put updates run's ID, Revision, timestamps in place.
	Put(run *Run) error
	// Append appends events to the log. RunID and SessionKey default to the
	// transaction's run and session, Time to Now; an event may name only
	// the transaction's session and a run the transaction read or wrote
	// (else ErrInvalid). Each event joins its chain (ChainOf); Seq, Chain,
	// ChainSeq, PrevHash and Hash are assigned and written back into
	// events.
	Append(events ...*Event) error
	// Record writes a call record (ErrDuplicate when one exists). Recording a
	// post phase settles the pre record of the same call: a reserved pre
	// record becomes settled (post Status settled or done) or failed (post
	// Status failed), exactly once.
	Record(call *Call) error
}

// RunFilter selects runs for Store.Runs.
type RunFilter struct {
	// SessionKey limits to one session ("" for all).
	SessionKey string
	// LiveOnly limits to live runs (active, awaiting_approval, paused).
	LiveOnly bool
	// Statuses limits to these statuses (empty for all).
	Statuses []Status
	// Limit caps the number of runs (0 for no cap). Newest first.
	Limit int
}

// EventFilter selects events for Store.Events.
type EventFilter struct {
	// RunID and SessionKey limit to one run or session ("" for all).
	RunID      string
	SessionKey string
	// Kinds limits to these kinds (empty for all).
	Kinds []EventKind
	// ToolUseID limits to one call.
	ToolUseID string
	// AfterSeq returns only events with Seq > AfterSeq (for polling).
	AfterSeq int64
	// Since returns only events at or after this time (zero for all).
	Since time.Time
	// Limit caps the number of events (0 for no cap). Oldest first, unless
	// Newest is set: then the newest Limit events, still in Seq order.
	Limit  int
	Newest bool
}

// Retention bounds the event log. An event is pruned when it is older than
// MaxAge (MaxAge > 0) or not among the newest Keep events (Keep > 0); the
// zero Retention keeps everything. Pruning removes a prefix of the log (by
// Seq), which is a prefix of every chain, and anchors each chain it cut
// at the last event it removed from that chain.
type Retention struct {
	MaxAge time.Duration `json:"max_age,omitempty"`
	Keep   int64         `json:"keep,omitempty"`
}

// Pruned reports what Store.Prune removed.
type Pruned struct {
	// Events is the number of events removed; AnchorSeq and AnchorHash
	// describe the last removed event (by Seq).
	Events     int64  `json:"events"`
	AnchorSeq  int64  `json:"anchor_seq"`
	AnchorHash string `json:"anchor_hash"`
	// Calls is the number of settled call records removed.
	Calls int64 `json:"calls"`
}

// ChainStatus reports a verified event log.
type ChainStatus struct {
	// Events is the number of events verified; Chains the number of chains
	// they (and the anchors of chains pruned to nothing) form, the legacy
	// global chain included; Legacy the events of the legacy global chain.
	Events int64 `json:"events"`
	Chains int64 `json:"chains"`
	Legacy int64 `json:"legacy,omitempty"`
	// AnchorSeq and AnchorHash are the last event pruned from the log (by
	// Seq; 0, "" when never pruned): where the log starts.
	AnchorSeq  int64  `json:"anchor_seq"`
	AnchorHash string `json:"anchor_hash"`
	// HeadSeq and HeadHash are the newest event's, by Seq (the anchor's
	// when the log is empty).
	HeadSeq  int64  `json:"head_seq"`
	HeadHash string `json:"head_hash"`
	// HeadsHash is the hash over every chain's head and anchor (see
	// HeadsHash): what a checkpoint signs.
	HeadsHash string `json:"heads_hash"`
	// Checkpoint is the checkpoint the log was verified against (0 for
	// none); Uncovered the events it does not cover (appended since): a
	// cut among those cannot be told from events never written.
	Checkpoint int64 `json:"checkpoint,omitempty"`
	Uncovered  int64 `json:"uncovered,omitempty"`
}

// Store is a durable statewright store. Implementations are safe for
// concurrent use by several goroutines and by several processes sharing the
// same backing store.
type Store interface {
	// StoreID is the store's identity, created once with the store. A hook
	// command names it so a deleted or recreated store is detected.
	StoreID() string
	// Identity says which store this is, where, and which local files
	// make it up (so self-protection and the sandbox can guard them).
	Identity() Identity
	// CheckIdentity fails with ErrStoreMismatch once the store at the
	// handle's location is no longer the one opened (an SQLite file
	// removed or replaced, a PostgreSQL schema dropped and recreated):
	// long-lived processes call it before serving, since writes through
	// the old handle would reach a store nobody else reads.
	CheckIdentity(ctx context.Context) error

	// Update runs fn in one write transaction on sessionKey: it re-reads the
	// session's live run, lets fn decide, and commits fn's writes atomically
	// (or none of them when fn returns an error, which Update returns).
	// Transactions on the same store are serialised; fn must not block on
	// other work. A backend may run fn more than once (an optimistic
	// backend retries after a conflicting commit), so fn must have no
	// effects outside tx and must decide only from what it reads through
	// tx; results it hands out must be taken from the last run.
	Update(ctx context.Context, sessionKey string, fn func(tx Tx) error) error

	// Run returns the run with this id, or ErrNotFound.
	Run(ctx context.Context, id string) (*Run, error)
	// LiveRun returns the session's live run, or ErrNotFound.
	LiveRun(ctx context.Context, sessionKey string) (*Run, error)
	// Runs lists runs, newest first.
	Runs(ctx context.Context, f RunFilter) ([]*Run, error)
	// Revision returns a run's revision (cheap; long-lived processes poll it).
	Revision(ctx context.Context, runID string) (int64, error)
	// Calls lists the call records of a run, oldest first.
	Calls(ctx context.Context, runID string) ([]Call, error)

	// Events lists events matching f.
	Events(ctx context.Context, f EventFilter) ([]Event, error)
	// ExportJSONL writes the whole event log, one JSON event per line in
	// Seq order (see WriteEventJSONL); VerifyJSONL checks such an export.
	ExportJSONL(ctx context.Context, w io.Writer) error
	// VerifyChain recomputes every event's hash and link, chain by chain
	// from each chain's anchor, and checks that every chain ends where its
	// stored head says; it returns an error wrapping ErrChainBroken at the
	// first bad event.
	VerifyChain(ctx context.Context) (ChainStatus, error)
	// VerifyAgainst is VerifyChain that also checks the log against a
	// checkpoint (see ChainVerifier.Cover): every head it signed is still
	// there unchanged, and no chain was pruned since. A nil checkpoint
	// checks nothing more than VerifyChain.
	VerifyAgainst(ctx context.Context, cp *Checkpoint) (ChainStatus, error)
	// Heads returns every chain's head and anchor, as of one moment.
	Heads(ctx context.Context) ([]Head, error)
	// Checkpoint signs the heads of every chain as of now and appends the
	// checkpoint to the checkpoints' own chain.
	Checkpoint(ctx context.Context, opts CheckpointOptions) (Checkpoint, error)
	// Checkpoints lists the checkpoints, oldest first; the newest carries
	// the heads it covers.
	Checkpoints(ctx context.Context) ([]Checkpoint, error)

	// Retention returns the stored retention setting; SetRetention stores it.
	Retention(ctx context.Context) (Retention, error)
	SetRetention(ctx context.Context, r Retention) error
	// Prune removes events (and call records no longer reserved) per r.
	Prune(ctx context.Context, r Retention) (Pruned, error)

	// Close releases the store.
	Close() error
}

// SettlesAs returns the status a post record gives the reserved pre record
// of the same call: failed for a failed call, settled otherwise.
func (c *Call) SettlesAs() CallStatus {
	if c.Status == CallFailed {
		return CallFailed
	}
	return CallSettled
}
