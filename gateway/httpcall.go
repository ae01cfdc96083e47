package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/internal/mcpio"
)

// postCallVersions are the protocol versions of an HTTP upstream's session
// whose tools/call the gateway posts itself (postCall): the streamable
// HTTP transport of these versions takes a call as one POST on the
// session, with the session's id and version in headers. Any other
// version (the 2026-07-28 protocol's sessionless requests carry their
// own metadata and headers) goes through the SDK's client.
var postCallVersions = map[string]bool{"2025-11-25": true, "2025-06-18": true, "2025-03-26": true}

// The streamable HTTP transport's headers.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-ID"
)

// postCallRetries bounds how often a call's event stream that ended
// without the call's answer is resumed without making progress, as the
// SDK's client does (StreamableClientTransport.MaxRetries' default).
const postCallRetries = 5

// canPostCall reports whether a tools/call of u on cs goes through
// postCall, and with which client, session id and protocol version.
func (u *upstream) canPostCall(cs *mcp.ClientSession) (hc *http.Client, session, version string, ok bool) {
	if u.http == nil || u.m.sdkCalls {
		return nil, "", "", false
	}
	u.mu.Lock()
	hc = u.hc
	if u.cs != cs {
		hc = nil
	}
	u.mu.Unlock()
	ir := cs.InitializeResult()
	if hc == nil || ir == nil || !postCallVersions[ir.ProtocolVersion] {
		return nil, "", "", false
	}
	return hc, cs.ID(), ir.ProtocolVersion, true
}

