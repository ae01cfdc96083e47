// Package gateway puts MCP servers behind statewright's law: it serves
// statewright's control tools (package mcpserver) together with the tools,
// prompts and resources of upstream MCP servers, lists only the tools the
// run's current phase allows, announces every change of phase with
// notifications/tools/list_changed, and re-decides every call at call time
// through the runtime, argument-aware (a filesystem server's write_file is
// decided as a Write of its path, so path scopes, edit limits and
// interrupts apply as to a native edit).
//
// The gateway holds no run state: each client session has its own
// mcp.Server (so its tool list and notifications are its own), decisions
// go to the runtime, which reads the store, and a session notices changes
// made elsewhere (a CLI approval, a hook's interrupt) by polling its run.
package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/mcpserver"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// ProtocolVersions are the MCP versions the gateway negotiates: the
// session-ful ones, in which a server can push list_changed notifications
// and elicitation requests on the session.
var ProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// DefaultPollInterval is how often a session re-reads its run to notice
// changes made by others.
const DefaultPollInterval = 250 * time.Millisecond

// Options configure a Gateway.
type Options struct {
	// Runtime decides every call; Store is the store it runs on.
	Runtime *runtime.Service
	Store   store.Store
	// Upstreams runs the upstream servers (nil: control tools only).
	Upstreams *Manager
	// Harness prefixes session keys ("claude-code" by default).
	Harness string
	// ProjectDir is the project root relative paths are resolved against.
	ProjectDir string
	// Workflows and Version are passed to the control server.
	Workflows runtime.WorkflowSource
	Version   string
	// TrustEnvSession and EnvSession: see mcpserver.Options.
	TrustEnvSession bool
	EnvSession      string
	// Check, when set, runs before every call; an error denies it.
	Check func(ctx context.Context) error
	// RequireWorkflow hides and denies upstream tools while the session
	// has no run (as the hooks' --require-workflow).
	RequireWorkflow bool
	// PollInterval is how often a session re-reads its run (default 250ms).
	PollInterval time.Duration
	// PageSize bounds tools/list pages (0: one page).
	PageSize int
	// ElicitApprovals asks the client's person, through MCP elicitation,
	// to grant a transition that needs approval, when the client supports
	// elicitation. Only the operator turns it on (a command-line flag):
	// it trusts the client to show the question to a person.
	ElicitApprovals bool
	// OnPending, when set, is told about every transition this gateway
	// parks for approval (a webhook, a desktop notification).
	OnPending func(ctx context.Context, p Pending)
	// Logger receives diagnostics (nil: discard).
	Logger *slog.Logger
	// Observer, when set, is told about every upstream call forwarded
	// (telemetry: latency and errors per upstream).
	Observer Observer
}

// Observer watches forwarded upstream calls (internal/telemetry implements
// it). It must not block.
type Observer interface {
	// UpstreamCall reports one tools/call of upstream: how long it took,
	// whether the tool answered with an error result, and the transport or
	// protocol error, if any.
	UpstreamCall(upstream string, elapsed time.Duration, toolError bool, err error)
}

// Pending describes a transition parked for approval.
type Pending struct {
	Session    string `json:"session"`
	RunID      string `json:"run_id"`
	Workflow   string `json:"workflow"`
	ApprovalID string `json:"approval_id"`
	Event      string `json:"event,omitempty"`
	From       string `json:"from"`
	To         string `json:"to"`
	Message    string `json:"message,omitempty"`
	ExpiresAt  string `json:"expires_at,omitempty"`
	Approve    string `json:"approve_with"`
}

// Gateway builds MCP servers for client sessions.
type Gateway struct {
	opts Options

	mu  sync.Mutex
	vis map[visKey][]ToolInfo // visible upstream tools per workflow, state, upstream lists

	// settles counts the results still being recorded and the fast
	// path's calls still under way (Wait).
	settles sync.WaitGroup

	// changes hands the store's changes to the sessions.
	changes changeHub

	// fastCalls counts the calls the fast path answered (Server.Transport).
	fastCalls atomic.Int64
	// workers run the fast path's calls.
	workers *workers
}

// Wait returns when every proxied call's result has been recorded (at most
// settleDelay after the last answer), and every call the fast path took
// has been answered. Call it before closing the store: a result is
// recorded after its call was answered (session.settle).
func (g *Gateway) Wait() { g.settles.Wait() }

