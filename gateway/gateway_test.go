package gateway

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/internal/mcpio"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// These tests run the gateway between a go-sdk client and a go-sdk upstream
// served over streamable HTTP on loopback, with a real SQLite store and
// runtime: what the upstream saw (cancellation, a call at all) is observed
// in the upstream's own handler.

const testWorkflow = `{"id":"gwt","initial":"work","states":{
 "work":{"allowed_tools":["Read","up__slow","up__echo","up__tool_000","up__tool_001"],"on":{"DONE":"done"}},
 "done":{"type":"final"}}}`

type slowIn struct {
	Seconds float64 `json:"seconds"`
}

type upstreamProbe struct {
	cancelled atomic.Int32
	calls     atomic.Int32
	conns     atomic.Int32 // TCP connections accepted
}

// newUpstream serves an upstream with a slow tool (which records a
// cancellation), an echo tool, 120 filler tools (listed 25 per page), a
// resource and a prompt.
func newUpstream(t testing.TB, probe *upstreamProbe) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "test-upstream", Version: "1"}, &mcp.ServerOptions{PageSize: 25})
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
		probe.calls.Add(1)
		select {
		case <-ctx.Done():
			probe.cancelled.Add(1)
			return nil, nil, ctx.Err()
		case <-time.After(time.Duration(in.Seconds * float64(time.Second))):
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil, nil
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		probe.calls.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	for i := range 120 {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("tool_%03d", i)}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	s.AddResource(&mcp.Resource{URI: "test://notes", Name: "notes", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://notes", Text: "the notes"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "review", Arguments: []*mcp.PromptArgument{{Name: "file"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: "review " + req.Params.Arguments["file"]}}}}, nil
		})
	srv := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			probe.conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// newGatewayClient starts a run, a gateway with the upstream (timeout 2s,
// our tools/list paged by 5) and a client session on it.
func newGatewayClient(t testing.TB, url string) (*mcp.ClientSession, *runtime.Service) {
	return newGateway(t, url, gatewaySetup{})
}

// gatewaySetup varies newGateway: a store around the SQLite one, the
// session's poll interval, the client's options.
type gatewaySetup struct {
	wrap   func(*sqlite.Store) store.Store
	poll   time.Duration
	client *mcp.ClientOptions
	// decideOnWrap: the runtime decides on the wrapped store too.
	decideOnWrap bool
	// sdkPath serves the session without the fast path (Server.Transport):
	// every call through the SDK's handling, as over streamable HTTP.
	sdkPath bool
	// stdio: the upstream is this test binary as a stdio server
	// (stdioUpstream), not the HTTP one at url.
	stdio bool
	// raw, when set, receives the client's end of the pipe, and no SDK
	// client connects (the returned session is nil).
	raw *io.ReadWriteCloser
}

// newGateway starts a run on a fresh SQLite store, a gateway in front of
// the upstream at url, and a client connected to it in memory.
func newGateway(t testing.TB, url string, o gatewaySetup) (*mcp.ClientSession, *runtime.Service) {
	t.Helper()
	cs, svc, _, _ := newGatewayFull(t, url, o)
	return cs, svc
}

// newGatewayFull is newGateway, which also returns the gateway and the
// SQLite store.
func newGatewayFull(t testing.TB, url string, o gatewaySetup) (*mcp.ClientSession, *runtime.Service, *Gateway, *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var gst store.Store = st
	if o.wrap != nil {
		gst = o.wrap(st)
	}
	wf := filepath.Join(dir, "wf.json")
	os.WriteFile(wf, []byte(testWorkflow), 0o644)
	var rst store.Store = st
	if o.decideOnWrap {
		rst = gst
	}
	svc := runtime.New(rst, runtime.Options{ProjectDir: dir})
	if _, err := svc.Start(ctx, "claude-code:t", wf, runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Timeout: Duration(2 * time.Second), Upstreams: []Upstream{{Name: "up", URL: url}}}
	if o.stdio {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Upstreams[0] = Upstream{Name: "up", Command: exe, Args: []string{"-test.run=^$"}, Env: map[string]string{stdioUpstreamEnv: "1"}}
	}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	m := NewManager(cfg, dir, nil)
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	g, err := New(Options{Runtime: svc, Store: gst, Upstreams: m, ProjectDir: dir, PageSize: 5, PollInterval: o.poll})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Wait) // before the store closes
	ct, stt := mcpio.NewInMemoryTransports()
	if o.sdkPath {
		srv, err := g.NewServer(SessionOptions{Session: "claude-code:t"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Connect(ctx, stt, nil); err != nil {
			t.Fatal(err)
		}
	} else {
		sv, err := g.NewSession(SessionOptions{Session: "claude-code:t"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sv.Connect(ctx, sv.Transport(stt), nil); err != nil {
			t.Fatal(err)
		}
	}
	if o.raw != nil {
		*o.raw = ct.Reader.(io.ReadWriteCloser)
		t.Cleanup(func() { (*o.raw).Close() })
		return nil, svc, g, st
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client"}, o.client).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, svc, g, st
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestPaginationAndFilter(t *testing.T) {
	cs, _ := newGatewayClient(t, newUpstream(t, &upstreamProbe{}))
	ctx := context.Background()
	// Our pages are 5 long: the first page has a cursor.
	first, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Tools) != 5 || first.NextCursor == "" {
		t.Fatalf("first page: %d tools, cursor %q", len(first.Tools), first.NextCursor)
	}
	// The phase offers slow, echo, tool_000 and tool_001 of the 122
	// upstream tools (read over five upstream pages), plus the control tools.
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(tool.Name, "up__") {
			names = append(names, tool.Name)
		}
	}
	if got := strings.Join(names, ","); got != "up__echo,up__slow,up__tool_000,up__tool_001" {
		t.Fatalf("upstream tools listed: %s", got)
	}
	// A tool the phase does not offer is refused at call time too, and the
	// upstream never sees it.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__tool_050", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "tool-not-allowed") {
		t.Fatalf("unlisted tool: %v %v", text(res), err)
	}
	if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: "garbage"}); err == nil {
		t.Fatal("a bad cursor was accepted")
	}
}

func TestTimeoutAndCancellation(t *testing.T) {
	probe := &upstreamProbe{}
	cs, _ := newGatewayClient(t, newUpstream(t, probe))
	ctx := context.Background()

	// The upstream takes longer than the 2s timeout: a clear tool error,
	// and the upstream's request is cancelled.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__slow", Arguments: map[string]any{"seconds": 30}})
	if err != nil || !res.IsError || !strings.Contains(text(res), `upstream "up" did not answer slow within 2s`) {
		t.Fatalf("timeout: %q %v", text(res), err)
	}
	waitFor(t, func() bool { return probe.cancelled.Load() == 1 }, "the upstream to see the timed-out call cancelled")

	// The client cancels: the gateway cancels the upstream request.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "up__slow", Arguments: map[string]any{"seconds": 30}})
		done <- err
	}()
	waitFor(t, func() bool { return probe.calls.Load() == 2 }, "the second slow call to reach the upstream")
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	waitFor(t, func() bool { return probe.cancelled.Load() == 2 }, "the upstream to see the client's cancellation")

	// The gateway keeps serving.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "still here"}})
	if err != nil || res.IsError || text(res) != "echo: still here" {
		t.Fatalf("after cancellation: %q %v", text(res), err)
	}
}

