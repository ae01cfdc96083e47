package sqlite

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/storetest"
)

// TestMigrateCallsToRowidTable: a schema-5 store's call records (the calls
// table WITHOUT ROWID) survive migration 6 as they were: listed in the same
// order, replayed on a retried call, still unique on (session, tool_use_id,
// phase), and still settled by their post record.
func TestMigrateCallsToRowidTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v5.db")
	db := rawDB(t, path)
	names, err := migrationFiles()
	if err != nil {
		t.Fatal(err)
	}
	var schema5 strings.Builder
	for _, n := range names[:5] {
		b, err := migrationFS.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		schema5.Write(b)
		schema5.WriteString(";\n")
	}
	if _, err := db.Exec("PRAGMA journal_mode=WAL; " + schema5.String() +
		"; INSERT INTO meta (key, value) VALUES ('store_id', 'st_v5'), ('created_at', 'then'); PRAGMA user_version = 5"); err != nil {
		t.Fatal(err)
	}
	var sql5 string
	if err := db.QueryRow("SELECT sql FROM sqlite_schema WHERE name = 'calls'").Scan(&sql5); err != nil || !strings.Contains(sql5, "WITHOUT ROWID") {
		t.Fatalf("schema 5's calls table: %q, %v", sql5, err)
	}
	if _, err := db.Exec(`INSERT INTO runs (id, session_key, workflow_id, state, status, revision, created_at, updated_at)
		VALUES ('run_a', 'cc:a', 'wf', 'work', 'active', 1, 1, 1)`); err != nil {
		t.Fatal(err)
	}
	outcome, _ := json.Marshal("allow #1")
	for _, c := range []struct {
		id, phase, status string
		at                int64
	}{
		// Inserted out of time order: the key order is not the time order.
		{"toolu_b", "pre", "reserved", 2},
		{"toolu_a", "post", "done", 3},
		{"toolu_a", "pre", "settled", 1},
	} {
		if _, err := db.Exec(`INSERT INTO calls (session_key, tool_use_id, phase, run_id, state, outcome, status, created_at)
			VALUES ('cc:a', ?, ?, 'run_a', 'work', ?, ?, ?)`, c.id, c.phase, string(outcome), c.status, c.at); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s, err := Open(bg, path, Options{MustExist: true, ExpectID: "st_v5"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var sql6 string
	var left int
	raw := rawDB(t, path)
	if err := raw.QueryRow("SELECT sql FROM sqlite_schema WHERE name = 'calls'").Scan(&sql6); err != nil || strings.Contains(sql6, "WITHOUT ROWID") {
		t.Errorf("the migrated calls table: %q, %v", sql6, err)
	}
	if err := raw.QueryRow("SELECT count(*) FROM sqlite_schema WHERE tbl_name = 'calls_v5'").Scan(&left); err != nil || left != 0 {
		t.Errorf("schema objects of the old calls table left: %d, %v", left, err)
	}
	cs, err := s.Calls(bg, "run_a")
	var got []string
	for _, c := range cs {
		got = append(got, fmt.Sprint(c.ToolUseID, "/", c.Phase, "/", c.Status, "/", c.CreatedAt.UnixNano()))
	}
	if want := "[toolu_a/pre/settled/1 toolu_b/pre/reserved/2 toolu_a/post/done/3]"; err != nil || fmt.Sprint(got) != want {
		t.Errorf("Calls of the migrated run = %v, %v; want %s", got, err, want)
	}
	// A retried call replays its recorded answer, without a second record.
	if out, replayed, err := storetest.Decide(bg, s, "cc:a", "toolu_a"); err != nil || !replayed || out != "allow #1" {
		t.Errorf("retried toolu_a: %q, replayed %v, %v", out, replayed, err)
	}
	// The key is still unique.
	err = s.Update(bg, "cc:a", func(tx store.Tx) error {
		return tx.Record(&store.Call{ToolUseID: "toolu_b", Phase: store.PhasePre, Outcome: outcome})
	})
	if !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("a second pre record of toolu_b: %v, want ErrDuplicate", err)
	}
	// The reserved pre record is settled by its post record.
	if err := s.Update(bg, "cc:a", func(tx store.Tx) error {
		if _, err := tx.Call("toolu_b", store.PhasePre); err != nil {
			return err
		}
		return tx.Record(&store.Call{ToolUseID: "toolu_b", Phase: store.PhasePost, Status: store.CallDone})
	}); err != nil {
		t.Fatal(err)
	}
	err = s.Update(bg, "cc:a", func(tx store.Tx) error {
		c, err := tx.Call("toolu_b", store.PhasePre)
		if err == nil && c.Status == store.CallReserved {
			err = fmt.Errorf("toolu_b's pre record is still reserved")
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
	// New decisions are recorded once each.
	if _, replayed, err := storetest.Decide(bg, s, "cc:a", "toolu_c"); err != nil || replayed {
		t.Errorf("new toolu_c: replayed %v, %v", replayed, err)
	}
	if cs, err := s.Calls(bg, "run_a"); err != nil || len(cs) != 5 {
		t.Errorf("Calls after two more records = %d, %v; want 5", len(cs), err)
	}
}

// TestCallsStatusCheck: the calls table still refuses a status outside its
// four, and inserting or settling a record builds no ephemeral table (an IN
// list of more than two constants in a CHECK does, on every statement).
func TestCallsStatusCheck(t *testing.T) {
	s, path := openTemp(t, Options{})
	storetest.Create(t, s, "cc:c")
	db := rawDB(t, path)
	for _, q := range []string{qInsertCall, qSettle} {
		rows, err := db.Query("EXPLAIN "+q, make([]any, strings.Count(q, "?"))...)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		for i := range vals {
			vals[i] = new(any)
		}
		for rows.Next() {
			if err := rows.Scan(vals...); err != nil {
				t.Fatal(err)
			}
			if op := fmt.Sprint(*vals[1].(*any)); op == "OpenEphemeral" {
				t.Errorf("%s opens an ephemeral table", q)
			}
		}
		rows.Close()
	}
	for _, status := range []string{"reserved", "settled", "failed", "done", "bogus", ""} {
		_, err := db.Exec(`INSERT INTO calls (session_key, tool_use_id, phase, status, created_at) VALUES ('cc:c', ?, 'pre', ?, 1)`,
			"toolu_"+status, status)
		if ok := status != "bogus" && status != ""; (err == nil) != ok {
			t.Errorf("a call record with status %q: %v", status, err)
		}
	}
}
