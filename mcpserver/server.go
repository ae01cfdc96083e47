// Package mcpserver is statewright's MCP control server: the tools an agent
// uses to see and move its own workflow run (list workflows, start a run,
// read its state, request a transition) over the Model Context Protocol, on
// the official Go SDK.
//
// The server is a thin MCP face over package control, which holds the
// operations themselves (shared with the opencode and Pi plugins, the CLI
// and serve). It holds no run state. Every call resolves the session it
// belongs to (see "Identity and shared state" in docs/architecture.md: the harness's PreToolUse hook
// stamps the session into the call's input under StampKey) and runs the
// operation, which re-reads the run from the store. Tools that would weaken enforcement
// (pause, deactivate, force a state) never act: they record a request in the
// session's event log and tell the agent which command a human must run.
package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/control"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// Options configure a Server.
type Options struct {
	// Harness prefixes session keys ("claude-code" when empty): a stamp
	// "abc" becomes the store session "claude-code:abc".
	Harness string
	// TrustEnvSession lets a call without a stamp use EnvSession. Off by
	// default: Claude Code's CLAUDE_CODE_SESSION_ID is fixed when the server
	// is spawned and names the wrong session after /clear (and plugin
	// servers get a different one), so an unstamped call is denied unless
	// the operator knows the hook cannot stamp.
	TrustEnvSession bool
	// EnvSession is the session id from the server's environment
	// (CLAUDE_CODE_SESSION_ID), read once at start.
	EnvSession string
	// ProjectDir is the project root; workflows under
	// ProjectDir/.statewright/workflows/ are listed and may be started by a
	// bare name. Empty: only bundled templates are listed.
	ProjectDir string
	// Workflows is the runtime's workflow source, consulted for which
	// workflows an agent may start (nil: bundled templates and project
	// workflows are reported as startable; the runtime still decides).
	Workflows runtime.WorkflowSource
	// Version is reported in the MCP initialize response.
	Version string
	// Session, when set, is the store session key every call acts on,
	// fixed by the operator (`statewright mcp --session`) or by the
	// serving channel (an agent token bound to a session, a per-connection
	// session of `statewright serve`). A stamp that names another session
	// is denied; no stamp is needed.
	Session string
	// ProtocolVersions, when set, narrows the MCP protocol versions the
	// server negotiates (the gateway keeps to session-ful versions so that
	// list_changed notifications and elicitation reach the client).
	ProtocolVersions []string
	// Capabilities, when set, replaces the advertised capabilities (tools
	// without list_changed by default: the control tool set is fixed).
	Capabilities *mcp.ServerCapabilities
	// InitializedHandler, when set, runs when a client finishes initialising.
	InitializedHandler func(context.Context, *mcp.InitializedRequest)
	// GetSessionID, when set, generates MCP session ids (streamable HTTP).
	GetSessionID func() string
	// Check, when set, runs before every call; an error denies the call.
	// The CLI uses it to notice a store that was removed or replaced while
	// the server runs (the hooks would deny on it; so must the server).
	Check func(ctx context.Context) error
	// Upstreams, when set, reports the gateway's upstream servers;
	// statewright_get_status includes them.
	Upstreams func() []control.UpstreamStatus
}

// Server is the MCP control server. Build one with New and serve it with
// Run (or connect MCP() to any SDK transport).
type Server struct {
	ctl  *control.Control
	opts Options
	srv  *mcp.Server
}

// New returns a Server whose tools run package control's operations over
// rt and st (admin requests are recorded in st). rt must run on st.
func New(rt *runtime.Service, st store.Store, opts Options) (*Server, error) {
	ctl, err := control.New(rt, st, control.Options{ProjectDir: opts.ProjectDir, Workflows: opts.Workflows})
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	if opts.Harness == "" {
		opts.Harness = DefaultHarness
	}
	if !ValidHarness(opts.Harness) {
		return nil, fmt.Errorf("mcpserver: invalid harness name %q (lowercase letters, digits and '-')", opts.Harness)
	}
	if opts.Version == "" {
		opts.Version = "devel"
	}
	s := &Server{ctl: ctl, opts: opts}
	caps := opts.Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "statewright", Title: "statewright control", Version: opts.Version},
		&mcp.ServerOptions{
			Instructions: "statewright runs this session under a workflow: a state machine of phases, each allowing " +
				"certain tools. Call statewright_get_state to see the current phase, its allowed tools and the " +
				"events that lead on; call statewright_transition with one of those events when the phase's work is done.",
			// No logging capability; tool list changes are not announced
			// (the tool set is fixed).
			Capabilities:              caps,
			SupportedProtocolVersions: opts.ProtocolVersions,
			InitializedHandler:        opts.InitializedHandler,
			GetSessionID:              opts.GetSessionID,
		})
	s.addTools()
	return s, nil
}

// MCP returns the underlying SDK server, to connect to a transport.
func (s *Server) MCP() *mcp.Server { return s.srv }

// Run serves one client over t until it disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	if err := s.srv.Run(ctx, t); err != nil {
		return fmt.Errorf("mcpserver: %w", err)
	}
	return nil
}

// actor is who every call of this server acts as: the governed agent,
// through the MCP channel. The server never claims a human.
func (s *Server) actor() runtime.Actor {
	return runtime.Actor{Kind: runtime.ActorAgent, Channel: "mcp", Name: s.opts.Harness}
}

// begin admits a call: it runs Options.Check and resolves the session.
func (s *Server) begin(ctx context.Context, stamp string) (string, error) {
	key, err := s.session(stamp)
	if err != nil {
		return "", err
	}
	if s.opts.Check != nil {
		if err := s.opts.Check(ctx); err != nil {
			return "", fmt.Errorf("denied: statewright cannot trust its store, so nothing was changed (a human must look): %w", err)
		}
	}
	return key, nil
}

// session resolves the store session key of a call from its stamp.
func (s *Server) session(stamp string) (string, error) {
	if s.opts.Session != "" {
		if stamp != "" && s.opts.Harness+":"+stamp != s.opts.Session {
			return "", fmt.Errorf("denied: this call is stamped for session %q but this server serves %s; nothing was changed",
				truncate(stamp, 64), s.opts.Session)
		}
		return s.opts.Session, nil
	}
	key, _, err := resolveSession(s.opts.Harness, stamp, s.opts.TrustEnvSession, s.opts.EnvSession)
	switch {
	case errors.Is(err, ErrNoSession):
		return "", fmt.Errorf("denied: this call is not tied to a session. statewright needs the session of the "+
			"calling agent, which its %s PreToolUse hook adds to every mcp__statewright__* call as %q; "+
			"no stamp arrived, so the hook is not installed or did not run. Ask a human to install it "+
			"(`statewright init`); nothing was changed: %w", s.opts.Harness, StampKey, err)
	case err != nil:
		return "", fmt.Errorf("denied: %w; nothing was changed", err)
	}
	return key, nil
}