// New returns a Gateway.
func New(opts Options) (*Gateway, error) {
	if opts.Runtime == nil || opts.Store == nil {
		return nil, errors.New("gateway: a runtime and a store are required")
	}
	if opts.Harness == "" {
		opts.Harness = mcpserver.DefaultHarness
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Gateway{opts: opts, vis: map[visKey][]ToolInfo{}, changes: changeHub{st: opts.Store}, workers: newWorkers()}, nil
}

// SessionOptions configure one client session.
type SessionOptions struct {
	// Session is the store session key the client acts on ("" : resolved
	// per call from the hook's stamp, or the environment when trusted).
	Session string
	// Actor overrides who calls are recorded as (default the agent through
	// the "mcp-gateway" channel). The gateway never claims a person here.
	Channel string
}

// session is one client session's state: only what it needs to notice
// changes (decisions always re-read the store).
type session struct {
	g     *Gateway
	id    string // names the client session's own upstream processes (sandbox.go)
	key   string
	ctl   *mcpserver.Server
	srv   *mcp.Server
	chann string

	mu       sync.Mutex
	ss       *mcp.ServerSession
	lastSig  string
	lastVis  string
	elicited map[string]bool
	stop     func()

	// Results answered but not yet recorded (settle): the session's next
	// decision carries them into its own transaction, or flush records
	// them after settleDelay. flushing is closed when the flush under way
	// is done (nil: none is).
	settleMu sync.Mutex
	pending  []runtime.ToolResult
	timer    *time.Timer
	flushing chan struct{}
}

// settleDelay is how long a result waits for the session's next decision
// to record it in the same transaction before it is recorded alone.
const settleDelay = 50 * time.Millisecond

// settle queues the results of a call that was answered: the store write
// is off the call's path. The session's next decision records them in its
// own transaction, before it decides (runtime.ToolCall.Settle), so a
// client calling tool after tool costs one store write per call; when no
// decision comes within settleDelay they are recorded alone. Either way
// they are recorded before the next decision of the session is answered,
// and Gateway.Wait waits for them at shutdown.
func (s *session) settle(rs ...runtime.ToolResult) {
	if len(rs) == 0 {
		return
	}
	s.g.settles.Add(len(rs))
	s.settleMu.Lock()
	s.pending = append(s.pending, rs...)
	if s.timer == nil {
		s.timer = time.AfterFunc(settleDelay, s.flush)
	}
	s.settleMu.Unlock()
}

// take hands the queued results to a decision, once a flush under way
// has finished. The caller records them (with its decision, or record)
// and marks them done (settled).
func (s *session) take() []runtime.ToolResult {
	s.settleMu.Lock()
	rs := s.pending
	s.pending = nil
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	fl := s.flushing
	s.settleMu.Unlock()
	if fl != nil {
		<-fl // bounded by the store's own timeouts
	}
	return rs
}

// flush records the queued results alone (no decision came in time).
func (s *session) flush() {
	s.settleMu.Lock()
	rs := s.pending
	s.pending, s.timer = nil, nil
	prev := s.flushing
	done := make(chan struct{})
	s.flushing = done
	s.settleMu.Unlock()
	if prev != nil {
		<-prev
	}
	s.record(rs)
	close(done)
	s.settleMu.Lock()
	if s.flushing == done {
		s.flushing = nil
	}
	s.settleMu.Unlock()
}

// record records results one by one, outside any decision.
func (s *session) record(rs []runtime.ToolResult) {
	for _, r := range rs {
		err := s.g.opts.Runtime.RecordResult(context.Background(), r)
		if err != nil && !errors.Is(err, runtime.ErrNoRun) {
			s.g.opts.Logger.Warn("record result", "tool", r.Call.Tool, "err", err)
		}
		s.g.settles.Done()
	}
}

// settled marks results a decision recorded.
func (s *session) settled(rs []runtime.ToolResult) {
	for range rs {
		s.g.settles.Done()
	}
}

// decide decides one call, carrying the session's queued results into the
// same transaction. If that fails, the results are recorded alone and the
// call decided again without them, so neither is lost to the other.
//
// The gateway makes each call's id up (MCP calls carry none), decides it
// once and settles it once: its calls are one-shot (runtime.ToolCall.
// OneShot), and those that reserve nothing keep no call record, so a
// retry cannot lean on one. A transaction that reports a failure may still
// have committed (PostgreSQL: the connection lost during COMMIT): the log
// decides, before anything is recorded again.
func (s *session) decide(ctx context.Context, call policy.ToolCall) (runtime.DecideResult, error) {
	tc := runtime.ToolCall{Session: s.key, Call: call, Actor: s.actor(), OneShot: true}
	rs := s.take()
	if len(rs) == 0 {
		return s.g.opts.Runtime.Decide(ctx, tc)
	}
	tc.Settle = rs
	res, err := s.g.opts.Runtime.Decide(ctx, tc)
	if err == nil {
		s.settled(rs)
		return res, nil
	}
	switch committed, lerr := s.onRecord(ctx, call.ToolUseID); {
	case lerr != nil:
		// Not known: the results are recorded again (at worst twice,
		// which counts their output twice: the strict side), and the
		// call refused.
		s.record(rs)
		return runtime.DecideResult{}, err
	case committed:
		// The results were settled and the call decided; its answer is
		// not known here, so it is refused (fail closed).
		s.settled(rs)
		return runtime.DecideResult{}, err
	}
	s.record(rs)
	tc.Settle = nil
	return s.g.opts.Runtime.Decide(ctx, tc)
}

// onRecord reports whether the log holds the decision of the call id.
func (s *session) onRecord(ctx context.Context, id string) (bool, error) {
	evs, err := s.g.opts.Store.Events(ctx, store.EventFilter{SessionKey: s.key, ToolUseID: id,
		Kinds: []store.EventKind{store.KindDecision}, Limit: 1})
	return len(evs) > 0, err
}

// sentinel is a tool registered and re-registered only to make the SDK
// send notifications/tools/list_changed; tools/list never shows it.
const sentinel = "statewright__list_changed"

// NewServer returns the MCP server for one client session.
func (g *Gateway) NewServer(so SessionOptions) (*mcp.Server, error) {
	return g.newServerWithID(so, nil)
}

// newServerWithID is NewServer with the SDK's session id generator.
func (g *Gateway) newServerWithID(so SessionOptions, sessionID func() string) (*mcp.Server, error) {
	s, err := g.newSession(so, sessionID)
	if err != nil {
		return nil, err
	}
	return s.srv, nil
}

// newSession makes one client session and its server.
func (g *Gateway) newSession(so SessionOptions, sessionID func() string) (*session, error) {
	s := &session{g: g, id: newCallID(), key: so.Session, chann: so.Channel, elicited: map[string]bool{}}
	if s.chann == "" {
		s.chann = "mcp-gateway"
	}
	if s.key == "" && g.opts.TrustEnvSession && g.opts.EnvSession != "" {
		s.key = g.opts.Harness + ":" + g.opts.EnvSession
	}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	if g.opts.Upstreams != nil {
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true}
	}
	ctl, err := mcpserver.New(g.opts.Runtime, g.opts.Store, mcpserver.Options{
		Harness: g.opts.Harness, TrustEnvSession: g.opts.TrustEnvSession, EnvSession: g.opts.EnvSession,
		ProjectDir: g.opts.ProjectDir, Workflows: g.opts.Workflows, Version: g.opts.Version, Check: g.opts.Check,
		Session: so.Session, ProtocolVersions: ProtocolVersions, Capabilities: caps, GetSessionID: sessionID,
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) { s.started(req.Session) },
		Upstreams:          upstreamStatus(g.opts.Upstreams),
	})
	if err != nil {
		return nil, err
	}
	s.ctl, s.srv = ctl, ctl.MCP()
	s.srv.AddReceivingMiddleware(s.middleware)
	return s, nil
}

