package tui

import (
	"context"
	"fmt"
	"sync"

	"github.com/statewright-go/statewright/internal/wfgraph"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// Snapshot is what the store view shows at one moment: the runs, and the
// detail of the open run.
type Snapshot struct {
	// Runs are the store's runs, newest first.
	Runs []*store.Run
	// Detail is the open run's detail (nil when no run is open).
	Detail *Detail
	// Err is why the snapshot could not be read (shown, and retried).
	Err error
}

// Detail is one run as the detail view shows it.
type Detail struct {
	// View is the runtime's view of the run (state, allowed tools, next
	// events, pending approval).
	View *runtime.RunView
	// Graph is the run's workflow snapshot laid out.
	Graph *wfgraph.Graph
	// Decisions are the run's newest decision events, oldest first.
	Decisions []store.Event
	// History are the run's transitions, approvals, run and admin events,
	// oldest first.
	History []store.Event
}

// Loader reads snapshots from a runtime Service and its store.
type Loader struct {
	// Service answers run views; Store lists runs and events.
	Service *runtime.Service
	Store   store.Store
	// MaxEvents bounds the events read per list (default 200).
	MaxEvents int

	mu     sync.Mutex
	graphs map[*runtime.Prepared]*wfgraph.Graph
}

// Load reads the runs and, when openRunID is set, that run's detail.
func (l *Loader) Load(ctx context.Context, openRunID string) Snapshot {
	runs, err := l.Service.Runs(ctx, store.RunFilter{Limit: 500})
	if err != nil {
		return Snapshot{Err: err}
	}
	snap := Snapshot{Runs: runs}
	if openRunID != "" {
		snap.Detail, snap.Err = l.detail(ctx, openRunID)
	}
	return snap
}

func (l *Loader) limit() int {
	if l.MaxEvents > 0 {
		return l.MaxEvents
	}
	return 200
}

func (l *Loader) detail(ctx context.Context, runID string) (*Detail, error) {
	run, err := l.Store.Run(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", runID, err)
	}
	view, err := l.Service.View(run)
	if err != nil {
		return nil, err
	}
	d := &Detail{View: view, Graph: l.graph(run)}
	d.Decisions, err = l.Store.Events(ctx, store.EventFilter{RunID: runID, Kinds: []store.EventKind{store.KindDecision}, Limit: l.limit(), Newest: true})
	if err != nil {
		return nil, fmt.Errorf("read decisions of %s: %w", runID, err)
	}
	d.History, err = l.Store.Events(ctx, store.EventFilter{RunID: runID,
		Kinds: []store.EventKind{store.KindTransition, store.KindApproval, store.KindRun, store.KindAdmin}, Limit: l.limit(), Newest: true})
	if err != nil {
		return nil, fmt.Errorf("read history of %s: %w", runID, err)
	}
	return d, nil
}

// graph lays out the workflow in force in the run, cached per prepared
// workflow (the runtime caches those by snapshot).
func (l *Loader) graph(run *store.Run) *wfgraph.Graph {
	p, err := l.Service.Prepared(run)
	if err != nil {
		return &wfgraph.Graph{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if g, ok := l.graphs[p]; ok {
		return g
	}
	g := wfgraph.Build(p.Def)
	if l.graphs == nil {
		l.graphs = map[*runtime.Prepared]*wfgraph.Graph{}
	}
	l.graphs[p] = g
	return g
}
