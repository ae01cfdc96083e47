package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// DefaultBusyTimeout is how long a writer waits for the store's locks
// before failing with ErrBusy, when Options.BusyTimeout is zero. It must
// stay below the hook's own deadline, which stays below the harness's hook
// timeout.
const DefaultBusyTimeout = 2 * time.Second

// Options configure Open; every backend honours them.
type Options struct {
	// MustExist makes Open fail with ErrNoStore when the store does not
	// exist or was never initialised, instead of creating it. Hooks open
	// with MustExist: they must never silently start on a fresh, empty
	// store (which would have no runs and so enforce nothing).
	MustExist bool
	// ExpectID, when set, makes Open fail with ErrStoreMismatch unless the
	// store's id equals it.
	ExpectID string
	// BusyTimeout bounds a writer's total wait for the store's locks
	// (DefaultBusyTimeout when 0); past it the write fails with ErrBusy.
	BusyTimeout time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// OneShot tells the backend that the process opens the store for a
	// call or two and exits (a hook): a backend may leave work that only
	// pays off in a long-lived process to the next one. On SQLite, Close
	// then leaves the WAL to the next process instead of checkpointing it
	// (the last connection's checkpoint costs several fsyncs), and commits
	// truncate the WAL once it outgrows a small bound.
	OneShot bool
}

// Identity says which store a handle is open on and what it is made of.
type Identity struct {
	// ID is the store's id (StoreID).
	ID string `json:"id"`
	// Backend names the backend ("sqlite", "postgres").
	Backend string `json:"backend"`
	// Location is where the store is, as messages may show it: an absolute
	// file path, or a URL without its password.
	Location string `json:"location"`
	// Files are the local files that make up the store (SQLite: the
	// database, its WAL, shared-memory, rollback journal and lock files,
	// whether they exist yet or not); none for a store on a server. Self
	// protection and the sandbox hide or protect exactly these.
	Files []string `json:"files,omitempty"`
}

// Backend is a store implementation that Open picks by location. Backends
// register themselves (Register) from their package's init; import
// store/backends for every built-in one.
type Backend struct {
	// Name names the backend ("sqlite", "postgres").
	Name string
	// Claims reports whether location names a store of this backend.
	Claims func(location string) bool
	// Open opens (and, unless opts.MustExist, creates) the store at
	// location.
	Open func(ctx context.Context, location string, opts Options) (Store, error)
	// Display returns location as messages may show it (a URL without its
	// password); nil shows it as it is.
	Display func(location string) string
}

var registry struct {
	mu       sync.RWMutex
	backends []Backend
}

// Register makes a backend available to Open. It panics when the name is
// taken or a field is missing: registration happens at init.
func Register(b Backend) {
	if b.Name == "" || b.Claims == nil || b.Open == nil {
		panic("store: Register: a backend needs Name, Claims and Open")
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, o := range registry.backends {
		if o.Name == b.Name {
			panic("store: Register: backend " + b.Name + " registered twice")
		}
	}
	registry.backends = append(registry.backends, b)
}

// Backends returns the names of the registered backends, in registration order.
func Backends() []string {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	names := make([]string, len(registry.backends))
	for i, b := range registry.backends {
		names[i] = b.Name
	}
	return names
}

func backendFor(location string) (Backend, bool) {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	for _, b := range registry.backends {
		if b.Claims(location) {
			return b, true
		}
	}
	return Backend{}, false
}

// Open opens the store at location (a file path, a file: URI, a
// postgres:// URL, ...) through the backend that claims it. The caller
// closes the store. Errors wrap the sentinels above (ErrNoStore for a
// missing store with opts.MustExist, ErrStoreMismatch, ErrCorrupt, ...);
// a location no registered backend claims is ErrInvalid.
func Open(ctx context.Context, location string, opts Options) (Store, error) {
	if location == "" {
		return nil, fmt.Errorf("store: open: %w: empty location", ErrInvalid)
	}
	b, ok := backendFor(location)
	if !ok {
		return nil, fmt.Errorf("store: open %s: %w: no store backend claims this location (registered: %s)",
			Display(location), ErrInvalid, strings.Join(Backends(), ", "))
	}
	st, err := b.Open(ctx, location, opts)
	if err != nil {
		return nil, err // a nil interface, never a typed nil
	}
	return st, nil
}

// Display returns location as messages may show it: a URL without its
// password. An unclaimed location that looks like a URL is shown by its
// scheme only.
func Display(location string) string {
	if b, ok := backendFor(location); ok {
		if b.Display != nil {
			return b.Display(location)
		}
		return location
	}
	if i := strings.Index(location, "://"); i > 0 {
		return location[:i] + "://…"
	}
	return location
}

type (
	prefetchKey  struct{}
	callReadsKey struct{}
)

// CallRef names a call record: a tool_use_id and a hook phase.
type CallRef struct {
	ToolUseID string
	Phase     Phase
}

// WithCallPrefetch tells the next Update on ctx that its function will
// look up this call record first (Tx.Call), so a backend that talks to a
// server may fetch it with the transaction's first round trip. It is a
// hint: Tx.Call answers the same with or without it.
func WithCallPrefetch(ctx context.Context, ref CallRef) context.Context {
	return context.WithValue(ctx, prefetchKey{}, ref)
}

// CallPrefetch returns the hint WithCallPrefetch left on ctx.
func CallPrefetch(ctx context.Context) (CallRef, bool) {
	r, ok := ctx.Value(prefetchKey{}).(CallRef)
	return r, ok && r.ToolUseID != ""
}

// WithCallReads tells the next Update on ctx every tool_use_id whose
// records its function may look up (Tx.Call), so that a backend may read
// them together when it reads the first (the SQLite store: one statement
// for a decision and the results it settles). It is a hint: Tx.Call
// answers the same with or without it.
func WithCallReads(ctx context.Context, toolUseIDs ...string) context.Context {
	return context.WithValue(ctx, callReadsKey{}, toolUseIDs)
}

// CallReads returns the hint WithCallReads left on ctx.
func CallReads(ctx context.Context) []string {
	ids, _ := ctx.Value(callReadsKey{}).([]string)
	return ids
}