// started runs when the client finished initialising: the session watches
// its run from now on, until the client goes away.
func (s *session) started(ss *mcp.ServerSession) {
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.ss = ss
	if s.stop != nil {
		s.stop()
	}
	var unsub func()
	if m := s.g.opts.Upstreams; m != nil {
		unsub = m.OnChange(func() { s.notifyToolsChanged() })
	}
	s.stop = func() {
		cancel()
		if unsub != nil {
			unsub()
		}
	}
	s.lastSig, s.lastVis = s.signature(ctx)
	s.mu.Unlock()
	go func() {
		ss.Wait()
		s.mu.Lock()
		if s.stop != nil {
			s.stop()
		}
		s.mu.Unlock()
		if m := s.g.opts.Upstreams; m != nil {
			m.stopSession(s.id, nil, true) // its upstream processes end with it
		}
	}()
	go s.watch(ctx)
}

// watch announces a changed tool list on every change of phase (and of
// the visible tools). A store that pushes changes (store.Watcher: LISTEN/
// NOTIFY on PostgreSQL, so an approval granted through another replica)
// wakes it at once, through the gateway's one subscription (changeHub),
// which hands each session its own run's changes only; the poll stays as
// the fallback.
func (s *session) watch(ctx context.Context) {
	var wake <-chan struct{}
	in, ok := s.g.changes.subscribe(s.key)
	if ok {
		defer s.g.changes.unsubscribe(in)
		wake = in.wake
	}
	t := time.NewTicker(s.g.opts.PollInterval)
	defer t.Stop()
	var phase string // the last change's phase
	// unread: the run may have been written since the session last read
	// it. While the store reports its writes, a poll reads the run only
	// then, or after idleReadEvery polls without a read: a run no change
	// named was not written, so nothing the tool list depends on moved
	// (the upstreams' lists are told apart, by Manager.OnChange), but a
	// store may lose a hint (PostgreSQL sends a write that leaves the
	// phase's names as they were after its commit, and a replica that
	// dies then loses it). At first, and without a watcher, every poll
	// reads.
	unread, idle := true, 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			idle++
			if unread || wake == nil || idle >= idleReadEvery {
				unread, idle = false, 0
				s.poke(ctx)
			}
		case <-wake:
			cs, ended := in.take()
			if ended {
				wake = nil
			}
			for _, c := range cs {
				switch {
				case c.Resync():
					phase = ""
					unread, idle = false, 0
					s.poke(ctx)
				case c.SessionKey == s.key:
					// Every decision writes the run; one that left its
					// run, state, status and pending approval as they
					// were (it moved counters) changes no tool list, so
					// the run is not read again now. The next poll reads
					// it, for what a change cannot show (a sub-workflow
					// entered in a state of the same name).
					p := changePhase(c)
					if p != phase {
						phase = p
						unread, idle = false, 0
						s.poke(ctx)
					} else {
						unread = true
					}
				}
			}
		}
	}
}