// postCall sends one tools/call to an HTTP upstream as a POST of its own on
// the session cs holds, and reads the answer off that POST's response,
// instead of through the SDK's client, which decodes each answer three
// times (the message, the result, the result's content), each time into a
// fresh 32 KiB buffer, on two more goroutines. The result is decoded once,
// by the SDK's own CallToolResult decoder, so the caller gets what the
// SDK's CallTool returns.
//
// Everything else on the session stays the SDK's: initialize, the lists,
// the standalone stream. What the upstream sends on the call's own stream
// before its answer is handled as the gateway's SDK client handles it:
// progress is forwarded to the client's token, a changed list re-lists the
// upstream, a ping is answered, roots/list gets the client's roots (none),
// sampling and elicitation are refused as unsupported, other requests as
// unknown methods, other notifications dropped. A stream that ends before
// the answer is resumed from its last event id, as the SDK resumes it.
// Cancelling ctx sends notifications/cancelled for the call, as the SDK
// does.
func (m *Manager) postCall(ctx context.Context, u *upstream, cs *mcp.ClientSession, hc *http.Client, session, version string,
	r Route, args json.RawMessage, ss *mcp.ServerSession, progressToken any) (*mcp.CallToolResult, error) {
	id := "statewright-" + strconv.FormatInt(m.nextCall.Add(1), 10)
	body, err := callBody(id, r.Name, args, func() string {
		if ss == nil || progressToken == nil {
			return ""
		}
		tok := "sw-" + strconv.FormatInt(m.nextToken.Add(1), 10)
		m.progress.Store(tok, progressTarget{ss: ss, token: progressToken, cs: cs})
		return tok
	})
	if tok, ok := body.token(); ok {
		defer m.progress.Delete(tok)
	}
	if err != nil {
		return nil, fmt.Errorf("sending \"tools/call\": %w", err)
	}
	want, err := jsonrpc.MakeID(id)
	if err != nil {
		return nil, err
	}
	pc := &postConn{m: m, u: u, cs: cs, hc: hc, url: u.cfg.URL, session: session, version: version}
	// The call's requests end with ctx until the answer is read; then the
	// rest of the answer's stream is read (drainStream).
	rctx, rcancel := context.WithCancel(context.WithoutCancel(ctx))
	unlink := context.AfterFunc(ctx, rcancel)
	var rest *http.Response // the stream the answer came on, not read to its end
	defer func() {
		if !unlink() || rest == nil {
			if rest != nil {
				rest.Body.Close()
			}
			rcancel()
			return
		}
		pc.drainStream(rest, rcancel)
	}()
	resp, err := pc.do(rctx, http.MethodPost, body.data, "")
	if err != nil {
		if ctx.Err() != nil {
			// The upstream may have the call (no answer came in time).
			go pc.cancelled(id, ctx.Err())
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("sending \"tools/call\": %w", err)
	}
	if err := pc.check(resp); err != nil {
		return nil, err
	}
	if sid := resp.Header.Get(headerSessionID); pc.session != "" && sid != "" && sid != pc.session {
		// Not this session's answer: the SDK's client refuses it so.
		resp.Body.Close()
		return nil, fmt.Errorf("sending \"tools/call\": mismatching session IDs %q and %q", pc.session, sid)
	}
	var result *jsonrpc.Response
	switch ct := mediaType(resp.Header.Get("Content-Type")); ct {
	case "application/json":
		result, err = pc.readJSON(resp, want)
	case "text/event-stream":
		result, rest, err = pc.readStream(ctx, rctx, resp, want)
	default:
		resp.Body.Close()
		err = fmt.Errorf("sending \"tools/call\": unsupported content type %q", ct)
	}
	if err != nil {
		if ctx.Err() != nil {
			go pc.cancelled(id, ctx.Err())
			return nil, ctx.Err()
		}
		return nil, err
	}
	if result.Error != nil {
		return nil, result.Error
	}
	var res mcp.CallToolResult
	if err := res.UnmarshalJSON(result.Result); err != nil {
		return nil, fmt.Errorf("decoding the result of \"tools/call\": %w", err)
	}
	if res.InputRequests != nil {
		// A multi-round-trip result is the 2026-07-28 protocol's, which
		// this session did not negotiate.
		return nil, errors.New("the upstream asked for input in a protocol version it did not negotiate")
	}
	m.posted.Add(1)
	return &res, nil
}

// postBody is a tools/call request's body, and the progress token it
// carries ("" for none).
type postBody struct {
	data []byte
	tok  string
}

func (b postBody) token() (string, bool) { return b.tok, b.tok != "" }

// callBody encodes a tools/call request as the SDK's client sends it:
// the arguments as given (compacted), {} when there are none, and the
// progress token newToken returns, if any.
func callBody(id, name string, args json.RawMessage, newToken func() string) (postBody, error) {
	var b bytes.Buffer
	b.Grow(96 + len(name) + len(args))
	b.WriteString(`{"jsonrpc":"2.0","id":"`)
	b.WriteString(id) // letters, digits and '-'
	b.WriteString(`","method":"tools/call","params":{`)
	tok := newToken()
	if tok != "" {
		b.WriteString(`"_meta":{"progressToken":"`)
		b.WriteString(tok) // letters, digits and '-'
		b.WriteString(`"},`)
	}
	n, err := json.Marshal(name)
	if err != nil {
		return postBody{tok: tok}, err
	}
	b.WriteString(`"name":`)
	b.Write(n)
	b.WriteString(`,"arguments":`)
	if len(args) == 0 {
		b.WriteString(`{}`)
	} else if err := json.Compact(&b, args); err != nil {
		return postBody{tok: tok}, err
	}
	b.WriteString(`}}`)
	return postBody{data: b.Bytes(), tok: tok}, nil
}

// postConn is one call's exchange with an HTTP upstream.
type postConn struct {
	m       *Manager
	u       *upstream
	cs      *mcp.ClientSession
	hc      *http.Client
	url     string
	session string
	version string
}

// do sends a request on the session: a POST of body, or a GET of the
// session's stream from lastEventID.
func (pc *postConn) do(ctx context.Context, method string, body []byte, lastEventID string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, pc.url, rd)
	if err != nil {
		return nil, err
	}
	h := req.Header
	if method == http.MethodPost {
		h["Content-Type"] = []string{"application/json"}
		h["Accept"] = []string{"application/json, text/event-stream"}
	} else {
		h["Accept"] = []string{"text/event-stream"}
		if lastEventID != "" {
			h[headerLastEventID] = []string{lastEventID}
		}
	}
	h[headerProtocolVersion] = []string{pc.version}
	if pc.session != "" {
		h[headerSessionID] = []string{pc.session}
	}
	return pc.hc.Do(req)
}

// check turns an unsuccessful response into an error, as the SDK's client
// does: a JSON-RPC error in its body, the session gone (404: the session
// holding it is closed, so the upstream is restarted), or the status.
func (pc *postConn) check(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	defer resp.Body.Close()
	status := http.StatusText(resp.StatusCode)
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return fmt.Errorf("sending \"tools/call\": %s", status)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if m, err := mcpio.DecodeMessage(body); err == nil {
		if r, ok := m.(*jsonrpc.Response); ok && r.Error != nil {
			return fmt.Errorf("sending \"tools/call\": %w: %s", r.Error, status)
		}
	}
	if resp.StatusCode == http.StatusNotFound && pc.session != "" {
		// The upstream ended the session: the SDK's client fails its
		// connection, and the manager restarts the upstream.
		go pc.cs.Close()
		return fmt.Errorf("sending \"tools/call\": failed to connect (session ID: %v): %w", pc.session, mcp.ErrSessionMissing)
	}
	return fmt.Errorf("sending \"tools/call\": %s", status)
}