func TestResourcesAndPrompts(t *testing.T) {
	cs, svc := newGatewayClient(t, newUpstream(t, &upstreamProbe{}))
	ctx := context.Background()
	rl, err := cs.ListResources(ctx, nil)
	if err != nil || len(rl.Resources) != 1 || rl.Resources[0].URI != "test://notes" {
		t.Fatalf("resources/list: %+v %v", rl, err)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://notes"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "the notes" {
		t.Fatalf("resources/read: %+v %v", rr, err)
	}
	pl, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(pl.Prompts) != 1 || pl.Prompts[0].Name != "up__review" {
		t.Fatalf("prompts/list: %+v %v", pl, err)
	}
	pg, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "up__review", Arguments: map[string]string{"file": "a.go"}})
	if err != nil || len(pg.Messages) != 1 || pg.Messages[0].Content.(*mcp.TextContent).Text != "review a.go" {
		t.Fatalf("prompts/get: %+v %v", pg, err)
	}
	// In a final phase nothing but control reads is allowed: the resource
	// read is refused.
	if _, err := svc.Transition(ctx, "claude-code:t", "DONE", nil, runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://notes"}); err == nil {
		t.Fatal("resources/read allowed without a live run's permission")
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestResultBeforeNextDecision: a proxied call's result is recorded after
// its answer, but always before the session's next decision, so the run's
// log reads decision, result, decision, result, ... for calls made one
// after another.
func TestResultBeforeNextDecision(t *testing.T) {
	cs, svc := newGatewayClient(t, newUpstream(t, &upstreamProbe{}))
	ctx := context.Background()
	const n = 20
	for range n {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "x"}})
		if err != nil || res.IsError {
			t.Fatalf("%v %v", err, res)
		}
	}
	// The last result is recorded after its answer: wait for it.
	var kinds []string
	waitFor(t, func() bool {
		evs, err := svc.History(ctx, "claude-code:t")
		if err != nil {
			t.Fatal(err)
		}
		kinds = kinds[:0]
		for _, e := range evs {
			if e.Kind == store.KindDecision || e.Kind == store.KindResult {
				kinds = append(kinds, string(e.Kind)+" "+e.ToolUseID)
			}
		}
		return len(kinds) == 2*n
	}, "every call's decision and result recorded")
	for i := 0; i < len(kinds); i += 2 {
		d, r := strings.Fields(kinds[i]), strings.Fields(kinds[i+1])
		if d[0] != "decision" || r[0] != "result" || d[1] != r[1] {
			t.Fatalf("event %d: %q then %q, want each call's decision then its result:\n%s", i, kinds[i], kinds[i+1], strings.Join(kinds, "\n"))
		}
	}
}

