package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/control"
	"github.com/statewright-go/statewright/internal/mcpio"
	"github.com/statewright-go/statewright/policy"
)

// Route is where a namespaced tool or prompt goes: an upstream and its own
// name there.
type Route struct {
	Upstream *Upstream
	Name     string
}

// Manager runs the upstream MCP servers: it connects to each, lists their
// tools, prompts and resources (every page), forwards calls with a
// timeout, forwards progress back to the caller, and restarts an upstream
// whose connection ended. It is shared by every client session.
type Manager struct {
	cfg    *Config
	logger *slog.Logger
	// Dir is the working directory of stdio upstreams without their own.
	dir string

	ups []*upstream

	mu        sync.RWMutex
	tools     map[string]toolEntry // namespaced name → entry
	toolOrder []string
	prompts   map[string]promptEntry
	resources map[string]*upstream // resource URI → upstream

	listeners sync.Map // id → func(): told when the upstream lists change
	nextID    atomic.Int64
	progress  sync.Map // forwarded token (string) → progressTarget
	nextToken atomic.Int64
	nextCall  atomic.Int64 // ids of the calls posted to HTTP upstreams (postCall)
	posted    atomic.Int64 // calls answered through postCall
	drainsCut atomic.Int64 // answers' streams postCall cut (drainStream)
	// sdkCalls sends every tools/call through the SDK's client (tests
	// compare the two).
	sdkCalls    bool
	closed      atomic.Bool
	restartBase time.Duration
	gen         atomic.Int64 // bumped whenever the tables change
	// hints are the trusted tools' annotations (SetHints), by namespaced
	// name; read-only after Start.
	hints map[string]policy.ToolHints

	// sb runs stdio upstreams under the OS sandbox (SetSandbox; nil: no).
	sb *Sandbox
	// sessions are the client sessions' own upstream processes, under
	// the sandbox (sandbox.go).
	smu      sync.Mutex
	sessions map[string]*sessionUpstreams
}

type toolEntry struct {
	tool  *mcp.Tool // namespaced copy
	route Route
}

type promptEntry struct {
	prompt *mcp.Prompt // namespaced copy
	route  Route
}

// progressTarget is a client request whose progress an upstream reports:
// only cs, the upstream session its call went to, may report it (the
// gateway's tokens are sequential: another upstream could guess them).
type progressTarget struct {
	ss    *mcp.ServerSession
	token any
	cs    *mcp.ClientSession
}

// upstream is one running upstream.
type upstream struct {
	cfg    *Upstream
	prefix string
	m      *Manager

	// http carries an HTTP upstream's requests, across restarts: its own
	// pool, so that concurrent calls keep their connections (nil for a
	// stdio upstream).
	http *http.Transport

	mu sync.Mutex
	cs *mcp.ClientSession
	// hc is the HTTP client of cs, an HTTP upstream's session (postCall).
	hc *http.Client
	// lingers: the upstream keeps a call's stream open after the answer
	// (postConn.drainStream).
	lingers   atomic.Bool
	up        bool
	lastErr   error
	stderr    *tailBuffer
	restarts  int
	tools     []*mcp.Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

// NewManager returns a manager for cfg's upstreams; Start connects them.
// dir is the working directory of stdio upstreams that name none.
func NewManager(cfg *Config, dir string, logger *slog.Logger) *Manager {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := &Manager{cfg: cfg, dir: dir, logger: logger, tools: map[string]toolEntry{}, prompts: map[string]promptEntry{},
		resources: map[string]*upstream{}, restartBase: time.Second}
	for i := range cfg.Upstreams {
		u := &cfg.Upstreams[i]
		up := &upstream{cfg: u, prefix: cfg.Prefix(u), m: m, stderr: newTail(4096)}
		if u.URL != "" {
			up.http = newUpstreamTransport()
		}
		m.ups = append(m.ups, up)
	}
	return m
}

// SetHints gives the manager the annotations snapshotted when its
// configuration was trusted (TrustFile.Hints); the law reads them for the
// tools decided by their namespaced name. Call it before Start.
func (m *Manager) SetHints(h map[string]policy.ToolHints) { m.hints = h }

// Hints returns the trusted annotations of a namespaced tool (nil: none).
func (m *Manager) Hints(name string) *policy.ToolHints {
	if h, ok := m.hints[name]; ok {
		return &h
	}
	return nil
}

// Config returns the configuration the manager runs.
func (m *Manager) Config() *Config { return m.cfg }

// Start connects every upstream (concurrently) and lists its features. It
// fails when any upstream cannot be started, or two upstreams offer the
// same namespaced tool: the operator must fix the configuration.
func (m *Manager) Start(ctx context.Context) error {
	errs := make([]error, len(m.ups))
	var wg sync.WaitGroup
	for i, u := range m.ups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = u.connect(ctx)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		m.Close()
		return err
	}
	if err := m.rebuild(true); err != nil {
		m.Close()
		return err
	}
	return nil
}

