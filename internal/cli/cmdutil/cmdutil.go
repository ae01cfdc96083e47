// Package cmdutil is what statewright's command packages share
// (internal/cli/<group>, in the style of the GitHub CLI's pkg/cmdutil): the
// Factory that opens the store and the runtime, the exit codes and the
// errors that carry them, and the flags several commands take.
package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"github.com/statewright-go/statewright/sandbox"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/harness/install"
	"github.com/statewright-go/statewright/internal/buildinfo"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	_ "github.com/statewright-go/statewright/store/backends" // every backend store.Open picks from
)

// Factory is what commands get from main: the version and the one place
// the store is opened.
type Factory struct {
	linked string
}

// New returns the Factory for a binary whose linked-in version is version
// ("" when not set at build time).
func New(version string) *Factory { return &Factory{linked: version} }

// Version returns the binary's version (see BuildVersion).
func (f *Factory) Version() string { return BuildVersion(f.linked) }

// BuildVersion returns linked when set, else the version the release
// stamped (internal/buildinfo: the tag or pseudo-version, the module
// version of a `go install`, or "devel").
func BuildVersion(linked string) string {
	if linked != "" {
		return linked
	}
	return buildinfo.Version()
}

// StoreFlag is the name of the flag every store-using command takes.
const StoreFlag = "store"

// AddStoreFlag adds the --store PATH|URL flag to cmd.
func AddStoreFlag(cmd *cobra.Command) {
	cmd.Flags().String(StoreFlag, "",
		"the store: an SQLite file, or a postgres:// URL (default $"+store.EnvStore+", else the store of the project's install, else $XDG_STATE_HOME/statewright/state.db, else ~/.local/state/statewright/state.db)")
}

// StoreLocation resolves the store location for cmd: --store when given,
// else $STATEWRIGHT_STORE, else the store of the statewright install that
// governs the working directory (install.FindStore: the project's hooks or
// plugin name it; found from any subdirectory), else the XDG state
// directory (store.ResolvePath). Unless --store named it, the store and
// where it comes from are named on stderr, so a person always knows which
// store a command used.
func StoreLocation(cmd *cobra.Command) (string, error) {
	var flag string
	if f := cmd.Flag(StoreFlag); f != nil {
		flag = f.Value.String()
	}
	p, from, err := resolveStore(flag)
	if err != nil {
		return "", Usage(err)
	}
	if why := storeSource(flag, p, from); why != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "statewright: store %s (%s)\n", store.Display(p), why)
	}
	return p, nil
}

// storeSource says where the resolved store loc comes from, for
// StoreLocation's note ("" when --store named it on the command line).
func storeSource(flag, loc, from string) string {
	switch {
	case flag != "":
		return ""
	case from != "" && from == loc:
		// Found as the project's .statewright/state.db: no install file
		// names it (an install whose file names no store, or one removed).
		return "the project's store, found from this directory"
	case from != "":
		return "the project's install, " + from
	case os.Getenv(store.EnvStore) != "":
		return "$" + store.EnvStore
	}
	return "the default location: no statewright install governs this directory and $" + store.EnvStore + " is unset"
}

// resolveStore resolves a --store flag's value as StoreLocation does; from
// names the install file that named the store, when it was found that way.
func resolveStore(flag string) (loc, from string, err error) {
	if flag == "" && os.Getenv(store.EnvStore) == "" {
		if wd, err := os.Getwd(); err == nil {
			if loc, from := install.FindStore(wd); loc != "" {
				return loc, from, nil
			}
		}
	}
	loc, err = store.ResolvePath(flag, nil)
	return loc, "", err
}

// OpenStoreAt opens the store at loc through the backend that claims it
// (store.Open): the one place a command opens a store.
func (f *Factory) OpenStoreAt(ctx context.Context, loc string, opts store.Options) (store.Store, error) {
	return store.Open(ctx, loc, opts)
}

