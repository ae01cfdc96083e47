// Package mcpio is a newline-delimited JSON-RPC transport for the go-sdk's
// MCP servers (stdio, and the in-memory pipe of tests and benchmarks) that
// reads each message without the SDK's own per-message decoding.
//
// The go-sdk's ioConn (behind mcp.StdioTransport, mcp.IOTransport and
// mcp.InMemoryTransport) decodes every inbound message two or three times
// through its internal JSON package, and each of those decodes allocates a
// fresh 32 KiB buffer: first as a batch (an array), then as a message, then
// its method again. Transport does the same framing with one pass of
// encoding/json per message, and keeps the ioConn's behaviour: messages are
// JSON values each followed by a newline (or the end of the stream), a frame
// is bounded by MaxLineLength, nesting deeper than the SDK's decoder reads
// (1000) is malformed, a malformed message ends the connection, and
// JSON-RPC batches are accepted until the session negotiates 2025-06-18 or
// later, with their responses sent back as one array.
package mcpio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// batchlessVersion is the first MCP version without JSON-RPC batches.
const batchlessVersion = "2025-06-18"

// Transport is an mcp.Transport over a reader and a writer carrying
// newline-delimited JSON-RPC, for one mcp.Server.Connect (or Run).
type Transport struct {
	Reader io.ReadCloser
	Writer io.WriteCloser
	// MaxLineLength bounds the bytes buffered while one inbound message is
	// read: 0 is mcp.DefaultMaxLineLength, a negative value no bound.
	MaxLineLength int
}

// Connect implements mcp.Transport.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	if t.Reader == nil || t.Writer == nil {
		return nil, errors.New("mcpio: a reader and a writer are required")
	}
	limit := t.MaxLineLength
	if limit == 0 {
		limit = mcp.DefaultMaxLineLength
	}
	c := &conn{r: t.Reader, w: t.Writer, incoming: make(chan frame), closed: make(chan struct{})}
	go c.readLoop(limit)
	return c, nil
}

// frame is one inbound JSON value, or the error that ended the stream.
type frame struct {
	raw json.RawMessage
	err error
}