// countingStore counts the gateway's reads of the live run.
type countingStore struct {
	*sqlite.Store
	reads atomic.Int64
}

func (c *countingStore) LiveRun(ctx context.Context, key string) (*store.Run, error) {
	c.reads.Add(1)
	return c.Store.LiveRun(ctx, key)
}

// TestNoReadAfterEachCall: a proxied call's store write reaches the
// session through the store's Watch, and a write that leaves the phase as
// it was (a decision moving counters) makes the session read nothing; a
// transition still makes it announce a new tool list.
func TestNoReadAfterEachCall(t *testing.T) {
	ctx := context.Background()
	var cst *countingStore
	changed := make(chan struct{}, 16)
	cs, svc := newGateway(t, newUpstream(t, &upstreamProbe{}), gatewaySetup{
		wrap: func(st *sqlite.Store) store.Store { cst = &countingStore{Store: st}; return cst },
		poll: time.Hour, // no poll: only the store's changes wake the session
		client: &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		},
	})
	human := runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Calls spaced past the store's watch interval, so that each write
	// arrives as a change of its own.
	const n = 6
	for range n {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "x"}})
		if err != nil || res.IsError {
			t.Fatalf("%v %v", err, res)
		}
		time.Sleep(sqlite.WatchInterval + 50*time.Millisecond)
	}
	if r := cst.reads.Load(); r > 3 {
		t.Errorf("the session read the run %d times over %d calls in one phase, want at most 3 (the start, the first change)", r, n)
	}
	select {
	case <-changed:
		t.Fatal("tool list announced as changed while the phase stayed")
	default:
	}
	if _, err := svc.Transition(ctx, "claude-code:t", "DONE", nil, human); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second): // a liveness bound, not a latency assertion
		t.Fatal("no tools/list_changed after the transition")
	}
}

// TestUpstreamConnectionsReused: concurrent calls through the gateway keep
// their connections to the upstream. Every client session's calls share
// the gateway's one MCP session with the upstream, each call a POST; with
// net/http's default of 2 idle connections per host, the others were
// closed after each answer and the next calls dialed again.
func TestUpstreamConnectionsReused(t *testing.T) {
	probe := &upstreamProbe{}
	cs, _ := newGatewayClient(t, newUpstream(t, probe))
	ctx := context.Background()
	const workers, rounds = 8, 25
	before := probe.conns.Load()
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "x"}})
				if err == nil && res.IsError {
					err = fmt.Errorf("%s", text(res))
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// About one connection per call under way at once (a call that finds
	// none idle dials, and may then take one freed meanwhile, leaving its
	// own idle), however many calls were made: with 2 kept idle, 200 calls
	// by 8 workers opened 80-100.
	if n := probe.conns.Load() - before; n > 3*workers {
		t.Errorf("%d calls by %d workers opened %d new connections to the upstream, want at most %d", workers*rounds, workers, n, 3*workers)
	}
}

// watchCountingStore counts subscriptions to the store's changes.
type watchCountingStore struct {
	*sqlite.Store
	watches atomic.Int32
}

func (w *watchCountingStore) Watch(ctx context.Context) (<-chan store.Change, error) {
	w.watches.Add(1)
	return w.Store.Watch(ctx)
}

