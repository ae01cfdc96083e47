// Command gatewaybench measures the MCP gateway, side by side in one run:
//
//  1. Proxy overhead per tools/call: an upstream MCP server (the go-sdk, an
//     "echo" tool, served over streamable HTTP on loopback) called directly
//     by a go-sdk client, and the same upstream called through the gateway
//     (client → gateway over an in-memory pipe → upstream; the client's end
//     the SDK's transport, the gateway's end internal/mcpio with the
//     gateway's fast path for upstream calls, as `statewright mcp` serves
//     stdio), with
//     an active run on a SQLite store whose phase allows the tool. Calls
//     alternate between the two paths; the report gives p50/p90/p99 of each
//     and the difference of the medians. Budget (docs/architecture.md): p50 overhead
//     < 0.3 ms. A third path, in the same alternation, is the floor any
//     proxy on the SDK pays: a client calling a local echo tool over the
//     SDK's in-memory transport (one extra JSON-RPC hop, no gateway, no
//     store, no upstream).
//
//     A breakdown follows, alternated in the same way: the direct call
//     again (the reference), the in-memory hop
//     with no tool handler at all (the SDK's floor for one more JSON-RPC
//     hop), the gateway's own call to the upstream alone (Manager.Call),
//     and the decision a proxied call waits for, alone and carrying the
//     previous call's result in its transaction (as the gateway does for
//     calls made one after another: one-shot calls, runtime.ToolCall.
//     OneShot). Then the process's CPU per call of
//     each path, from blocks of calls run one path at a time (CPU time is
//     distorted less by a loaded machine than wall time).
//
//     The process runs with the garbage collector's target that
//     `statewright mcp` and `statewright serve` set (cmdutil.TuneGC: 400
//     unless GOGC is set), so the gateway is measured as it runs.
//
//  2. `statewright serve` under load: the gateway's streamable-HTTP handler
//     behind the serve package's auth (a real token file) on loopback, with
//     -sessions concurrent MCP sessions (each its own statewright session
//     and run) calling the upstream tool for -duration; throughput and
//     p50/p99 latency.
//
//     go run ./bench/gatewaybench -n 2000 -sessions 50 -duration 10s > bench/gateway.txt
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	stdruntime "runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/bench/internal/selfcpu"
	"github.com/statewright-go/statewright/gateway"
	"github.com/statewright-go/statewright/gateway/tokens"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/internal/mcpio"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/serve"
	"github.com/statewright-go/statewright/store"
	_ "github.com/statewright-go/statewright/store/backends"
)

const workflowJSON = `{"id":"bench","initial":"work","states":{
 "work":{"allowed_tools":["Read","up__echo"],"on":{"DONE":"done"}},
 "done":{"type":"final"}}}`

// profile is where the serve load's CPU profile goes ("" for none).
var profile string

func main() {
	n := flag.Int("n", 2000, "calls per path for the overhead measurement")
	sessions := flag.Int("sessions", 50, "concurrent MCP sessions on serve")
	duration := flag.Duration("duration", 10*time.Second, "how long the serve load runs")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the serve load to this file")
	flag.Parse()
	profile = *cpuprofile
	cmdutil.TuneGC() // as the gateway's own processes run
	if err := run(*n, *sessions, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "gatewaybench:", err)
		os.Exit(1)
	}
}

type echoIn struct {
	Text string `json:"text"`
}

// upstreamServer is the benchmark's upstream: one echo tool.
func upstreamServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-upstream", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	return s
}

