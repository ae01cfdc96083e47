// Package install is the one driver behind `statewright init HARNESS`:
// validate the options, ensure the store, let the harness plan its
// configuration edits, then print them as a diff (--dry-run) or apply
// them, and summarise. A harness contributes only its edits, through its
// adapter's Install method (see package harness).
//
// Every edit is a pure function of a file's old content: the driver reads
// the files, and writes each one atomically, keeping its mode, only after
// every edit succeeded. An edit never overwrites what it does not
// recognise as statewright's own: a file that does not parse, a foreign
// entry of the same name, a foreign plugin file are refusals.
package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/statewright-go/statewright/internal/hookwire"
	"github.com/statewright-go/statewright/store"
)

// Hook timing. The hook answers before its own deadline, which init keeps
// well under the timeout it writes into the harness's settings (after
// which the harness kills the hook and fails open).
const (
	// DefaultDeadline is the hook's own deadline.
	DefaultDeadline = 5 * time.Second
	// DefaultTimeout is the harness hook timeout init writes, in seconds.
	DefaultTimeout = 10
)

// Options are `statewright init HARNESS`'s flags.
type Options struct {
	// Project is the project directory (default: the working directory).
	Project string
	// Store is the store location, created when missing; Binary the
	// statewright binary the hooks run (default: this one).
	Store, Binary string
	// The operator's choices, written into every hook command.
	RequireWorkflow bool
	DefaultWorkflow string
	AuditOnly       bool
	// Sandbox and RequireSandbox route shell calls through the OS
	// sandbox's launcher (the latter denies them where none runs).
	Sandbox, RequireSandbox bool
	// Deadline is the hook's own deadline; Timeout the harness's hook
	// timeout in seconds, which must be above it.
	Deadline time.Duration
	Timeout  int
	// DryRun prints the changes instead of writing them; Uninstall removes
	// what init added.
	DryRun, Uninstall bool
	// NoMCP: do not register the MCP server (harnesses that have one).
	NoMCP bool
	// User writes the harness's user-level configuration instead of the
	// project's (Codex, Cursor); Config names the file (Codex).
	User   bool
	Config string
	// ScopeToProject writes --project PROJECT into every hook command: a
	// hook registered where every session of the user sees it (a user-level
	// configuration) decides only the sessions that work in this project,
	// and passes elsewhere.
	ScopeToProject bool
	// Plugin (Claude Code): pin the store's id in StoreIDFile for the
	// marketplace plugin's hooks instead of writing project settings.
	Plugin      bool
	StoreIDFile string
}

// AddFlags adds the flags every harness's init takes.
func AddFlags(f *pflag.FlagSet, o *Options) {
	f.StringVar(&o.Project, "project", "", "the project directory (default: the working directory)")
	f.StringVar(&o.Store, "store", "", "the store file, created when missing (default $"+store.EnvStore+", else the XDG state directory)")
	f.StringVar(&o.Binary, "binary", "", "the statewright binary the hooks run (default: this one)")
	f.BoolVar(&o.RequireWorkflow, "require-workflow", false, "deny every ordinary tool call while a session has no run")
	f.StringVar(&o.DefaultWorkflow, "default-workflow", "", "start this workflow (template name or file) for every new session")
	f.BoolVar(&o.AuditOnly, "audit-only", false, "record what would be denied, without denying (rollout)")
	f.BoolVar(&o.Sandbox, "sandbox", false, "run the agent's shell commands under the phase's OS sandbox where one is available (docs/sandbox.md)")
	f.BoolVar(&o.RequireSandbox, "require-sandbox", false, "run shell commands under the phase's OS sandbox, and deny them where none is available")
	f.DurationVar(&o.Deadline, "deadline", DefaultDeadline, "the hook's own deadline; must be under --timeout")
	f.IntVar(&o.Timeout, "timeout", DefaultTimeout, "the hook timeout written into the harness's configuration, in seconds")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the changes instead of writing them")
	f.BoolVar(&o.Uninstall, "uninstall", false, "remove what init added")
}

// AddMCPFlag adds --no-mcp, for harnesses that get statewright's MCP server.
func AddMCPFlag(f *pflag.FlagSet, o *Options) {
	f.BoolVar(&o.NoMCP, "no-mcp", false, "do not register the MCP server")
}

// Env is what the driver needs from the rest of statewright.
type Env struct {
	// OpenStore opens the store at loc; create makes it when missing.
	OpenStore func(ctx context.Context, loc string, create bool) (store.Store, error)
	// Workflow checks a --default-workflow and returns the form the hooks
	// name it by (a template name, or an absolute path).
	Workflow func(name string) (string, error)
}

// Plan is one install: the resolved options, and the edits the harness
// planned.
type Plan struct {
	Options
	// Harness is the harness's name ("claude-code").
	Harness string
	// Binary, Store and StoreID are resolved: an absolute, symlink-free
	// binary, the store's location, its id ("" when uninstalling).
	StoreID string
	// HookBinary is what the hook commands run: the thin hook client
	// (statewright-hook) beside Binary, which hands each hook to the local
	// decider, or Binary itself when the client is not installed there.
	HookBinary string

	ctx     context.Context
	env     Env
	changes []*change
	notes   []string
	created bool
}