// readJSON reads an answer sent as one JSON body.
func (pc *postConn) readJSON(resp *http.Response, want jsonrpc.ID) (*jsonrpc.Response, error) {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("sending \"tools/call\": failed to read body: %v", err)
	}
	m, err := mcpio.DecodeMessage(body)
	if err != nil {
		return nil, fmt.Errorf("sending \"tools/call\": failed to decode response: %v", err)
	}
	if r, ok := m.(*jsonrpc.Response); ok && r.ID == want {
		return r, nil
	}
	return nil, errors.New("request terminated without response")
}

// readStream reads the call's event stream up to its answer, resuming it
// from its last event id when it ends before (rctx: the requests'
// context). It returns the response the answer came on, whose body the
// caller closes: the stream may go on after the answer.
func (pc *postConn) readStream(ctx, rctx context.Context, resp *http.Response, want jsonrpc.ID) (*jsonrpc.Response, *http.Response, error) {
	var prevID string
	stalls := 0
	for {
		r, lastID, retry, err := pc.readEvents(ctx, resp, want)
		if r != nil {
			return r, resp, nil
		}
		if err != nil {
			// Not read on: what is left may not end (an event too
			// large).
			resp.Body.Close()
			return nil, nil, err
		}
		io.Copy(io.Discard, resp.Body) // the connection is kept
		resp.Body.Close()
		if lastID == "" {
			return nil, nil, errors.New("request terminated without response")
		}
		if lastID != prevID {
			prevID, stalls = lastID, 0
		} else if stalls++; stalls > postCallRetries {
			return nil, nil, fmt.Errorf("sending \"tools/call\": exceeded %d retries without progress (session ID: %v)", postCallRetries, pc.session)
		}
		if resp, err = pc.resume(rctx, lastID, retry, stalls); err != nil {
			return nil, nil, err
		}
	}
}

// drainWait is how long a call waits for the end of the stream its answer
// came on, which a server sends right after the answer (generous: a
// server that does not pays it once).
const drainWait = 500 * time.Millisecond

// drainStream reads the rest of the stream an answer came on, so that its
// connection is kept, then ends its request (cancel). A server closes a
// call's stream after the answer, so this takes no time; one that keeps
// it open after drainWait has its stream cut (and its connection closed)
// once, and from then on its streams are cut as soon as their answer is
// read, as the SDK's client ends a call's stream when the call returns
// (read in the background instead, each would hold a connection and a
// goroutine for the upstream's timeout, 60 s by default).
func (pc *postConn) drainStream(resp *http.Response, cancel context.CancelFunc) {
	if pc.u.lingers.Load() {
		resp.Body.Close()
		cancel()
		return
	}
	if !drain(resp, cancel, drainWait) {
		pc.u.lingers.Store(true)
		pc.m.drainsCut.Add(1)
	}
}

// drain reads resp's body to its end, then ends its request (cancel); it
// reports false when it had to end the request after limit instead.
func drain(resp *http.Response, cancel context.CancelFunc, limit time.Duration) bool {
	t := time.AfterFunc(limit, cancel)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ok := t.Stop()
	cancel()
	return ok
}

// resume opens the session's stream again from lastID, after the server's
// retry delay or a growing one.
func (pc *postConn) resume(ctx context.Context, lastID string, retry time.Duration, attempt int) (*http.Response, error) {
	delay := retry
	if delay <= 0 {
		delay = time.Second << min(attempt, 4)
	}
	var last error
	for range postCallRetries {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		resp, err := pc.do(ctx, http.MethodGet, nil, lastID)
		if err != nil {
			last = err
			delay *= 2
			continue
		}
		if err := pc.check(resp); err != nil {
			return nil, err
		}
		return resp, nil
	}
	return nil, fmt.Errorf("sending \"tools/call\": failed to reconnect (session ID: %v): %v", pc.session, last)
}

