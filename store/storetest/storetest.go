// Package storetest is the conformance suite every store.Store backend
// runs: store/sqlite and store/postgres. It asserts what the
// store holds after each operation, not just what calls return.
package storetest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statewright-go/statewright/store"
)

// Factory opens a fresh, empty store whose clock is now. The store is
// closed by the suite; the factory may register further cleanup.
type Factory func(t *testing.T, now func() time.Time) store.Store

// Clock is a settable test clock, safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// T0 is the suite's starting time.
var T0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// Run runs the conformance suite against the backend newStore opens.
func Run(t *testing.T, newStore Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store, clk *Clock)
	}{
		{"CreateAndRead", testCreateAndRead},
		{"RoundTripAllFields", testRoundTrip},
		{"OneLiveRunPerSession", testOneLiveRun},
		{"CompareAndSwap", testCAS},
		{"RollbackOnError", testRollback},
		{"InvalidInput", testInvalid},
		{"Idempotency", testIdempotency},
		{"ReserveAndSettle", testReserveSettle},
		{"EventsAndFilters", testEvents},
		{"ChainAndExport", testExport},
		{"RetentionKeepN", testRetentionKeep},
		{"RetentionMaxAge", testRetentionAge},
		{"ConcurrentUpdates", testConcurrent},
		{"ConcurrentSessionsSomeFailing", testConcurrentFailing},
		{"ChainsPerRun", testChainsPerRun},
		{"LastRun", testLast},
		{"Checkpoints", testCheckpoints},
		{"CallPrefetchHint", testCallPrefetch},
		{"CallReadsHint", testCallReads},
		{"Closed", testClosed},
		{"WatchOwnWrites", testWatchOwn},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := NewClock(T0)
			s := newStore(t, clk.Now)
			defer s.Close()
			tc.fn(t, s, clk)
		})
	}
}

var bg = context.Background()

// NewRun returns a run ready to be created in session key.
func NewRun(key string) *store.Run {
	return &store.Run{
		SessionKey: key,
		WorkflowID: "tdd",
		Snapshot:   []byte(`{"id":"tdd","initial":"planning","states":{"planning":{}}}`),
		State:      "planning",
		Status:     store.StatusActive,
	}
}

// Create creates a run in session key and returns it as written.
func Create(t testing.TB, s store.Store, key string) *store.Run {
	t.Helper()
	r := NewRun(key)
	if err := s.Update(bg, key, func(tx store.Tx) error { return tx.Put(r) }); err != nil {
		t.Fatalf("create run: %v", err)
	}
	return r
}