// Close stops every upstream.
func (m *Manager) Close() {
	if m.closed.Swap(true) {
		return
	}
	m.smu.Lock()
	ids := slices.Collect(maps.Keys(m.sessions))
	m.smu.Unlock()
	for _, id := range ids {
		m.stopSession(id, nil, true)
	}
	for _, u := range m.ups {
		u.mu.Lock()
		cs := u.cs
		u.cs, u.up = nil, false
		u.mu.Unlock()
		if cs != nil {
			cs.Close()
		}
		if u.http != nil {
			u.http.CloseIdleConnections()
		}
	}
}

// OnChange registers fn to run whenever the upstreams' tool, prompt or
// resource lists change (an upstream restarted or announced a change). The
// returned func unregisters it.
func (m *Manager) OnChange(fn func()) (cancel func()) {
	id := m.nextID.Add(1)
	m.listeners.Store(id, fn)
	return func() { m.listeners.Delete(id) }
}

func (m *Manager) changed() {
	m.listeners.Range(func(_, v any) bool {
		v.(func())()
		return true
	})
}

// Tools returns the namespaced tools, in a stable order (upstream order,
// then each upstream's order).
func (m *Manager) Tools() []ToolInfo {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]ToolInfo, 0, len(m.toolOrder))
	for _, n := range m.toolOrder {
		e := m.tools[n]
		out = append(out, ToolInfo{Tool: e.tool, Route: e.route})
	}
	return out
}

// ToolInfo is one namespaced tool and where it goes.
type ToolInfo struct {
	Tool  *mcp.Tool
	Route Route
}

// Lookup returns the route of a namespaced tool.
func (m *Manager) Lookup(name string) (Route, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.tools[name]
	return e.route, ok
}