// idleReadEvery bounds how many polls a watching session lets pass
// without reading its run (20 polls: 5 s at the default interval).
const idleReadEvery = 20

// changePhase names the phase a store change shows: its run, state,
// status and pending approval.
func changePhase(c store.Change) string {
	return c.RunID + "\x00" + c.State + "\x00" + string(c.Status) + "\x00" + c.ApprovalID
}

// poke re-reads the run and notifies when its phase or visible tools changed.
func (s *session) poke(ctx context.Context) {
	sig, vis := s.signature(ctx)
	s.mu.Lock()
	changed := sig != s.lastSig || vis != s.lastVis
	s.lastSig, s.lastVis = sig, vis
	s.mu.Unlock()
	if changed {
		s.stopUpstreamsOfOtherPhases(ctx)
		s.notifyToolsChanged()
	}
}

// stopUpstreamsOfOtherPhases stops the session's upstream processes that
// run under the profile of a phase the run has left (docs/sandbox.md): with
// everything they started, as soon as the change is seen, not at the next
// call, which spawns one under the new phase's profile.
func (s *session) stopUpstreamsOfOtherPhases(ctx context.Context) {
	if m := s.g.opts.Upstreams; m != nil {
		m.stopOutOfPhase(ctx, s.id, s.key)
	}
}

// signature names the run's phase (run, state, status, pending approval)
// and the visible upstream tools.
func (s *session) signature(ctx context.Context) (string, string) {
	if s.key == "" {
		return "", ""
	}
	run, err := s.g.opts.Store.LiveRun(ctx, s.key)
	var sig string
	switch {
	case errors.Is(err, store.ErrNotFound):
		sig = "dormant"
	case err != nil:
		sig = "error"
	default:
		sig = run.ID + "/" + run.State + "/" + string(run.Status)
		if p, err := s.g.opts.Runtime.Prepared(run); err == nil {
			sig += "/" + p.Workflow // an invoked sub-workflow is another phase
		}
		if run.PendingApproval != nil {
			sig += "/" + run.PendingApproval.ID
		}
	}
	vis := s.visibleFor(run, err)
	names := make([]string, 0, len(vis))
	for _, t := range vis {
		names = append(names, t.Tool.Name)
	}
	return sig, strings.Join(names, ",")
}

