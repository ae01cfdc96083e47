package mcpio

import (
	"bufio"
	"context"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text"`
}

// newServer is an MCP server with an echo tool and a tool that reports
// its start on started and waits for its call to be cancelled (and reports
// it on cancelled).
func newServer(started, cancelled chan<- struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- struct{}{}
		return nil, nil, ctx.Err()
	})
	return s
}

// TestSDKClient runs an SDK client against a server on Transport: calls,
// lists, a cancelled call, and the end of the session.
// The SDK's own transport runs the same test, as the reference.
func TestSDKClient(t *testing.T) {
	for _, tt := range []struct {
		name string
		make func(io.ReadWriteCloser) mcp.Transport
	}{
		{"mcpio", func(c io.ReadWriteCloser) mcp.Transport { return &Transport{Reader: c, Writer: c} }},
		{"sdk", func(c io.ReadWriteCloser) mcp.Transport { return &mcp.IOTransport{Reader: c, Writer: c} }},
	} {
		t.Run(tt.name, func(t *testing.T) { testSDKClient(t, tt.make) })
	}
}

func testSDKClient(t *testing.T, serverTransport func(io.ReadWriteCloser) mcp.Transport) {
	ctx := context.Background()
	started, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	c1, c2 := net.Pipe()
	ss, err := newServer(started, cancelled).Connect(ctx, serverTransport(c2), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, &mcp.IOTransport{Reader: c1, Writer: c1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"hello", "", strings.Repeat("é", 5000)} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != text {
			t.Fatalf("echo %q: %v %+v", text, err, res)
		}
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 2 {
		t.Fatalf("tools/list: %v %+v", err, lt)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Fatal("a call of an unknown tool did not fail")
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
		done <- err
	}()
	<-started
	cancel()
	<-done      // what the SDK's client returns then is the SDK's business
	<-cancelled // the server's handler saw the cancellation
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ss.Wait(); err != nil && err != io.EOF {
		t.Logf("server session ended: %v", err)
	}
}

// rawPeer writes lines to a server on Transport and reads its lines.
type rawPeer struct {
	t     *testing.T
	conn  net.Conn
	lines chan string
	ss    *mcp.ServerSession
}

func newRawPeer(t *testing.T, sdk bool, maxLine int) *rawPeer {
	t.Helper()
	c1, c2 := net.Pipe()
	var tr mcp.Transport = &Transport{Reader: c2, Writer: c2, MaxLineLength: maxLine}
	if sdk {
		tr = &mcp.IOTransport{Reader: c2, Writer: c2, MaxLineLength: maxLine}
	}
	ss, err := newServer(make(chan struct{}, 8), make(chan struct{}, 8)).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &rawPeer{t: t, conn: c1, lines: make(chan string, 16), ss: ss}
	go func() {
		sc := bufio.NewScanner(c1)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { c1.Close() })
	return p
}

func (p *rawPeer) send(s string) {
	p.t.Helper()
	// A server that ends the connection part-way through stops reading
	// (the cases that end it check that it did).
	io.WriteString(p.conn, s)
}

// recv returns the next line, "" once the server closed the stream.
func (p *rawPeer) recv() string {
	p.t.Helper()
	select {
	case l := <-p.lines:
		return l
	case <-time.After(10 * time.Second):
		p.t.Fatal("no answer in 10s")
		return ""
	}
}

func (p *rawPeer) initialize(version string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n")
	if l := p.recv(); !strings.Contains(l, `"protocolVersion":"`+version+`"`) {
		p.t.Fatalf("initialize: %s", l)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}` + "\n")
}

const echoCall = `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}}}`

// call is a tools/call of echo with id and text.
func call(id, text string) string {
	return strings.Replace(strings.Replace(echoCall, "%s", id, 1), "%s", text, 1)
}

// TestFraming reads what the SDK's ioConn reads, and ends the connection
// where it does; the SDK's transport runs the same cases, as the reference.
func TestFraming(t *testing.T) {
	for _, sdk := range []bool{false, true} {
		name := "mcpio"
		if sdk {
			name = "sdk"
		}
		t.Run(name, func(t *testing.T) { testFraming(t, sdk) })
	}
}

func testFraming(t *testing.T, sdk bool) {
	tests := []struct {
		name    string
		version string
		maxLine int
		send    string
		want    []string // substrings of the answers, in order
		ends    bool     // the server ends the connection
	}{
		{name: "one per line", version: "2025-06-18", send: call("1", "a") + "\n" + call("2", "b") + "\r\n",
			want: []string{`"id":1`, `"id":2`}},
		{name: "a value over several lines", version: "2025-06-18",
			send: "{\n \"jsonrpc\": \"2.0\",\n \"id\": 3, \"method\": \"ping\"\n}\n", want: []string{`{"jsonrpc":"2.0","id":3,"result":{}}`}},
		{name: "trailing data", version: "2025-06-18", send: call("1", "a") + " x\n", ends: true},
		{name: "not JSON", version: "2025-06-18", send: "hello\n", ends: true},
		{name: "not a message", version: "2025-06-18", send: `{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\n", ends: true},
		{name: "too long", version: "2025-06-18", maxLine: 300, send: call("1", strings.Repeat("x", 400)) + "\n", ends: true},
		{name: "just under the bound", version: "2025-06-18", maxLine: 600, send: call("1", strings.Repeat("x", 400)) + "\n",
			want: []string{strings.Repeat("x", 400)}},
		{name: "a batch in 2025-03-26", version: "2025-03-26",
			send: "[" + call(`"a"`, "one") + "," + call(`"b"`, "two") + "]\n",
			want: []string{`[{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"one"}]}},{"jsonrpc":"2.0","id":"b","result":{"content":[{"type":"text","text":"two"}]}}]`}},
		{name: "a batch of notifications", version: "2025-03-26",
			send: `[{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}]` + "\n" + call("9", "after") + "\n",
			want: []string{`"id":9`}},
		{name: "a batch repeating an id", version: "2025-03-26", send: "[" + call("1", "a") + "," + call("1", "b") + "]\n", ends: true},
		{name: "an empty batch", version: "2025-03-26", send: "[]\n", ends: true},
		{name: "a batch in 2025-06-18", version: "2025-06-18", send: "[" + call("1", "a") + "]\n", ends: true},
		// The SDK's decoder refuses JSON nested deeper than 1000.
		{name: "nested as deep as the SDK reads", version: "2025-06-18", send: nestedPing(1000) + "\n",
			want: []string{`{"jsonrpc":"2.0","id":1,"result":{}}`}},
		{name: "nested deeper than the SDK reads", version: "2025-06-18", send: nestedPing(1001) + "\n", ends: true},
		{name: "a batch nested deeper than the SDK reads", version: "2025-03-26", send: "[" + nestedPing(1000) + "]\n", ends: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newRawPeer(t, sdk, tt.maxLine)
			p.initialize(tt.version)
			p.send(tt.send)
			// Calls are answered as they finish, in any order.
			var got []string
			for range tt.want {
				got = append(got, p.recv())
			}
			for _, w := range tt.want {
				if !slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, w) }) {
					t.Fatalf("answers %q, want one to contain %s", got, w)
				}
			}
			if tt.ends {
				ended := make(chan error, 1)
				go func() { ended <- p.ss.Wait() }()
				select {
				case err := <-ended:
					if err == nil {
						t.Log("the session ended without an error")
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the connection did not end")
				}
				for l := range p.lines {
					t.Fatalf("an answer after a message that ends the connection: %s", l)
				}
				return
			}
			// Still serving.
			p.send(`{"jsonrpc":"2.0","id":"last","method":"ping"}` + "\n")
			if l := p.recv(); l != `{"jsonrpc":"2.0","id":"last","result":{}}` {
				t.Fatalf("ping: %s", l)
			}
		})
	}
}

