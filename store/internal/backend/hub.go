package backend

import (
	"context"
	"sync"

	"github.com/statewright-go/statewright/store"
)

// ChangeOf returns the Change that describes run as written.
func ChangeOf(run *store.Run) store.Change {
	c := store.Change{RunID: run.ID, SessionKey: run.SessionKey, Revision: run.Revision, Status: run.Status, State: run.State}
	if run.PendingApproval != nil {
		c.ApprovalID = run.PendingApproval.ID
	}
	return c
}

// Hub fans changes out to watchers. Each subscriber has its own queue that
// keeps one pending Change per run (the newest), so a slow subscriber
// never blocks the publisher and never sees a run go backwards. Backends
// embed one; its zero value is not usable: use NewHub.
type Hub struct {
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool
}

type subscriber struct {
	mu      sync.Mutex
	order   []string                // run ids with a pending change, oldest first
	pending map[string]store.Change // by run id ("" for a resync)
	wake    chan struct{}           // capacity 1: something is pending
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{subs: map[*subscriber]struct{}{}} }

// Subscribe returns a channel of changes published from now on; it is
// closed when ctx is done or the hub is closed (store.ErrClosed once it is).
func (h *Hub) Subscribe(ctx context.Context) (<-chan store.Change, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, store.ErrClosed
	}
	sub := &subscriber{pending: map[string]store.Change{}, wake: make(chan struct{}, 1)}
	h.subs[sub] = struct{}{}
	h.mu.Unlock()
	out := make(chan store.Change)
	go func() {
		defer close(out)
		defer h.remove(sub)
		for {
			c, ok := sub.next()
			if !ok {
				select {
				case <-sub.wake:
					continue
				case <-ctx.Done():
					return
				}
			}
			if c.RunID == hubClosed {
				return
			}
			select {
			case out <- c:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// hubClosed is a run id no store assigns: it tells a subscriber to stop.
const hubClosed = "\x00closed"

func (h *Hub) remove(sub *subscriber) {
	h.mu.Lock()
	delete(h.subs, sub)
	h.mu.Unlock()
}

// Subscribers returns the number of live subscribers.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Publish queues c for every subscriber. A pending change of the same run
// with a higher revision wins (it is newer).
func (h *Hub) Publish(c store.Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		sub.put(c)
	}
}

// Close stops every subscriber (their channels close) and refuses new ones.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	for sub := range h.subs {
		sub.put(store.Change{RunID: hubClosed})
	}
}

func (s *subscriber) put(c store.Change) {
	s.mu.Lock()
	if old, ok := s.pending[c.RunID]; ok {
		if c.Revision >= old.Revision {
			s.pending[c.RunID] = c
		}
	} else {
		s.pending[c.RunID] = c
		s.order = append(s.order, c.RunID)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// next takes the oldest pending change; a close request goes first.
func (s *subscriber) next() (store.Change, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.pending[hubClosed]; ok {
		return c, true
	}
	if len(s.order) == 0 {
		return store.Change{}, false
	}
	id := s.order[0]
	s.order = s.order[1:]
	c := s.pending[id]
	delete(s.pending, id)
	return c, true
}
