package sqlite

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/storetest"
)

// TestBatchWithoutSavepointsRerun: a batch of several runs its functions
// without savepoints; when one fails (an error or a panic), the whole
// batch rolls back and runs again with a savepoint per function, so the
// failing function leaves nothing and every other one commits exactly
// once; the batches after it keep their savepoints for a while.
func TestBatchWithoutSavepointsRerun(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		fail func() error
	}{
		{"error", func() error { return boom }},
		{"panic", func() error { panic("boom") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTemp(t, Options{})
			const n = 4
			for i := 0; i < n; i++ {
				storetest.Create(t, s, fmt.Sprint("cc:sp", i))
			}
			bump := func(tx store.Tx) error {
				r := tx.Run()
				r.Iterations++
				if err := tx.Put(r); err != nil {
					return err
				}
				return tx.Append(&store.Event{Kind: store.KindDecision, ToolUseID: "t1"})
			}
			// Hold a batch of one while the others queue: they are then
			// cut into one batch of three.
			inside, release := make(chan struct{}), make(chan struct{})
			var (
				wg   sync.WaitGroup
				errs [n]error
			)
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[0] = s.Update(bg, "cc:sp0", func(tx store.Tx) error {
					close(inside)
					<-release
					return bump(tx)
				})
			}()
			<-inside
			for i := 1; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() {
						if v := recover(); v != nil {
							errs[i] = fmt.Errorf("panic: %v", v)
						}
					}()
					errs[i] = s.Update(bg, fmt.Sprint("cc:sp", i), func(tx store.Tx) error {
						if err := bump(tx); err != nil {
							return err
						}
						if i == 2 {
							return tc.fail()
						}
						return nil
					})
				}()
				waitQueued(s, i)
			}
			if s.w.saving != 0 {
				t.Fatalf("savepoints on before any function failed (%d)", s.w.saving)
			}
			close(release)
			wg.Wait()
			for i, err := range errs {
				if i == 2 {
					if err == nil {
						t.Errorf("the failing function returned nil")
					}
					continue
				}
				if err != nil {
					t.Errorf("cc:sp%d: %v", i, err)
				}
			}
			if s.w.saving != savingBatches {
				t.Errorf("after the rerun: %d batches with savepoints; want %d", s.w.saving, savingBatches)
			}
			for i := 0; i < n; i++ {
				want := int64(1)
				if i == 2 {
					want = 0
				}
				r, err := s.LiveRun(bg, fmt.Sprint("cc:sp", i))
				if err != nil || r.Iterations != want || r.Revision != want+1 {
					t.Errorf("cc:sp%d: run %+v, %v; want %d iterations", i, r, err, want)
				}
				evs, err := s.Events(bg, store.EventFilter{SessionKey: fmt.Sprint("cc:sp", i)})
				if err != nil || int64(len(evs)) != want {
					t.Errorf("cc:sp%d: %d events, %v; want %d", i, len(evs), err, want)
				}
			}
			if st, err := s.VerifyChain(bg); err != nil || st.Events != n-1 {
				t.Errorf("verify: %+v, %v; want %d events", st, err, n-1)
			}
		})
	}
}
