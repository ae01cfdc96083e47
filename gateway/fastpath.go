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
	return &fastConn{Connection: c, s: ft.s, ctx: fctx, cancel: cancel, calls: map[jsonrpc.ID]context.CancelFunc{}, sdk: map[jsonrpc.ID]struct{}{}}, nil
}

// fastConn is the connection of a fastTransport.
type fastConn struct {
	mcp.Connection
	s *session

	ctx    context.Context // ends with the connection
	cancel context.CancelFunc

	mu    sync.Mutex
	calls map[jsonrpc.ID]context.CancelFunc // fast-path calls under way
	sdk   map[jsonrpc.ID]struct{}           // calls handed to the SDK, not yet answered
}

// Read implements mcp.Connection: it hands the SDK every message but the
// calls it answers itself.
//
// A request id names one call under way, whichever of the two answers it:
// a call that reuses the id of a call the SDK is answering goes to the SDK,
// which drops it unanswered (its jsonrpc2 layer: an answer without an id
// could not be told from one to the call under way); one that reuses the
// id of a fast-path call is dropped here, as the SDK would drop it. Either
// way the client never sees two answers with one id.
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
		if !r.ID.IsValid() {
			if r.Method == "notifications/cancelled" {
				c.cancelled(r.Params)
			}
			return m, nil
		}
		c.mu.Lock()
		_, fast := c.calls[r.ID]
		_, sdk := c.sdk[r.ID]
		c.mu.Unlock()
		switch {
		case fast:
			c.s.g.opts.Logger.Debug("a call reuses the id of a call under way; dropped", "method", r.Method, "id", r.ID.Raw())
			continue
		case sdk:
			return m, nil // the SDK refuses it
		case r.Method == "tools/call" && c.take(r):
			continue
		}
		c.mu.Lock()
		c.sdk[r.ID] = struct{}{}
		c.mu.Unlock()
		return m, nil
	}
}

// Write implements mcp.Connection: the SDK's answer to a call frees its id
// (before it is sent, as the SDK frees it: the client may reuse it as soon
// as it has the answer).
func (c *fastConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Response); ok && r.ID.IsValid() {
		c.mu.Lock()
		delete(c.sdk, r.ID)
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, m)
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
	c.calls[r.ID] = cancel // Read saw the id free
	c.mu.Unlock()
	// Gateway.Wait waits for the call too, as the SDK's session waits for
	// the requests it handles before it ends.
	s.g.settles.Add(1)
	s.g.workers.run(func() { c.answer(ctx, r.ID, ss, fc) })
	return true
}

// answer decides and forwards one call, and writes its answer.
func (c *fastConn) answer(ctx context.Context, id jsonrpc.ID, ss *mcp.ServerSession, fc fastCall) {
	defer c.s.g.settles.Done()
	c.s.g.fastCalls.Add(1)
	req := &mcp.CallToolRequest{Session: ss, Params: &mcp.CallToolParamsRaw{Meta: fc.meta, Name: fc.name, Arguments: fc.args}}
	res := c.s.callUpstream(ctx, req, fc.route)
	resp := &jsonrpc.Response{ID: id}
	if data, err := encodeResult(res); err != nil {
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("statewright gateway: encode the result of %s: %v", fc.name, err)}
	} else {
		resp.Result = data
	}
	// The id is free once the answer is sent: freed before, as the SDK
	// frees the ids of the calls it answers.
	c.mu.Lock()
	cancel := c.calls[id]
	delete(c.calls, id)
	c.mu.Unlock()
	defer cancel()
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