// nestedPing is a ping whose JSON is nested depth deep.
func nestedPing(depth int) string {
	return `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":` + strings.Repeat("[", depth-2) + strings.Repeat("]", depth-2) + `}}`
}

// TestBatchedInitialize: an initialize sent in a batch negotiates the
// version as one sent alone, so a later batch in 2025-06-18 ends the
// connection, as on the SDK's transport.
func TestBatchedInitialize(t *testing.T) {
	for _, sdk := range []bool{false, true} {
		p := newRawPeer(t, sdk, 0)
		p.send(`[{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}]` + "\n")
		if l := p.recv(); !strings.Contains(l, `"protocolVersion":"2025-06-18"`) {
			t.Fatalf("sdk %v: initialize: %s", sdk, l)
		}
		p.send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}` + "\n")
		p.send("[" + call("1", "a") + "]\n")
		if l := p.recv(); l != "" {
			t.Fatalf("sdk %v: a batch in 2025-06-18 answered: %s", sdk, l)
		}
	}
}

// TestCloseUnblocksRead: closing the session ends a Read waiting for input.
func TestCloseUnblocksRead(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c1.Close()
	conn, err := (&Transport{Reader: c2, Writer: c2}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := conn.Read(context.Background())
		done <- err
	}()
	conn.Close()
	if err := <-done; err == nil {
		t.Fatal("Read after Close returned no error")
	}
	if err := conn.Write(context.Background(), mustRequest(t)); err == nil {
		t.Fatal("Write after Close returned no error")
	}
}

func mustRequest(t *testing.T) *jsonrpc.Request {
	t.Helper()
	m, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	return m.(*jsonrpc.Request)
}