// Decide is a decide-like transaction: if the call's pre phase is
// recorded, it returns the recorded outcome; otherwise it counts an
// iteration on the live run, appends a decision event and records the
// call, all in one transaction. It returns the outcome and whether it was
// replayed.
func Decide(ctx context.Context, s store.Store, key, toolUseID string) (string, bool, error) {
	var outcome string
	replayed := false
	err := s.Update(ctx, key, func(tx store.Tx) error {
		if toolUseID != "" {
			c, err := tx.Call(toolUseID, store.PhasePre)
			if err == nil {
				replayed = true
				return json.Unmarshal(c.Outcome, &outcome)
			}
			if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		r := tx.Run()
		if r == nil {
			return fmt.Errorf("no live run: %w", store.ErrNotFound)
		}
		r.Iterations++
		outcome = fmt.Sprintf("allow #%d", r.Iterations)
		if err := tx.Put(r); err != nil {
			return err
		}
		input := []byte(`{"command":"go test ./..."}`)
		if err := tx.Append(&store.Event{Kind: store.KindDecision, State: r.State, Tool: "Bash",
			InputDigest: store.InputDigest(input), Decision: "allow", Rule: "allow", Reason: outcome,
			ToolUseID: toolUseID}); err != nil {
			return err
		}
		if toolUseID == "" {
			return nil
		}
		out, _ := json.Marshal(outcome)
		return tx.Record(&store.Call{ToolUseID: toolUseID, Phase: store.PhasePre, State: r.State,
			Outcome: out, Effects: json.RawMessage(`{"count_iteration":true}`)})
	})
	return outcome, replayed, err
}

func mustLive(t *testing.T, s store.Store, key string) *store.Run {
	t.Helper()
	r, err := s.LiveRun(bg, key)
	if err != nil {
		t.Fatalf("LiveRun(%s): %v", key, err)
	}
	return r
}

func mustEvents(t *testing.T, s store.Store, f store.EventFilter) []store.Event {
	t.Helper()
	evs, err := s.Events(bg, f)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	return evs
}

func mustVerify(t *testing.T, s store.Store) store.ChainStatus {
	t.Helper()
	st, err := s.VerifyChain(bg)
	if err != nil {
		t.Fatalf("VerifyChain: %v", err)
	}
	return st
}

func testCreateAndRead(t *testing.T, s store.Store, clk *Clock) {
	if s.StoreID() == "" {
		t.Fatal("StoreID is empty")
	}
	if _, err := s.LiveRun(bg, "cc:s1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("LiveRun on empty store: err = %v, want ErrNotFound", err)
	}
	var sawNil bool
	r := NewRun("")
	err := s.Update(bg, "cc:s1", func(tx store.Tx) error {
		sawNil = tx.Run() == nil
		if tx.SessionKey() != "cc:s1" || !tx.Now().Equal(T0) {
			return fmt.Errorf("tx session %q now %v", tx.SessionKey(), tx.Now())
		}
		return tx.Put(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sawNil {
		t.Error("tx.Run() was not nil for a session without a run")
	}
	sum := sha256.Sum256(r.Snapshot)
	if r.ID == "" || r.Revision != 1 || r.SessionKey != "cc:s1" || !r.CreatedAt.Equal(T0) ||
		r.SnapshotDigest != hex.EncodeToString(sum[:]) {
		t.Fatalf("Put did not fill the run: %+v", r)
	}
	for _, get := range []func() (*store.Run, error){
		func() (*store.Run, error) { return s.LiveRun(bg, "cc:s1") },
		func() (*store.Run, error) { return s.Run(bg, r.ID) },
	} {
		got, err := get()
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != r.ID || got.State != "planning" || got.Revision != 1 || got.Status != store.StatusActive ||
			!bytes.Equal(got.Snapshot, r.Snapshot) || got.SnapshotDigest != r.SnapshotDigest {
			t.Errorf("read back %+v, want %+v", got, r)
		}
	}
	if rev, err := s.Revision(bg, r.ID); err != nil || rev != 1 {
		t.Errorf("Revision = %d, %v; want 1", rev, err)
	}
	if _, err := s.Run(bg, "run_missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Run(missing) err = %v, want ErrNotFound", err)
	}
	if _, err := s.Revision(bg, "run_missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Revision(missing) err = %v, want ErrNotFound", err)
	}
	// An update sees the run and bumps the revision.
	clk.Advance(time.Second)
	err = s.Update(bg, "cc:s1", func(tx store.Tx) error {
		cur := tx.Run()
		if cur == nil || cur.ID != r.ID {
			return fmt.Errorf("tx.Run() = %+v", cur)
		}
		cur.State = "implementing"
		return tx.Put(cur)
	})
	if err != nil {
		t.Fatal(err)
	}
	got := mustLive(t, s, "cc:s1")
	if got.State != "implementing" || got.Revision != 2 || !got.UpdatedAt.Equal(T0.Add(time.Second)) || !got.CreatedAt.Equal(T0) {
		t.Errorf("after update: %+v", got)
	}
}

func testRoundTrip(t *testing.T, s store.Store, clk *Clock) {
	want := &store.Run{
		SessionKey:     "cc:rt",
		WorkflowID:     "release",
		WorkflowSource: "/home/u/p/.statewright/workflows/release.json",
		Snapshot:       []byte("{\n  \"id\": \"release\"\n}"),
		State:          "review",
		Context:        json.RawMessage(`{"a":1,"nested":{"b":[true,null,"x<y"]}}`),
		History:        json.RawMessage(`[{"return":"implementing","interrupt":"pb"}]`),
		Iterations:     7,
		Counters:       map[string]int64{"visits.review": 2, "edited_lines": 40},
		FilesEdited:    []string{"a.go", "dir/b.go"},
		PendingApproval: &store.Approval{
			ID: "apr_1", Event: "APPROVE", From: "review", To: "committing", Message: "ship it?",
			Context:     json.RawMessage(`{"k":"v"}`),
			RequestedAt: T0, ExpiresAt: T0.Add(24 * time.Hour), Revision: 1,
		},
		Status:    store.StatusAwaitingApproval,
		AuditOnly: true,
		Evidence:  json.RawMessage(`{"last_command":{"exit_code":0}}`),
	}
	in := want.Clone()
	if err := s.Update(bg, "cc:rt", func(tx store.Tx) error { return tx.Put(in) }); err != nil {
		t.Fatal(err)
	}
	got, err := s.Run(bg, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	want.ID, want.Revision, want.SnapshotDigest = in.ID, 1, in.SnapshotDigest
	want.CreatedAt, want.UpdatedAt = T0, T0
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Fatalf("round trip:\n got %s\nwant %s", gj, wj)
	}
	// Clone is deep: changing the clone leaves the original alone.
	c := got.Clone()
	c.FilesEdited[0] = "zzz"
	c.Counters["edited_lines"] = 0
	c.PendingApproval.ID = "other"
	c.Context[2] = 'X'
	if got.FilesEdited[0] != "a.go" || got.Counters["edited_lines"] != 40 || got.PendingApproval.ID != "apr_1" || got.Context[2] != 'a' {
		t.Error("Clone shares memory with the original")
	}
}

func testOneLiveRun(t *testing.T, s store.Store, clk *Clock) {
	a := Create(t, s, "cc:one")
	err := s.Update(bg, "cc:one", func(tx store.Tx) error { return tx.Put(NewRun("cc:one")) })
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second live run: err = %v, want ErrConflict", err)
	}
	// Other sessions are independent.
	Create(t, s, "cc:two")
	// Completing the old run and starting a new one in one transaction works.
	clk.Advance(time.Second)
	var b *store.Run
	err = s.Update(bg, "cc:one", func(tx store.Tx) error {
		old := tx.Run()
		old.Status = store.StatusCompleted
		if err := tx.Put(old); err != nil {
			return err
		}
		if tx.Run() != nil {
			return errors.New("tx.Run() still returns the completed run")
		}
		b = NewRun("cc:one")
		return tx.Put(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	if live := mustLive(t, s, "cc:one"); live.ID != b.ID {
		t.Errorf("live run = %s, want %s", live.ID, b.ID)
	}
	old, err := s.Run(bg, a.ID)
	if err != nil || old.Status != store.StatusCompleted || old.Revision != 2 {
		t.Errorf("old run = %+v, %v; want completed at revision 2", old, err)
	}
	runs, err := s.Runs(bg, store.RunFilter{SessionKey: "cc:one"})
	if err != nil || len(runs) != 2 || runs[0].ID != b.ID || runs[1].ID != a.ID {
		t.Errorf("Runs(session) = %d runs, %v; want [new, old]", len(runs), err)
	}
	live, err := s.Runs(bg, store.RunFilter{LiveOnly: true})
	if err != nil || len(live) != 2 {
		t.Errorf("Runs(live) = %d, %v; want 2", len(live), err)
	}
	done, err := s.Runs(bg, store.RunFilter{Statuses: []store.Status{store.StatusCompleted}})
	if err != nil || len(done) != 1 || done[0].ID != a.ID {
		t.Errorf("Runs(completed) = %d, %v; want the old run", len(done), err)
	}
	lim, err := s.Runs(bg, store.RunFilter{Limit: 1})
	if err != nil || len(lim) != 1 || lim[0].ID != b.ID {
		t.Errorf("Runs(limit 1) = %d, %v; want the newest", len(lim), err)
	}
	// A paused run still occupies its session.
	err = s.Update(bg, "cc:two", func(tx store.Tx) error {
		r := tx.Run()
		r.Status = store.StatusPaused
		return tx.Put(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(bg, "cc:two", func(tx store.Tx) error { return tx.Put(NewRun("")) })
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("new run beside a paused one: err = %v, want ErrConflict", err)
	}
}

func testCAS(t *testing.T, s store.Store, clk *Clock) {
	r := Create(t, s, "cc:cas")
	stale := mustLive(t, s, "cc:cas") // revision 1, read outside any transaction
	if _, _, err := Decide(bg, s, "cc:cas", ""); err != nil {
		t.Fatal(err)
	}
	err := s.Update(bg, "cc:cas", func(tx store.Tx) error {
		stale.State = "forced"
		return tx.Put(stale)
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale put: err = %v, want ErrConflict", err)
	}
	got := mustLive(t, s, "cc:cas")
	if got.Revision != 2 || got.State != "planning" || got.Iterations != 1 {
		t.Errorf("after a failed CAS the store holds %+v; want revision 2, planning, 1 iteration", got)
	}
	// A run of another session cannot be written through this one.
	other := Create(t, s, "cc:other")
	err = s.Update(bg, "cc:cas", func(tx store.Tx) error { return tx.Put(other) })
	if !errors.Is(err, store.ErrInvalid) {
		t.Errorf("put of another session's run: err = %v, want ErrInvalid", err)
	}
	// An id that does not exist is not found.
	err = s.Update(bg, "cc:cas", func(tx store.Tx) error {
		x := NewRun("cc:cas")
		x.ID, x.Revision = "run_nope", 1
		return tx.Put(x)
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("put of unknown id: err = %v, want ErrNotFound", err)
	}
	_ = r
}

func testRollback(t *testing.T, s store.Store, clk *Clock) {
	Create(t, s, "cc:rb")
	boom := errors.New("decision failed")
	err := s.Update(bg, "cc:rb", func(tx store.Tx) error {
		r := tx.Run()
		r.Iterations = 99
		if err := tx.Put(r); err != nil {
			return err
		}
		if err := tx.Append(&store.Event{Kind: store.KindDecision, Reason: "x"}); err != nil {
			return err
		}
		if err := tx.Record(&store.Call{ToolUseID: "toolu_rb", Phase: store.PhasePre}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update err = %v, want the function's error", err)
	}
	got := mustLive(t, s, "cc:rb")
	if got.Iterations != 0 || got.Revision != 1 {
		t.Errorf("rolled-back update left %+v", got)
	}
	if evs := mustEvents(t, s, store.EventFilter{}); len(evs) != 0 {
		t.Errorf("rolled-back update left %d events", len(evs))
	}
	if calls, err := s.Calls(bg, got.ID); err != nil || len(calls) != 0 {
		t.Errorf("rolled-back update left %d calls (%v)", len(calls), err)
	}
	// A Tx is dead once Update returns.
	var kept store.Tx
	if err := s.Update(bg, "cc:rb", func(tx store.Tx) error { kept = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := kept.Append(&store.Event{Kind: store.KindAdmin}); err == nil {
		t.Error("Append on a finished transaction succeeded")
	}
	if err := kept.Put(got); err == nil {
		t.Error("Put on a finished transaction succeeded")
	}
	// A panic rolls back too, and the store stays usable.
	func() {
		defer func() { recover() }()
		s.Update(bg, "cc:rb", func(tx store.Tx) error {
			r := tx.Run()
			r.Iterations = 50
			tx.Put(r)
			panic("boom")
		})
	}()
	if got := mustLive(t, s, "cc:rb"); got.Iterations != 0 {
		t.Errorf("panicking update left iterations = %d", got.Iterations)
	}
	if _, _, err := Decide(bg, s, "cc:rb", "toolu_after"); err != nil {
		t.Fatalf("store unusable after a panic: %v", err)
	}
}

func testInvalid(t *testing.T, s store.Store, clk *Clock) {
	Create(t, s, "cc:inv")
	cases := []struct {
		name string
		key  string
		fn   func(tx store.Tx) error
	}{
		{"empty session", "", func(tx store.Tx) error { return nil }},
		{"event data not JSON", "cc:inv", func(tx store.Tx) error {
			return tx.Append(&store.Event{Kind: store.KindDecision, Data: json.RawMessage(`{nope`)})
		}},
		{"event without kind", "cc:inv", func(tx store.Tx) error { return tx.Append(&store.Event{Reason: "x"}) }},
		{"run context not JSON", "cc:inv", func(tx store.Tx) error {
			r := tx.Run()
			r.Context = json.RawMessage(`[1,`)
			return tx.Put(r)
		}},
		{"run with unknown status", "cc:inv", func(tx store.Tx) error {
			r := tx.Run()
			r.Status = "zombie"
			return tx.Put(r)
		}},
		{"run without state", "cc:inv", func(tx store.Tx) error {
			r := tx.Run()
			r.State = ""
			return tx.Put(r)
		}},
		{"call without id", "cc:inv", func(tx store.Tx) error {
			return tx.Record(&store.Call{Phase: store.PhasePre})
		}},
		{"call with unknown phase", "cc:inv", func(tx store.Tx) error {
			return tx.Record(&store.Call{ToolUseID: "t", Phase: "mid"})
		}},
		{"reserved post call", "cc:inv", func(tx store.Tx) error {
			return tx.Record(&store.Call{ToolUseID: "t", Phase: store.PhasePost, Status: store.CallReserved})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Update(bg, tc.key, tc.fn)
			if !errors.Is(err, store.ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
		})
	}
	if got := mustLive(t, s, "cc:inv"); got.Revision != 1 {
		t.Errorf("invalid writes changed the run: %+v", got)
	}
	if evs := mustEvents(t, s, store.EventFilter{}); len(evs) != 0 {
		t.Errorf("invalid writes left %d events", len(evs))
	}
}

func testIdempotency(t *testing.T, s store.Store, clk *Clock) {
	r := Create(t, s, "cc:idem")
	out1, rep1, err := Decide(bg, s, "cc:idem", "toolu_01")
	if err != nil || rep1 || out1 != "allow #1" {
		t.Fatalf("first decide = %q, replayed %v, %v", out1, rep1, err)
	}
	// The same hook again (a retry, a second hook for the same call).
	for i := 0; i < 3; i++ {
		out, rep, err := Decide(bg, s, "cc:idem", "toolu_01")
		if err != nil || !rep || out != out1 {
			t.Fatalf("retry %d = %q, replayed %v, %v; want the recorded %q", i, out, rep, err, out1)
		}
	}
	out2, rep2, err := Decide(bg, s, "cc:idem", "toolu_02")
	if err != nil || rep2 || out2 != "allow #2" {
		t.Fatalf("second call = %q, replayed %v, %v", out2, rep2, err)
	}
	got := mustLive(t, s, "cc:idem")
	if got.Iterations != 2 || got.Revision != 3 {
		t.Errorf("run after retries: iterations %d revision %d; want 2 and 3", got.Iterations, got.Revision)
	}
	evs := mustEvents(t, s, store.EventFilter{RunID: r.ID})
	if len(evs) != 2 || evs[0].ToolUseID != "toolu_01" || evs[1].ToolUseID != "toolu_02" {
		t.Errorf("events after retries: %d", len(evs))
	}
	// A raw second record is refused by the store itself.
	err = s.Update(bg, "cc:idem", func(tx store.Tx) error {
		return tx.Record(&store.Call{ToolUseID: "toolu_01", Phase: store.PhasePre})
	})
	if !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("duplicate record: err = %v, want ErrDuplicate", err)
	}
	// The same tool_use_id in another session is a different call.
	Create(t, s, "cc:idem2")
	if out, rep, err := Decide(bg, s, "cc:idem2", "toolu_01"); err != nil || rep || out != "allow #1" {
		t.Errorf("same id in another session = %q, replayed %v, %v", out, rep, err)
	}
}

func testReserveSettle(t *testing.T, s store.Store, clk *Clock) {
	r := Create(t, s, "cc:rs")
	for _, id := range []string{"toolu_ok", "toolu_fail", "toolu_open"} {
		if _, _, err := Decide(bg, s, "cc:rs", id); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(2 * time.Second)
	settle := func(id string, st store.CallStatus) error {
		return s.Update(bg, "cc:rs", func(tx store.Tx) error {
			return tx.Record(&store.Call{ToolUseID: id, Phase: store.PhasePost, Status: st,
				Outcome: json.RawMessage(`{"recorded":true}`)})
		})
	}
	if err := settle("toolu_ok", store.CallSettled); err != nil {
		t.Fatal(err)
	}
	if err := settle("toolu_fail", store.CallFailed); err != nil {
		t.Fatal(err)
	}
	// PostToolUse retried: settles nothing twice.
	if err := settle("toolu_ok", store.CallSettled); !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("second settlement: err = %v, want ErrDuplicate", err)
	}
	calls, err := s.Calls(bg, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]store.CallStatus{}
	for _, c := range calls {
		got[c.ToolUseID+"/"+string(c.Phase)] = c.Status
		if c.Phase == store.PhasePre && c.Status != store.CallReserved && !c.SettledAt.Equal(T0.Add(2*time.Second)) {
			t.Errorf("%s settled at %v", c.ToolUseID, c.SettledAt)
		}
		if c.Phase == store.PhasePre && string(c.Effects) != `{"count_iteration":true}` {
			t.Errorf("%s effects = %s", c.ToolUseID, c.Effects)
		}
	}
	want := map[string]store.CallStatus{
		"toolu_ok/pre": store.CallSettled, "toolu_ok/post": store.CallSettled,
		"toolu_fail/pre": store.CallFailed, "toolu_fail/post": store.CallFailed,
		"toolu_open/pre": store.CallReserved,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("call records = %v, want %v", got, want)
	}
	// A post record is visible through Tx.Call for a retried PostToolUse.
	err = s.Update(bg, "cc:rs", func(tx store.Tx) error {
		c, err := tx.Call("toolu_ok", store.PhasePost)
		if err != nil {
			return err
		}
		if string(c.Outcome) != `{"recorded":true}` || c.RunID != r.ID {
			return fmt.Errorf("post record = %+v", c)
		}
		_, err = tx.Call("toolu_open", store.PhasePost)
		if !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("unsettled post: err = %v, want ErrNotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

func testEvents(t *testing.T, s store.Store, clk *Clock) {
	a := Create(t, s, "cc:ea")
	b := Create(t, s, "cc:eb")
	for i := 0; i < 3; i++ {
		clk.Advance(time.Second)
		if _, _, err := Decide(bg, s, "cc:ea", fmt.Sprintf("a%d", i)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Decide(bg, s, "cc:eb", fmt.Sprintf("b%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var tr store.Event
	err := s.Update(bg, "cc:ea", func(tx store.Tx) error {
		r := tx.Run()
		r.State, r.Iterations = "implementing", 0
		if err := tx.Put(r); err != nil {
			return err
		}
		tr = store.Event{Kind: store.KindTransition, State: "implementing",
			Data: json.RawMessage("{ \"from\" : \"planning\",\n \"to\": \"implementing\", \"event\": \"PLAN_DONE\" }")}
		return tx.Append(&tr)
	})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Seq != 7 || tr.RunID != a.ID || tr.SessionKey != "cc:ea" || tr.Hash == "" ||
		string(tr.Data) != `{"from":"planning","to":"implementing","event":"PLAN_DONE"}` {
		t.Errorf("appended event not filled in: %+v", tr)
	}
	all := mustEvents(t, s, store.EventFilter{})
	if len(all) != 7 {
		t.Fatalf("events = %d, want 7", len(all))
	}
	// Each run's events form their own chain: #1, #2, ... each linked to
	// the one before it in the same run, whatever the other run did
	// meanwhile; Seq orders the whole log.
	prev := map[string]store.Event{}
	for i, e := range all {
		if e.Seq != int64(i+1) {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
		if e.Chain != e.RunID || e.Chain != store.ChainOf(e.RunID, e.SessionKey) {
			t.Errorf("event %d is in chain %q, want its run's (%s)", e.Seq, e.Chain, e.RunID)
		}
		p, ok := prev[e.Chain]
		if want := p.ChainSeq + 1; e.ChainSeq != want || (ok && e.PrevHash != p.Hash) || (!ok && e.PrevHash != "") {
			t.Errorf("event %d (#%d of %s, prev %q) does not follow #%d (%q) of its chain", e.Seq, e.ChainSeq, e.Chain, e.PrevHash, p.ChainSeq, p.Hash)
		}
		prev[e.Chain] = e
		if e.Hash != store.HashEvent(&e) {
			t.Errorf("event %d hash does not match its content", e.Seq)
		}
	}
	if len(prev) != 2 || prev[a.ID].ChainSeq != 4 || prev[b.ID].ChainSeq != 3 {
		t.Errorf("chains = %v; want run a at #4, run b at #3", len(prev))
	}
	if all[6].Hash != tr.Hash || !reflect.DeepEqual(all[6], tr) {
		t.Errorf("stored transition differs from the appended one:\n%+v\n%+v", all[6], tr)
	}
	if all[0].InputDigest != store.InputDigest([]byte(`{ "command": "go test ./..." }`)) {
		t.Error("InputDigest depends on whitespace")
	}
	cases := []struct {
		name string
		f    store.EventFilter
		seqs []int64
	}{
		{"run", store.EventFilter{RunID: b.ID}, []int64{2, 4, 6}},
		{"session", store.EventFilter{SessionKey: "cc:ea"}, []int64{1, 3, 5, 7}},
		{"kind", store.EventFilter{Kinds: []store.EventKind{store.KindTransition}}, []int64{7}},
		{"tool use", store.EventFilter{ToolUseID: "b1"}, []int64{4}},
		{"after", store.EventFilter{AfterSeq: 5}, []int64{6, 7}},
		{"since", store.EventFilter{Since: T0.Add(3 * time.Second)}, []int64{5, 6, 7}},
		{"limit", store.EventFilter{Limit: 2}, []int64{1, 2}},
		{"newest", store.EventFilter{Limit: 2, Newest: true}, []int64{6, 7}},
		{"combined", store.EventFilter{SessionKey: "cc:ea", Kinds: []store.EventKind{store.KindDecision}, AfterSeq: 1, Limit: 1}, []int64{3}},
		{"none", store.EventFilter{SessionKey: "cc:nobody"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []int64
			for _, e := range mustEvents(t, s, tc.f) {
				got = append(got, e.Seq)
			}
			if !reflect.DeepEqual(got, tc.seqs) {
				t.Errorf("seqs = %v, want %v", got, tc.seqs)
			}
		})
	}
	st := mustVerify(t, s)
	if st.Events != 7 || st.Chains != 2 || st.HeadSeq != 7 || st.HeadHash != tr.Hash || st.AnchorSeq != 0 {
		t.Errorf("VerifyChain = %+v", st)
	}
	heads, err := s.Heads(bg)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Head{{Chain: prev[a.ID].Chain, Seq: 4, Hash: tr.Hash}, {Chain: b.ID, Seq: 3, Hash: prev[b.ID].Hash}}
	store.SortHeads(want)
	if !reflect.DeepEqual(heads, want) || st.HeadsHash != store.HeadsHash(heads) {
		t.Errorf("Heads = %+v (verified heads hash %s); want %+v", heads, st.HeadsHash, want)
	}
}

func testExport(t *testing.T, s store.Store, clk *Clock) {
	Create(t, s, "cc:x")
	for i := 0; i < 5; i++ {
		clk.Advance(time.Millisecond)
		if _, _, err := Decide(bg, s, "cc:x", fmt.Sprintf("x%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Data with characters JSON encoders like to escape must survive export.
	err := s.Update(bg, "cc:x", func(tx store.Tx) error {
		return tx.Append(&store.Event{Kind: store.KindAdmin, Reason: "a <b> & c",
			Data: json.RawMessage(`{"html":"<script>&amp;</script>","u":"é\u00e9"}`)})
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.ExportJSONL(bg, &buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("export has %d lines, want 6:\n%s", len(lines), buf.String())
	}
	stored := mustEvents(t, s, store.EventFilter{})
	for i, l := range lines {
		var e store.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %d does not parse: %v", i+1, err)
		}
		if !reflect.DeepEqual(e, stored[i]) {
			t.Errorf("line %d = %+v, want %+v", i+1, e, stored[i])
		}
	}
	st, err := store.VerifyJSONL(bytes.NewReader(buf.Bytes()))
	if err != nil || st.Events != 6 || st.HeadHash != stored[5].Hash {
		t.Errorf("VerifyJSONL = %+v, %v", st, err)
	}
	// Tampering with any field, removing or reordering a line breaks the chain.
	tampered := []struct{ name, text string }{
		{"reason", strings.Replace(buf.String(), `"reason":"allow #3"`, `"reason":"deny #3"`, 1)},
		{"decision", strings.Replace(buf.String(), `"decision":"allow"`, `"decision":"deny"`, 1)},
		{"dropped line", strings.Join(append(append([]string{}, lines[:2]...), lines[3:]...), "\n")},
		{"swapped lines", strings.Join([]string{lines[0], lines[2], lines[1], lines[3], lines[4], lines[5]}, "\n")},
		{"data", strings.Replace(buf.String(), `<script>`, `<SCRIPT>`, 1)},
	}
	for _, tc := range tampered {
		if tc.text == buf.String() {
			t.Fatalf("%s: tampering changed nothing", tc.name)
		}
		if _, err := store.VerifyJSONL(strings.NewReader(tc.text)); !errors.Is(err, store.ErrChainBroken) {
			t.Errorf("%s: VerifyJSONL err = %v, want ErrChainBroken", tc.name, err)
		}
	}
	if _, err := store.VerifyJSONL(strings.NewReader("{not json\n")); err == nil {
		t.Error("VerifyJSONL accepted a line that is not JSON")
	}
	if st, err := store.VerifyJSONL(strings.NewReader("")); err != nil || st.Events != 0 {
		t.Errorf("empty export: %+v, %v", st, err)
	}
}

func testRetentionKeep(t *testing.T, s store.Store, clk *Clock) {
	Create(t, s, "cc:keep")
	for i := 0; i < 10; i++ {
		if _, _, err := Decide(bg, s, "cc:keep", ""); err != nil {
			t.Fatal(err)
		}
	}
	before := mustEvents(t, s, store.EventFilter{})
	if r, err := s.Retention(bg); err != nil || r != (store.Retention{}) {
		t.Errorf("default retention = %+v, %v; want zero", r, err)
	}
	want := store.Retention{Keep: 4, MaxAge: 720 * time.Hour}
	if err := s.SetRetention(bg, want); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Retention(bg); err != nil || r != want {
		t.Errorf("Retention = %+v, %v; want %+v", r, err, want)
	}
	if err := s.SetRetention(bg, store.Retention{Keep: -1}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("negative retention: err = %v, want ErrInvalid", err)
	}
	if p, err := s.Prune(bg, store.Retention{}); err != nil || p.Events != 0 {
		t.Errorf("zero retention pruned %+v, %v", p, err)
	}
	p, err := s.Prune(bg, store.Retention{Keep: 4})
	if err != nil {
		t.Fatal(err)
	}
	if p.Events != 6 || p.AnchorSeq != 6 || p.AnchorHash != before[5].Hash {
		t.Errorf("Prune = %+v; want 6 events, anchored at seq 6", p)
	}
	after := mustEvents(t, s, store.EventFilter{})
	// The newest 4 remain, followed by the admin event recording the prune.
	if len(after) != 5 || after[0].Seq != 7 || after[3].Seq != 10 || after[4].Kind != store.KindAdmin {
		t.Fatalf("after prune: %d events from seq %d", len(after), after[0].Seq)
	}
	st := mustVerify(t, s)
	if st.AnchorSeq != 6 || st.AnchorHash != before[5].Hash || st.Events != 5 || st.HeadSeq != 11 {
		t.Errorf("VerifyChain after prune = %+v", st)
	}
	// Pruning again with the same setting changes nothing but keeps verifying.
	p2, err := s.Prune(bg, store.Retention{Keep: 5})
	if err != nil || p2.Events != 0 {
		t.Errorf("second prune = %+v, %v", p2, err)
	}
	// The chain continues across the anchor.
	if _, _, err := Decide(bg, s, "cc:keep", ""); err != nil {
		t.Fatal(err)
	}
	if st := mustVerify(t, s); st.HeadSeq != 12 || st.Events != 6 {
		t.Errorf("VerifyChain after append = %+v", st)
	}
	var buf bytes.Buffer
	if err := s.ExportJSONL(bg, &buf); err != nil {
		t.Fatal(err)
	}
	// An export cannot prove what was pruned before it: each chain starts
	// where its first exported event says.
	if st, err := store.VerifyJSONL(&buf); err != nil || st.Events != 6 || st.Chains != 2 {
		t.Errorf("VerifyJSONL of a pruned log = %+v, %v", st, err)
	}
	// Pruning everything leaves an anchor the next event links to.
	if _, err := s.Prune(bg, store.Retention{Keep: 1}); err != nil {
		t.Fatal(err)
	}
	if st := mustVerify(t, s); st.Events != 2 {
		t.Errorf("after keep-1 prune: %+v", st)
	}
}

func testRetentionAge(t *testing.T, s store.Store, clk *Clock) {
	r := Create(t, s, "cc:age")
	for i := 0; i < 4; i++ { // events at T0, T0+1h, T0+2h, T0+3h; toolu 0 and 1 settled
		if _, _, err := Decide(bg, s, "cc:age", fmt.Sprintf("age%d", i)); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			err := s.Update(bg, "cc:age", func(tx store.Tx) error {
				return tx.Record(&store.Call{ToolUseID: fmt.Sprintf("age%d", i), Phase: store.PhasePost})
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(time.Hour)
	}
	// now = T0+4h; keep 30 minutes: every decision event is older.
	p, err := s.Prune(bg, store.Retention{MaxAge: 30 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if p.Events != 4 || p.AnchorSeq != 4 {
		t.Errorf("Prune = %+v; want 4 events, anchor 4", p)
	}
	// Settled records of age0 and age1 (pre and post) go; the reserved ones
	// of the live run (age2, age3) stay although they are as old.
	if p.Calls != 4 {
		t.Errorf("pruned %d call records, want 4", p.Calls)
	}
	calls, err := s.Calls(bg, r.ID)
	if err != nil || len(calls) != 2 {
		t.Errorf("calls left = %d, %v; want the 2 reserved ones", len(calls), err)
	}
	evs := mustEvents(t, s, store.EventFilter{})
	if len(evs) != 1 || evs[0].Seq != 5 || evs[0].Kind != store.KindAdmin {
		t.Errorf("events after prune: %d", len(evs))
	}
	mustVerify(t, s)
	// A pruned call's tool_use_id would count again: retention must exceed
	// any retry window. Retained ones still replay.
	if _, rep, err := Decide(bg, s, "cc:age", "age3"); err != nil || !rep {
		t.Errorf("retained call replay = %v, %v", rep, err)
	}
}

func testConcurrent(t *testing.T, s store.Store, clk *Clock) {
	const workers, per = 8, 25
	Create(t, s, "cc:conc")
	var wg sync.WaitGroup
	errs := make(chan error, workers*per)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				// Every call twice: the retry must not count.
				id := fmt.Sprintf("toolu_%d_%d", w, i)
				for k := 0; k < 2; k++ {
					if _, _, err := Decide(bg, s, "cc:conc", id); err != nil {
						errs <- err
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	r := mustLive(t, s, "cc:conc")
	if r.Iterations != workers*per || r.Revision != workers*per+1 {
		t.Errorf("iterations %d revision %d; want %d and %d", r.Iterations, r.Revision, workers*per, workers*per+1)
	}
	if st := mustVerify(t, s); st.Events != workers*per {
		t.Errorf("events = %d, want %d", st.Events, workers*per)
	}
}

// testConcurrentFailing: many sessions write at once (a backend may commit
// them together); the functions that fail, by error or panic, leave
// nothing, and every other one commits exactly once.
func testConcurrentFailing(t *testing.T, s store.Store, clk *Clock) {
	const sessions, per = 12, 10
	for i := 0; i < sessions; i++ {
		Create(t, s, fmt.Sprintf("cc:cf%d", i))
	}
	boom := errors.New("boom")
	var wg sync.WaitGroup
	errs := make(chan error, sessions*per)
	for i := 0; i < sessions; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			key := fmt.Sprintf("cc:cf%d", i)
			for j := 0; j < per; j++ {
				fail := (i+j)%3 == 0
				err := func() (err error) {
					defer func() {
						if v := recover(); v != nil {
							err = fmt.Errorf("panic: %v", v)
						}
					}()
					return s.Update(bg, key, func(tx store.Tx) error {
						r := tx.Run()
						r.Iterations++
						if err := tx.Put(r); err != nil {
							return err
						}
						if err := tx.Append(&store.Event{Kind: store.KindDecision, ToolUseID: fmt.Sprintf("t%d", j)}); err != nil {
							return err
						}
						if err := tx.Record(&store.Call{ToolUseID: fmt.Sprintf("t%d", j), Phase: store.PhasePre, Status: store.CallDone}); err != nil {
							return err
						}
						switch {
						case fail && j%2 == 0:
							return boom
						case fail:
							panic("boom")
						}
						return nil
					})
				}()
				if fail != (err != nil) {
					errs <- fmt.Errorf("%s call %d (fail %v): %v", key, j, fail, err)
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := 0; i < sessions; i++ {
		key := fmt.Sprintf("cc:cf%d", i)
		var want int64
		for j := 0; j < per; j++ {
			if (i+j)%3 != 0 {
				want++
			}
		}
		r := mustLive(t, s, key)
		evs := mustEvents(t, s, store.EventFilter{SessionKey: key})
		calls, err := s.Calls(bg, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Iterations != want || int64(len(evs)) != want || int64(len(calls)) != want || r.Revision != want+1 {
			t.Errorf("%s: iterations %d, revision %d, %d events, %d calls; want %d each (revision %d)",
				key, r.Iterations, r.Revision, len(evs), len(calls), want, want+1)
		}
		for k, e := range evs {
			if e.ChainSeq != int64(k+1) {
				t.Errorf("%s: event %d is #%d of its chain", key, k, e.ChainSeq)
			}
		}
	}
	mustVerify(t, s)
}

// testChainsPerRun: a session's events outside any run, a run's, the next
// run's in the same session, and what an event may not name.
func testChainsPerRun(t *testing.T, s store.Store, clk *Clock) {
	// Dormant: the session's own chain.
	var dormant store.Event
	err := s.Update(bg, "cc:ch", func(tx store.Tx) error {
		dormant = store.Event{Kind: store.KindDecision, Tool: "Read"}
		return tx.Append(&dormant)
	})
	if err != nil {
		t.Fatal(err)
	}
	if dormant.Chain != "session:cc:ch" || dormant.ChainSeq != 1 || dormant.PrevHash != "" || dormant.RunID != "" {
		t.Errorf("dormant event = %+v; want #1 of session:cc:ch", dormant)
	}
	first := Create(t, s, "cc:ch")
	if _, _, err := Decide(bg, s, "cc:ch", "c1"); err != nil {
		t.Fatal(err)
	}
	// End the run and start the next one in one transaction: each event
	// goes to the run it names (the new one by default once written).
	var end, start store.Event
	var second *store.Run
	err = s.Update(bg, "cc:ch", func(tx store.Tx) error {
		r := tx.Run()
		r.Status = store.StatusCompleted
		if err := tx.Put(r); err != nil {
			return err
		}
		end = store.Event{Kind: store.KindRun, RunID: r.ID, Reason: "completed"}
		if err := tx.Append(&end); err != nil {
			return err
		}
		second = NewRun("cc:ch")
		if err := tx.Put(second); err != nil {
			return err
		}
		start = store.Event{Kind: store.KindRun, Reason: "started"}
		return tx.Append(&start)
	})
	if err != nil {
		t.Fatal(err)
	}
	if end.Chain != first.ID || end.ChainSeq != 2 || start.Chain != second.ID || start.ChainSeq != 1 || start.PrevHash != "" {
		t.Errorf("end = %s #%d, start = %s #%d (prev %q); want %s #2 and %s #1", end.Chain, end.ChainSeq,
			start.Chain, start.ChainSeq, start.PrevHash, first.ID, second.ID)
	}
	// An event may name only its own session and a run the transaction
	// read or wrote.
	Create(t, s, "cc:other")
	other := mustLive(t, s, "cc:other")
	for name, e := range map[string]*store.Event{
		"another session":   {Kind: store.KindAdmin, SessionKey: "cc:other"},
		"another run":       {Kind: store.KindAdmin, RunID: other.ID},
		"a run of its past": {Kind: store.KindAdmin, RunID: first.ID},
	} {
		err := s.Update(bg, "cc:ch", func(tx store.Tx) error { return tx.Append(e) })
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	st := mustVerify(t, s)
	if st.Chains != 3 || st.Events != 4 {
		t.Errorf("VerifyChain = %+v; want 4 events in 3 chains", st)
	}
}

// testLast: Tx.Last is the session's newest run once none is live.
func testLast(t *testing.T, s store.Store, clk *Clock) {
	check := func(want *store.Run, live bool) {
		t.Helper()
		err := s.Update(bg, "cc:last", func(tx store.Tx) error {
			if got := tx.Last(); (got == nil) != (want == nil) || (got != nil && (got.ID != want.ID || got.Status != want.Status ||
				!bytes.Equal(got.Snapshot, want.Snapshot))) {
				t.Errorf("Last = %+v, want %+v", got, want)
			}
			if (tx.Run() != nil) != live {
				t.Errorf("Run = %+v, want live %v", tx.Run(), live)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check(nil, false)
	r := Create(t, s, "cc:last")
	check(nil, true)
	err := s.Update(bg, "cc:last", func(tx store.Tx) error {
		r = tx.Run()
		r.Status = store.StatusCompleted
		return tx.Put(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	check(r, false)
}

// testCheckpoints: a checkpoint signs every chain's head; checkpoints
// chain to one another; only the newest keeps its heads.
func testCheckpoints(t *testing.T, s store.Store, clk *Clock) {
	_, key, _ := ed25519.GenerateKey(nil)
	next, nextKey, _ := ed25519.GenerateKey(nil)
	if cps, err := s.Checkpoints(bg); err != nil || len(cps) != 0 {
		t.Fatalf("Checkpoints of a new store = %v, %v", cps, err)
	}
	// A checkpoint of an empty log covers no chain.
	c0, err := s.Checkpoint(bg, store.CheckpointOptions{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if c0.Seq != 1 || c0.Chains != 0 || c0.PrevHash != "" {
		t.Errorf("first checkpoint = %+v", c0)
	}
	Create(t, s, "cc:cp1")
	Create(t, s, "cc:cp2")
	for i := 0; i < 3; i++ {
		if _, _, err := Decide(bg, s, "cc:cp1", fmt.Sprintf("cp%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := Decide(bg, s, "cc:cp2", "cpx"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	c1, err := s.Checkpoint(bg, store.CheckpointOptions{Key: key, NextKey: next})
	if err != nil {
		t.Fatal(err)
	}
	heads, err := s.Heads(bg)
	if err != nil {
		t.Fatal(err)
	}
	st := mustVerify(t, s)
	if c1.Seq != 2 || c1.PrevHash != c0.Hash || c1.Chains != 2 || c1.HeadsHash != st.HeadsHash ||
		!reflect.DeepEqual(c1.Heads, heads) || !c1.Time.Equal(T0.Add(time.Minute)) || c1.NextKeyID != store.KeyID(next) {
		t.Errorf("second checkpoint = %+v\nheads %+v, verified heads hash %s", c1, heads, st.HeadsHash)
	}
	if err := c1.Verify(key.Public().(ed25519.PublicKey)); err != nil {
		t.Error(err)
	}
	if err := c1.Verify(next); !errors.Is(err, store.ErrCheckpoint) {
		t.Errorf("verified under another key: %v", err)
	}
	c2, err := s.Checkpoint(bg, store.CheckpointOptions{Key: nextKey})
	if err != nil {
		t.Fatal(err)
	}
	cps, err := s.Checkpoints(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 3 || cps[0].Hash != c0.Hash || cps[1].Hash != c1.Hash || cps[2].Hash != c2.Hash || c2.PrevHash != c1.Hash {
		t.Fatalf("Checkpoints = %+v", cps)
	}
	if cps[0].Heads != nil || cps[1].Heads != nil || !reflect.DeepEqual(cps[2].Heads, heads) {
		t.Errorf("heads kept: %v, %v, %v; want the newest only", cps[0].Heads, cps[1].Heads, cps[2].Heads)
	}
	for i, c := range cps {
		k := key.Public().(ed25519.PublicKey)
		if i == 2 {
			k = next
		}
		if err := c.Verify(k); err != nil {
			t.Errorf("stored checkpoint %d: %v", c.Seq, err)
		}
	}
	if _, err := s.Checkpoint(bg, store.CheckpointOptions{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Checkpoint without a key: %v", err)
	}
}

// testCallPrefetch: the WithCallPrefetch hint changes nothing Tx.Call
// answers: a missing record, a present one, and one the transaction
// itself recorded or settled after the hint was taken.
func testCallPrefetch(t *testing.T, s store.Store, clk *Clock) {
	Create(t, s, "cc:pf")
	hint := func(id string, ph store.Phase) context.Context {
		return store.WithCallPrefetch(bg, store.CallRef{ToolUseID: id, Phase: ph})
	}
	err := s.Update(hint("p1", store.PhasePre), "cc:pf", func(tx store.Tx) error {
		if _, err := tx.Call("p1", store.PhasePre); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("missing record: %v", err)
		}
		if err := tx.Record(&store.Call{ToolUseID: "p1", Phase: store.PhasePre}); err != nil {
			return err
		}
		c, err := tx.Call("p1", store.PhasePre)
		if err != nil || c.Status != store.CallReserved {
			return fmt.Errorf("the record just written: %+v, %v", c, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(hint("p1", store.PhasePre), "cc:pf", func(tx store.Tx) error {
		if err := tx.Record(&store.Call{ToolUseID: "p1", Phase: store.PhasePost}); err != nil {
			return err
		}
		c, err := tx.Call("p1", store.PhasePre)
		if err != nil || c.Status != store.CallSettled {
			return fmt.Errorf("the record settled in this transaction: %+v, %v", c, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(hint("p1", store.PhasePost), "cc:pf", func(tx store.Tx) error {
		if c, err := tx.Call("p1", store.PhasePost); err != nil || c.Status != store.CallSettled {
			return fmt.Errorf("a present record: %+v, %v", c, err)
		}
		if err := tx.Record(&store.Call{ToolUseID: "p1", Phase: store.PhasePost}); !errors.Is(err, store.ErrDuplicate) {
			return fmt.Errorf("a duplicate: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testClosed(t *testing.T, s store.Store, clk *Clock) {
	r := Create(t, s, "cc:closed")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	checks := map[string]error{
		"Update":  s.Update(bg, "cc:closed", func(store.Tx) error { return nil }),
		"Run":     second(s.Run(bg, r.ID)),
		"LiveRun": second(s.LiveRun(bg, "cc:closed")),
		"Events":  second(s.Events(bg, store.EventFilter{})),
		"Export":  s.ExportJSONL(bg, &bytes.Buffer{}),
		"Verify":  second(s.VerifyChain(bg)),
		"Prune":   second(s.Prune(bg, store.Retention{Keep: 1})),
	}
	for name, err := range checks {
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close: err = %v, want ErrClosed", name, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// testWatchOwn: a store.Watcher also reports writes made through the same
// handle, ends the watch when the context is cancelled, and refuses to
// watch once closed.
func testWatchOwn(t *testing.T, s store.Store, clk *Clock) {
	w, ok := s.(store.Watcher)
	if !ok {
		t.Skip("the backend does not implement store.Watcher")
	}
	ctx, cancel := context.WithCancel(bg)
	ch, err := w.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := Create(t, s, "cc:own")
	for i := 0; i < 3; i++ {
		if _, _, err := Decide(bg, s, "cc:own", fmt.Sprintf("own%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	timeout := time.After(20 * time.Second) // a liveness bound, not a latency assertion
	var last int64
	for last < 4 {
		select {
		case c := <-ch:
			if c.Resync() {
				continue
			}
			if c.RunID != r.ID || c.SessionKey != "cc:own" || c.Revision < last {
				t.Fatalf("change %+v after revision %d", c, last)
			}
			last = c.Revision
		case <-timeout:
			t.Fatalf("saw revision %d, want 4", last)
		}
	}
	cancel()
	for range ch { // the channel closes once the context is done
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Watch(bg); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Watch after Close: err = %v, want ErrClosed", err)
	}
}

// SessionEvents checks a session's events on a store that finds them
// through its runs (backend.Tables.SessionByRuns): whatever the filter,
// they are exactly those whose session_key is the session's: events
// outside any run, in its runs' chains, in a run that ended, beside other
// sessions' and the store's own.
func SessionEvents(t *testing.T, s store.Store) {
	t.Helper()
	dormant := func(key, id string) {
		t.Helper()
		if err := s.Update(bg, key, func(tx store.Tx) error {
			return tx.Append(&store.Event{Kind: store.KindDecision, Tool: "Read", ToolUseID: id})
		}); err != nil {
			t.Fatal(err)
		}
	}
	dormant("cc:a", "a0")
	first := Create(t, s, "cc:a")
	Create(t, s, "cc:b")
	for i := 0; i < 3; i++ {
		for _, key := range []string{"cc:a", "cc:b"} {
			if _, _, err := Decide(bg, s, key, fmt.Sprintf("%s-%d", key, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The first run ends; the session decides dormant, then runs again.
	if err := s.Update(bg, "cc:a", func(tx store.Tx) error {
		r := tx.Run()
		r.Status = store.StatusCompleted
		return tx.Put(r)
	}); err != nil {
		t.Fatal(err)
	}
	dormant("cc:a", "a-between")
	Create(t, s, "cc:a")
	if _, _, err := Decide(bg, s, "cc:a", "a-second"); err != nil {
		t.Fatal(err)
	}
	dormant("cc:c", "c0")
	if _, err := s.Prune(bg, store.Retention{Keep: 100}); err != nil { // an event of the store's own
		t.Fatal(err)
	}

	all, err := s.Events(bg, store.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	filters := []store.EventFilter{
		{},
		{Kinds: []store.EventKind{store.KindDecision}},
		{AfterSeq: 4},
		{Limit: 3},
		{Limit: 3, Newest: true},
		{RunID: first.ID},
	}
	for _, key := range []string{"cc:a", "cc:b", "cc:c", "cc:nobody", ""} {
		for _, f := range filters {
			f.SessionKey = key
			var want []int64
			n := 0
			for _, e := range all {
				if key != "" && e.SessionKey != key || f.RunID != "" && e.RunID != f.RunID || e.Seq <= f.AfterSeq ||
					len(f.Kinds) > 0 && !slices.Contains(f.Kinds, e.Kind) {
					continue
				}
				want = append(want, e.Seq)
				n++
			}
			if f.Limit > 0 && len(want) > f.Limit {
				if f.Newest {
					want = want[len(want)-f.Limit:]
				} else {
					want = want[:f.Limit]
				}
			}
			evs, err := s.Events(bg, f)
			var got []int64
			for _, e := range evs {
				got = append(got, e.Seq)
			}
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("Events(%+v) = %v, %v; want %v", f, got, err, want)
			}
		}
	}
	if evs, _ := s.Events(bg, store.EventFilter{SessionKey: "cc:a"}); len(evs) != 6 {
		t.Errorf("session cc:a has %d events; want 6 (two outside runs, three in the first run, one in the second)", len(evs))
	}

}

// testCallReads: the WithCallReads hint changes nothing Tx.Call answers
// or Record does, as a settling decision uses it: the calls it settles
// (a reserved one, one with nothing to settle, one never decided), then
// the new call, whose records the first lookup may already have read. A
// post record settles a reserved pre record whether or not the
// transaction looked the call up first, and leaves a done one done.
func testCallReads(t *testing.T, s store.Store, clk *Clock) {
	Create(t, s, "cc:cr")
	err := s.Update(bg, "cc:cr", func(tx store.Tx) error {
		for _, c := range []*store.Call{
			{ToolUseID: "r1", Phase: store.PhasePre, Status: store.CallReserved},
			{ToolUseID: "d1", Phase: store.PhasePre, Status: store.CallDone},
			{ToolUseID: "r2", Phase: store.PhasePre, Status: store.CallReserved},
			{ToolUseID: "d2", Phase: store.PhasePre, Status: store.CallDone},
		} {
			if err := tx.Record(c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := store.WithCallReads(bg, "r1", "d1", "none", "new", "r2")
	err = s.Update(ctx, "cc:cr", func(tx store.Tx) error {
		for _, id := range []string{"r1", "d1", "none"} {
			if _, err := tx.Call(id, store.PhasePost); !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("%s: no post record yet: %v", id, err)
			}
			pre, err := tx.Call(id, store.PhasePre)
			switch {
			case id == "none" && !errors.Is(err, store.ErrNotFound):
				return fmt.Errorf("%s: no pre record: %+v, %v", id, pre, err)
			case id != "none" && err != nil:
				return fmt.Errorf("%s: pre record: %v", id, err)
			}
			if err := tx.Record(&store.Call{ToolUseID: id, Phase: store.PhasePost, Status: store.CallFailed}); err != nil {
				return err
			}
		}
		// Settled without a lookup first.
		if err := tx.Record(&store.Call{ToolUseID: "r2", Phase: store.PhasePost}); err != nil {
			return err
		}
		if err := tx.Record(&store.Call{ToolUseID: "d2", Phase: store.PhasePost}); err != nil {
			return err
		}
		if _, err := tx.Call("new", store.PhasePre); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("new: no record: %v", err)
		}
		if err := tx.Record(&store.Call{ToolUseID: "new", Phase: store.PhasePre, Status: store.CallDone}); err != nil {
			return err
		}
		if c, err := tx.Call("new", store.PhasePre); err != nil || c.Status != store.CallDone {
			return fmt.Errorf("new: the record just written: %+v, %v", c, err)
		}
		if err := tx.Record(&store.Call{ToolUseID: "new", Phase: store.PhasePre}); !errors.Is(err, store.ErrDuplicate) {
			return fmt.Errorf("new: a duplicate: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(bg, "cc:cr", func(tx store.Tx) error {
		for id, want := range map[string]store.CallStatus{"r1": store.CallFailed, "d1": store.CallDone, "r2": store.CallSettled,
			"d2": store.CallDone, "new": store.CallDone} {
			if c, err := tx.Call(id, store.PhasePre); err != nil || c.Status != want {
				return fmt.Errorf("%s: pre record %+v, %v; want status %s", id, c, err, want)
			}
		}
		for _, id := range []string{"r1", "d1", "none", "r2", "d2"} {
			if _, err := tx.Call(id, store.PhasePost); err != nil {
				return fmt.Errorf("%s: post record: %v", id, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
