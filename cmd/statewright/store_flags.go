package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// storeFlag is the name of the flag every store-using command takes.
const storeFlag = "store"

// addStoreFlag adds the --store PATH flag to cmd. Commands that open the
// store call it in their constructor and then openStore in RunE.
func addStoreFlag(cmd *cobra.Command) {
	cmd.Flags().String(storeFlag, "",
		"the store file (default $"+store.EnvStore+", else $XDG_STATE_HOME/statewright/state.db, else ~/.local/state/statewright/state.db)")
}

// storePath resolves the store location for cmd: --store when given, else
// $STATEWRIGHT_STORE, else $XDG_STATE_HOME/statewright/state.db, else
// ~/.local/state/statewright/state.db (see store.ResolvePath).
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

// openStore opens the store named by cmd's --store flag (or the default
// location). With mustExist the store must already exist and be
// initialised (hooks and read-only commands must never create a fresh,
// empty store); otherwise it is created on first use. The caller closes it.
//
// Errors are wrapped with the path; a missing store (mustExist) wraps
// store.ErrNoStore.
func openStore(ctx context.Context, cmd *cobra.Command, mustExist bool) (*sqlite.Store, error) {
	return openStoreWith(ctx, cmd, sqlite.Options{MustExist: mustExist})
}

// openStoreWith is openStore with full control over the sqlite options
// (ExpectID for hook commands that name the store's id, BusyTimeout).
func openStoreWith(ctx context.Context, cmd *cobra.Command, opts sqlite.Options) (*sqlite.Store, error) {
	p, err := storePath(cmd)
	if err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, p, opts)
	if err != nil {
		if errors.Is(err, store.ErrNoStore) {
			return nil, fmt.Errorf("open store: %w (start a run with `statewright start`, or name the store with --store / $%s)", err, store.EnvStore)
		}
		return nil, fmt.Errorf("open store: %w", err)
	}
	return st, nil
}
