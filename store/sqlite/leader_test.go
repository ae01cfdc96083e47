package sqlite

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/storetest"
)

// TestWriterLeaderHandsOver: a caller that finds the writer idle commits
// its own function; the writes queued while it runs are handed to the
// writer's goroutine and each commits exactly once, a panic in a leader's
// function reaches that caller only, and Close waits for the leader and
// for what queued behind it.
func TestWriterLeaderHandsOver(t *testing.T) {
	s, _ := openTemp(t, Options{})
	const others = 8
	for i := 0; i <= others; i++ {
		storetest.Create(t, s, fmt.Sprint("cc:l", i))
	}
	// A lone caller leads; its panic is its own.
	func() {
		defer func() {
			if v := recover(); v != "lead boom" {
				t.Errorf("recovered %v; want the leader's panic", v)
			}
		}()
		s.Update(bg, "cc:l0", func(tx store.Tx) error { panic("lead boom") })
	}()
	if _, _, err := storetest.Decide(bg, s, "cc:l0", "toolu_after_panic"); err != nil {
		t.Fatalf("after a leader's panic: %v", err)
	}

	// A leader held inside its transaction while others queue.
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	var leadErr error
	go func() {
		defer wg.Done()
		leadErr = s.Update(bg, "cc:l0", func(tx store.Tx) error {
			close(inside)
			<-release
			r := tx.Run()
			r.Iterations++
			return tx.Put(r)
		})
	}()
	<-inside
	errs := make([]error, others)
	for i := 1; i <= others; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, _, errs[i-1] = storetest.Decide(bg, s, fmt.Sprint("cc:l", i), "toolu_q")
		}(i)
	}
	// Let them queue behind the leader, then close the store while they
	// wait: every one of them is committed before Close returns.
	waitQueued(s, others)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	close(release)
	wg.Wait()
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if leadErr != nil {
		t.Errorf("leader: %v", leadErr)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("queued cc:l%d: %v", i+1, err)
		}
	}
	if err := s.Update(bg, "cc:l0", func(store.Tx) error { return nil }); err == nil {
		t.Errorf("Update after Close succeeded")
	}

	s2, err := Open(bg, s.path, Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for i := 0; i <= others; i++ {
		want := int64(1)
		if i == 0 {
			want = 2 // toolu_after_panic and the held leader's
		}
		r, err := s2.LiveRun(bg, fmt.Sprint("cc:l", i))
		if err != nil || r.Iterations != want {
			t.Errorf("cc:l%d: run %+v, %v; want %d iterations", i, r, err, want)
		}
	}
	if st, err := s2.VerifyChain(bg); err != nil || st.Events != others+1 {
		t.Errorf("verify: %+v, %v; want %d events", st, err, others+1)
	}
}

// waitQueued waits until n writes wait in s's writer queue.
func waitQueued(s *Store, n int) {
	for {
		s.w.mu.Lock()
		q := len(s.w.queue)
		s.w.mu.Unlock()
		if q == n {
			return
		}
		runtime.Gosched()
	}
}

// TestWriterQueuesAfterABatchOfSeveral: once a batch held several
// sessions' functions, a caller that finds the writer idle queues for the
// writer's goroutine instead of leading, until the goroutine has cut
// sharedSingles batches of one in a row; then lone callers lead again.
// Every write commits once.
func TestWriterQueuesAfterABatchOfSeveral(t *testing.T) {
	s, path := openTemp(t, Options{})
	const others = 8
	for i := 0; i <= others; i++ {
		storetest.Create(t, s, fmt.Sprint("cc:s", i))
	}
	// A held leader, and others queued behind it: the goroutine commits
	// them as one batch.
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := s.Update(bg, "cc:s0", func(tx store.Tx) error {
			close(inside)
			<-release
			r := tx.Run()
			r.Iterations++
			return tx.Put(r)
		}); err != nil {
			t.Errorf("leader: %v", err)
		}
	}()
	<-inside
	for i := 1; i <= others; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, _, err := storetest.Decide(bg, s, fmt.Sprint("cc:s", i), "toolu_q"); err != nil {
				t.Errorf("queued cc:s%d: %v", i, err)
			}
		}(i)
	}
	waitQueued(s, others)
	close(release)
	wg.Wait()
	leads := s.w.leads.Load()
	for i := 0; i < sharedSingles; i++ {
		waitIdle(s)
		if _, _, err := storetest.Decide(bg, s, "cc:s1", fmt.Sprint("toolu_lone", i)); err != nil {
			t.Fatal(err)
		}
		if n := s.w.leads.Load() - leads; n != 0 {
			t.Fatalf("lone call %d after a batch of several: %d leaders' batches; want the goroutine's", i+1, n)
		}
	}
	waitIdle(s)
	if _, _, err := storetest.Decide(bg, s, "cc:s1", "toolu_lone_last"); err != nil {
		t.Fatal(err)
	}
	if n := s.w.leads.Load() - leads; n != 1 {
		t.Errorf("a lone call after %d batches of one: %d leaders' batches; want 1", sharedSingles, n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(bg, path, Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for i := 0; i <= others; i++ {
		want := int64(1)
		if i == 1 {
			want += sharedSingles + 1
		}
		r, err := s2.LiveRun(bg, fmt.Sprint("cc:s", i))
		if err != nil || r.Iterations != want {
			t.Errorf("cc:s%d: run %+v, %v; want %d iterations", i, r, err, want)
		}
	}
	if st, err := s2.VerifyChain(bg); err != nil || st.Events != others+sharedSingles+1 {
		t.Errorf("verify: %+v, %v; want %d events", st, err, others+sharedSingles+1)
	}
}

// waitIdle waits until s's writer runs no batch.
func waitIdle(s *Store) {
	for {
		s.w.mu.Lock()
		busy := s.w.busy
		s.w.mu.Unlock()
		if !busy {
			return
		}
		runtime.Gosched()
	}
}
