package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/store"
	_ "github.com/statewright-go/statewright/store/backends" // every store backend store.Open picks from
)

// storeFlag is the name of the flag every store-using command takes.
const storeFlag = "store"

// addStoreFlag adds the --store PATH|URL flag to cmd. Commands that open
// the store call it in their constructor and then openStore in RunE.
func addStoreFlag(cmd *cobra.Command) {
	cmd.Flags().String(storeFlag, "",
		"the store: an SQLite file, or a postgres:// URL (default $"+store.EnvStore+", else $XDG_STATE_HOME/statewright/state.db, else ~/.local/state/statewright/state.db)")
}

// storePath resolves the store location for cmd: --store when given, else
// $STATEWRIGHT_STORE, else $XDG_STATE_HOME/statewright/state.db, else
// ~/.local/state/statewright/state.db (see store.ResolvePath). A
// postgres:// URL is returned as it is.
func storePath(cmd *cobra.Command) (string, error) {
	var flag string
	if f := cmd.Flag(storeFlag); f != nil {
		flag = f.Value.String()
	}
	p, err := store.ResolvePath(flag, nil)
	if err != nil {
		return "", usageError{err}
	}
	return p, nil
}

// storeOptions are the backend-neutral options for opening a store.
type storeOptions = store.Options

// openStoreAt opens the store at loc, a file path or a postgres:// URL,
// through the backend that claims it (store.Open).
func openStoreAt(ctx context.Context, loc string, opts storeOptions) (store.Store, error) {
	return store.Open(ctx, loc, opts)
}

// displayStore names a store location for messages: a URL without its password.
func displayStore(loc string) string { return store.Display(loc) }

// openStore opens the store named by cmd's --store flag (or the default
// location). With mustExist the store must already exist and be
// initialised (hooks and read-only commands must never create a fresh,
// empty store); otherwise it is created on first use. The caller closes it.
//
// Errors are wrapped with the location; a missing store (mustExist) wraps
// store.ErrNoStore.
func openStore(ctx context.Context, cmd *cobra.Command, mustExist bool) (store.Store, error) {
	return openStoreWith(ctx, cmd, storeOptions{MustExist: mustExist})
}

// openStoreWith is openStore with full control over the options (ExpectID
// for commands that name the store's id, BusyTimeout).
func openStoreWith(ctx context.Context, cmd *cobra.Command, opts storeOptions) (store.Store, error) {
	p, err := storePath(cmd)
	if err != nil {
		return nil, err
	}
	st, err := openStoreAt(ctx, p, opts)
	if err != nil {
		if errors.Is(err, store.ErrNoStore) {
			return nil, fmt.Errorf("open store: %w (start a run with `statewright start`, or name the store with --store / $%s)", err, store.EnvStore)
		}
		return nil, fmt.Errorf("open store: %w", err)
	}
	return st, nil
}

// storeFile returns the file of a store kept in a local file ("" for a
// store on a server).
func storeFile(st store.Store) string {
	if f := st.Identity().Files; len(f) > 0 {
		return f[0]
	}
	return ""
}

// sameStoreCheck returns a check that fails once the store open now is no
// longer the one at its location: an SQLite file removed or replaced, a
// PostgreSQL store dropped and recreated. Writes through the old handle
// would reach a store nobody else reads.
func sameStoreCheck(st store.Store) (func(context.Context) error, error) {
	return st.CheckIdentity, nil
}
