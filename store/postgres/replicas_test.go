package postgres

import (
	"testing"
	"time"
)

// TestReplicasSeeEachOther: a replica alone keeps two groups in flight;
// once another replica of the same store commits groups, each sees the
// other (by the presence lock) and keeps one; when the other closes, the
// first is alone again. A store in another schema is another store; a
// process that committed fewer than presenceAfter transactions in groups
// opens no connection to show itself.
func TestReplicasSeeEachOther(t *testing.T) {
	oldPoll, oldAfter := presencePoll, presenceAfter
	presencePoll, presenceAfter = 20*time.Millisecond, 0
	t.Cleanup(func() { presencePoll, presenceAfter = oldPoll, oldAfter }) // after the stores close
	few, _ := openTemp(t, Options{})
	presenceAfter = 1
	if few.committers(); few.presence.cancel != nil {
		t.Fatal("a store that committed no group shows itself")
	}
	presenceAfter = 0
	a, u := openTemp(t, Options{})
	other, _ := openTemp(t, Options{})
	other.committers()
	want := func(s *Store, name string, n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for s.committers() != n {
			if time.Now().After(deadline) {
				t.Fatalf("%s keeps %d groups in flight (sees %d others), want %d", name, s.committers(), s.presence.others.Load(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	want(a, "a alone", groupCommitters)
	time.Sleep(5 * presencePoll) // a counted itself (and not the other store) a few times
	want(a, "a alone", groupCommitters)
	if got := a.pace(); got != notifyPace {
		t.Errorf("a alone paces its notification batches %v apart, want %v", got, notifyPace)
	}
	b, err := Open(bg, u, Options{MustExist: true, ExpectID: a.StoreID()})
	if err != nil {
		t.Fatal(err)
	}
	want(b, "b beside a", 1)
	want(a, "a beside b", 1)
	for name, s := range map[string]*Store{"a": a, "b": b} {
		if got := s.pace(); got != 2*notifyPace {
			t.Errorf("%s beside another paces its notification batches %v apart, want %v", name, got, 2*notifyPace)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	want(a, "a after b closed", groupCommitters)
	if got := a.pace(); got != notifyPace {
		t.Errorf("a alone again paces its notification batches %v apart, want %v", got, notifyPace)
	}
}

// TestNotifyPace: the pace between a replica's notification batches grows
// with the replicas it sees, so that the store as a whole sends about as
// many batches, up to maxNotifyPace.
func TestNotifyPace(t *testing.T) {
	for _, tc := range []struct {
		others int64
		want   time.Duration
	}{
		{0, 50 * time.Millisecond},
		{1, 100 * time.Millisecond},
		{3, maxNotifyPace},
	} {
		var s Store
		s.presence.others.Store(tc.others)
		if got := s.pace(); got != tc.want {
			t.Errorf("beside %d others: pace %v, want %v", tc.others, got, tc.want)
		}
	}
}
