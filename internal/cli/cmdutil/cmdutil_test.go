package cmdutil

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/statewright-go/statewright/store"
)

// TestFactoryOpensStores: the binary opens stores through store.Open,
// which needs the backends registered by this package's import of
// store/backends (a binary without them refuses every store).
func TestFactoryOpensStores(t *testing.T) {
	f := New("")
	ctx := context.Background()
	loc := filepath.Join(t.TempDir(), "state.db")
	if _, err := f.OpenStoreAt(ctx, loc, store.Options{MustExist: true}); !errors.Is(err, store.ErrNoStore) {
		t.Fatalf("a missing store: %v, want ErrNoStore", err)
	}
	st, err := f.OpenStoreAt(ctx, loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := f.OpenStoreAt(ctx, "postgres://127.0.0.1:1/x?connect_timeout=1", store.Options{MustExist: true}); err == nil ||
		errors.Is(err, store.ErrInvalid) {
		t.Errorf("a postgres URL: %v; want the postgres backend to try it", err)
	}
}

func TestExitCode(t *testing.T) {
	var b []byte
	w := writerFunc(func(p []byte) (int, error) { b = append(b, p...); return len(p), nil })
	for _, c := range []struct {
		err  error
		code int
	}{
		{nil, ExitOK},
		{Usagef("bad %s", "flag"), ExitUsage},
		{Failure("broken"), ExitFailure},
		{Failure(""), ExitFailure},
		{ExitError{Code: 4}, 4},
		{errors.New("unknown flag: --x"), ExitUsage},
		{errors.New("other"), ExitFailure},
	} {
		if got := ExitCode(c.err, w); got != c.code {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.code)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