// notifyToolsChanged makes the SDK send notifications/tools/list_changed to
// this session (re-adding the hidden sentinel counts as a change).
func (s *session) notifyToolsChanged() {
	s.srv.AddTool(&mcp.Tool{Name: sentinel, Description: "internal", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("unknown tool %q", sentinel)
		})
}

// middleware routes the methods the gateway answers itself.
func (s *session) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			return s.listTools(ctx, next, req.(*mcp.ListToolsRequest))
		case "tools/call":
			r := req.(*mcp.CallToolRequest)
			if r.Params == nil {
				break
			}
			if r.Params.Name == sentinel {
				return nil, fmt.Errorf("unknown tool %q", sentinel)
			}
			if m := s.g.opts.Upstreams; m != nil {
				if route, ok := m.Lookup(r.Params.Name); ok {
					return s.callUpstream(ctx, r, route), nil
				}
			}
			// A control tool decides through the control server: the
			// results it must see are recorded first.
			s.record(s.take())
			res, err := next(ctx, method, req)
			if err == nil && isMovingControl(r.Params.Name) {
				res = s.afterControl(ctx, r, res)
			}
			return res, err
		}
		if m := s.g.opts.Upstreams; m != nil {
			switch method {
			case "prompts/list":
				return &mcp.ListPromptsResult{Prompts: nonNil(m.Prompts())}, nil
			case "prompts/get":
				r := req.(*mcp.GetPromptRequest)
				return m.GetPrompt(ctx, r.Params.Name, r.Params.Arguments)
			case "resources/list":
				return &mcp.ListResourcesResult{Resources: nonNil(m.Resources())}, nil
			case "resources/templates/list":
				return &mcp.ListResourceTemplatesResult{ResourceTemplates: nonNil(m.ResourceTemplates())}, nil
			case "resources/read":
				return s.readResource(ctx, req.(*mcp.ReadResourceRequest))
			}
		}
		return next(ctx, method, req)
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// upstreamStatus is m's Status, for statewright_get_status (nil without
// upstreams).
func upstreamStatus(m *Manager) func() []UpstreamStatus {
	if m == nil {
		return nil
	}
	return m.Status
}

// isMovingControl reports whether a control tool may change the run.
func isMovingControl(name string) bool {
	return name == mcpserver.ToolTransition || name == mcpserver.ToolStart || name == mcpserver.ToolLoadWorkflow
}

// listTools answers tools/list: the control tools, then the upstream tools
// the current phase allows, paginated.
func (s *session) listTools(ctx context.Context, next mcp.MethodHandler, req *mcp.ListToolsRequest) (mcp.Result, error) {
	var all []*mcp.Tool
	cursor := ""
	for {
		res, err := next(ctx, "tools/list", &mcp.ListToolsRequest{Session: req.Session, Params: &mcp.ListToolsParams{Cursor: cursor}})
		if err != nil {
			return nil, err
		}
		lr := res.(*mcp.ListToolsResult)
		for _, t := range lr.Tools {
			if t.Name != sentinel {
				all = append(all, t)
			}
		}
		if lr.NextCursor == "" {
			break
		}
		cursor = lr.NextCursor
	}
	for _, t := range s.visible(ctx) {
		all = append(all, t.Tool)
	}
	start := 0
	if req.Params != nil && req.Params.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(req.Params.Cursor)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 || n > len(all) {
			return nil, fmt.Errorf("invalid cursor %q", req.Params.Cursor)
		}
		start = n
	}
	end := len(all)
	out := &mcp.ListToolsResult{}
	if ps := s.g.opts.PageSize; ps > 0 && start+ps < end {
		end = start + ps
		out.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
	}
	out.Tools = append([]*mcp.Tool{}, all[start:end]...)
	return out, nil
}

// hiddenRules are the rules by which a phase does not offer a tool at all
// (as opposed to refusing one call's arguments).
var hiddenRules = []policy.Rule{policy.RuleToolNotAllowed, policy.RuleToolCapability, policy.RuleDisallowedTool, policy.RuleFinalState,
	policy.RuleUnknownState, policy.RuleNoWorkflow}

// visible returns the upstream tools the session's current phase offers.
// With no session, or no run, every tool is listed (calls are still
// decided one by one); a store error lists none.
func (s *session) visible(ctx context.Context) []ToolInfo {
	m := s.g.opts.Upstreams
	if m == nil {
		return nil
	}
	if s.key == "" {
		return m.Tools()
	}
	run, err := s.g.opts.Store.LiveRun(ctx, s.key)
	return s.visibleFor(run, err)
}