func run(n, sessions int, duration time.Duration) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "gatewaybench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	up := upstreamServer()
	upHTTP := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	defer upHTTP.Close()

	st, err := store.Open(ctx, filepath.Join(dir, "state.db"), store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	wf := filepath.Join(dir, "bench.json")
	if err := os.WriteFile(wf, []byte(workflowJSON), 0o644); err != nil {
		return err
	}
	svc := runtime.New(st, runtime.Options{ProjectDir: dir})
	human := runtime.Actor{Kind: runtime.ActorHuman, Channel: "bench"}
	if _, err := svc.Start(ctx, "claude-code:bench", wf, human); err != nil {
		return err
	}
	cfg := &gateway.Config{Upstreams: []gateway.Upstream{{Name: "up", URL: upHTTP.URL}}}
	if err := cfg.Check(); err != nil {
		return err
	}
	mgr := gateway.NewManager(cfg, dir, nil)
	if err := mgr.Start(ctx); err != nil {
		return err
	}
	defer mgr.Close()
	g, err := gateway.New(gateway.Options{Runtime: svc, Store: st, Upstreams: mgr, ProjectDir: dir, PollInterval: time.Second})
	if err != nil {
		return err
	}
	defer g.Wait() // results recorded after their answers, before the store closes

	// Direct client.
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "direct"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: upHTTP.URL}, nil)
	if err != nil {
		return err
	}
	defer direct.Close()
	// Client through the gateway.
	gsrv, err := g.NewSession(gateway.SessionOptions{Session: "claude-code:bench"})
	if err != nil {
		return err
	}
	ct, stt := mcpio.NewInMemoryTransports() // as `statewright mcp` serves stdio
	if _, err := gsrv.Connect(ctx, gsrv.Transport(stt), nil); err != nil {
		return err
	}
	proxied, err := mcp.NewClient(&mcp.Implementation{Name: "proxied"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	defer proxied.Close()

	call := func(cs *mcp.ClientSession, name string) (time.Duration, error) {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "hello"}})
		d := time.Since(t0)
		if err != nil {
			return d, err
		}
		if res.IsError {
			return d, fmt.Errorf("%s: %v", name, res.Content)
		}
		return d, nil
	}
	// Warm up both paths.
	for range 50 {
		if _, err := call(direct, "echo"); err != nil {
			return err
		}
		if _, err := call(proxied, "up__echo"); err != nil {
			return err
		}
	}
	// The SDK's in-memory hop alone: a client and a local echo server.
	hct, hst := mcp.NewInMemoryTransports()
	if _, err := upstreamServer().Connect(ctx, hst, nil); err != nil {
		return err
	}
	hop, err := mcp.NewClient(&mcp.Implementation{Name: "hop"}, nil).Connect(ctx, hct, nil)
	if err != nil {
		return err
	}
	defer hop.Close()
	for range 50 {
		if _, err := call(hop, "echo"); err != nil {
			return err
		}
	}
	var dTimes, pTimes, hTimes []time.Duration
	for range n {
		d, err := call(direct, "echo")
		if err != nil {
			return err
		}
		p, err := call(proxied, "up__echo")
		if err != nil {
			return err
		}
		h, err := call(hop, "echo")
		if err != nil {
			return err
		}
		dTimes, pTimes, hTimes = append(dTimes, d), append(pTimes, p), append(hTimes, h)
	}
	host, _ := os.Hostname()
	fmt.Printf("# gatewaybench %s, %s/%s, GOMAXPROCS=%d, host %s\n", time.Now().UTC().Format(time.RFC3339), stdruntime.GOOS, stdruntime.GOARCH, stdruntime.GOMAXPROCS(0), host)
	fmt.Printf("# load average at start: %s; GOGC %d (the gateway's processes' setting unless GOGC is set)\n", loadavg(), gcPercent())
	fmt.Printf("\n## 1. tools/call overhead (%d calls per path, alternating)\n", n)
	fmt.Printf("%-34s %10s %10s %10s\n", "path", "p50", "p90", "p99")
	row := func(name string, ds []time.Duration) time.Duration {
		slices.Sort(ds)
		p := func(q float64) time.Duration { return ds[int(q*float64(len(ds)-1))] }
		fmt.Printf("%-34s %10s %10s %10s\n", name, us(p(0.5)), us(p(0.9)), us(p(0.99)))
		return p(0.5)
	}
	d50 := row("direct (client → upstream)", dTimes)
	p50 := row("gateway (client → gw → upstream)", pTimes)
	h50 := row("SDK in-memory hop alone (local echo)", hTimes)
	fmt.Printf("overhead p50: %s (budget < 300µs); of it the SDK's in-memory hop %s, the rest (decision, store write, gateway) %s\n",
		us(p50-d50), us(h50), us(p50-d50-h50))

	if err := breakdown(ctx, n, svc, mgr, wf, direct, proxied, hop, row, call); err != nil {
		return err
	}

	// For scale: the runtime's part alone (Decide + RecordResult, two
	// transactions on the SQLite store) and a store read.
	var decTimes, readTimes []time.Duration
	for i := range n / 2 {
		call := policy.ToolCall{Harness: policy.ClaudeCode, Tool: "up__echo", Input: []byte(`{"text":"hello"}`), ToolUseID: fmt.Sprintf("bench-%d", i)}
		t0 := time.Now()
		if _, err := svc.Decide(ctx, runtime.ToolCall{Session: "claude-code:bench", Call: call, Actor: runtime.Actor{Kind: runtime.ActorAgent, Channel: "bench"}}); err != nil {
			return err
		}
		if err := svc.RecordResult(ctx, runtime.ToolResult{Session: "claude-code:bench", ToolUseID: call.ToolUseID, Call: call, Actor: runtime.Actor{Kind: runtime.ActorAgent, Channel: "bench"}}); err != nil {
			return err
		}
		decTimes = append(decTimes, time.Since(t0))
		t0 = time.Now()
		if _, err := st.LiveRun(ctx, "claude-code:bench"); err != nil {
			return err
		}
		readTimes = append(readTimes, time.Since(t0))
	}
	row("runtime Decide+RecordResult only", decTimes)
	row("store LiveRun only", readTimes)

	if err := serveLoad(ctx, dir, svc, g, wf, sessions, duration); err != nil {
		return err
	}
	return nil
}

