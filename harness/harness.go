// Package harness is the contract between statewright and a coding
// harness (Claude Code, Codex, Cursor, opencode, Pi): one small [Adapter]
// interface, in the spirit of the MCP SDK's Transport. Each harness
// implements it in its own package, next to its wire code and its
// installer (harness/claudecode, harness/codex, ...); the list of them is
// harness/adapters. The wire code they share lives in harness/internal/wire;
// no adapter imports another.
//
// An adapter only translates: it decodes the harness's hook input, asks the
// runtime, and renders the answer in the harness's convention. The hook
// runner (harness/hook) does everything around that once for every
// adapter: flags, the deadline, the input limit, opening the store.
// See docs/architecture.md for the path of one tool call.
package harness

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/statewright-go/statewright/harness/install"
	"github.com/statewright-go/statewright/runtime"
)

// Adapter is one coding harness.
type Adapter interface {
	// Info names the harness and its hook events and documents them.
	Info() Info
	// Respond answers one hook event: it decodes input, decides against
	// the runtime h opens, and renders the answer in the harness's
	// convention. It never fails: whatever goes wrong is answered as
	// Failure answers it (fail closed). An unknown event is answered as
	// the harness's tool gate (a deny).
	Respond(ctx context.Context, h *Hook, event string, input []byte) Answer
	// Failure is the answer when the hook cannot do its job for event (a
	// bad flag, a deadline, a refused request), per event: a tool gate
	// denies; a prompt keeps the prompt and warns; a stop lets the agent
	// stop with a warning. An unknown event is answered as the tool gate.
	Failure(event, reason string) Answer
	// Install adds the harness's configuration edits to p: its hooks,
	// plugin files and MCP server entries, or, when p.Uninstall, their
	// removal. The driver (install.Run) does the rest.
	Install(p *install.Plan) error
	// Inspector finds what Install wrote, for `statewright doctor`.
	Inspector
}

// Info describes a harness.
type Info struct {
	// Name is the harness's name on the command line, in session keys and
	// in the policy's alias tables ("claude-code").
	Name string
	// Title is the name people know ("Claude Code").
	Title string
	// Events are the hook events in their command-line spelling
	// ("pre-tool-use"), in the order Install registers them.
	Events []string
	// Doc is the harness's page in the repository ("docs/claude-code.md").
	Doc string
	// HookHelp says, for `statewright hook NAME --help`, how the harness
	// reads the answers and how each event fails closed.
	HookHelp string
	// Install documents `statewright init NAME`; InstallFlags adds the
	// harness's own install flags (nil: none).
	InstallShort, InstallLong string
	InstallFlags              func(f *pflag.FlagSet, o *install.Options)
}

// MaxInputBytes bounds the hook input every adapter reads. A larger input
// (a huge Write, a huge patch) is denied rather than decided on a prefix.
const MaxInputBytes = 32 << 20

// Answer is what a hook process does: write Stdout and Stderr, exit with
// Exit.
type Answer struct {
	Exit   int
	Stdout []byte
	Stderr string
	// Body is the answer as one JSON document, for transports with no exit
	// code and no stderr (serve's HTTP hook endpoint), when it is not
	// Stdout: a command hook's deny by exit code needs a JSON form there.
	Body []byte
}

// Write writes the answer's output and returns its exit code.
func (a Answer) Write(stdout, stderr io.Writer) int {
	if len(a.Stdout) > 0 {
		stdout.Write(a.Stdout)
	}
	if a.Stderr != "" {
		io.WriteString(stderr, a.Stderr)
	}
	return a.Exit
}

// JSON returns the answer as one JSON document (serve's HTTP hook
// endpoint answers it with status 200): Body when set, else Stdout, else
// {} for a silent success. An adapter renders every blocking answer with a
// Body or Stdout; a blocking answer without either becomes the generic
// {"decision":"block"} form rather than an empty success.
func (a Answer) JSON() []byte {
	switch {
	case a.Body != nil:
		return a.Body
	case len(a.Stdout) > 0:
		return a.Stdout
	case a.Exit == 0:
		return []byte("{}\n")
	}
	b, _ := json.Marshal(map[string]string{"decision": "block", "reason": strings.TrimSpace(a.Stderr)})
	return append(b, '\n')
}

// Options are the operator's choices for a hook: from the hook command
// line, which the harness snapshots at session start (never a file the
// agent could write), or from serve's flags.
type Options struct {
	// RequireWorkflow denies every ordinary tool call while the session
	// has no run.
	RequireWorkflow bool
	// DefaultWorkflow is started for a session that has no run, at its
	// start.
	DefaultWorkflow string
	// AuditOnly records what would be denied, without denying.
	AuditOnly bool
	// Sandbox runs shell calls under the phase's OS sandbox where one is
	// available (the launcher); RequireSandbox also denies them where none
	// is (docs/sandbox.md).
	Sandbox, RequireSandbox bool
}