// OpenStore opens the store cmd's --store flag names (or the default
// location). With opts.MustExist the store must exist already (hooks and
// read-only commands never create a fresh, empty store). Errors name the
// location; a missing store wraps store.ErrNoStore.
func (f *Factory) OpenStore(ctx context.Context, cmd *cobra.Command, opts store.Options) (store.Store, error) {
	p, err := StoreLocation(cmd)
	if err != nil {
		return nil, err
	}
	st, err := f.OpenStoreAt(ctx, p, opts)
	if err != nil && os.Getenv(sandbox.EnvPhase) != "" {
		// Inside the OS sandbox the store is hidden (docs/sandbox.md).
		return nil, fmt.Errorf("this command runs inside statewright's OS sandbox, where the store is hidden; "+
			"the agent reads its run through statewright's control tools (statewright_get_state), a person runs statewright outside: %w", err)
	}
	if errors.Is(err, store.ErrNoStore) {
		return nil, fmt.Errorf("%w (start a run with `statewright start`, or name the store with --store / $%s)", err, store.EnvStore)
	}
	if errors.Is(err, store.ErrCorrupt) && !store.IsPostgresURL(p) {
		return nil, fmt.Errorf("%w. A person %s", err, install.RecoverHint(p))
	}
	if err != nil {
		return nil, err // the store's errors name the operation and the store
	}
	return st, nil
}

// WithService opens the store and runs fn with a runtime over it.
func (f *Factory) WithService(cmd *cobra.Command, mustExist bool, fn func(ctx context.Context, svc *runtime.Service, st store.Store) error) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	st, err := f.OpenStore(ctx, cmd, store.Options{MustExist: mustExist})
	if err != nil {
		if IsUsage(err) {
			return err
		}
		return Failure(err.Error())
	}
	defer st.Close()
	return fn(ctx, runtime.New(st, runtime.Options{}), st)
}

// StoreFile returns the file of a store kept in a local file ("" for a
// store on a server).
func StoreFile(st store.Store) string {
	if f := st.Identity().Files; len(f) > 0 {
		return f[0]
	}
	return ""
}

// Exit codes shared by every command (`agent` keeps its documented 3 and
// 4: a budget ran out, waiting for a person).
const (
	ExitOK      = 0
	ExitFailure = 1 // the command ran and found a problem (invalid workflow, failing test)
	ExitUsage   = 2 // bad flags or arguments, unreadable input
)

// usageError marks an error as a usage error (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }
func (usageError) Usage() bool     { return true }

// Usage marks err as a usage error (exit 2).
func Usage(err error) error { return usageError{err} }

// Usagef returns a usage error.
func Usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// IsUsage reports whether err is a usage error: marked with Usage, or any
// error in its chain with a Usage() bool method that says so.
func IsUsage(err error) bool {
	var u interface{ Usage() bool }
	return errors.As(err, &u) && u.Usage()
}

// failure marks a command that ran but must exit 1.
type failure struct{ msg string }

func (e failure) Error() string { return e.msg }

// Failure returns an error that exits 1 after printing msg ("" prints
// nothing more: the command printed why).
func Failure(msg string) error { return failure{msg} }

// ExitError is an error carrying a specific exit status; nothing more is
// printed.
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// ExitCode prints err to stderr the way statewright does and returns the
// process exit code for it.
func ExitCode(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var ec ExitError
	if errors.As(err, &ec) {
		return ec.Code
	}
	var f failure
	if errors.As(err, &f) {
		if f.msg != "" {
			fmt.Fprintln(stderr, "statewright:", f.msg)
		}
		return ExitFailure
	}
	fmt.Fprintln(stderr, "statewright:", err)
	if IsUsage(err) || isCobraUsageError(err) {
		return ExitUsage
	}
	return ExitFailure
}

// isCobraUsageError recognises cobra's own argument errors, which it does
// not type.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// Executable returns this binary's path ("" when unknown).
func Executable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}
