package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/store"
	_ "github.com/statewright-go/statewright/store/backends"
)

func TestOpenPicksTheBackend(t *testing.T) {
	if got := store.Backends(); !slices.Contains(got, "sqlite") || !slices.Contains(got, "postgres") {
		t.Fatalf("registered backends = %v", got)
	}
	ctx := context.Background()
	dir := t.TempDir()
	for _, loc := range []string{filepath.Join(dir, "a.db"), "file:" + filepath.Join(dir, "b.db")} {
		st, err := store.Open(ctx, loc, store.Options{})
		if err != nil {
			t.Fatalf("Open(%q): %v", loc, err)
		}
		id := st.Identity()
		if id.Backend != "sqlite" || id.ID != st.StoreID() || !filepath.IsAbs(id.Location) ||
			!slices.Contains(id.Files, id.Location) || !slices.Contains(id.Files, id.Location+"-wal") {
			t.Errorf("Identity() = %+v", id)
		}
		if err := st.CheckIdentity(ctx); err != nil {
			t.Errorf("CheckIdentity: %v", err)
		}
		st.Close()
	}
	// MustExist reaches the backend.
	if _, err := store.Open(ctx, filepath.Join(dir, "missing.db"), store.Options{MustExist: true}); !errors.Is(err, store.ErrNoStore) {
		t.Errorf("Open(missing, MustExist): %v, want ErrNoStore", err)
	}
	// Nobody claims an unknown scheme; the message hides credentials.
	_, err := store.Open(ctx, "mysql://u:secret@db/x", store.Options{})
	if !errors.Is(err, store.ErrInvalid) || strings.Contains(err.Error(), "secret") {
		t.Errorf("Open(mysql://...): %v, want ErrInvalid without the password", err)
	}
	if got := store.Display("postgres://u:secret@db/x"); got != "postgres://u:xxxxx@db/x" {
		t.Errorf("Display = %q", got)
	}
}

func TestCheckIdentityNoticesAReplacedFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	other, err := store.Open(ctx, filepath.Join(dir, "other.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	if err := os.Rename(filepath.Join(dir, "other.db"), path); err != nil {
		t.Fatal(err)
	}
	if err := st.CheckIdentity(ctx); !errors.Is(err, store.ErrStoreMismatch) {
		t.Errorf("CheckIdentity after the file was replaced: %v, want ErrStoreMismatch", err)
	}
}