// Prompts returns the namespaced prompts, sorted by name.
func (m *Manager) Prompts() []*mcp.Prompt {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*mcp.Prompt, 0, len(m.prompts))
	for _, e := range m.prompts {
		out = append(out, e.prompt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Resources returns every upstream's resources (URIs unchanged), in
// upstream order.
func (m *Manager) Resources() []*mcp.Resource {
	var out []*mcp.Resource
	for _, u := range m.ups {
		u.mu.Lock()
		out = append(out, u.resources...)
		u.mu.Unlock()
	}
	return out
}

// ResourceTemplates returns every upstream's resource templates.
func (m *Manager) ResourceTemplates() []*mcp.ResourceTemplate {
	var out []*mcp.ResourceTemplate
	for _, u := range m.ups {
		u.mu.Lock()
		out = append(out, u.templates...)
		u.mu.Unlock()
	}
	return out
}

// rebuild recomputes the namespaced tables from the upstreams' lists.
// strict reports collisions as errors; otherwise the first upstream keeps
// the name and the collision is logged.
func (m *Manager) rebuild(strict bool) error {
	tools := map[string]toolEntry{}
	var order []string
	prompts := map[string]promptEntry{}
	resources := map[string]*upstream{}
	var errs []error
	for _, u := range m.ups {
		u.mu.Lock()
		for _, t := range u.tools {
			name := u.prefix + t.Name
			// A name the harness has would be decided as its tool, the
			// law reading the arguments as that tool's (policy.HarnessTool).
			if prev, dup := tools[name]; dup || strings.HasPrefix(name, "statewright_") || policy.HarnessTool(policy.ClaudeCode, name) {
				err := fmt.Errorf("gateway: tool %q of upstream %q collides with %s; give the upstream another namespace",
					name, u.cfg.Name, collider(prev, name))
				errs = append(errs, err)
				continue
			}
			nt := *t
			nt.Name = name
			if nt.Title == "" {
				nt.Title = t.Name
			}
			tools[name] = toolEntry{tool: &nt, route: Route{Upstream: u.cfg, Name: t.Name}}
			order = append(order, name)
		}
		for _, p := range u.prompts {
			np := *p
			np.Name = u.prefix + p.Name
			if _, dup := prompts[np.Name]; !dup {
				prompts[np.Name] = promptEntry{prompt: &np, route: Route{Upstream: u.cfg, Name: p.Name}}
			}
		}
		for _, r := range u.resources {
			if _, dup := resources[r.URI]; !dup {
				resources[r.URI] = u
			}
		}
		u.mu.Unlock()
	}
	if len(errs) > 0 {
		if strict {
			return errors.Join(errs...)
		}
		m.logger.Warn("tool name collisions", "err", errors.Join(errs...))
	}
	m.mu.Lock()
	m.tools, m.toolOrder, m.prompts, m.resources = tools, order, prompts, resources
	m.mu.Unlock()
	m.gen.Add(1)
	return nil
}

// Generation changes whenever the upstreams' lists change.
func (m *Manager) Generation() int64 { return m.gen.Load() }

func collider(prev toolEntry, name string) string {
	if prev.route.Upstream != nil {
		return fmt.Sprintf("upstream %q's", prev.route.Upstream.Name)
	}
	if !strings.HasPrefix(name, "statewright_") {
		return "a tool of the harness (the workflow's law would decide it as the harness's own, reading its arguments as that tool's)"
	}
	return "statewright's own control tools (statewright_*)"
}

// transport builds the upstream's transport, and an HTTP upstream's
// client (nil for a stdio upstream).
func (u *upstream) transport() (mcp.Transport, *http.Client, error) {
	c := u.cfg
	if c.URL != "" {
		hdr := http.Header{}
		for k, v := range c.Headers {
			hdr.Set(k, expandEnv(v))
		}
		hc := &http.Client{Transport: headerTransport{hdr: hdr, next: u.http}, CheckRedirect: sameOrigin}
		// MaxEventSize set: the SDK's streamable client (v1.8.0) reads its
		// 0 as no bound at all, not as its documented default.
		return &mcp.StreamableClientTransport{Endpoint: c.URL, HTTPClient: hc, MaxEventSize: maxEventSize}, hc, nil
	}
	if u.m.sb.active() {
		// The gateway's own process lists and serves prompts and
		// resources: read-only, the secrets hidden (ListingProfile).
		cmd, _, err := u.sandboxedCommand(u.m.sb.Listing)
		if err != nil {
			return nil, nil, err
		}
		cmd.Stderr = u.stderr
		return &mcpio.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil, nil
	}
	cmd := exec.Command(c.Command, c.Args...)
	cmd.Env = os.Environ()
	keys := slices.Sorted(maps.Keys(c.Env))
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+expandEnv(c.Env[k]))
	}
	cmd.Dir = c.Dir
	if cmd.Dir == "" {
		cmd.Dir = u.m.dir
	}
	cmd.Stderr = u.stderr
	return &mcpio.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil, nil
}

// maxIdlePerUpstream is how many idle connections to one HTTP upstream
// the gateway keeps. Every client session's calls to an upstream share one
// MCP session with it, each call a POST of its own, so as many calls as
// are under way at once need a connection each; net/http's default keeps
// 2 and closes the rest after each answer, so concurrent calls dialed a
// new connection (and left one in TIME_WAIT) almost every time.
const maxIdlePerUpstream = 128

// newUpstreamTransport returns the HTTP transport of one upstream:
// http.DefaultTransport's settings with room for concurrent calls.
func newUpstreamTransport() *http.Transport {
	t := &http.Transport{Proxy: http.ProxyFromEnvironment}
	if d, ok := http.DefaultTransport.(*http.Transport); ok {
		t = d.Clone()
	}
	t.MaxIdleConns = maxIdlePerUpstream
	t.MaxIdleConnsPerHost = maxIdlePerUpstream
	return t
}

// sameOrigin is an HTTP upstream's redirect policy: a redirect to another
// origin (scheme, host or port) is refused, since headerTransport would
// send it the upstream's configured headers (its credentials) and the
// request carries the MCP session's id; within the origin, net/http's
// default of at most 10 applies.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if o := via[0].URL; req.URL.Scheme != o.Scheme || req.URL.Host != o.Host {
		return fmt.Errorf("refused a redirect from %s://%s to another origin, %s://%s", o.Scheme, o.Host, req.URL.Scheme, req.URL.Host)
	}
	return nil
}

// headerTransport adds fixed headers to every request and sends it with
// next.
type headerTransport struct {
	hdr  http.Header
	next http.RoundTripper
}

