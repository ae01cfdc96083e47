package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/postgres/pgtest"
	"github.com/statewright-go/statewright/store/storetest"
)

var bg = context.Background()

func openTemp(t testing.TB, opts Options) (*Store, string) {
	t.Helper()
	u := pgtest.Schema(t)
	s, err := Open(bg, u, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, u
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		s, _ := openTemp(t, Options{Now: now})
		return s
	})
}

func TestShared(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (store.Store, store.Store) {
		a, u := openTemp(t, Options{})
		b, err := Open(bg, u, Options{MustExist: true, ExpectID: a.StoreID()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return a, b
	})
}

// rawConn connects to the store's schema without the store, as psql would.
func rawConn(t *testing.T, u string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(bg, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(bg) })
	return c
}

func TestMustExistExpectIDAndRecreate(t *testing.T) {
	u := pgtest.Schema(t)
	if _, err := Open(bg, u, Options{MustExist: true}); !errors.Is(err, store.ErrNoStore) {
		t.Fatalf("MustExist on an empty schema: err = %v, want ErrNoStore", err)
	}
	var n int
	if err := rawConn(t, u).QueryRow(bg, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").Scan(&n); err != nil || n != 0 {
		t.Fatalf("MustExist created %d tables (%v)", n, err)
	}
	s, err := Open(bg, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.StoreID(), "st_") || s.Schema() == "" {
		t.Fatalf("id %q schema %q", s.StoreID(), s.Schema())
	}
	if _, err := Open(bg, u, Options{MustExist: true, ExpectID: "st_other"}); !errors.Is(err, store.ErrStoreMismatch) {
		t.Fatalf("wrong ExpectID: err = %v, want ErrStoreMismatch", err)
	}
	s2, err := Open(bg, u, Options{MustExist: true, ExpectID: s.StoreID()})
	if err != nil {
		t.Fatalf("ExpectID of the current store: %v", err)
	}
	s2.Close()
	if err := s.CheckID(bg); err != nil {
		t.Fatalf("CheckID of an unchanged store: %v", err)
	}
	// Drop the store and create another under the same URL.
	c := rawConn(t, u)
	if _, err := c.Exec(bg, "DROP SCHEMA "+s.Schema()+" CASCADE; CREATE SCHEMA "+s.Schema()); err != nil {
		t.Fatal(err)
	}
	s3, err := Open(bg, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if s3.StoreID() == s.StoreID() {
		t.Fatal("a recreated store has the old id")
	}
	if err := s.CheckID(bg); !errors.Is(err, store.ErrStoreMismatch) {
		t.Errorf("CheckID after recreation: err = %v, want ErrStoreMismatch", err)
	}
	if _, err := Open(bg, u, Options{MustExist: true, ExpectID: s.StoreID()}); !errors.Is(err, store.ErrStoreMismatch) {
		t.Errorf("old id against the recreated store: err = %v, want ErrStoreMismatch", err)
	}
}

func TestConcurrentFirstOpenCreatesOneStore(t *testing.T) {
	u := pgtest.Schema(t)
	const n = 8
	ids := make(chan string, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(bg, u, Options{})
			if err != nil {
				errs <- err
				return
			}
			ids <- s.StoreID()
			s.Close()
		}()
	}
	wg.Wait()
	close(ids)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	first := ""
	for id := range ids {
		if first == "" {
			first = id
		}
		if id != first {
			t.Fatalf("replicas opening together got ids %s and %s", first, id)
		}
	}
}

func TestOpenRefusesForeignAndNewerSchemas(t *testing.T) {
	u := pgtest.Schema(t)
	c := rawConn(t, u)
	if _, err := c.Exec(bg, "CREATE TABLE statewright_runs (x int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bg, u, Options{}); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("tables without a migration record: err = %v, want ErrCorrupt", err)
	}
	u2 := pgtest.Schema(t)
	s, err := Open(bg, u2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := rawConn(t, u2).Exec(bg, "INSERT INTO statewright_migrations VALUES (99, 'future.sql', 0)"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bg, u2, Options{}); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("a newer schema: err = %v, want ErrCorrupt (newer)", err)
	}
	if _, err := Open(bg, "postgres://nobody:s3cret@127.0.0.1:1/x", Options{}); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("unreachable server: err = %v; want an error without the password", err)
	}
}