// visKey names what the visible tools depend on: the workflow, the state
// and the upstreams' lists.
type visKey struct {
	law   *runtime.Prepared // the workflow in force (the runtime caches it per snapshot)
	state string
	gen   int64
}

// maxVisCache bounds the cache of visible tool lists.
const maxVisCache = 256

// visibleFor is visible for a run already read (err from the read). The
// answer is a pure function of the workflow, the state and the upstream
// lists, so it is cached on those.
func (s *session) visibleFor(run *store.Run, err error) []ToolInfo {
	m := s.g.opts.Upstreams
	if m == nil {
		return nil
	}
	if errors.Is(err, store.ErrNotFound) {
		if s.g.opts.RequireWorkflow {
			return nil
		}
		return m.Tools()
	}
	if err != nil {
		return nil
	}
	prep, err := s.g.opts.Runtime.Prepared(run)
	if err != nil {
		return nil
	}
	key := visKey{law: prep, state: run.State, gen: m.Generation()}
	s.g.mu.Lock()
	v, ok := s.g.vis[key]
	s.g.mu.Unlock()
	if ok {
		return v
	}
	law := prep.Law
	tools := m.Tools()
	rs := &policy.RunState{Active: true, State: run.State}
	probe := filepath.Join(s.g.opts.ProjectDir, "statewright-gateway-probe")
	out := tools[:0:0]
	for _, t := range tools {
		calls, err := MapCall(t.Route.Upstream, t.Tool.Name, t.Route.Name, probeArgs(t.Route.Upstream, t.Route.Name, probe))
		if err != nil {
			continue
		}
		hidden := false
		for _, c := range calls {
			d := law.Decide(rs, &policy.ToolCall{Harness: policy.ClaudeCode, Tool: c.Tool, Input: c.Input,
				Cwd: s.g.opts.ProjectDir, ProjectDir: s.g.opts.ProjectDir, Hints: m.hintsFor(c.Tool, t.Tool.Name)})
			if d.Verdict != policy.Allow && slices.Contains(hiddenRules, d.Rule) {
				hidden = true
				break
			}
		}
		if !hidden {
			out = append(out, t)
		}
	}
	s.g.mu.Lock()
	if len(s.g.vis) >= maxVisCache {
		clear(s.g.vis)
	}
	s.g.vis[key] = out
	s.g.mu.Unlock()
	return out
}

// errorResult is a tool result that tells the model why nothing happened.
func errorResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// lastCallTick is the time part of the last call id this process made.
var lastCallTick atomic.Int64

// newCallID returns an id for one proxied call (MCP has no tool_use_id):
// decisions and results are recorded under it. The id is the time in
// nanoseconds (strictly increasing within the process), then 6 random
// bytes, in hex: a session's call records are keyed by (session, id), so
// ids in time order put each call's records beside the previous call's at
// the end of the session's range, on a page the last transaction already
// wrote, instead of at a random place among all the session's calls (with
// 12 random bytes, a decision carrying the previous result wrote about a
// quarter more WAL bytes and cost a quarter more CPU).
func newCallID() string {
	now := time.Now().UnixNano()
	for {
		last := lastCallTick.Load()
		t := max(now, last+1)
		if lastCallTick.CompareAndSwap(last, t) {
			now = t
			break
		}
	}
	var b [14]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now))
	rand.Read(b[8:])
	return "gw_" + hex.EncodeToString(b[:])
}

// actor is who proxied calls are recorded as.
func (s *session) actor() runtime.Actor {
	return runtime.Actor{Kind: runtime.ActorAgent, Channel: s.chann, Name: s.g.opts.Harness}
}

// maxRecordedOutput bounds the tool output recorded with a result.
const maxRecordedOutput = 64 << 10