// RoundTrip adds the headers and sends the request. A JSON body in the
// response is bounded to maxEventSize, one event's bound on a stream (the
// SDK's client and postCall read a JSON answer whole).
func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.hdr) != 0 {
		r = r.Clone(r.Context())
		for k, v := range h.hdr {
			r.Header[k] = v
		}
	}
	resp, err := h.next.RoundTrip(r)
	if err == nil && mediaType(resp.Header.Get("Content-Type")) == "application/json" {
		resp.Body = &boundedBody{ReadCloser: resp.Body, left: maxEventSize}
	}
	return resp, err
}

// boundedBody is a response body that fails once more than left bytes
// are read from it.
type boundedBody struct {
	io.ReadCloser
	left int64
}

// Read reads on, failing past the bound.
func (b *boundedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.left -= int64(n); b.left < 0 {
		return n, fmt.Errorf("a JSON body of more than %d bytes", maxEventSize)
	}
	return n, err
}

// connect starts the upstream and lists its features.
func (u *upstream) connect(ctx context.Context) error {
	t, hc, err := u.transport()
	if err != nil {
		return err
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "statewright-gateway", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: u.m.forwardProgress,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			go u.refresh(context.Background())
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			go u.refresh(context.Background())
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			go u.refresh(context.Background())
		},
	})
	cctx, cancel := context.WithTimeout(ctx, time.Duration(u.cfg.Timeout))
	defer cancel()
	cs, err := cl.Connect(cctx, t, nil)
	if err != nil {
		return fmt.Errorf("gateway: start upstream %q: %w%s", u.cfg.Name, err, u.stderrNote())
	}
	if err := u.list(cctx, cs); err != nil {
		cs.Close()
		return fmt.Errorf("gateway: list upstream %q: %w%s", u.cfg.Name, err, u.stderrNote())
	}
	u.mu.Lock()
	if u.m.closed.Load() {
		// Close ran during this (re)start and took u.cs before it was
		// set (Close marks the manager closed before it locks u.mu):
		// this session is no one's to close but ours.
		u.mu.Unlock()
		cs.Close()
		return fmt.Errorf("gateway: upstream %q: the gateway is closing", u.cfg.Name)
	}
	u.cs, u.hc, u.up, u.lastErr = cs, hc, true, nil
	u.mu.Unlock()
	go u.watch(cs)
	return nil
}

// list reads every page of the upstream's tools, prompts, resources and
// resource templates (the ones its capabilities announce).
func (u *upstream) list(ctx context.Context, cs *mcp.ClientSession) error {
	caps := &mcp.ServerCapabilities{}
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	var tools []*mcp.Tool
	var prompts []*mcp.Prompt
	var resources []*mcp.Resource
	var templates []*mcp.ResourceTemplate
	if caps.Tools != nil {
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return fmt.Errorf("tools/list: %w", err)
			}
			tools = append(tools, t)
		}
	}
	if caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return fmt.Errorf("prompts/list: %w", err)
			}
			prompts = append(prompts, p)
		}
	}
	if caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return fmt.Errorf("resources/list: %w", err)
			}
			resources = append(resources, r)
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return fmt.Errorf("resources/templates/list: %w", err)
			}
			templates = append(templates, r)
		}
	}
	u.mu.Lock()
	u.tools, u.prompts, u.resources, u.templates = tools, prompts, resources, templates
	u.mu.Unlock()
	return nil
}

// refresh re-lists after the upstream announced a change.
func (u *upstream) refresh(ctx context.Context) {
	u.mu.Lock()
	cs := u.cs
	u.mu.Unlock()
	if cs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(u.cfg.Timeout))
	defer cancel()
	if err := u.list(ctx, cs); err != nil {
		u.m.logger.Warn("refresh upstream lists", "upstream", u.cfg.Name, "err", err)
		return
	}
	if u.m.rebuild(false) == nil {
		u.m.changed()
	}
}

// watch waits for the connection to end and restarts the upstream, with
// backoff, unless the manager is closing.
func (u *upstream) watch(cs *mcp.ClientSession) {
	err := cs.Wait()
	if u.m.closed.Load() {
		return
	}
	u.mu.Lock()
	if u.cs != cs {
		u.mu.Unlock()
		return
	}
	u.up = false
	u.lastErr = fmt.Errorf("the upstream's connection ended (%v)%s", err, u.stderrNoteLocked())
	u.mu.Unlock()
	u.m.logger.Warn("upstream stopped; restarting", "upstream", u.cfg.Name, "err", err)
	delay := u.m.restartBase
	for !u.m.closed.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(u.cfg.Timeout))
		err := u.connect(ctx)
		cancel()
		if err == nil {
			u.mu.Lock()
			u.restarts++
			u.mu.Unlock()
			if u.m.rebuild(false) == nil {
				u.m.changed()
			}
			return
		}
		u.mu.Lock()
		u.lastErr = err
		u.mu.Unlock()
		u.m.logger.Warn("upstream restart failed", "upstream", u.cfg.Name, "err", err, "retry_in", delay)
		time.Sleep(delay)
		delay = min(delay*2, 30*time.Second)
	}
}

