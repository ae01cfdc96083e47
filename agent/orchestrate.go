package agent

import (
	"context"

	"github.com/statewright-go/statewright/agent/events"
	"github.com/statewright-go/statewright/runtime"
)

// Registry resolves the workflows an invoke may run as sub-machines.
type Registry interface {
	// Has reports whether name is a workflow the registry can start.
	Has(name string) bool
}

// DefaultRegistry is the registry of bundled templates and the project's
// .statewright/workflows files.
func DefaultRegistry(projectDir string) Registry { return defaultRegistry{projectDir} }

type defaultRegistry struct{ projectDir string }

func (d defaultRegistry) Has(name string) bool { return name != "" }

// orchestrate runs the child work of an invoke or fork transition. It is
// called after the runtime moved the run; see docs/agent.md.
func (r *runner) orchestrate(ctx context.Context, res runtime.TransitionResult) (events.RunEnd, bool) {
	return events.RunEnd{}, false
}
