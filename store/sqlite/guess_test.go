package sqlite

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/storetest"
)

// TestCallGuess: a decision's function, hinted with its call's pre record
// (store.WithCallPrefetch), is told there is none without a read while the
// writer guesses. A guess its insert proves commits once; a wrong one (a
// retried call, in a batch of several) runs the whole batch again reading,
// so that what commits is what reading first commits: the retried call
// replays, every other function's writes commit exactly once, and the
// next batches read. A function that ends without inserting the record is
// checked by a read.
func TestCallGuess(t *testing.T) {
	s, _ := openTemp(t, Options{})
	const n = 4
	for i := 0; i < n; i++ {
		storetest.Create(t, s, fmt.Sprint("cc:g", i))
	}
	// decide is a decision as the runtime makes one: replay the recorded
	// call, or count an iteration, record the call and append an event.
	// replayed reports what the function's last run saw.
	decide := func(id string, replayed *bool) func(tx store.Tx) error {
		return func(tx store.Tx) error {
			_, err := tx.Call(id, store.PhasePre)
			*replayed = err == nil
			if err == nil {
				return nil
			}
			if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			r := tx.Run()
			r.Iterations++
			if err := tx.Put(r); err != nil {
				return err
			}
			if err := tx.Record(&store.Call{ToolUseID: id, Phase: store.PhasePre, Status: store.CallDone}); err != nil {
				return err
			}
			return tx.Append(&store.Event{Kind: store.KindDecision, ToolUseID: id})
		}
	}
	hint := func(id string) *store.CallRef { return &store.CallRef{ToolUseID: id, Phase: store.PhasePre} }
	update := func(key, id string, replayed *bool) error {
		return s.Update(store.WithCallPrefetch(bg, *hint(id)), key, decide(id, replayed))
	}

	// A new call, alone: guessed and proved by its insert.
	var replayed bool
	if err := update("cc:g0", "a", &replayed); err != nil || replayed {
		t.Fatalf("new call: replayed %v, %v", replayed, err)
	}
	if s.w.reading != 0 {
		t.Fatalf("a proved guess left %d reading batches", s.w.reading)
	}

	// Hold a batch of one while three queue: they are cut into one batch,
	// in which cc:g1 decides a new call and cc:g2 and cc:g0 retry theirs
	// (b and a).
	if err := update("cc:g2", "b", &replayed); err != nil || replayed {
		t.Fatalf("new call b: replayed %v, %v", replayed, err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	var (
		wg   sync.WaitGroup
		errs [n]error
		seen [n]bool
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		errs[0] = s.Update(bg, "cc:g3", func(tx store.Tx) error {
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	for i, c := range []struct{ key, id string }{{"cc:g1", "c"}, {"cc:g2", "b"}, {"cc:g0", "a"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i+1] = update(c.key, c.id, &seen[i+1])
		}()
		waitQueued(s, i+1)
	}
	close(release)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("function %d: %v", i, err)
		}
	}
	if seen[1] || !seen[2] || !seen[3] {
		t.Errorf("replayed (c new, b and a retried): %v", seen[1:])
	}
	if s.w.reading == 0 {
		t.Error("after a wrong guess the next batches still guess")
	}
	want := map[string]int64{"cc:g0": 1, "cc:g1": 1, "cc:g2": 1, "cc:g3": 0}
	for key, it := range want {
		r, err := s.LiveRun(bg, key)
		if err != nil || r.Iterations != it || r.Revision != it+1 {
			t.Errorf("%s: run %+v, %v; want %d iterations", key, r, err, it)
		}
		evs, err := s.Events(bg, store.EventFilter{SessionKey: key})
		if err != nil || int64(len(evs)) != it {
			t.Errorf("%s: %d events, %v; want %d", key, len(evs), err, it)
		}
	}
	if st, err := s.VerifyChain(bg); err != nil || st.Events != 3 {
		t.Errorf("verify: %+v, %v; want 3 events", st, err)
	}

	// A function that ends without inserting the record: its guess is
	// checked by a read, and a wrong one runs it again, reading.
	s.w.reading = 0
	var runs, found int
	err := s.Update(store.WithCallPrefetch(bg, *hint("a")), "cc:g0", func(tx store.Tx) error {
		runs++
		if _, err := tx.Call("a", store.PhasePre); err == nil {
			found++
		}
		return nil
	})
	if err != nil || found != 1 || runs != 2 {
		t.Errorf("a look-up only: %d runs, found in %d, %v; want found in the second of 2", runs, found, err)
	}
	s.w.reading = 0
	runs, found = 0, 0
	err = s.Update(store.WithCallPrefetch(bg, *hint("zz")), "cc:g0", func(tx store.Tx) error {
		runs++
		if _, err := tx.Call("zz", store.PhasePre); err == nil {
			found++
		}
		return nil
	})
	if err != nil || found != 0 || runs != 1 || s.w.reading != 0 {
		t.Errorf("a look-up of a missing record: %d runs, found in %d, %v, %d reading batches; want 1 run", runs, found, err, s.w.reading)
	}

	// A post record of a guessed id reads what it settles.
	s.w.reading = 0
	if err := s.Update(bg, "cc:g1", func(tx store.Tx) error {
		return tx.Record(&store.Call{ToolUseID: "r", Phase: store.PhasePre, Status: store.CallReserved})
	}); err != nil {
		t.Fatal(err)
	}
	runs = 0
	err = s.Update(store.WithCallPrefetch(bg, *hint("r")), "cc:g1", func(tx store.Tx) error {
		runs++
		if _, err := tx.Call("r", store.PhasePre); err == nil {
			return nil
		}
		return tx.Record(&store.Call{ToolUseID: "r", Phase: store.PhasePost})
	})
	if err != nil || runs != 2 {
		t.Errorf("a settle after a guess: %d runs, %v; want 2", runs, err)
	}
	err = s.Update(bg, "cc:g1", func(tx store.Tx) error {
		c, err := tx.Call("r", store.PhasePre)
		if err != nil || c.Status != store.CallReserved {
			return fmt.Errorf("the reserved record: %+v, %v; want it untouched (the function replayed)", c, err)
		}
		if _, err := tx.Call("r", store.PhasePost); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("a post record: %v; want none", err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}