// TestSessionsShareOneWatch: a gateway subscribes to the store's changes
// once, however many sessions it serves, and each session hears of its
// own run's change of phase, not of another's.
func TestSessionsShareOneWatch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	wst := &watchCountingStore{Store: st}
	wf := filepath.Join(dir, "wf.json")
	os.WriteFile(wf, []byte(testWorkflow), 0o644)
	svc := runtime.New(st, runtime.Options{ProjectDir: dir})
	human := runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}
	cfg := &Config{Timeout: Duration(2 * time.Second), Upstreams: []Upstream{{Name: "up", URL: newUpstream(t, &upstreamProbe{})}}}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	m := NewManager(cfg, dir, nil)
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	g, err := New(Options{Runtime: svc, Store: wst, Upstreams: m, ProjectDir: dir, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Wait)
	keys := []string{"claude-code:a", "claude-code:b", "claude-code:c"}
	heard := make([]chan struct{}, len(keys))
	for i, key := range keys {
		if _, err := svc.Start(ctx, key, wf, human); err != nil {
			t.Fatal(err)
		}
		srv, err := g.NewServer(SessionOptions{Session: key})
		if err != nil {
			t.Fatal(err)
		}
		ct, stt := mcpio.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, stt, nil); err != nil {
			t.Fatal(err)
		}
		heard[i] = make(chan struct{}, 16)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { heard[i] <- struct{}{} },
		}).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return wst.watches.Load() >= 1 }, "the gateway to watch the store")
	// Sessions a and b move on, one after the other; c stays.
	for i := range 2 {
		if _, err := svc.Transition(ctx, keys[i], "DONE", nil, human); err != nil {
			t.Fatal(err)
		}
		select {
		case <-heard[i]:
		case <-time.After(20 * time.Second): // a liveness bound, not a latency assertion
			t.Fatalf("session %s heard no tools/list_changed after its transition", keys[i])
		}
	}
	time.Sleep(2 * sqlite.WatchInterval) // anything misdelivered has arrived by now
	for i, n := range []int{0, 0, 0} {
		if got := len(heard[i]); got != n {
			t.Errorf("session %s heard %d more tools/list_changed, want %d", keys[i], got, n)
		}
	}
	if n := wst.watches.Load(); n != 1 {
		t.Errorf("the gateway subscribed to the store's changes %d times for %d sessions, want 1", n, len(keys))
	}
}

// TestIdleSessionReadsLittle: while the store reports its writes, a
// session's poll reads its run after a write it did not read (one that
// left the phase as it was), and otherwise only every idleReadEvery polls.
func TestIdleSessionReadsLittle(t *testing.T) {
	ctx := context.Background()
	var cst *countingStore
	const poll = 20 * time.Millisecond
	cs, _ := newGateway(t, newUpstream(t, &upstreamProbe{}), gatewaySetup{
		wrap: func(st *sqlite.Store) store.Store { cst = &countingStore{Store: st}; return cst },
		poll: poll,
	})
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * poll) // the first poll reads what the start may have missed
	idle := cst.reads.Load()
	time.Sleep(3 * idleReadEvery * poll)
	if n := cst.reads.Load() - idle; n > 3 {
		t.Errorf("an idle session read its run %d times in %d polls, want at most 3 (one every %d polls)", n, 3*idleReadEvery, idleReadEvery)
	}
	// A call writes the run without moving its phase: a later poll reads it.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %v", err, res)
	}
	before := cst.reads.Load()
	waitFor(t, func() bool { return cst.reads.Load() > before }, "a poll to read the run the call wrote")
}

// TestCallIDsAscend: the ids of proxied calls sort in the order they were
// made, so that a session's call records are written at the end of its
// range in the store (see newCallID), and they never repeat, also when
// made concurrently.
func TestCallIDsAscend(t *testing.T) {
	const workers, each = 4, 2000
	ids := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				ids[w] = append(ids[w], newCallID())
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for w, list := range ids {
		for i, id := range list {
			if len(id) != len("gw_")+28 || !strings.HasPrefix(id, "gw_") {
				t.Fatalf("id %q: want gw_ and 28 hex digits", id)
			}
			if i > 0 && id <= list[i-1] {
				t.Fatalf("worker %d: id %q made after %q sorts before it", w, id, list[i-1])
			}
			if seen[id] {
				t.Fatalf("id %q made twice", id)
			}
			seen[id] = true
		}
	}
}
