package gateway

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallDirect and BenchmarkCallProxied call the same upstream echo
// tool (go-sdk, streamable HTTP on loopback) directly and through the
// gateway (in-memory transport, SQLite store, an active run allowing it);
// the difference is the proxy's overhead per tools/call (budget p50 < 0.3 ms;
// see bench/gateway.txt and bench/gatewaybench for percentiles).
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
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("%v %v", err, res)
		}
	}
}
