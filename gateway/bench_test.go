package gateway

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/internal/cputime"
)

// BenchmarkCallDirect and BenchmarkCallProxied call the same upstream echo
// tool (go-sdk, streamable HTTP on loopback) directly and through the
// gateway (in-memory transport, SQLite store, an active run allowing it);
// the difference is the proxy's overhead per tools/call (budget p50 < 0.3 ms;
// see bench/gateway.txt and bench/gatewaybench for percentiles). Besides
// ns/op they report the median call (p50-us) and the process's CPU per call
// (cpu-us/op: client, gateway, upstream and store are all in this process),
// which a loaded machine distorts less than wall time.
func BenchmarkCallDirect(b *testing.B) {
	url := newUpstream(b, &upstreamProbe{})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "direct"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchCalls(b, cs, "echo")
}

func BenchmarkCallProxied(b *testing.B) {
	cs, _ := newGatewayClient(b, newUpstream(b, &upstreamProbe{}))
	benchCalls(b, cs, "up__echo")
}

func benchCalls(b *testing.B, cs *mcp.ClientSession, name string) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "hello"}}
	b.ReportAllocs()
	var lat []time.Duration
	cpu0 := cputime.Process()
	for b.Loop() {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("%v %v", err, res)
		}
		lat = append(lat, time.Since(t0))
	}
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "cpu-us/op")
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-us")
}

// BenchmarkCallProxiedStdio is BenchmarkCallProxied with a stdio upstream
// (this test binary, stdioUpstream): the upstream runs in its own process,
// so the benchmark's allocations are the client's and the gateway's.
func BenchmarkCallProxiedStdio(b *testing.B) {
	cs, _ := newGateway(b, "", gatewaySetup{stdio: true})
	benchCalls(b, cs, "up__echo")
}

// stdioUpstreamEnv makes the test binary serve stdioUpstream on stdio.
const stdioUpstreamEnv = "STATEWRIGHT_GATEWAY_TEST_STDIO_UPSTREAM"

// TestMain serves stdioUpstream when asked to.
func TestMain(m *testing.M) {
	if os.Getenv(stdioUpstreamEnv) == "1" {
		s := mcp.NewServer(&mcp.Implementation{Name: "stdio-upstream", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
		if os.Getenv(stdioUpstreamReaderEnv) == "1" {
			addReadNote(s)
		}
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