// readEvents reads one response's events: the call's answer, or where the
// stream ended (its last event id and the server's retry delay). It leaves
// the body open.
func (pc *postConn) readEvents(ctx context.Context, resp *http.Response, want jsonrpc.ID) (answer *jsonrpc.Response, lastID string, retry time.Duration, err error) {
	br := bufio.NewReader(resp.Body)
	var (
		name string
		data []byte
		seen bool // data given, maybe empty
	)
	size := 0 // bytes of the event so far
	for {
		line, rerr := readLine(br, maxEventSize-size)
		if rerr == errEventTooLarge {
			return nil, "", 0, fmt.Errorf("sending \"tools/call\": an event exceeded %d bytes without terminating", maxEventSize)
		}
		if rerr != nil && rerr != io.EOF {
			if ctx.Err() != nil {
				return nil, "", 0, ctx.Err()
			}
			return nil, lastID, retry, nil
		}
		size += len(line) + 1
		if len(line) == 0 { // an event ends
			size = 0
			if seen && len(data) > 0 && (name == "" || name == "message") {
				m, err := mcpio.DecodeMessage(data)
				if err != nil {
					return nil, "", 0, fmt.Errorf("sending \"tools/call\": failed to decode event: %v", err)
				}
				if r, ok := m.(*jsonrpc.Response); ok {
					if r.ID == want {
						return r, "", 0, nil
					}
				} else {
					pc.handle(ctx, m.(*jsonrpc.Request))
				}
			}
			name, data, seen = "", nil, false
			if rerr == io.EOF {
				return nil, lastID, retry, nil
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		switch string(field) {
		case "event":
			name = string(value)
		case "id":
			lastID = string(value)
		case "retry":
			if n, err := strconv.ParseInt(string(value), 10, 64); err == nil {
				retry = time.Duration(n) * time.Millisecond
			}
		case "data":
			if seen {
				data = append(data, '\n')
			}
			data, seen = append(data, value...), true
		}
		if rerr == io.EOF {
			return nil, lastID, retry, nil
		}
	}
}

// maxEventSize bounds the bytes of one event of a call's stream, as
// StreamableClientTransport.MaxEventSize bounds the SDK client's (which
// the gateway sets to this too): an upstream cannot make the gateway
// buffer an event without end.
const maxEventSize = mcp.DefaultMaxEventSize

// errEventTooLarge: an event went past maxEventSize.
var errEventTooLarge = errors.New("event too large")

// readLine reads one line of an event stream without its line ending, or
// errEventTooLarge once it is longer than budget; at the end of the stream
// it returns what is left and io.EOF.
func readLine(br *bufio.Reader, budget int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		buf := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			if len(buf) > budget {
				return nil, errEventTooLarge
			}
			line, err = br.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	if len(line) > budget {
		return nil, errEventTooLarge
	}
	return bytes.TrimRight(line, "\r\n"), err
}

// handle takes what the upstream sends on a call's stream besides the
// answer, as the gateway's SDK client (upstream.connect) would.
func (pc *postConn) handle(ctx context.Context, req *jsonrpc.Request) {
	if !req.ID.IsValid() {
		switch req.Method {
		case "notifications/progress":
			var p mcp.ProgressNotificationParams
			if json.Unmarshal(req.Params, &p) == nil {
				pc.m.forwardProgress(ctx, &mcp.ProgressNotificationClientRequest{Session: pc.cs, Params: &p})
			}
		case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
			go pc.u.refresh(context.Background())
		}
		return
	}
	resp := &jsonrpc.Response{ID: req.ID}
	switch req.Method {
	case "ping":
		resp.Result = json.RawMessage(`{}`)
	case "roots/list":
		resp.Result = json.RawMessage(`{"roots":[]}`)
	case "sampling/createMessage":
		resp.Error = &jsonrpc.Error{Code: codeUnsupportedMethod, Message: "client does not support CreateMessage"}
	case "elicitation/create":
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "client does not support elicitation"}
	default:
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q", req.Method)}
	}
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return
	}
	pc.notify(ctx, data)
}

// codeUnsupportedMethod is the SDK's error code for a request the client
// does not support.
const codeUnsupportedMethod = -31001

// cancelled tells the upstream the call id was cancelled, as the SDK's
// client does when the call's context ends: on a goroutine of its own,
// off the call's return path (an upstream that does not take it must not
// hold the call up to 5 s longer; the SDK's client sends it so too).
func (pc *postConn) cancelled(id string, cause error) {
	p, err := json.Marshal(map[string]any{"requestId": id, "reason": cause.Error()})
	if err != nil {
		return
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/cancelled", Params: p})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pc.notify(ctx, data)
}

// notify posts a notification or an answer on the session.
func (pc *postConn) notify(ctx context.Context, data []byte) {
	resp, err := pc.do(ctx, http.MethodPost, data, "")
	if err != nil {
		pc.m.logger.Debug("post to upstream", "upstream", pc.u.cfg.Name, "err", err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// mediaType is a Content-Type's media type, lower case, or "" for a
// malformed one: as the SDK's client reads it (mime.ParseMediaType), so
// an answer it would refuse is refused here too.
func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}
