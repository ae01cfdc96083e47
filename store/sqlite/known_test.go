package sqlite

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/storetest"
)

// TestWriterKnowsItsRuns: between batches the writer keeps the live runs
// its commits left and hands them to the next transaction instead of
// reading them again; what it hands out is what a fresh read returns,
// and a function that fails leaves nothing of its writes behind there.
func TestWriterKnowsItsRuns(t *testing.T) {
	s, _ := openTemp(t, Options{})
	storetest.Create(t, s, "cc:k")
	boom := errors.New("boom")
	for i := 0; i < 5; i++ {
		if _, _, err := storetest.Decide(bg, s, "cc:k", fmt.Sprint("toolu_", i)); err != nil {
			t.Fatal(err)
		}
		// A function that writes the run and then fails.
		err := s.Update(bg, "cc:k", func(tx store.Tx) error {
			r := tx.Run()
			r.Iterations += 100
			r.Counters = map[string]int64{"x": 1}
			if err := tx.Put(r); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Update = %v; want boom", err)
		}
		var inTx *store.Run
		if err := s.Update(bg, "cc:k", func(tx store.Tx) error {
			inTx = tx.Run()
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		fresh, err := s.LiveRun(bg, "cc:k")
		if err != nil {
			t.Fatal(err)
		}
		if inTx.Iterations != int64(i+1) || !reflect.DeepEqual(inTx, fresh) {
			t.Fatalf("after %d decisions the transaction's run is\n%+v\nand a fresh read\n%+v", i+1, inTx, fresh)
		}
	}
	if len(s.writer().known.runs) != 1 {
		t.Errorf("the writer knows %d runs; want the one it wrote", len(s.writer().known.runs))
	}
}
