package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Kind says how the server classified a request.
type Kind string

// Request kinds.
const (
	// KindTurn is a model request of a scripted conversation (the main one,
	// or a [Thread] named by Request.Thread): it was answered with the
	// conversation's next turn (or, past the end, the exhausted text).
	KindTurn Kind = "turn"
	// KindSide is a model request of no scripted conversation (title
	// generation, topic detection, quota probes): answered with SideText.
	KindSide Kind = "side"
	// KindAux is a non-generation endpoint the server answers (token
	// counting, model listing, a HEAD probe).
	KindAux Kind = "aux"
	// KindUnknown is anything else: answered 404 and worth a look.
	KindUnknown Kind = "unknown"
)

// Request is one recorded HTTP request and how it was answered.
type Request struct {
	// Seq numbers requests in the order they were answered, from 0.
	Seq int
	// Time is when the request arrived.
	Time time.Time
	// Method, Path and RawQuery are the request line.
	Method, Path, RawQuery string
	// Header is the request's header.
	Header http.Header
	// Body is the request body as received.
	Body []byte
	// Kind is how the server classified the request.
	Kind Kind
	// Thread is the name of the [Thread] the request belonged to, "" for
	// the main conversation and for requests that are not model turns.
	Thread string
	// Turn is the index of the scripted turn answered (in its thread), or
	// -1.
	Turn int
	// Stream reports whether the answer was streamed (server-sent events).
	Stream bool
	// Status is the HTTP status answered.
	Status int
}

// Option configures a server.
type Option func(*Server)

// WithLog sends one line per request (and per script problem) to logf,
// e.g. testing.T.Logf. Unknown endpoints are logged with their body.
func WithLog(logf func(format string, args ...any)) Option {
	return func(s *Server) { s.logf = logf }
}

// Server is a running fake model server on a loopback port, in the manner of
// httptest.Server.
type Server struct {
	// URL is the base URL, e.g. "http://127.0.0.1:40123" (no trailing slash,
	// no /v1): what ANTHROPIC_BASE_URL takes.
	URL string

	hs     *httptest.Server
	script Script
	proto  protocol
	logf   func(string, ...any)
	msgSeq atomic.Int64 // numbers message ids

	mu       sync.Mutex
	requests []Request
	next     map[string]int // next turn to serve, by thread ("" = main)
	overruns int
}

// protocol is one wire API: it classifies and answers requests, and turns
// the script into that API's wire format.
type protocol interface {
	// serve answers r, whose body has been read into req.Body, and fills
	// req.Kind, req.Stream and req.Status. It calls s.respond for model
	// requests.
	serve(s *Server, w http.ResponseWriter, r *http.Request, req *Request)
	// defaultIsMain is the main-conversation test used when Script.IsMain
	// is nil.
	defaultIsMain(*Request) bool
	// toolResults returns the tool results a request carries.
	toolResults(*Request) []ToolResult
}

func newServer(script Script, proto protocol, opts []Option) *Server {
	if err := script.validate(); err != nil {
		panic(err)
	}
	if script.IsMain == nil {
		script.IsMain = proto.defaultIsMain
	}
	if script.SideText == "" {
		script.SideText = "OK"
	}
	if script.ExhaustedText == "" {
		script.ExhaustedText = "fakemodel: script exhausted"
	}
	s := &Server{script: script, proto: proto, next: map[string]int{}}
	for _, o := range opts {
		o(s)
	}
	s.hs = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = s.hs.URL
	return s
}

// Close shuts the server down and blocks until all requests have finished.
func (s *Server) Close() { s.hs.Close() }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{
		Time:     time.Now(),
		Method:   r.Method,
		Path:     r.URL.Path,
		RawQuery: r.URL.RawQuery,
		Header:   r.Header.Clone(),
		Body:     body,
		Turn:     -1,
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.proto.serve(s, w, r, &req)
	s.mu.Lock()
	req.Seq = len(s.requests)
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	if req.Kind == KindUnknown {
		s.log("fakemodel: unknown %s %s?%s -> %d body=%.2000s", req.Method, req.Path, req.RawQuery, req.Status, body)
	} else {
		s.log("fakemodel: %s %s kind=%s thread=%q turn=%d stream=%v -> %d", req.Method, req.Path, req.Kind, req.Thread, req.Turn, req.Stream, req.Status)
	}
}

func (s *Server) log(format string, args ...any) {
	if s.logf != nil {
		s.logf(format, args...)
	}
}

// reply is a model answer, wire-neutral: text, then tool calls with their
// ids and inputs as JSON objects.
type reply struct {
	Text  string
	Calls []call
}

type call struct {
	ID, Name string
	Input    json.RawMessage
}