// Usage marks an error as a usage error (bad flags or arguments).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// Usage reports that the error is the caller's (the command exits 2).
func (usageError) Usage() bool { return true }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// Run installs (or, with o.Uninstall, removes) statewright for one harness:
// it validates o, ensures the store, calls plan for the harness's edits,
// prints them as a diff (o.DryRun) or applies them, then the summary.
// Errors that are the caller's implement Usage() bool.
func Run(ctx context.Context, harness string, o Options, env Env, plan func(*Plan) error, out io.Writer) error {
	p := &Plan{Options: o, Harness: harness, ctx: ctx, env: env}
	if err := p.validate(); err != nil {
		return err
	}
	if err := plan(p); err != nil {
		return err
	}
	for _, c := range p.changes {
		if err := c.show(p.Project, p.DryRun, out); err != nil {
			return err
		}
	}
	for _, s := range p.notes {
		if p.DryRun {
			s = "would: " + s
		}
		fmt.Fprintln(out, s)
	}
	return nil
}

// validate resolves the project, and when installing the binary, the
// store and the default workflow, and ensures the store.
func (p *Plan) validate() error {
	project := p.Project
	if project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("init: %w", err)
		}
		project = wd
	}
	project, err := filepath.Abs(project)
	if err != nil {
		return usagef("init: project: %w", err)
	}
	if fi, err := os.Stat(project); err != nil || !fi.IsDir() {
		return usagef("init: project %s is not a directory", project)
	}
	p.Project = project
	if p.Uninstall {
		return nil
	}
	if p.Timeout <= 0 || p.Deadline <= 0 || p.Deadline >= time.Duration(p.Timeout)*time.Second {
		return usagef("init: --deadline (%v) must be positive and under --timeout (%ds): a hook the harness kills at its timeout fails open", p.Deadline, p.Timeout)
	}
	if p.Binary, err = hookBinary(p.Binary); err != nil {
		return err
	}
	if p.Store, err = store.ResolvePath(p.Store, nil); err != nil {
		return usageError{err}
	}
	if p.DefaultWorkflow != "" {
		wf, err := p.env.Workflow(p.DefaultWorkflow)
		if err != nil {
			return usagef("init: --default-workflow %s: %v", p.DefaultWorkflow, err)
		}
		p.DefaultWorkflow = wf
	}
	if p.StoreID, p.created, err = p.ensureStore(); err != nil {
		return err
	}
	if p.created {
		p.Note("created the store %s", p.Store)
	}
	p.HookBinary = thinClient(p.Binary)
	if p.HookBinary == p.Binary {
		p.Note("%s is not installed beside %s: the hooks run the full binary, which starts slower (install both: go install ./cmd/...)", hookwire.ClientName, p.Binary)
	} else if !p.DryRun {
		// The key the client and the decider prove to each other.
		if err := ensureDeciderKey(); err != nil {
			return failure{fmt.Sprintf("init: the decider's key: %v", err)}
		}
	}
	return nil
}

// Note adds a line to the summary.
func (p *Plan) Note(format string, args ...any) {
	p.notes = append(p.notes, fmt.Sprintf(format, args...))
}

// Refuse returns the error for a file the harness will not edit.
func (p *Plan) Refuse(path string, err error) error {
	return failure{fmt.Sprintf("init: %s: %v", path, err)}
}

// failure is an error of the install itself (exit 1).
type failure struct{ msg string }

func (e failure) Error() string { return e.msg }

// Path returns a path relative to the project as an absolute path.
func (p *Plan) Path(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(p.Project, rel)
}

// ensureStore opens (creating unless dry-running) the store and returns
// its id and whether it was (or would be) created.
func (p *Plan) ensureStore() (id string, created bool, err error) {
	if strings.Contains(p.Store, "'") {
		return "", false, usagef("init: the store location %s holds a single quote", p.Store)
	}
	st, err := p.env.OpenStore(p.ctx, p.Store, false)
	if errors.Is(err, store.ErrNoStore) {
		if p.DryRun {
			if !store.IsPostgresURL(p.Store) {
				if err := canCreate(p.Store); err != nil {
					return "", false, failure{fmt.Sprintf("init: the store %s cannot be created: %v", p.Store, err)}
				}
			}
			return "NEW-STORE-ID", true, nil
		}
		created = true
		st, err = p.env.OpenStore(p.ctx, p.Store, true)
	}
	if errors.Is(err, store.ErrCorrupt) && !store.IsPostgresURL(p.Store) {
		return "", false, failure{fmt.Sprintf("init: %v. A person %s", err, RecoverHint(p.Store))}
	}
	if err != nil {
		return "", false, failure{fmt.Sprintf("init: %v", err)}
	}
	defer st.Close()
	return st.StoreID(), created, nil
}

// RecoverHint says what a person does about the corrupt SQLite store at
// loc (after "A person "): `statewright store recover` keeps its readable
// log and moves it aside, and init makes a fresh store.
func RecoverHint(loc string) string {
	return "keeps its readable log and moves it aside with `statewright store recover --store " + loc +
		"`, then runs `statewright init` again for a fresh store"
}

// Usage marks err as the caller's (bad flags or arguments: exit 2).
func Usage(err error) error { return usageError{err} }
