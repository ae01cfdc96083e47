package gateway

import (
	"context"
	"sync"

	"github.com/statewright-go/statewright/store"
)

// changeHub hands the store's changes to the sessions they concern: one
// subscription to the store (store.Watcher) per gateway, however many
// sessions it serves. A subscription per session made every change of
// every run wake every session (two goroutine hand-offs each, to be
// thrown away by all but one): with 50 sessions on serve, each poll of
// the SQLite store's watcher delivered ~2,500 changes for ~50 useful
// ones.
type changeHub struct {
	st store.Store

	mu      sync.Mutex
	started bool
	ended   bool // the store pushes no (more) changes
	byKey   map[string]map[*inbox]struct{}
}

// inbox is one session's queue of changes: its own run's and resyncs. A
// newer change of a run replaces an older one not yet taken (as the
// store's own watchers merge them).
type inbox struct {
	key  string
	wake chan struct{} // capacity 1: something was put, or the hub ended

	mu      sync.Mutex
	pending []store.Change
	ended   bool
}

// subscribe registers a session's inbox, starting the store subscription
// on first use. It reports false when the store pushes no changes (the
// session polls only).
func (h *changeHub) subscribe(key string) (*inbox, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.started {
		h.started = true
		w, ok := h.st.(store.Watcher)
		if !ok {
			h.ended = true
		} else if ch, err := w.Watch(context.Background()); err != nil {
			h.ended = true
		} else {
			go h.run(ch)
		}
	}
	if h.ended {
		return nil, false
	}
	in := &inbox{key: key, wake: make(chan struct{}, 1)}
	if h.byKey == nil {
		h.byKey = map[string]map[*inbox]struct{}{}
	}
	if h.byKey[key] == nil {
		h.byKey[key] = map[*inbox]struct{}{}
	}
	h.byKey[key][in] = struct{}{}
	return in, true
}

// unsubscribe removes an inbox.
func (h *changeHub) unsubscribe(in *inbox) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if m := h.byKey[in.key]; m != nil {
		delete(m, in)
		if len(m) == 0 {
			delete(h.byKey, in.key)
		}
	}
}

// run hands out the store's changes until its channel closes (the store
// closed): then every inbox ends, and sessions poll only.
func (h *changeHub) run(ch <-chan store.Change) {
	for c := range ch {
		h.mu.Lock()
		if c.Resync() {
			for _, m := range h.byKey {
				for in := range m {
					in.put(c)
				}
			}
		} else {
			for in := range h.byKey[c.SessionKey] {
				in.put(c)
			}
		}
		h.mu.Unlock()
	}
	h.mu.Lock()
	h.ended = true
	for _, m := range h.byKey {
		for in := range m {
			in.end()
		}
	}
	h.byKey = nil
	h.mu.Unlock()
}

func (in *inbox) put(c store.Change) {
	in.mu.Lock()
	merged := false
	for i, p := range in.pending {
		if p.RunID == c.RunID {
			if c.Revision >= p.Revision {
				in.pending[i] = c
			}
			merged = true
			break
		}
	}
	if !merged {
		in.pending = append(in.pending, c)
	}
	in.mu.Unlock()
	in.signal()
}

func (in *inbox) end() {
	in.mu.Lock()
	in.ended = true
	in.mu.Unlock()
	in.signal()
}

func (in *inbox) signal() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// take returns the changes queued since the last take, and whether the
// hub has ended.
func (in *inbox) take() ([]store.Change, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	cs := in.pending
	in.pending = nil
	return cs, in.ended
}