// respond classifies a model request (a thread's, the main conversation's,
// or a side request), takes the next turn of its conversation, and fills
// req.Kind, req.Thread and req.Turn.
func (s *Server) respond(req *Request) reply {
	thread, turns, kind := "", s.script.Turns, KindSide
	for _, th := range s.script.Threads {
		if th.Match(req) {
			thread, turns, kind = th.Name, th.Turns, KindTurn
			break
		}
	}
	if kind == KindSide && s.script.IsMain(req) {
		kind = KindTurn
	}
	req.Kind, req.Thread = kind, thread
	if kind == KindSide {
		return reply{Text: s.script.SideText}
	}
	if thread == "" && s.script.Respond != nil {
		return s.respondDynamic(req)
	}
	s.mu.Lock()
	index := s.next[thread]
	if index >= len(turns) {
		s.overruns++
		s.mu.Unlock()
		s.log("fakemodel: %s request after the last of %d turns: answering %q", threadName(thread), len(turns), s.script.ExhaustedText)
		return reply{Text: s.script.ExhaustedText}
	}
	s.next[thread]++
	s.mu.Unlock()
	req.Turn = index
	turn := turns[index]
	r := reply{Text: turn.Text}
	idThread := thread
	if idThread == "" {
		idThread = mainThread
	}
	for i, u := range turn.ToolUses {
		in, _ := u.inputJSON() // validated when the server was made
		r.Calls = append(r.Calls, call{ID: u.toolUseID(idThread, index, i), Name: u.Name, Input: in})
	}
	return r
}

func threadName(thread string) string {
	if thread == "" {
		return "main"
	}
	return "thread " + thread
}

// Requests returns a copy of every request answered so far, in the order
// they were answered.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// MainRequests returns the requests of the main conversation, in the order
// they were answered (including those past the end of the script).
func (s *Server) MainRequests() []Request { return s.ThreadRequests("") }

// ThreadRequests returns the requests of the named thread ("" for the main
// conversation), in the order they were answered.
func (s *Server) ThreadRequests(name string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Kind == KindTurn && r.Thread == name {
			out = append(out, r)
		}
	}
	return out
}

// Unknown returns the requests to endpoints the server does not implement.
func (s *Server) Unknown() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Kind == KindUnknown {
			out = append(out, r)
		}
	}
	return out
}

// Served returns how many turns of the main conversation have been
// answered.
func (s *Server) Served() int { return s.ServedThread("") }

// ServedThread returns how many turns of the named thread ("" for the main
// conversation) have been answered.
func (s *Server) ServedThread(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next[name]
}

// Overruns returns how many main or thread requests arrived after their
// conversation's turns ran out.
func (s *Server) Overruns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overruns
}

// ToolUseID returns the tool-use id sent for tool call i of turn t of the
// main conversation.
func (s *Server) ToolUseID(t, i int) string {
	return s.script.Turns[t].ToolUses[i].toolUseID(mainThread, t, i)
}

// ThreadToolUseID returns the tool-use id sent for tool call i of turn t of
// the named thread. It panics if there is no such thread.
func (s *Server) ThreadToolUseID(name string, t, i int) string {
	for _, th := range s.script.Threads {
		if th.Name == name {
			return th.Turns[t].ToolUses[i].toolUseID(name, t, i)
		}
	}
	panic("fakemodel: no thread " + name)
}

// ToolResult is what the harness told the model about one tool call.
type ToolResult struct {
	// ToolUseID is the id of the tool call this result answers.
	ToolUseID string
	// Content is the result as text.
	Content string
	// IsError reports whether the harness marked the result as an error
	// (as it does for a call a hook denied).
	IsError bool
	// Seq is the Seq of the first request that carried it.
	Seq int
}

// ToolResult returns the result the harness reported for the tool call id,
// taken from the first scripted-conversation request that carried it.
func (s *Server) ToolResult(id string) (ToolResult, bool) {
	for _, r := range s.Requests() {
		if r.Kind != KindTurn {
			continue
		}
		for _, tr := range s.proto.toolResults(&r) {
			if tr.ToolUseID == id {
				tr.Seq = r.Seq
				return tr, true
			}
		}
	}
	return ToolResult{}, false
}

// Summary describes every request in one line each, for test failure
// messages.
func (s *Server) Summary() string {
	var b bytes.Buffer
	for _, r := range s.Requests() {
		fmt.Fprintf(&b, "#%d %s %s kind=%s thread=%q turn=%d stream=%v status=%d len=%d\n",
			r.Seq, r.Method, r.Path, r.Kind, r.Thread, r.Turn, r.Stream, r.Status, len(r.Body))
	}
	return b.String()
}
