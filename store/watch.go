package store

import "context"

// Change tells a watcher that a run was written and committed, by this
// process or any other sharing the store (another hook, the CLI, another
// `serve` replica). A Change is a hint: the run is at Revision or later, so
// a watcher that needs more than these fields re-reads the run.
//
// A Change with an empty RunID is a resync: changes may have been missed
// (the backend lost its notification connection, or a receiver fell
// behind), so the watcher re-reads whatever it shows or caches.
type Change struct {
	// RunID and SessionKey name the run that was written.
	RunID      string `json:"run_id,omitempty"`
	SessionKey string `json:"session_key,omitempty"`
	// Revision is the run's revision after the write.
	Revision int64 `json:"revision,omitempty"`
	// Status and State are the run's after the write.
	Status Status `json:"status,omitempty"`
	State  string `json:"state,omitempty"`
	// ApprovalID is the pending approval's id while the run awaits one.
	ApprovalID string `json:"approval_id,omitempty"`
}

// Resync reports whether c asks the watcher to re-read everything.
func (c Change) Resync() bool { return c.RunID == "" }

// Watcher is implemented by stores that push run changes to long-lived
// processes (the MCP server's list_changed, serve replicas, TUI and web
// views): store/postgres with LISTEN/NOTIFY, store/sqlite by polling. It is
// separate from Store so that callers test for it (`w, ok :=
// st.(store.Watcher)`) and fall back to polling Revision.
type Watcher interface {
	// Watch delivers a Change for run writes committed after it returns,
	// until ctx is done or the store is closed; then the channel is closed.
	// Changes to one run arrive in revision order; several changes to a
	// run that the receiver has not taken yet are merged into the latest.
	Watch(ctx context.Context) (<-chan Change, error)
}
