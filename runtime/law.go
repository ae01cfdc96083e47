package runtime

import (
	"fmt"
	"slices"
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
	// Workflow is the canonical source of Def ("template:NAME" or a path).
	Workflow string
	// Warnings are what the lenient reading of a run's snapshot let
	// through (keys a newer parser rejects when a workflow is loaded): the
	// run goes on under the law it started with, and the audit log says so.
	Warnings workflow.Diagnostics
	// Lint are the warnings of a workflow loaded to start a run (never of a
	// run's snapshot): a tool name no harness's alias table knows, with a
	// did-you-mean, a rule that can never match, validation warnings.
	// Start hands them to its caller in RunView.Warnings, so that every
	// way of starting a run shows them (compatibility notes, "compat-*",
	// are left to `workflows validate`).
	Lint workflow.Diagnostics

	invokes  map[string]string // invoke name → bundle key
	maxDepth int               // the run's bound on nesting
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

// compiledFor returns the run's compiled workflow in force (the innermost
// sub-workflow while one runs), parsing and compiling it on first use.
func (s *Service) compiledFor(run *store.Run) (*Prepared, error) {
	_, stack, err := readHistory(run)
	if err != nil {
		return nil, err
	}
	return s.preparedAt(run, inForce(stack))
}

// preparedAt returns the workflow with key wkey of the run's snapshot ("":
// the root), compiled, from the cache when it was compiled before.
func (s *Service) preparedAt(run *store.Run, wkey string) (*Prepared, error) {
	if len(run.Snapshot) == 0 {
		return nil, fmt.Errorf("%w: run %s has no workflow snapshot", ErrWorkflow, run.ID)
	}
	key := run.SnapshotDigest
	if key == "" {
		key = store.InputDigest(run.Snapshot)
	}
	key += "\x00" + run.WorkflowSource + "\x00" + wkey
	s.laws.mu.Lock()
	c := s.laws.byKey[key]
	s.laws.mu.Unlock()
	if c != nil {
		return c, nil
	}
	b, isBundle, err := parseBundle(run.Snapshot)
	switch {
	case err != nil:
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	case !isBundle && wkey != "":
		return nil, fmt.Errorf("%w: run %s: its stack names workflow %s, but its snapshot holds one workflow", ErrWorkflow, run.ID, wkey)
	case !isBundle:
		c, err = s.compileSnapshot(run.Snapshot, run.WorkflowSource, nil)
		if c != nil {
			c.Workflow, c.maxDepth = run.WorkflowSource, DefaultMaxDepth
		}
	default:
		if wkey == "" {
			wkey = b.Root
		}
		e := b.Workflows[wkey]
		if e == nil {
			return nil, fmt.Errorf("%w: run %s: its stack names workflow %s, which its snapshot does not hold", ErrWorkflow, run.ID, wkey)
		}
		c, err = s.compileSnapshot([]byte(e.Text), wkey, b.sources())
		if c != nil {
			c.Workflow, c.invokes, c.maxDepth = wkey, e.Invokes, b.MaxDepth
		}
	}
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
// source, and the further files in protect (the other workflows of a
// bundle), are added to the law's protected paths.
func (s *Service) compile(src []byte, source string, protect []string) (*Prepared, error) {
	return s.compileWith(src, source, protect, false)
}

// compileSnapshot is compile for a workflow a run's snapshot holds: read
// leniently, so that an upgrade that made unknown keys errors never denies
// every call of a running session (docs/workflow-format.md); what it let through is
// kept in Warnings.
func (s *Service) compileSnapshot(src []byte, source string, protect []string) (*Prepared, error) {
	return s.compileWith(src, source, protect, true)
}

func (s *Service) compileWith(src []byte, source string, protect []string, lenient bool) (*Prepared, error) {
	def, diags, err := workflow.Parse(src, workflow.ParseOptions{Source: source, Lenient: lenient})
	if err != nil {
		return nil, fmt.Errorf("%w: parse %s: %w", ErrWorkflow, source, err)
	}
	var warnings workflow.Diagnostics
	for _, d := range diags {
		if lenient && (d.Code == workflow.CodeUnknownKey || d.Code == workflow.CodeDroppedField) {
			warnings = append(warnings, d)
		}
	}
	diags = append(diags, workflow.Validate(def)...)
	if !lenient && !diags.HasErrors() {
		// A workflow loaded to start a run: its permission rules must
		// parse and its inline examples must pass (a run already in flight
		// keeps the law it started with), and its tool names are linted.
		diags = append(diags, policy.LintToolNames(def)...)
		diags = append(diags, policy.LintRules(def)...)
		if !diags.HasErrors() {
			diags = append(diags, policy.CheckExamples(def)...)
		}
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("%w: %s does not validate: %s", ErrWorkflow, source, firstError(diags))
	}
	var lint workflow.Diagnostics
	if !lenient {
		for _, d := range diags {
			if d.Severity == workflow.SeverityWarning && !strings.HasPrefix(d.Code, "compat-") {
				lint = append(lint, d)
			}
		}
	}
	opts := s.opts.Policy
	opts.ProtectedPaths = slices.Clone(opts.ProtectedPaths)
	if source != "" && !strings.HasPrefix(source, templatePrefix) {
		opts.ProtectedPaths = append(opts.ProtectedPaths, source)
	}
	for _, p := range protect {
		if !slices.Contains(opts.ProtectedPaths, p) {
			opts.ProtectedPaths = append(opts.ProtectedPaths, p)
		}
	}
	law, err := policy.Compile(def, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: compile %s: %w", ErrWorkflow, source, err)
	}
	return &Prepared{Def: def, Law: law, Warnings: warnings, Lint: lint}, nil
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