// breakdown times the parts of a proxied call, alternated as the paths
// are, and the CPU per call of each path.
func breakdown(ctx context.Context, n int, svc *runtime.Service, mgr *gateway.Manager, wf string, direct, proxied, hop *mcp.ClientSession,
	row func(string, []time.Duration) time.Duration, call func(*mcp.ClientSession, string) (time.Duration, error)) error {
	// The SDK's floor: a server whose middleware answers tools/call
	// itself (no tool, no schema, no handler).
	floor := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	floor.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
			}
			return next(ctx, method, req)
		}
	})
	fct, fst := mcp.NewInMemoryTransports()
	if _, err := floor.Connect(ctx, fst, nil); err != nil {
		return err
	}
	fcs, err := mcp.NewClient(&mcp.Implementation{Name: "floor"}, nil).Connect(ctx, fct, nil)
	if err != nil {
		return err
	}
	defer fcs.Close()
	route, ok := mgr.Lookup("up__echo")
	if !ok {
		return fmt.Errorf("no route for up__echo")
	}
	human := runtime.Actor{Kind: runtime.ActorHuman, Channel: "bench"}
	agent := runtime.Actor{Kind: runtime.ActorAgent, Channel: "bench"}
	for _, sess := range []string{"claude-code:bench-alone", "claude-code:bench-settle"} {
		if _, err := svc.Start(ctx, sess, wf, human); err != nil {
			return err
		}
	}
	args := []byte(`{"text":"hello"}`)
	out := []byte(`[{"type":"text","text":"hello"}]`)
	var (
		prev    *policy.ToolCall
		prevRes runtime.DecideResult
	)
	seq := 0
	newCall := func() policy.ToolCall {
		seq++
		return policy.ToolCall{Harness: policy.ClaudeCode, Tool: "up__echo", Input: args, ToolUseID: fmt.Sprintf("bd-%d", seq)}
	}
	parts := []struct {
		name string
		fn   func() error
	}{
		{"direct (client → upstream)", func() error { _, err := call(direct, "echo"); return err }},
		{"in-memory hop, no tool handler", func() error { _, err := call(fcs, "echo"); return err }},
		{"gateway → upstream alone", func() error {
			_, err := mgr.Call(ctx, route, args, nil, nil)
			return err
		}},
		// The decisions as the gateway makes them: one-shot calls
		// (runtime.ToolCall.OneShot), the previous result settled from
		// its answer.
		{"decision alone", func() error {
			_, err := svc.Decide(ctx, runtime.ToolCall{Session: "claude-code:bench-alone", Call: newCall(), Actor: agent, OneShot: true})
			return err
		}},
		{"decision + previous result (1 tx)", func() error {
			c := newCall()
			tc := runtime.ToolCall{Session: "claude-code:bench-settle", Call: c, Actor: agent, OneShot: true}
			if prev != nil {
				d := prevRes
				tc.Settle = []runtime.ToolResult{{Session: tc.Session, Call: *prev, Decided: &d, Output: out, Actor: agent}}
			}
			prev = &c
			var err error
			prevRes, err = svc.Decide(ctx, tc)
			return err
		}},
	}
	times := make([][]time.Duration, len(parts))
	for i := range n/2 + 50 {
		for j, p := range parts {
			t0 := time.Now()
			if err := p.fn(); err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			if i >= 50 { // warm-up
				times[j] = append(times[j], time.Since(t0))
			}
		}
	}
	fmt.Printf("\n## 1b. where a proxied call's time goes (%d calls per part, alternating)\n", n/2)
	fmt.Printf("%-34s %10s %10s %10s\n", "part", "p50", "p90", "p99")
	for j, p := range parts {
		row(p.name, times[j])
	}

	fmt.Printf("\n## 1c. process CPU per call (%d calls per path, one path at a time), and bytes the process wrote per call (the store's WAL and checkpoints)\n", n/2)
	for _, p := range []struct {
		name string
		cs   *mcp.ClientSession
		tool string
	}{{"direct (client → upstream)", direct, "echo"}, {"gateway (client → gw → upstream)", proxied, "up__echo"}, {"SDK in-memory hop alone (local echo)", hop, "echo"}} {
		c0, w0 := selfcpu.Time(), written()
		for range n / 2 {
			if _, err := call(p.cs, p.tool); err != nil {
				return err
			}
		}
		cpu, w := (selfcpu.Time()-c0)/time.Duration(n/2), written()-w0
		if w0 < 0 {
			fmt.Printf("%-34s %10s\n", p.name, us(cpu))
			continue
		}
		fmt.Printf("%-34s %10s %8.1f KiB written\n", p.name, us(cpu), float64(w)/float64(n/2)/1024)
	}
	return nil
}