// session returns the live connection, or an error saying why there is none.
func (u *upstream) session() (*mcp.ClientSession, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cs == nil || !u.up {
		why := "it is not running"
		if u.lastErr != nil {
			why = u.lastErr.Error()
		}
		return nil, fmt.Errorf("upstream %q is unavailable (%s); statewright is restarting it, try again shortly", u.cfg.Name, why)
	}
	return u.cs, nil
}

func (m *Manager) upstreamOf(cfg *Upstream) *upstream {
	for _, u := range m.ups {
		if u.cfg == cfg {
			return u
		}
	}
	return nil
}

// Call forwards a tools/call to the route's upstream, within its timeout.
// ss and progressToken, when set, receive the upstream's progress
// notifications. Cancelling ctx cancels the upstream request.
func (m *Manager) Call(ctx context.Context, r Route, args json.RawMessage, ss *mcp.ServerSession, progressToken any) (*mcp.CallToolResult, error) {
	u := m.upstreamOf(r.Upstream)
	if u == nil {
		return nil, fmt.Errorf("no upstream %q", r.Upstream.Name)
	}
	cs, err := u.session()
	if err != nil {
		return nil, err
	}
	return m.callOn(ctx, u, cs, r, args, ss, progressToken)
}

// callFor is Call for a call of the store session decided in state, from
// the client session id: under the sandbox, a stdio upstream's call goes to
// the client session's own process of it, spawned under the profile of
// that phase (sessionClient); note then says when that process replaced
// one of an earlier phase.
func (m *Manager) callFor(ctx context.Context, id, session, state string, r Route, args json.RawMessage, ss *mcp.ServerSession, progressToken any) (res *mcp.CallToolResult, note string, err error) {
	u := m.upstreamOf(r.Upstream)
	if u == nil {
		return nil, "", fmt.Errorf("no upstream %q", r.Upstream.Name)
	}
	if !m.sb.active() || u.http != nil {
		res, err = m.Call(ctx, r, args, ss, progressToken)
		return res, "", err
	}
	cs, note, err := m.sessionClient(ctx, id, session, state, u)
	if err != nil {
		return nil, "", err
	}
	res, err = m.callOn(ctx, u, cs, r, args, ss, progressToken)
	return res, note, err
}

// callOn sends the call on cs, u's connection.
func (m *Manager) callOn(ctx context.Context, u *upstream, cs *mcp.ClientSession, r Route, args json.RawMessage, ss *mcp.ServerSession, progressToken any) (*mcp.CallToolResult, error) {
	timeout := time.Duration(u.cfg.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if hc, session, version, ok := u.canPostCall(cs); ok {
		res, err := m.postCall(ctx, u, cs, hc, session, version, r, args, ss, progressToken)
		if err != nil {
			return nil, u.callError(ctx, r, timeout, err)
		}
		return res, nil
	}
	params := &mcp.CallToolParams{Name: r.Name, Arguments: args}
	if len(args) == 0 {
		params.Arguments = map[string]any{}
	}
	if ss != nil && progressToken != nil {
		tok := "sw-" + strconv.FormatInt(m.nextToken.Add(1), 10)
		m.progress.Store(tok, progressTarget{ss: ss, token: progressToken, cs: cs})
		defer m.progress.Delete(tok)
		params.Meta = mcp.Meta{"progressToken": tok}
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return nil, u.callError(ctx, r, timeout, err)
	}
	return res, nil
}

// callError says why a call of r failed (ctx: the call's, with its
// timeout).
func (u *upstream) callError(ctx context.Context, r Route, timeout time.Duration, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("upstream %q did not answer %s within %v (the call was cancelled upstream)", u.cfg.Name, r.Name, timeout)
	case ctx.Err() != nil:
		return fmt.Errorf("the call to upstream %q was cancelled: %w", u.cfg.Name, ctx.Err())
	case errors.Is(err, mcp.ErrConnectionClosed) || isConnectionLost(err):
		return fmt.Errorf("upstream %q stopped during %s (%v)%s; statewright is restarting it, the call's effect is unknown",
			u.cfg.Name, r.Name, err, u.stderrNote())
	}
	return fmt.Errorf("upstream %q failed %s: %w", u.cfg.Name, r.Name, err)
}

