package sqlite

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/storetest"
)

// TestSalvage damages a real store file, a page of its events in the
// middle of the log, and checks that Salvage keeps every event around the
// damage, names the unreadable range, and that the kept log's verdict
// finds the break; a store that opens reads whole and verifies.
func TestSalvage(t *testing.T) {
	s, path := openTemp(t, Options{})
	storetest.Create(t, s, "cc:salvage")
	const n = 400
	for i := range n {
		if err := s.Update(bg, "cc:salvage", func(tx store.Tx) error {
			return tx.Append(&store.Event{Kind: store.KindDecision, State: "s", Tool: "Read", Decision: "allow",
				Reason: fmt.Sprintf("marker-%04d %s", i, strings.Repeat("x", 200))})
		}); err != nil {
			t.Fatal(err)
		}
	}
	var whole bytes.Buffer
	sv, err := Salvage(bg, path, &whole)
	if err != nil || sv.Events < n || len(sv.Skipped) > 0 || sv.Stopped != "" {
		t.Fatalf("intact store: %+v, %v; want every event", sv, err)
	}
	if _, err := store.VerifyJSONL(&whole); err != nil {
		t.Fatalf("intact store's salvaged log does not verify: %v", err)
	}
	if _, err := rawDB(t, path).Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// Overwrite the page that holds event marker-0200.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("marker-0200"))
	if i < 0 {
		t.Fatal("marker-0200 is not in the file")
	}
	const page = 4096
	start := i / page * page
	copy(b[start:start+page], bytes.Repeat([]byte{0xA5}, page))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	var kept bytes.Buffer
	sv, err = Salvage(bg, path, &kept)
	if err != nil {
		t.Fatalf("Salvage: %v", err)
	}
	if len(sv.Skipped) != 1 || sv.Events >= sv.Last || sv.Events < n-40 {
		t.Fatalf("damaged store: %+v; want most events and one unreadable range", sv)
	}
	got := kept.String()
	for _, m := range []string{"marker-0000", "marker-0399"} {
		if !strings.Contains(got, m) {
			t.Errorf("the kept log lost %s", m)
		}
	}
	if strings.Contains(got, "marker-0200") {
		t.Error("the kept log holds an event of the damaged page")
	}
	if _, err := store.VerifyJSONL(&kept); err == nil {
		t.Error("the kept log verifies across the gap; want the chain's break")
	}

	// A file SQLite cannot read at all is an error.
	junk := path + ".junk"
	if err := os.WriteFile(junk, bytes.Repeat([]byte("junk"), 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Salvage(bg, junk, &bytes.Buffer{}); err == nil {
		t.Error("Salvage of a file that is no database: no error")
	}
}