// serveLoad runs `sessions` concurrent MCP sessions against the gateway's
// HTTP handler behind serve's auth for duration.
func serveLoad(ctx context.Context, dir string, svc *runtime.Service, g *gateway.Gateway, wf string, sessions int, duration time.Duration) error {
	tf := tokens.Open(filepath.Join(dir, "tokens.json"))
	tok, _, err := tf.Create(tokens.Agent, "bench", "", time.Now())
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv, err := serve.New(serve.Options{Tokens: tf, Addr: ln.Addr().String(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	h := g.HTTPHandler(gateway.HTTPOptions{
		Resolve: func(r *http.Request) (gateway.SessionOptions, string, error) {
			t, _ := serve.Principal(r.Context())
			return gateway.SessionOptions{Session: "claude-code:" + r.Header.Get(gateway.SessionHeader)}, t.ID, nil
		},
		Owner: func(r *http.Request) string { t, _ := serve.Principal(r.Context()); return t.ID },
	})
	for _, m := range []string{"POST", "GET", "DELETE"} {
		srv.Handle(m+" /mcp", serve.AnyToken, h)
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go serve.Run(sctx, ln, srv.Handler(), time.Second)
	url := "http://" + ln.Addr().String() + "/mcp"

	human := runtime.Actor{Kind: runtime.ActorHuman, Channel: "bench"}
	// Each session stands for a client of its own, which would keep its
	// connection: room for all of them in the pool (net/http keeps 2 idle
	// per host by default, and the rest would dial again after each call).
	pool := http.DefaultTransport.(*http.Transport).Clone()
	pool.MaxIdleConns, pool.MaxIdleConnsPerHost = 2*sessions, 2*sessions
	defer pool.CloseIdleConnections()
	clients := make([]*mcp.ClientSession, sessions)
	for i := range clients {
		sess := fmt.Sprintf("load%d", i)
		if _, err := svc.Start(ctx, "claude-code:"+sess, wf, human); err != nil {
			return err
		}
		hdr := http.Header{"Authorization": {"Bearer " + tok}, "Statewright-Session": {sess}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: sess}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: headers{hdr, pool}}}, nil)
		if err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
		defer cs.Close()
		clients[i] = cs
	}
	var mu sync.Mutex
	var lat []time.Duration
	var errs int
	var firstErr error
	var wg sync.WaitGroup
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	deadline := time.Now().Add(duration)
	start, cpu0 := time.Now(), selfcpu.Time()
	for _, cs := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []time.Duration
			for time.Now().Before(deadline) {
				t0 := time.Now()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "x"}})
				d := time.Since(t0)
				if err != nil || res.IsError {
					mu.Lock()
					errs++
					if firstErr == nil {
						firstErr = fmt.Errorf("%v %v", err, res)
					}
					mu.Unlock()
					continue
				}
				local = append(local, d)
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), selfcpu.Time()-cpu0
	slices.Sort(lat)
	if len(lat) == 0 {
		return fmt.Errorf("serve load: no call succeeded: %v", firstErr)
	}
	p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	fmt.Printf("\n## 2. statewright serve: %d concurrent MCP sessions over streamable HTTP, %v\n", sessions, duration)
	fmt.Printf("calls ok %d, errors %d, throughput %.0f calls/s\n", len(lat), errs, float64(len(lat))/elapsed.Seconds())
	fmt.Printf("latency p50 %s, p90 %s, p99 %s, max %s\n", us(p(0.5)), us(p(0.9)), us(p(0.99)), us(lat[len(lat)-1]))
	fmt.Printf("process CPU per call %s (clients, serve, gateway, upstream and store in one process)\n", us(cpu/time.Duration(len(lat)+errs)))
	if firstErr != nil {
		fmt.Printf("first error: %v\n", firstErr)
	}
	return nil
}

type headers struct {
	h    http.Header
	next http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header[k] = v
	}
	return h.next.RoundTrip(r)
}

func us(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond)) }

// gcPercent returns the collector's target in force.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// written returns the bytes this process has written to files so far
// (wchar of /proc/self/io: the store's WAL frames and the checkpoints
// that copy them back), or -1 where that is not known.
func written() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
