package postgres

import (
	"context"
	"testing"
	"time"

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