func TestConnectionSettings(t *testing.T) {
	s, _ := openTemp(t, Options{BusyTimeout: 1500 * time.Millisecond})
	for name, want := range map[string]string{"lock_timeout": "1500ms", "idle_in_transaction_session_timeout": "10s", "application_name": "statewright"} {
		var got string
		if err := s.pool.QueryRow(bg, "SHOW "+name).Scan(&got); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
}

func TestBusyTimeout(t *testing.T) {
	s, u := openTemp(t, Options{BusyTimeout: 200 * time.Millisecond})
	storetest.Create(t, s, "cc:busy")
	// Another client holds the session's lock (a replica mid-decision).
	c := rawConn(t, u)
	if _, err := c.Exec(bg, "SELECT pg_advisory_lock($1)", lockKey("session", s.Schema(), "cc:busy")); err != nil {
		t.Fatal(err)
	}
	_, _, err := storetest.Decide(bg, s, "cc:busy", "toolu_busy")
	if !errors.Is(err, store.ErrBusy) {
		t.Fatalf("decide behind a held session lock: err = %v, want ErrBusy", err)
	}
	// Other sessions are not held up.
	storetest.Create(t, s, "cc:free")
	if _, _, err := storetest.Decide(bg, s, "cc:free", "toolu_free"); err != nil {
		t.Fatalf("another session: %v", err)
	}
	if _, err := c.Exec(bg, "SELECT pg_advisory_unlock($1)", lockKey("session", s.Schema(), "cc:busy")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := storetest.Decide(bg, s, "cc:busy", "toolu_busy"); err != nil {
		t.Fatalf("after the lock is released: %v", err)
	}
	if r, _ := s.LiveRun(bg, "cc:busy"); r.Iterations != 1 {
		t.Errorf("iterations = %d, want 1 (the timed-out attempt wrote nothing)", r.Iterations)
	}
}

func TestEventsAreAppendOnly(t *testing.T) {
	s, u := openTemp(t, Options{})
	storetest.Create(t, s, "cc:ao")
	for i := 0; i < 5; i++ {
		if _, _, err := storetest.Decide(bg, s, "cc:ao", fmt.Sprintf("t%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	c := rawConn(t, u)
	for _, q := range []string{
		"UPDATE statewright_events SET reason = 'nothing to see' WHERE seq = 3",
		"DELETE FROM statewright_events WHERE seq = 3",
		"DELETE FROM statewright_events",
		"TRUNCATE statewright_events",
	} {
		if _, err := c.Exec(bg, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err = %v, want the append-only trigger", q, err)
		}
	}
	if st, err := s.VerifyChain(bg); err != nil || st.Events != 5 {
		t.Fatalf("VerifyChain = %+v, %v", st, err)
	}
	tamper := []struct{ name, sql, seq string }{
		{"edited reason", "UPDATE statewright_events SET reason = 'deny' WHERE seq = 3", "seq 3"},
		{"edited time", "UPDATE statewright_events SET time = time + 1 WHERE seq = 2", "seq 2"},
		{"deleted middle", "DELETE FROM statewright_events WHERE seq = 4", "seq 5"},
	}
	for _, tc := range tamper {
		t.Run(tc.name, func(t *testing.T) {
			s, u := openTemp(t, Options{})
			storetest.Create(t, s, "cc:t")
			for i := 0; i < 5; i++ {
				if _, _, err := storetest.Decide(bg, s, "cc:t", fmt.Sprintf("t%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			c := rawConn(t, u)
			if _, err := c.Exec(bg, "ALTER TABLE statewright_events DISABLE TRIGGER USER"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(bg, tc.sql); err != nil {
				t.Fatal(err)
			}
			_, err := s.VerifyChain(bg)
			if !errors.Is(err, store.ErrChainBroken) || !strings.Contains(err.Error(), tc.seq) {
				t.Errorf("VerifyChain err = %v, want ErrChainBroken at %s", err, tc.seq)
			}
		})
	}
}

func TestOpenCreatesTheNamedSchema(t *testing.T) {
	base := pgtest.ServerURL(t)
	name, err := pgtest.CreateSchema(base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pgtest.DropSchema(base, name) })
	if err := pgtest.DropSchema(base, name); err != nil { // a name nobody created yet
		t.Fatal(err)
	}
	u, err := pgtest.WithSchema(base, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bg, u, Options{MustExist: true}); !errors.Is(err, store.ErrNoStore) {
		t.Fatalf("MustExist on a missing schema: err = %v, want ErrNoStore", err)
	}
	s, err := Open(bg, u, Options{})
	if err != nil {
		t.Fatalf("Open on a missing schema: %v", err)
	}
	defer s.Close()
	if s.Schema() != name {
		t.Errorf("schema = %q, want %q", s.Schema(), name)
	}
}

// TestMigrateGlobalChainStore: a store written by the schema-1 binary (one
// global hash chain with its head row, pruned once) opens under schema 2:
// the old events verify as the legacy chain, new ones go to per-run
// chains, Seq carries on, and the global head row is gone (so an older
// replica would fail instead of writing a global chain).
func TestMigrateGlobalChainStore(t *testing.T) {
	u := pgtest.Schema(t)
	c := rawConn(t, u)
	init, err := migrationFS.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(bg, string(init)+`; CREATE TABLE statewright_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	snap := []byte(`{"id":"tdd","initial":"planning","states":{"planning":{}}}`)
	var old []store.Event
	prev := ""
	for i := 1; i <= 6; i++ {
		e := store.Event{Seq: int64(i), RunID: "run_old", SessionKey: "cc:old", Time: time.Unix(int64(i), 0).UTC(),
			Kind: store.KindDecision, Tool: "Read", Decision: "allow", ToolUseID: fmt.Sprintf("old%d", i), PrevHash: prev}
		e.Hash = store.HashEvent(&e)
		prev = e.Hash
		old = append(old, e)
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO statewright_migrations VALUES (1, '0001_init.sql', 0)`)
	b.Queue(`INSERT INTO statewright_meta (key, value) VALUES ('store_id', 'st_old'), ('created_at', 'then')`)
	b.Queue(`INSERT INTO statewright_runs (id, session_key, workflow_id, snapshot, snapshot_digest, state, status, revision, created_at, updated_at)
		VALUES ('run_old', 'cc:old', 'tdd', $1, $2, 'planning', 'active', 1, 1, 1)`, snap, store.InputDigest(snap))
	for _, e := range old[2:] {
		b.Queue(`INSERT INTO statewright_events (seq, run_id, session_key, time, kind, tool, decision, tool_use_id, prev_hash, hash)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`, e.Seq, e.RunID, e.SessionKey, e.Time.UnixNano(), string(e.Kind), e.Tool,
			e.Decision, e.ToolUseID, e.PrevHash, e.Hash)
	}
	b.Queue(`UPDATE statewright_chain SET head_seq = 6, head_hash = $1, anchor_seq = 2, anchor_hash = $2`, old[5].Hash, old[1].Hash)
	if err := c.SendBatch(bg, b).Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(bg, u, Options{MustExist: true, ExpectID: "st_old"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.VerifyChain(bg)
	if err != nil || st.Legacy != 4 || st.Events != 4 || st.AnchorSeq != 2 || st.Chains != 1 {
		t.Fatalf("VerifyChain of the migrated store = %+v, %v; want the 4 kept events as the legacy chain", st, err)
	}
	if _, _, err := storetest.Decide(bg, s, "cc:old", "new1"); err != nil {
		t.Fatal(err)
	}
	evs, err := s.Events(bg, store.EventFilter{ToolUseID: "new1"})
	if err != nil || len(evs) != 1 || evs[0].Seq != 7 || evs[0].Chain != "run_old" || evs[0].ChainSeq != 1 {
		t.Fatalf("the first new event = %+v, %v", evs, err)
	}
	// The run's history spans both: its legacy events and its own chain.
	if evs, err := s.Events(bg, store.EventFilter{RunID: "run_old"}); err != nil || len(evs) == 0 || evs[len(evs)-1].ToolUseID != "new1" || evs[0].Chain != "" {
		t.Errorf("Events of the migrated run = %+v, %v", evs, err)
	}
	if cs, err := s.Calls(bg, "run_old"); err != nil || len(cs) != 1 || cs[0].ToolUseID != "new1" {
		t.Errorf("Calls of the migrated run = %+v, %v", cs, err)
	}
	if st, err := s.VerifyChain(bg); err != nil || st.Legacy != 4 || st.Events != 5 || st.Chains != 2 {
		t.Errorf("VerifyChain after a new decision = %+v, %v", st, err)
	}
	var gone bool
	if err := c.QueryRow(bg, "SELECT to_regclass('statewright_chain') IS NULL").Scan(&gone); err != nil || !gone {
		t.Errorf("the global chain head table is still there (%v)", err)
	}
	if p, err := s.Prune(bg, store.Retention{Keep: 2}); err != nil || p.Events != 3 || p.AnchorSeq != 5 {
		t.Errorf("Prune = %+v, %v", p, err)
	}
	if _, err := s.VerifyChain(bg); err != nil {
		t.Errorf("VerifyChain after pruning into the legacy chain: %v", err)
	}
	if _, err := c.Exec(bg, "ALTER TABLE statewright_events DISABLE TRIGGER USER"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(bg, "UPDATE statewright_events SET decision = 'deny' WHERE seq = 6"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyChain(bg); !errors.Is(err, store.ErrChainBroken) || !strings.Contains(err.Error(), "seq 6 (legacy chain)") {
		t.Errorf("VerifyChain after editing a legacy event: %v", err)
	}
}

// TestReplicaOfAnotherSchemaVersionRefuses: once another binary migrated
// the schema, a replica that opened it at the older version refuses to
// decide rather than answer the old way.
func TestReplicaOfAnotherSchemaVersionRefuses(t *testing.T) {
	s, u := openTemp(t, Options{})
	storetest.Create(t, s, "cc:v")
	hinted := func(id string) context.Context {
		return store.WithCallPrefetch(bg, store.CallRef{ToolUseID: id, Phase: store.PhasePre})
	}
	for _, id := range []string{"v0", "v1", "v2"} {
		if _, _, err := storetest.Decide(hinted(id), s, "cc:v", id); err != nil {
			t.Fatal(err)
		}
	}
	if s.groupedCommits.Load() == 0 {
		t.Fatal("no transaction committed in a group")
	}
	if _, err := rawConn(t, u).Exec(bg, "INSERT INTO statewright_migrations VALUES ($1, 'future.sql', 0)", SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	// v3 through a group commit (the session as this replica left it),
	// v4 with reads.
	for _, c := range []struct {
		id  string
		ctx context.Context
	}{{"v3", hinted("v3")}, {"v4", bg}} {
		id := c.id
		if _, _, err := storetest.Decide(c.ctx, s, "cc:v", id); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "replicas of different versions") {
			t.Errorf("Decide %s after the schema moved on: %v, want ErrCorrupt", id, err)
		}
	}
}

// TestCachedSessionAcrossReplicas: two handles (replicas) decide one
// session's calls in an irregular order, with the runtime's call hint, and
// retry calls on the other handle. Each handle decides from its copy of the
// session where it can (one round trip) and must notice every write the
// other made: no iteration lost or doubled, every retry replayed, a call
// recorded by the other handle without any other change replayed, one
// chain that verifies.
func TestCachedSessionAcrossReplicas(t *testing.T) {
	a, u := openTemp(t, Options{})
	b, err := Open(bg, u, Options{MustExist: true, ExpectID: a.StoreID()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const key = "cc:cached"
	storetest.Create(t, a, key)
	decide := func(s *Store, id string) (string, bool) {
		t.Helper()
		ctx := store.WithCallPrefetch(bg, store.CallRef{ToolUseID: id, Phase: store.PhasePre})
		out, rep, err := storetest.Decide(ctx, s, key, id)
		if err != nil {
			t.Fatalf("decide %s: %v", id, err)
		}
		return out, rep
	}
	handles := map[byte]*Store{'a': a, 'b': b}
	order := "aaabaabbbaabababbbbaaaab"
	fresh := 0
	for i := range len(order) {
		s, other := handles[order[i]], handles['a'+'b'-order[i]]
		id := fmt.Sprintf("toolu_%d", i)
		out, rep := decide(s, id)
		fresh++
		if want := fmt.Sprintf("allow #%d", fresh); rep || out != want {
			t.Fatalf("call %d on %c = %q (replayed %v), want %q", i, order[i], out, rep, want)
		}
		if i%5 == 4 {
			if again, rep := decide(other, id); !rep || again != out {
				t.Fatalf("retry of call %d on the other handle = %q (replayed %v), want %q replayed", i, again, rep, out)
			}
		}
	}
	// b records a call and changes nothing else: a's copy of the session
	// still matches the run and the heads, but not the call.
	if err := b.Update(bg, key, func(tx store.Tx) error {
		return tx.Record(&store.Call{ToolUseID: "toolu_b", Phase: store.PhasePre, State: "s1",
			Outcome: json.RawMessage(`"allow #b"`), Effects: json.RawMessage(`{}`)})
	}); err != nil {
		t.Fatal(err)
	}
	if out, rep := decide(a, "toolu_b"); !rep || out != "allow #b" {
		t.Fatalf("call recorded through b, decided through a = %q (replayed %v), want the recorded outcome", out, rep)
	}
	// A session without a run, decided through a from its copy; b starts
	// a run, which writes no chain a's copy holds: a must see the run.
	const dormantKey = "cc:dormant"
	dormant := func(s *Store, id string) (live bool) {
		t.Helper()
		ctx := store.WithCallPrefetch(bg, store.CallRef{ToolUseID: id, Phase: store.PhasePre})
		if err := s.Update(ctx, dormantKey, func(tx store.Tx) error {
			if _, err := tx.Call(id, store.PhasePre); !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("call %s: %v, want not found", id, err)
			}
			live = tx.Run() != nil
			if err := tx.Append(&store.Event{Kind: store.KindDecision, Tool: "Read", Decision: "allow", Rule: "dormant", ToolUseID: id}); err != nil {
				return err
			}
			return tx.Record(&store.Call{ToolUseID: id, Phase: store.PhasePre, Outcome: json.RawMessage(`"dormant"`), Effects: json.RawMessage(`{}`)})
		}); err != nil {
			t.Fatal(err)
		}
		return live
	}
	if dormant(a, "toolu_d1") || dormant(a, "toolu_d2") {
		t.Fatal("a run before any was created")
	}
	storetest.Create(t, b, dormantKey)
	if !dormant(a, "toolu_d3") {
		t.Fatal("a decided from its copy of the session without the run b created")
	}
	r, err := a.Run(bg, mustLiveID(t, b, key))
	if err != nil || r.Iterations != int64(fresh) {
		t.Fatalf("run = %+v, %v; want %d iterations", r, err, fresh)
	}
	for _, s := range []*Store{a, b} {
		st, err := s.VerifyChain(bg)
		if err != nil || st.Events != int64(fresh)+3 {
			t.Fatalf("VerifyChain = %+v, %v; want %d events", st, err, fresh+3)
		}
	}
	if a.groupedCommits.Load() == 0 || b.groupedCommits.Load() == 0 {
		t.Fatalf("transactions committed in a group: a %d, b %d; want some on each", a.groupedCommits.Load(), b.groupedCommits.Load())
	}
	if a.cachedCommits.Load() == 0 || b.cachedCommits.Load() == 0 {
		t.Fatalf("transactions committed from a cached session: a %d, b %d; want some on each", a.cachedCommits.Load(), b.cachedCommits.Load())
	}
}

func mustLiveID(t *testing.T, s store.Store, key string) string {
	t.Helper()
	runs, err := s.Runs(bg, store.RunFilter{SessionKey: key, LiveOnly: true})
	if err != nil || len(runs) != 1 {
		t.Fatalf("live runs of %s = %v, %v", key, runs, err)
	}
	return runs[0].ID
}
