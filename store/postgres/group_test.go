package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
	"github.com/statewright-go/statewright/store/storetest"
)

// TestGroupCommit: many sessions decide at once through one handle, so
// their transactions commit in groups; another handle writes some of the
// same sessions meanwhile (their copies go stale inside a group), and one
// call's record fails at the server (a trigger), which fails its whole
// group's commit. Every other call must be decided exactly once, the
// poisoned one must fail and leave nothing, and every chain must verify.
func TestGroupCommit(t *testing.T) { testGroupCommit(t, false) }

// TestGroupCommitBesideAnotherReplica is TestGroupCommit with a replica
// that sees another: one committer, whose groups gather (gather).
func TestGroupCommitBesideAnotherReplica(t *testing.T) { testGroupCommit(t, true) }

func testGroupCommit(t *testing.T, beside bool) {
	a, u := openTemp(t, Options{})
	if beside {
		a.presence.once.Do(func() {}) // no presence connection: a sees one other replica from the start
		a.presence.others.Store(1)
	}
	b, err := Open(bg, u, Options{MustExist: true, ExpectID: a.StoreID()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := rawConn(t, u).Exec(bg, `CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.tool_use_id = 'toolu_poison' THEN RAISE EXCEPTION 'poisoned call'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER poison BEFORE INSERT ON statewright_calls FOR EACH ROW EXECUTE FUNCTION poison()`); err != nil {
		t.Fatal(err)
	}
	const (
		sessions = 24
		calls    = 30
	)
	key := func(s int) string { return fmt.Sprintf("cc:group-%d", s) }
	for s := range sessions {
		storetest.Create(t, a, key(s))
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []string
		poisoned error
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				id := fmt.Sprintf("toolu_%d_%d", s, i)
				h := a
				if s%3 == 0 && i%4 == 3 {
					h = b // a's copy of this session goes stale
				}
				ctx := store.WithCallPrefetch(bg, store.CallRef{ToolUseID: id, Phase: store.PhasePre})
				out, rep, err := storetest.Decide(ctx, h, key(s), id)
				if want := fmt.Sprintf("allow #%d", i+1); err != nil || rep || out != want {
					fail("session %d call %d = %q (replayed %v), %v; want %q", s, i, out, rep, err, want)
					return
				}
				if i%10 == 9 { // a retry, through the other handle now and then
					again, rep, err := storetest.Decide(ctx, a, key(s), id)
					if err != nil || !rep || again != out {
						fail("retry of session %d call %d = %q (replayed %v), %v", s, i, again, rep, err)
						return
					}
				}
				if s == 5 && i == calls/2 {
					ctx := store.WithCallPrefetch(bg, store.CallRef{ToolUseID: "toolu_poison", Phase: store.PhasePre})
					_, _, err := storetest.Decide(ctx, a, key(s), "toolu_poison")
					mu.Lock()
					poisoned = err
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatal(strings.Join(failures, "\n"))
	}
	if poisoned == nil || !strings.Contains(poisoned.Error(), "poisoned call") {
		t.Errorf("the poisoned call: %v, want the trigger's error", poisoned)
	}
	for s := range sessions {
		r, err := a.LiveRun(bg, key(s))
		if err != nil || r.Iterations != calls {
			t.Errorf("session %d: run %+v, %v; want %d iterations", s, r, err, calls)
			continue
		}
		cs, err := a.Calls(bg, r.ID)
		if err != nil || len(cs) != calls {
			t.Errorf("session %d: %d call records, %v; want %d", s, len(cs), err, calls)
		}
		evs, err := a.Events(bg, store.EventFilter{SessionKey: key(s), Kinds: []store.EventKind{store.KindDecision}})
		if err != nil || len(evs) != calls {
			t.Errorf("session %d: %d decision events, %v; want %d", s, len(evs), err, calls)
		}
	}
	if st, err := a.VerifyChain(bg); err != nil || st.Events != sessions*calls {
		t.Errorf("VerifyChain = %+v, %v; want %d events", st, err, sessions*calls)
	}
	if a.groupedCommits.Load() == 0 || a.mergedCommits.Load() == 0 {
		t.Errorf("%d transactions committed in a group, %d with merged writes; want some", a.groupedCommits.Load(), a.mergedCommits.Load())
	}
	t.Logf("a: %d transactions from cached sessions, %d of them in groups, %d merged", a.cachedCommits.Load(), a.groupedCommits.Load(), a.mergedCommits.Load())
}

// TestGroupCallerGivesUp: a caller whose context ends while its group
// waits (here for the session's lock, held elsewhere) fails closed; its
// group may still commit, and a retry of the call afterwards decides it
// exactly once: replayed if the group committed, fresh if not.
func TestGroupCallerGivesUp(t *testing.T) {
	s, u := openTemp(t, Options{})
	const key = "cc:gives-up"
	storetest.Create(t, s, key)
	hinted := func(ctx context.Context, id string) context.Context {
		return store.WithCallPrefetch(ctx, store.CallRef{ToolUseID: id, Phase: store.PhasePre})
	}
	for _, id := range []string{"toolu_1", "toolu_2", "toolu_3"} {
		if _, _, err := storetest.Decide(hinted(bg, id), s, key, id); err != nil {
			t.Fatal(err)
		}
	}
	grouped := s.groupedCommits.Load()
	if grouped == 0 {
		t.Fatal("no transaction committed in a group")
	}
	holder := rawConn(t, u)
	if _, err := holder.Exec(bg, "SELECT pg_advisory_lock($1)", lockKey("session", s.schema, key)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
	defer cancel()
	if _, _, err := storetest.Decide(hinted(ctx, "toolu_4"), s, key, "toolu_4"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Decide while the session's lock is held elsewhere: %v, want the deadline", err)
	}
	if _, err := holder.Exec(bg, "SELECT pg_advisory_unlock($1)", lockKey("session", s.schema, key)); err != nil {
		t.Fatal(err)
	}
	out, rep, err := storetest.Decide(hinted(bg, "toolu_4"), s, key, "toolu_4")
	if err != nil || out != "allow #4" {
		t.Fatalf("retry = %q (replayed %v), %v; want allow #4", out, rep, err)
	}
	r, err := s.LiveRun(bg, key)
	if err != nil || r.Iterations != 4 {
		t.Fatalf("run = %+v, %v; want 4 iterations", r, err)
	}
	if st, err := s.VerifyChain(bg); err != nil || st.Events != 4 {
		t.Fatalf("VerifyChain = %+v, %v; want 4 events", st, err)
	}
	t.Logf("the retry was replayed: %v", rep)
}

// TestUncheckedGroupStaleCopy: a group whose transactions are guarded by
// their own writes commits without the check of its copies
// (commitUnchecked); when another handle wrote the session since, the
// write that guards the copy fails the group (the run's compare-and-swap
// when the run moved; the chain's unique index when only the run's chain
// moved; the call's insert when only the call was recorded), nothing of it
// is written, and the group is checked and sent again: the stale session
// runs again with reads. No iteration lost or doubled, the recorded call
// replayed, one chain that verifies.
func TestUncheckedGroupStaleCopy(t *testing.T) {
	a, u := openTemp(t, Options{})
	b, err := Open(bg, u, Options{MustExist: true, ExpectID: a.StoreID()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const key = "cc:unchecked"
	storetest.Create(t, a, key)
	n := 0
	decide := func(s *Store, id string, wantReplay string) {
		t.Helper()
		ctx := store.WithCallPrefetch(bg, store.CallRef{ToolUseID: id, Phase: store.PhasePre})
		out, rep, err := storetest.Decide(ctx, s, key, id)
		want := wantReplay
		if want == "" {
			n++
			want = fmt.Sprintf("allow #%d", n)
		}
		if err != nil || out != want || rep != (wantReplay != "") {
			t.Fatalf("decide %s = %q (replayed %v), %v; want %q", id, out, rep, err, want)
		}
	}
	for i := range 3 { // the last ones from a's copy, in a group, unchecked
		decide(a, fmt.Sprintf("toolu_%d", i), "")
	}
	if a.uncheckedGroups.Load() == 0 {
		t.Fatal("no group committed unchecked")
	}
	stale := []struct {
		name  string
		write func()
	}{
		{"the run moved", func() { decide(b, "toolu_b1", "") }},
		{"only the run's chain moved", func() {
			if err := b.Update(bg, key, func(tx store.Tx) error {
				return tx.Append(&store.Event{Kind: store.KindDecision, Tool: "Read", Decision: "deny", Rule: "b", ToolUseID: "toolu_b2"})
			}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for i, c := range stale {
		// a's copy is fresh again (it read), then b writes behind it.
		decide(a, fmt.Sprintf("toolu_fresh%d", i), "")
		failed := a.uncheckedFailed.Load()
		c.write()
		decide(a, fmt.Sprintf("toolu_stale%d", i), "")
		if got := a.uncheckedFailed.Load(); got != failed+1 {
			t.Errorf("%s: unchecked groups failed %d, want %d", c.name, got, failed+1)
		}
		// After a stale copy a reads for a while; wait it out.
		a.sessions.put(key, nil, true)
		decide(a, fmt.Sprintf("toolu_read%d", i), "")
	}
	// Only the call was recorded: the run and the chains are as a left
	// them, the call's insert finds the row.
	decide(a, "toolu_fresh_call", "")
	failed := a.uncheckedFailed.Load()
	if err := b.Update(bg, key, func(tx store.Tx) error {
		return tx.Record(&store.Call{ToolUseID: "toolu_bc", Phase: store.PhasePre, State: "s1",
			Outcome: json.RawMessage(`"allow #b"`), Effects: json.RawMessage(`{}`)})
	}); err != nil {
		t.Fatal(err)
	}
	decide(a, "toolu_bc", "allow #b")
	if got := a.uncheckedFailed.Load(); got != failed+1 {
		t.Errorf("a call recorded elsewhere: unchecked groups failed %d, want %d", got, failed+1)
	}
	r, err := a.Run(bg, mustLiveID(t, a, key))
	if err != nil || r.Iterations != int64(n) {
		t.Fatalf("run = %+v, %v; want %d iterations", r, err, n)
	}
	if st, err := a.VerifyChain(bg); err != nil || st.Events != int64(n)+1 {
		t.Fatalf("VerifyChain = %+v, %v; want %d events", st, err, n+1)
	}
}

// TestGroupCommitOutcomeLost: a grouped transaction whose COMMIT's outcome
// is lost (the connection fails at COMMIT) runs again alone only if the
// store does not hold its writes. A call that keeps no call record (the
// gateway's one-shot calls) has nothing else to replay from: run again
// after a COMMIT that did commit, it would be decided and counted twice.
func TestGroupCommitOutcomeLost(t *testing.T) {
	s, _ := openTemp(t, Options{})
	const key = "cc:outcome-lost"
	storetest.Create(t, s, key)
	runs, n := 0, int64(0)
	decide := func() {
		t.Helper()
		if err := s.Update(bg, key, func(tx store.Tx) error {
			runs++
			r := tx.Run()
			r.Iterations++
			if err := tx.Put(r); err != nil {
				return err
			}
			return tx.Append(&store.Event{Kind: store.KindDecision, State: r.State, Tool: "Read",
				Decision: "allow", Rule: "allow", ToolUseID: fmt.Sprintf("gw_%d", r.Iterations)})
		}); err != nil {
			t.Fatal(err)
		}
		n++
	}
	// grouping decides until the session's transactions go in groups
	// (a session read alone is read a few more times before its copy
	// is trusted).
	grouping := func() {
		t.Helper()
		for range 20 {
			before := s.groupedCommits.Load()
			decide()
			if s.groupedCommits.Load() > before {
				return
			}
		}
		t.Fatal("no transaction of the session went in a group")
	}
	for _, tc := range []struct {
		name      string
		committed bool // the group commits before its outcome is lost
		wantRuns  int
	}{
		{"committed", true, 1},
		{"not committed", false, 2},
	} {
		grouping()
		fired := 0
		f := func(committed bool) bool {
			if committed == tc.committed && fired == 0 {
				fired++
				return true
			}
			return false
		}
		s.testCommitUnknown.Store(&f)
		runs = 0
		decide()
		s.testCommitUnknown.Store(nil)
		if fired != 1 {
			t.Fatalf("%s: the lost outcome fired %d times, want once", tc.name, fired)
		}
		if runs != tc.wantRuns {
			t.Errorf("%s: fn ran %d times, want %d", tc.name, runs, tc.wantRuns)
		}
	}
	decide() // and the session goes on
	r, err := s.LiveRun(bg, key)
	if err != nil || r.Iterations != n {
		t.Fatalf("run = %+v, %v; want %d iterations", r, err, n)
	}
	evs, err := s.Events(bg, store.EventFilter{SessionKey: key, Kinds: []store.EventKind{store.KindDecision}})
	if err != nil || int64(len(evs)) != n {
		t.Errorf("%d decision events, %v; want %d", len(evs), err, n)
	}
	if _, err := s.VerifyChain(bg); err != nil {
		t.Errorf("VerifyChain: %v", err)
	}
}

// TestGroupLockSetsGenericPlans: both lock statements of a group set
// plan_cache_mode for the rest of its transaction only, so the check and
// the merged writes after them are planned generically, and a connection
// the pool hands on afterwards plans as it did before.
func TestGroupLockSetsGenericPlans(t *testing.T) {
	_, u := openTemp(t, Options{})
	conn := rawConn(t, u)
	mode := func() string {
		t.Helper()
		var m string
		if err := conn.QueryRow(bg, "SHOW plan_cache_mode").Scan(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	before := mode()
	if before == "force_generic_plan" {
		t.Fatalf("the server already plans generically; the test shows nothing")
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{qGroupLock, []any{[]int64{1, 2}}},
		{qGroupLockExpect, []any{[]int64{1, 2}, SchemaVersion()}},
	} {
		if _, err := conn.Exec(bg, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(bg, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
		if got := mode(); got != "force_generic_plan" {
			t.Errorf("after %.40q…: plan_cache_mode %q in the transaction, want force_generic_plan", q.sql, got)
		}
		if _, err := conn.Exec(bg, "COMMIT"); err != nil {
			t.Fatal(err)
		}
		if got := mode(); got != before {
			t.Errorf("after %.40q…'s transaction: plan_cache_mode %q, want %q as before", q.sql, got, before)
		}
	}
}

// TestGroupCachedRunIsStored: a merged group's run update returns no row,
// so a replica builds the run it wrote itself for its copy of the session;
// that copy must be exactly the run another handle reads from the store
// (every column: counters, files, the pending approval, the JSON columns,
// the revision and times), so that the next transaction from the copy
// writes what it would have written after a read.
func TestGroupCachedRunIsStored(t *testing.T) {
	a, u := openTemp(t, Options{})
	b, err := Open(bg, u, Options{MustExist: true, ExpectID: a.StoreID()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const sessions, calls = 6, 5
	key := func(s int) string { return fmt.Sprintf("cc:stored-%d", s) }
	for s := range sessions {
		storetest.Create(t, a, key(s))
		if err := a.Update(bg, key(s), func(tx store.Tx) error {
			r := tx.Run()
			r.Context = json.RawMessage(`{"ticket": "T-1",  "n": [1, 2]}`)
			r.History = json.RawMessage(`[{"from":"planning","to":"planning"}]`)
			r.Evidence = json.RawMessage(`{"tests":"green"}`)
			r.PendingApproval = &store.Approval{ID: "ap_1", Event: "DONE", From: "planning", To: "done"}
			return tx.Put(r)
		}); err != nil {
			t.Fatal(err)
		}
	}
	merged := a.mergedCommits.Load()
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				if err := a.Update(bg, key(s), func(tx store.Tx) error {
					r := tx.Run()
					r.Iterations++
					if r.Counters == nil {
						r.Counters = map[string]int64{}
					}
					r.Counters["edits"]++
					r.FilesEdited = append(r.FilesEdited, fmt.Sprintf("f%d.go", i))
					if err := tx.Put(r); err != nil {
						return err
					}
					return tx.Append(&store.Event{Kind: store.KindDecision, State: r.State, Tool: "Edit", Decision: "allow"})
				}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if a.mergedCommits.Load() == merged {
		t.Fatal("no transaction committed with merged writes")
	}
	for s := range sessions {
		c := a.sessions.get(key(s))
		if c == nil || c.live == nil {
			t.Errorf("session %d: no cached live run", s)
			continue
		}
		stored, err := b.LiveRun(bg, key(s))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c.live, stored) {
			t.Errorf("session %d: cached run\n%+v\nstored run\n%+v", s, c.live, stored)
		}
		if stored.Iterations != calls || stored.Counters["edits"] != calls || len(stored.FilesEdited) != calls {
			t.Errorf("session %d: stored run %+v; want %d iterations, edits and files", s, stored, calls)
		}
	}
}

// TestGather: a replica that sees another waits, before its next group,
// until every session active on it is pending again (here: the second of
// two), and no longer than its bound when one does not come back; a
// replica alone never waits.
func TestGather(t *testing.T) {
	old := maxGather
	t.Cleanup(func() { maxGather = old })
	maxGather = time.Hour // (the last group's time bounds it below)
	var s Store
	g := &s.groups
	g.lastTrip.Store(int64(time.Hour))
	if s.gather() {
		t.Fatal("a replica alone gathers")
	}
	s.presence.others.Store(1)
	now := time.Now().UnixNano()
	g.active = map[string]int64{"a": now, "b": now, "gone": now - int64(2*activeWindow)}
	g.add(&tx{TxBase: backend.TxBase{Key: "a"}})
	done := make(chan bool)
	go func() { done <- s.gather() }()
	for {
		g.mu.Lock()
		waiting, want := g.full != nil, g.want
		g.mu.Unlock()
		if waiting {
			if want != 2 {
				t.Errorf("gather waits for %d pending, want 2 (the session inactive for 2 windows is not waited for)", want)
			}
			break
		}
		select {
		case <-done:
			t.Fatal("gather returned with one of two active sessions pending")
		case <-time.After(time.Millisecond):
		}
	}
	g.add(&tx{TxBase: backend.TxBase{Key: "b"}})
	if !<-done {
		t.Error("gather beside another replica reports it did not gather")
	}
	if got := g.take(true); len(got) != 2 {
		t.Fatalf("took %d, want 2", len(got))
	}
	// "a" and "b" are active, but "a" does not come back: the wait ends
	// by the last group's time at the server.
	g.lastTrip.Store(int64(time.Millisecond))
	g.add(&tx{TxBase: backend.TxBase{Key: "b"}})
	if !s.gather() {
		t.Error("gather beside another replica reports it did not gather")
	}
	if g.full != nil {
		t.Error("a wait that ended by its bound left its channel set")
	}
}

func (g *groups) add(t *tx) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.addLocked(t)
}

// TestGroupUnmergedWrites: a grouped transaction whose writes do not merge
// with the others' (here: a new state, which notifies other replicas)
// sends its statements as they are, built from its rows in the order it
// made them, in the same group as transactions whose writes merge. Every
// call is decided once, each run ends in the state last set, the events
// get their Seq, and every chain verifies.
func TestGroupUnmergedWrites(t *testing.T) {
	a, _ := openTemp(t, Options{})
	const (
		sessions = 12
		calls    = 20
	)
	key := func(s int) string { return fmt.Sprintf("cc:unmerged-%d", s) }
	for s := range sessions {
		storetest.Create(t, a, key(s))
	}
	decide := func(s, i int) error {
		id := fmt.Sprintf("toolu_%d_%d", s, i)
		ctx := store.WithCallPrefetch(bg, store.CallRef{ToolUseID: id, Phase: store.PhasePre})
		var ev *store.Event
		err := a.Update(ctx, key(s), func(tx store.Tx) error {
			if _, err := tx.Call(id, store.PhasePre); !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("call %s: %v, want not found", id, err)
			}
			r := tx.Run()
			r.Iterations++
			if i%4 == 3 {
				r.State = fmt.Sprintf("state-%d", i) // a transition: notified, so not merged
			}
			if err := tx.Put(r); err != nil {
				return err
			}
			ev = &store.Event{Kind: store.KindDecision, State: r.State, Tool: "Read", Decision: "allow", ToolUseID: id}
			if err := tx.Append(ev); err != nil {
				return err
			}
			return tx.Record(&store.Call{ToolUseID: id, Phase: store.PhasePre, State: r.State,
				Outcome: json.RawMessage(`"allow"`)})
		})
		if err == nil && ev.Seq == 0 {
			err = fmt.Errorf("call %s: the event's Seq is not set", id)
		}
		return err
	}
	var (
		wg   sync.WaitGroup
		errs = make(chan error, sessions)
	)
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				if err := decide(s, i); err != nil {
					errs <- fmt.Errorf("session %d: %w", s, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for s := range sessions {
		r, err := a.LiveRun(bg, key(s))
		if want := fmt.Sprintf("state-%d", calls-1); err != nil || r.Iterations != calls || r.State != want {
			t.Errorf("session %d: run %+v, %v; want %d iterations in %s", s, r, err, calls, want)
			continue
		}
		if cs, err := a.Calls(bg, r.ID); err != nil || len(cs) != calls {
			t.Errorf("session %d: %d call records, %v; want %d", s, len(cs), err, calls)
		}
	}
	if st, err := a.VerifyChain(bg); err != nil || st.Events != sessions*calls {
		t.Errorf("VerifyChain = %+v, %v; want %d events", st, err, sessions*calls)
	}
	grouped, merged := a.groupedCommits.Load(), a.mergedCommits.Load()
	if grouped-merged == 0 || merged == 0 {
		t.Errorf("%d transactions committed in groups, %d of them merged; want some of each", grouped, merged)
	}
	t.Logf("%d transactions committed in groups, %d of them merged", grouped, merged)
}