// callUpstream decides a call of an upstream tool, forwards it when every
// decision allows it, and records the result. It always answers with a
// tool result: a deny or an upstream failure is an error result that says
// why.
func (s *session) callUpstream(ctx context.Context, r *mcp.CallToolRequest, route Route) *mcp.CallToolResult {
	name := r.Params.Name
	if s.key == "" {
		return errorResult("statewright denied %s: this gateway session is not tied to a statewright session, so the call cannot be "+
			"checked against a workflow. Start the gateway with --session ID (or behind `statewright serve` with a session), "+
			"or --trust-env-session where the harness sets the session in the environment. Nothing was done.", name)
	}
	if c := s.g.opts.Check; c != nil {
		if err := c(ctx); err != nil {
			return errorResult("statewright denied %s: statewright cannot trust its store, so nothing was done: %v", name, err)
		}
	}
	calls, err := MapCall(route.Upstream, name, route.Name, r.Params.Arguments)
	if err != nil {
		return errorResult("statewright denied %s: %v. Nothing was done.", name, err)
	}
	type decided struct {
		call policy.ToolCall
		res  runtime.DecideResult
	}
	var allowed []decided
	state := "" // the run's state at the last decision: the upstream's process runs under its profile
	release := func(failed bool, output json.RawMessage) {
		for _, d := range allowed {
			s.settle(runtime.ToolResult{Session: s.key, ToolUseID: d.call.ToolUseID, Call: d.call, Decided: &d.res,
				Failed: failed, Output: output, Actor: s.actor()})
		}
	}
	for _, c := range calls {
		// Relative paths resolved where the upstream resolves them.
		call := policy.ToolCall{Harness: policy.ClaudeCode, Tool: c.Tool, Input: c.Input, Cwd: s.g.opts.Upstreams.workDir(route.Upstream, s.g.opts.ProjectDir),
			ProjectDir: s.g.opts.ProjectDir, ToolUseID: newCallID(), Hints: s.g.opts.Upstreams.hintsFor(c.Tool, name)}
		res, err := s.decide(ctx, call)
		if err != nil {
			release(true, nil)
			return errorResult("statewright denied %s: the decision failed, so the call is refused (statewright fails closed): %v", name, err)
		}
		if res.Verdict != policy.Allow && res.Enforced {
			release(true, nil)
			reason := res.Reason
			if res.Verdict == policy.Ask {
				reason += " (the gateway has no person to ask for a single call, so this is a deny)"
			}
			return errorResult("statewright denied %s (decided as %s): %s", name, res.Tool, reason)
		}
		allowed = append(allowed, decided{call: call, res: res})
		state = res.State
	}
	var token any
	if r.Params != nil {
		token = r.Params.GetProgressToken()
	}
	start := time.Now()
	res, note, err := s.g.opts.Upstreams.callFor(ctx, s.id, s.key, state, route, r.Params.Arguments, r.Session, token)
	if o := s.g.opts.Observer; o != nil {
		o.UpstreamCall(route.Upstream.Name, time.Since(start), err == nil && res.IsError, err)
	}
	if err != nil {
		release(true, nil)
		return errorResult("statewright gateway: %s failed: %v", name, err)
	}
	out, _ := json.Marshal(res.Content)
	if len(out) > maxRecordedOutput {
		out = nil
	}
	// Recorded after the answer; a change of phase it makes (an
	// interrupt) reaches the client through the store's Watch.
	release(res.IsError, out)
	if note != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: note})
	}
	return res
}

// readResource decides a resources/read as a read (Claude Code's
// ReadMcpResourceTool) and forwards it.
func (s *session) readResource(ctx context.Context, r *mcp.ReadResourceRequest) (mcp.Result, error) {
	if s.key == "" {
		return nil, errors.New("statewright denied resources/read: this gateway session is not tied to a statewright session")
	}
	in, _ := json.Marshal(map[string]any{"uri": r.Params.URI})
	call := policy.ToolCall{Harness: policy.ClaudeCode, Tool: "ReadMcpResourceTool", Input: in, Cwd: s.g.opts.ProjectDir,
		ProjectDir: s.g.opts.ProjectDir, ToolUseID: newCallID()}
	d, err := s.decide(ctx, call)
	if err != nil {
		return nil, fmt.Errorf("statewright denied resources/read (fails closed): %w", err)
	}
	if d.Verdict != policy.Allow && d.Enforced {
		return nil, fmt.Errorf("statewright denied resources/read of %s: %s", r.Params.URI, d.Reason)
	}
	res, _, err := s.g.opts.Upstreams.ReadResource(ctx, r.Params.URI)
	failed := err != nil
	s.settle(runtime.ToolResult{Session: s.key, ToolUseID: call.ToolUseID, Call: call, Decided: &d, Failed: failed, Actor: s.actor()})
	if err != nil {
		return nil, err
	}
	return res, nil
}