// Hook is what an adapter answers a hook event with: the runtime of the
// project the hook input names, and the operator's options.
type Hook struct {
	Options
	// ProjectDir, when set, is the project every call resolves against
	// (serve --project-dir); else the adapter takes it from the input.
	ProjectDir string
	// StorePath is the store's file, which sandboxed commands never see
	// ("" or a URL for none).
	StorePath string
	// Getenv reads the harness's environment: the hook process's own, or
	// nothing (nil) when the input came over HTTP.
	Getenv func(string) string
	// Open returns the runtime for project. protect names further files
	// the law protects (a harness's environment file).
	Open func(ctx context.Context, project string, protect ...string) (*runtime.Service, error)
	// Control runs one of statewright's control tools (statewright_get_state,
	// statewright_transition, ...) for harnesses whose plugin registers them
	// itself (Pi). Nil: not available.
	Control func(ctx context.Context, svc *runtime.Service, r ControlRequest) (text string, isError bool, err error)
}

// ControlRequest is one control tool call from a plugin.
type ControlRequest struct {
	// Session is the store's session key; Project the project directory.
	Session, Project string
	// Tool is the operation's name ("statewright_transition"); Args its
	// arguments.
	Tool string
	Args json.RawMessage
	// CallID is the harness's id of the call; Actor who calls (the agent,
	// through the plugin).
	CallID string
	Actor  runtime.Actor
}

// Env returns the harness's environment variable k ("" over HTTP).
func (h *Hook) Env(k string) string {
	if h.Getenv == nil {
		return ""
	}
	return h.Getenv(k)
}

// Project returns the project a call resolves against: the operator's
// ProjectDir, else the first of dirs that is set.
func (h *Hook) Project(dirs ...string) string {
	if h.ProjectDir != "" {
		return h.ProjectDir
	}
	for _, d := range dirs {
		if d != "" {
			return d
		}
	}
	return ""
}

// Runtime opens the runtime for project.
func (h *Hook) Runtime(ctx context.Context, project string, protect ...string) (*runtime.Service, error) {
	if h.Open == nil {
		return nil, errors.New("no store to decide with")
	}
	return h.Open(ctx, project, protect...)
}

// configActor is the operator, through the hook command line.
func configActor(harness string) runtime.Actor {
	return runtime.Actor{Kind: runtime.ActorHuman, Channel: "hook-config:" + harness, Name: "--default-workflow"}
}

// StartDefault starts the operator's default workflow for a session that
// has no run; it does nothing when there is no default or the session has
// a run.
func (h *Hook) StartDefault(ctx context.Context, svc *runtime.Service, harness, session string) error {
	if h.DefaultWorkflow == "" {
		return nil
	}
	if _, err := svc.Status(ctx, session); !errors.Is(err, runtime.ErrNoRun) {
		return nil
	}
	_, _, err := svc.StartDefault(ctx, session, configActor(harness))
	return err
}

// Session reads the session's run for an event that tells the agent where
// it is (a session start, a prompt). At a session start (start true) a
// session without a run first gets the operator's default workflow. It
// returns runtime.ErrNoRun when the session has no run.
func (h *Hook) Session(ctx context.Context, svc *runtime.Service, harness, session string, start bool) (*runtime.RunView, error) {
	v, err := svc.Status(ctx, session)
	if errors.Is(err, runtime.ErrNoRun) && start && h.DefaultWorkflow != "" {
		v, err = svc.Start(ctx, session, h.DefaultWorkflow, configActor(harness))
		if errors.Is(err, runtime.ErrRunActive) {
			v, err = svc.Status(ctx, session)
		}
	}
	if err == nil {
		h.keepPhase(session, v)
	}
	return v, err
}

// Record records a call's outcome. A session without a run is not an
// error. After one of statewright's control calls (control true: a
// transition, a start) it returns the run, so the adapter can tell the
// agent where it is now; otherwise, or when the run cannot be read, nil.
func (h *Hook) Record(ctx context.Context, svc *runtime.Service, res runtime.ToolResult, control bool) (*runtime.RunView, error) {
	if err := svc.RecordResult(ctx, res); err != nil && !errors.Is(err, runtime.ErrNoRun) {
		return nil, err
	}
	if !control {
		return nil, nil
	}
	v, err := svc.Status(ctx, res.Session)
	if err != nil {
		return nil, nil
	}
	h.keepPhase(res.Session, v)
	return v, nil
}

// Stopping reads the run for an event where the agent wants to stop. It
// returns nil, letting the agent stop, when the session has no run or the
// hook only audits.
func (h *Hook) Stopping(ctx context.Context, svc *runtime.Service, session string) (*runtime.RunView, error) {
	v, err := svc.Status(ctx, session)
	h.keepPhase(session, v)
	switch {
	case errors.Is(err, runtime.ErrNoRun):
		return nil, nil
	case err != nil:
		return nil, err
	case h.AuditOnly:
		return nil, nil
	}
	return v, nil
}

// NoRunNotice is the context for a session without a run: "" unless the
// operator requires a workflow, then what the agent must know and how a
// run starts (start says how, in the harness's terms).
func (h *Hook) NoRunNotice(sessionID, start string) string {
	if !h.RequireWorkflow {
		return ""
	}
	return "[statewright] No workflow run is active for this session (" + sessionID + ") and this project requires one: " +
		"every tool call is denied until a run starts (" + start + ")."
}