func isConnectionLost(err error) bool {
	s := err.Error()
	return strings.Contains(s, "closed") || strings.Contains(s, "EOF") || strings.Contains(s, "broken pipe")
}

// GetPrompt forwards prompts/get.
func (m *Manager) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	m.mu.RLock()
	e, ok := m.prompts[name]
	m.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("no prompt %q", name)
	}
	u := m.upstreamOf(e.route.Upstream)
	cs, err := u.session()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(u.cfg.Timeout))
	defer cancel()
	return cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: e.route.Name, Arguments: args})
}

// ReadResource forwards resources/read to the upstream that listed uri
// (else to each upstream offering resources, first answer wins).
func (m *Manager) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, string, error) {
	m.mu.RLock()
	u := m.resources[uri]
	m.mu.RUnlock()
	candidates := m.ups
	if u != nil {
		candidates = []*upstream{u}
	}
	var errs []error
	for _, c := range candidates {
		c.mu.Lock()
		offers := len(c.resources) > 0 || len(c.templates) > 0
		c.mu.Unlock()
		if !offers && u == nil {
			continue
		}
		cs, err := c.session()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, time.Duration(c.cfg.Timeout))
		res, err := cs.ReadResource(cctx, &mcp.ReadResourceParams{URI: uri})
		cancel()
		if err == nil {
			return res, c.cfg.Name, nil
		}
		errs = append(errs, fmt.Errorf("upstream %q: %w", c.cfg.Name, err))
	}
	if len(errs) == 0 {
		return nil, "", fmt.Errorf("no upstream offers resource %q", uri)
	}
	return nil, "", errors.Join(errs...)
}

// forwardProgress relays an upstream's progress to the client request it
// belongs to, under the client's own token, when it comes from the upstream
// session that request's call went to (req.Session).
func (m *Manager) forwardProgress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok := fmt.Sprint(req.Params.ProgressToken)
	v, ok := m.progress.Load(tok)
	if !ok {
		return
	}
	t := v.(progressTarget)
	if t.cs != req.Session {
		return
	}
	p := *req.Params
	p.ProgressToken = t.token
	p.Meta = nil
	if err := t.ss.NotifyProgress(ctx, &p); err != nil {
		m.logger.Debug("forward progress", "err", err)
	}
}

// Status reports each upstream's state, for statewright_get_status.
func (m *Manager) Status() []UpstreamStatus {
	out := make([]UpstreamStatus, 0, len(m.ups))
	for _, u := range m.ups {
		u.mu.Lock()
		s := UpstreamStatus{Name: u.cfg.Name, Up: u.up, Tools: len(u.tools), Restarts: u.restarts}
		if u.http == nil {
			s.Sandbox = m.sb.String()
		}
		if u.lastErr != nil {
			s.Error = u.lastErr.Error()
		}
		u.mu.Unlock()
		out = append(out, s)
	}
	return out
}

// UpstreamStatus is one upstream's state (Sandbox: Sandbox.String for a
// stdio upstream).
type UpstreamStatus = control.UpstreamStatus

func (u *upstream) stderrNote() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.stderrNoteLocked()
}

func (u *upstream) stderrNoteLocked() string {
	if s := strings.TrimSpace(u.stderr.String()); s != "" {
		return "; its stderr ends: " + s
	}
	return ""
}

// tailBuffer keeps the last n bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	n   int
	buf []byte
}

func newTail(n int) *tailBuffer { return &tailBuffer{n: n} }

// Write keeps the tail of p.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.n {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.n:]...)
	}
	return len(p), nil
}

// String returns the kept bytes, the last 400 of them.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > 400 {
		b = b[len(b)-400:]
	}
	return strings.ToValidUTF8(string(b), "")
}

// hintsFor returns the trusted annotations for a decision of tool, a call
// of the namespaced tool: only when the call is decided by that name (a
// mapped call is decided as the canonical tool it maps to).
func (m *Manager) hintsFor(tool, namespaced string) *policy.ToolHints {
	if m == nil || tool != namespaced {
		return nil
	}
	return m.Hints(namespaced)
}
