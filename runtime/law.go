package runtime

import (
	"fmt"
	"strings"
	"sync"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/workflow"
)

// Prepared is a run's workflow ready to use: the definition in force and
// its compiled law, parsed, validated and compiled once per workflow
// snapshot (see Service.Prepared). It is shared and must not be modified.
type Prepared struct {
	// Def is the workflow definition in force.
	Def *workflow.Definition
	// Law is Def compiled with the service's policy options (protected
	// paths, --require-workflow, ...): the law every decision uses.
	Law *policy.Law
}

// lawCache holds compiled snapshots keyed by the snapshot digest (and the
// source, which adds the workflow file to the protected paths), plus the
// law used while no run is live. A hook process is short-lived and compiles
// once; long-lived processes (MCP server, serve) compile once per workflow.
type lawCache struct {
	mu      sync.Mutex
	byKey   map[string]*Prepared
	dormant *policy.Law
}

// dormantLaw returns the law deciding calls while the session has no live
// run: self-protection, dormancy and --require-workflow still apply.
func (s *Service) dormantLaw() (*policy.Law, error) {
	s.laws.mu.Lock()
	defer s.laws.mu.Unlock()
	if s.laws.dormant != nil {
		return s.laws.dormant, nil
	}
	l, err := policy.Compile(&workflow.Definition{ID: "dormant", States: map[string]*workflow.State{}}, s.opts.Policy)
	if err != nil {
		return nil, fmt.Errorf("runtime: compile the dormant law: %w", err)
	}
	s.laws.dormant = l
	return l, nil
}

// Prepared returns the run's workflow ready to use: the definition in
// force and its law, parsed and compiled from the run's snapshot on first
// use and cached by snapshot digest. Every reader of a run's workflow (the
// gateway, the TUI, the dashboard, the MCP server, the agent runner) uses
// it, so all of them see the law the runtime decides with.
func (s *Service) Prepared(run *store.Run) (*Prepared, error) {
	p, err := s.compiledFor(run)
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	return p, nil
}

// compiledFor returns the run's compiled workflow, parsing and compiling
// its snapshot on first use.
func (s *Service) compiledFor(run *store.Run) (*Prepared, error) {
	if len(run.Snapshot) == 0 {
		return nil, fmt.Errorf("%w: run %s has no workflow snapshot", ErrWorkflow, run.ID)
	}
	key := run.SnapshotDigest
	if key == "" {
		key = store.InputDigest(run.Snapshot)
	}
	key += "\x00" + run.WorkflowSource
	s.laws.mu.Lock()
	c := s.laws.byKey[key]
	s.laws.mu.Unlock()
	if c != nil {
		return c, nil
	}
	c, err := s.compile(run.Snapshot, run.WorkflowSource)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	s.laws.mu.Lock()
	if s.laws.byKey == nil {
		s.laws.byKey = map[string]*Prepared{}
	}
	if prev := s.laws.byKey[key]; prev != nil {
		c = prev
	} else {
		s.laws.byKey[key] = c
	}
	s.laws.mu.Unlock()
	return c, nil
}

// compile parses, validates and compiles workflow source bytes. A file
// source is added to the law's protected paths.
func (s *Service) compile(src []byte, source string) (*Prepared, error) {
	def, diags, err := workflow.Parse(src, workflow.ParseOptions{Source: source})
	if err != nil {
		return nil, fmt.Errorf("%w: parse %s: %w", ErrWorkflow, source, err)
	}
	diags = append(diags, workflow.Validate(def)...)
	if diags.HasErrors() {
		return nil, fmt.Errorf("%w: %s does not validate: %s", ErrWorkflow, source, firstError(diags))
	}
	opts := s.opts.Policy
	if source != "" && !strings.HasPrefix(source, "template:") {
		opts.ProtectedPaths = append(append([]string(nil), opts.ProtectedPaths...), source)
	}
	law, err := policy.Compile(def, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: compile %s: %w", ErrWorkflow, source, err)
	}
	return &Prepared{Def: def, Law: law}, nil
}

// firstError renders the first error diagnostic.
func firstError(ds workflow.Diagnostics) string {
	for _, d := range ds {
		if d.Severity == workflow.SeverityError {
			return d.String()
		}
	}
	return "unknown error"
}