// conn is the connection Transport makes.
type conn struct {
	r io.ReadCloser
	w io.WriteCloser

	incoming chan frame
	queue    []jsonrpc.Message // the rest of the last batch; Read is not concurrent

	mu      sync.Mutex // guards the fields below
	version string     // the negotiated protocol version ("" before initialize)
	initID  jsonrpc.ID // the initialize request's id, until answered
	batches map[jsonrpc.ID]*batch

	writeMu sync.Mutex

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// batch collects the responses to one inbound batch's calls.
type batch struct {
	pending   map[jsonrpc.ID]int
	responses []*jsonrpc.Response
}

// readLoop reads JSON values off the stream and hands them to Read, until
// the stream ends or the connection closes. It runs on its own goroutine so
// that Close unblocks a Read (as the SDK's ioConn does).
func (c *conn) readLoop(limit int) {
	var r io.Reader = c.r
	var lim *limitReader
	if limit > 0 {
		lim = &limitReader{r: c.r, limit: limit}
		r = lim
	}
	dec := json.NewDecoder(r)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == nil {
			// A value must be followed by a newline or the end of the stream.
			var b [1]byte
			if n, rerr := dec.Buffered().Read(b[:]); n > 0 {
				if b[0] != '\n' && b[0] != '\r' {
					err = errors.New("mcpio: invalid trailing data at the end of a message")
				}
			} else if rerr != nil && rerr != io.EOF {
				err = rerr
			}
		}
		if errors.Is(err, errFrameTooLarge) {
			err = fmt.Errorf("mcpio: %w", err)
		}
		select {
		case c.incoming <- frame{raw: raw, err: err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
		if lim != nil {
			lim.count = 0
		}
	}
}

// errFrameTooLarge is a message longer than MaxLineLength.
var errFrameTooLarge = errors.New("an inbound JSON-RPC message exceeded the maximum line length")

// limitReader bounds the bytes read for one message.
type limitReader struct {
	r            io.Reader
	limit, count int
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.count >= l.limit {
		return 0, errFrameTooLarge
	}
	if len(p) > l.limit-l.count {
		p = p[:l.limit-l.count]
	}
	n, err := l.r.Read(p)
	l.count += n
	return n, err
}

// SessionID implements mcp.Connection: a stream has no session id.
func (c *conn) SessionID() string { return "" }

// Read implements mcp.Connection.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	var f frame
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case f = <-c.incoming:
	case <-c.closed:
		return nil, io.EOF
	}
	if f.err != nil {
		return nil, f.err
	}
	msgs, isBatch, err := DecodeFrame(f.raw)
	if err != nil {
		return nil, err
	}
	if !isBatch {
		if r, ok := msgs[0].(*jsonrpc.Request); ok && r.Method == "initialize" && r.ID.IsValid() {
			c.mu.Lock()
			c.initID = r.ID
			c.mu.Unlock()
		}
		return msgs[0], nil
	}
	c.mu.Lock()
	v := c.version
	c.mu.Unlock()
	if v >= batchlessVersion {
		return nil, fmt.Errorf("mcpio: JSON-RPC batching is not supported in %s and later (the session's version: %s)", batchlessVersion, v)
	}
	var b *batch
	for _, m := range msgs {
		r, ok := m.(*jsonrpc.Request)
		if !ok || !r.ID.IsValid() {
			continue
		}
		if r.Method == "initialize" {
			// Its answer sets the version as a lone initialize's does.
			c.mu.Lock()
			c.initID = r.ID
			c.mu.Unlock()
		}
		if b == nil {
			b = &batch{pending: map[jsonrpc.ID]int{}}
		}
		if _, dup := b.pending[r.ID]; dup {
			return nil, fmt.Errorf("mcpio: duplicate message id %v in a batch", r.ID.Raw())
		}
		b.pending[r.ID] = len(b.responses)
		b.responses = append(b.responses, nil)
	}
	if b != nil {
		c.mu.Lock()
		for id := range b.pending {
			if _, ok := c.batches[id]; ok {
				c.mu.Unlock()
				return nil, fmt.Errorf("mcpio: a batch repeats the id %v of a call still under way", id.Raw())
			}
		}
		if c.batches == nil {
			c.batches = map[jsonrpc.ID]*batch{}
		}
		for id := range b.pending {
			c.batches[id] = b
		}
		c.mu.Unlock()
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

// Write implements mcp.Connection.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var data []byte
	var err error
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.noteVersion(resp)
		all, inBatch := c.answer(resp)
		switch {
		case inBatch && all == nil:
			return nil // the batch is not complete yet
		case inBatch:
			data, err = encodeBatch(all)
		default:
			data, err = jsonrpc.EncodeMessage(msg)
		}
	} else {
		data, err = jsonrpc.EncodeMessage(msg)
	}
	if err != nil {
		return fmt.Errorf("mcpio: encode a message: %w", err)
	}
	data = append(data, '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.w.Write(data)
	return err
}

// noteVersion records the protocol version of the answer to initialize.
func (c *conn) noteVersion(resp *jsonrpc.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.initID.IsValid() || resp.ID != c.initID {
		return
	}
	c.initID = jsonrpc.ID{}
	if resp.Error != nil {
		return
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(resp.Result, &r) == nil {
		c.version = r.ProtocolVersion
	}
}

// answer files resp under the batch of its call, if any: inBatch reports
// whether it belongs to one, and all is the batch's responses once every
// call of it is answered.
func (c *conn) answer(resp *jsonrpc.Response) (all []*jsonrpc.Response, inBatch bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	b.responses[b.pending[resp.ID]] = resp
	delete(b.pending, resp.ID)
	delete(c.batches, resp.ID)
	if len(b.pending) > 0 {
		return nil, true
	}
	return b.responses, true
}

func encodeBatch(rs []*jsonrpc.Response) ([]byte, error) {
	raws := make([]json.RawMessage, 0, len(rs))
	for _, r := range rs {
		raw, err := jsonrpc.EncodeMessage(r)
		if err != nil {
			return nil, err
		}
		raws = append(raws, raw)
	}
	return json.Marshal(raws)
}

// Close implements mcp.Connection.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
		close(c.closed)
	})
	return c.closeErr
}

// NewInMemoryTransports returns the two ends of an in-memory pipe, as
// mcp.NewInMemoryTransports does, but with a Transport on the server's end:
// connect the server to server first, then a client to client (the SDK's
// own transport, as any client's).
func NewInMemoryTransports() (client *mcp.IOTransport, server *Transport) {
	c1, c2 := net.Pipe()
	return &mcp.IOTransport{Reader: c1, Writer: c1}, &Transport{Reader: c2, Writer: c2}
}
