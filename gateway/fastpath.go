package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is one client session's MCP server (NewSession), with the
// gateway's fast path for calls of upstream tools (Transport).
type Server struct {
	*mcp.Server
	s *session
}

// NewSession returns the MCP server for one client session, as NewServer
// does; serve it on Transport(t) to take the fast path.
func (g *Gateway) NewSession(so SessionOptions) (*Server, error) {
	s, err := g.newSession(so, nil)
	if err != nil {
		return nil, err
	}
	return &Server{Server: s.srv, s: s}, nil
}

// Transport wraps t, the transport the server is connected to, with the
// gateway's fast path: a tools/call of an upstream tool, once the session
// is initialized, is answered by the gateway itself straight off the
// connection, as its middleware would answer it, without the SDK's
// handling of the request (which decodes the call's parameters twice more,
// each time into a fresh 32 KiB buffer, and re-encodes the answer through
// its typed results). Everything else, and every call the fast path does
// not take (control tools, a call before the session is initialized, one
// with the 2026-07-28 protocol's request metadata or a multi-round-trip
// retry, parameters that do not decode), goes to the SDK as before.
// notifications/cancelled cancels a fast-path call as it cancels any.
func (sv *Server) Transport(t mcp.Transport) mcp.Transport {
	return &fastTransport{t: t, s: sv.s}
}

type fastTransport struct {
	t mcp.Transport
	s *session
}

// Connect implements mcp.Transport.
func (ft *fastTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := ft.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	fctx, cancel := context.WithCancel(context.Background())
	return &fastConn{Connection: c, s: ft.s, ctx: fctx, cancel: cancel, calls: map[jsonrpc.ID]context.CancelFunc{}}, nil
}

// fastConn is the connection of a fastTransport.
type fastConn struct {
	mcp.Connection
	s *session

	ctx    context.Context // ends with the connection
	cancel context.CancelFunc

	mu    sync.Mutex
	calls map[jsonrpc.ID]context.CancelFunc // fast-path calls under way
}

// Read implements mcp.Connection: it hands the SDK every message but the
// calls it answers itself.
func (c *fastConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		r, ok := m.(*jsonrpc.Request)
		if !ok {
			return m, nil
		}
		switch r.Method {
		case "tools/call":
			if c.take(r) {
				continue
			}
		case "notifications/cancelled":
			c.cancelled(r.Params)
		}
		return m, nil
	}
}

// Close implements mcp.Connection: the calls under way are cancelled.
func (c *fastConn) Close() error {
	c.cancel()
	return c.Connection.Close()
}

// fastCall is a tools/call the fast path takes.
type fastCall struct {
	name  string
	args  json.RawMessage
	meta  mcp.Meta
	route Route
}

// take starts answering r itself when the fast path takes it.
func (c *fastConn) take(r *jsonrpc.Request) bool {
	if !r.ID.IsValid() {
		return false
	}
	s := c.s
	s.mu.Lock()
	ss := s.ss
	s.mu.Unlock()
	m := s.g.opts.Upstreams
	if ss == nil || m == nil {
		return false
	}
	fc, ok := decodeFastCall(r.Params)
	if !ok || fc.name == sentinel {
		return false
	}
	if fc.route, ok = m.Lookup(fc.name); !ok {
		return false
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	if _, dup := c.calls[r.ID]; dup {
		c.mu.Unlock()
		cancel()
		return false // the SDK answers a reused id as it does
	}
	c.calls[r.ID] = cancel
	c.mu.Unlock()
	// Gateway.Wait waits for the call too, as the SDK's session waits for
	// the requests it handles before it ends.
	s.g.settles.Add(1)
	s.g.workers.run(func() { c.answer(ctx, r.ID, ss, fc) })
	return true
}

// answer decides and forwards one call, and writes its answer.
func (c *fastConn) answer(ctx context.Context, id jsonrpc.ID, ss *mcp.ServerSession, fc fastCall) {
	defer func() {
		c.mu.Lock()
		cancel := c.calls[id]
		delete(c.calls, id)
		c.mu.Unlock()
		cancel()
		c.s.g.settles.Done()
	}()
	c.s.g.fastCalls.Add(1)
	req := &mcp.CallToolRequest{Session: ss, Params: &mcp.CallToolParamsRaw{Meta: fc.meta, Name: fc.name, Arguments: fc.args}}
	res := c.s.callUpstream(ctx, req, fc.route)
	resp := &jsonrpc.Response{ID: id}
	if data, err := encodeResult(res); err != nil {
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("statewright gateway: encode the result of %s: %v", fc.name, err)}
	} else {
		resp.Result = data
	}
	// As the SDK does, the answer is sent even when the call was cancelled.
	if err := c.Connection.Write(context.WithoutCancel(ctx), resp); err != nil {
		c.s.g.opts.Logger.Debug("write a tools/call answer", "tool", fc.name, "err", err)
	}
}

// encodeResult encodes a result as the SDK's JSON-RPC layer does (no HTML
// escaping).
func encodeResult(res *mcp.CallToolResult) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// cancelled cancels the fast-path call a notifications/cancelled names.
func (c *fastConn) cancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return
	}
	c.mu.Lock()
	cancel := c.calls[id]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// metaProtocolVersion is the request metadata of the 2026-07-28 protocol's
// sessionless requests, which the SDK handles.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// decodeFastCall decodes a tools/call's parameters for the fast path, with
// exact keys as the SDK's decoder: ok is false for anything it leaves to
// the SDK (which also answers the errors).
func decodeFastCall(params json.RawMessage) (fastCall, bool) {
	var w map[string]json.RawMessage
	if json.Unmarshal(params, &w) != nil || w == nil {
		return fastCall{}, false
	}
	var fc fastCall
	for k, v := range w {
		switch k {
		case "name":
			if json.Unmarshal(v, &fc.name) != nil || fc.name == "" {
				return fastCall{}, false
			}
		case "arguments":
			fc.args = v
		case "_meta":
			if json.Unmarshal(v, &fc.meta) != nil {
				return fastCall{}, false
			}
			if _, ok := fc.meta[metaProtocolVersion]; ok {
				return fastCall{}, false
			}
			if repeatedMeta(params) {
				return fastCall{}, false
			}
		default:
			// inputResponses, requestState (a multi-round-trip retry) or
			// anything else: the SDK's.
			return fastCall{}, false
		}
	}
	return fc, fc.name != ""
}

// repeatedMeta reports whether params may hold the key _meta more than
// once. The SDK's decoder merges repeated objects into one _meta (it would
// see a 2026-07-28 request metadata, or a progress token, that a later
// _meta hides from the last-wins map above), so such a call is the SDK's.
// The key can be spelt otherwise only with a \u escape.
func repeatedMeta(params []byte) bool {
	return bytes.Count(params, []byte(`"_meta"`)) != 1 || bytes.Contains(params, []byte(`\u`))
}
