package dashboard

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/statewright-go/statewright/internal/eventtext"
	"github.com/statewright-go/statewright/internal/wfgraph"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/workflow"
)

type ctxKey struct{}

func withPrincipal(ctx context.Context, pc principalCtx) context.Context {
	return context.WithValue(ctx, ctxKey{}, pc)
}

func principalFrom(ctx context.Context) principalCtx {
	pc, _ := ctx.Value(ctxKey{}).(principalCtx)
	return pc
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// maxBody bounds request bodies (a workflow source in the editor).
const maxBody = 1 << 20

func readJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if len(body) > maxBody {
		return errors.New("body too large (1 MiB at most)")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("body is not the expected JSON: %w", err)
	}
	return nil
}

// runSummary is a run in the list.
type runSummary struct {
	ID         string          `json:"id"`
	Session    string          `json:"session"`
	Workflow   string          `json:"workflow"`
	State      string          `json:"state"`
	Status     store.Status    `json:"status"`
	Iterations int64           `json:"iterations"`
	Pending    *store.Approval `json:"pending_approval,omitempty"`
	AuditOnly  bool            `json:"audit_only,omitempty"`
	Revision   int64           `json:"revision"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
}

func summarize(r *store.Run) runSummary {
	return runSummary{ID: r.ID, Session: r.SessionKey, Workflow: r.WorkflowID, State: r.State, Status: r.Status,
		Iterations: r.Iterations, Pending: r.PendingApproval, AuditOnly: r.AuditOnly, Revision: r.Revision,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func (h *Handler) runs(w http.ResponseWriter, r *http.Request) {
	runs, err := h.opts.Service.Runs(r.Context(), store.RunFilter{Limit: 500})
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	only := principalFrom(r.Context()).p.Session
	out := make([]runSummary, 0, len(runs))
	for _, run := range runs {
		if only == "" || run.SessionKey == only {
			out = append(out, summarize(run))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// loadRun reads the run named in the path; it answers 404 itself.
func (h *Handler) loadRun(w http.ResponseWriter, r *http.Request) *store.Run {
	run, err := h.opts.Store.Run(r.Context(), r.PathValue("id"))
	if only := principalFrom(r.Context()).p.Session; errors.Is(err, store.ErrNotFound) || (err == nil && only != "" && run.SessionKey != only) {
		writeError(w, http.StatusNotFound, "no such run")
		return nil
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return nil
	}
	return run
}

// graphOf lays out the workflow in force in a run.
func (h *Handler) graphOf(run *store.Run) *wfgraph.Graph {
	p, err := h.opts.Service.Prepared(run)
	if err != nil {
		return &wfgraph.Graph{}
	}
	return wfgraph.Build(p.Def)
}

func (h *Handler) run(w http.ResponseWriter, r *http.Request) {
	run := h.loadRun(w, r)
	if run == nil {
		return
	}
	v, err := h.opts.Service.View(run)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	var next []string
	for _, e := range v.NextEvents {
		next = append(next, e.String())
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"run": summarize(run), "source": run.WorkflowSource, "is_final": v.IsFinal, "allowed_tools": v.AllowedTools,
		"instructions": v.Instructions, "next_events": next, "max_iterations": v.MaxIterations, "runtime": v.Runtime,
		"workflow_in_force": v.Workflow, "stack": stackLines(v.Stack),
		"svg": wfgraph.SVG(h.graphOf(run), run.State),
	})
}

func (h *Handler) graphSVG(w http.ResponseWriter, r *http.Request) {
	run := h.loadRun(w, r)
	if run == nil {
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	io.WriteString(w, wfgraph.SVG(h.graphOf(run), run.State))
}

// EventFilter is the decision log's query: api/runs/{id}/events?kind=decision,transition&decision=deny&tool=Edit&q=text&limit=200.
type EventFilter struct {
	// Kinds limits to these event kinds (empty: all).
	Kinds []store.EventKind
	// Decision limits decision events to allow, deny or ask ("" all; other kinds pass).
	Decision string
	// Tool is a case-insensitive substring of the tool name ("" all).
	Tool string
	// Text is a case-insensitive substring of the rule, reason or data ("" all).
	Text string
	// Limit keeps the newest Limit matches (default 200, at most 2000).
	Limit int
}

// ParseEventFilter reads an EventFilter from query parameters.
func ParseEventFilter(q map[string][]string) (EventFilter, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	f := EventFilter{Decision: get("decision"), Tool: get("tool"), Text: get("q"), Limit: 200}
	for _, k := range strings.Split(get("kind"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			switch store.EventKind(k) {
			case store.KindDecision, store.KindResult, store.KindTransition, store.KindApproval, store.KindRun, store.KindAdmin:
				f.Kinds = append(f.Kinds, store.EventKind(k))
			default:
				return f, fmt.Errorf("unknown event kind %q", k)
			}
		}
	}
	switch f.Decision {
	case "", "allow", "deny", "ask":
	default:
		return f, fmt.Errorf("decision must be allow, deny or ask, not %q", f.Decision)
	}
	if l := get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n <= 0 {
			return f, fmt.Errorf("limit must be a positive number, not %q", l)
		}
		f.Limit = min(n, 2000)
	}
	return f, nil
}

// Match reports whether e passes the filter's decision, tool and text tests.
func (f EventFilter) Match(e *store.Event) bool {
	if f.Decision != "" && e.Kind == store.KindDecision && e.Decision != f.Decision {
		return false
	}
	if f.Decision != "" && e.Kind != store.KindDecision && len(f.Kinds) == 0 {
		// A decision filter without kinds means "decisions like this".
		return false
	}
	if f.Tool != "" && !strings.Contains(strings.ToLower(e.Tool), strings.ToLower(f.Tool)) {
		return false
	}
	if f.Text != "" {
		t := strings.ToLower(f.Text)
		if !strings.Contains(strings.ToLower(e.Rule), t) && !strings.Contains(strings.ToLower(e.Reason), t) &&
			!strings.Contains(strings.ToLower(string(e.Data)), t) {
			return false
		}
	}
	return true
}

// eventOut is an event as the API answers it: the stored event and the
// line `statewright history` prints for it.
type eventOut struct {
	store.Event
	Text string `json:"text"`
}

func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	run := h.loadRun(w, r)
	if run == nil {
		return
	}
	f, err := ParseEventFilter(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	evs, err := h.opts.Store.Events(r.Context(), store.EventFilter{RunID: run.ID, Kinds: f.Kinds})
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := make([]eventOut, 0, min(len(evs), f.Limit))
	for i := range evs {
		if f.Match(&evs[i]) {
			out = append(out, eventOut{Event: evs[i], Text: eventtext.Describe(&evs[i])})
		}
	}
	if len(out) > f.Limit {
		out = out[len(out)-f.Limit:]
	}
	writeJSON(w, http.StatusOK, out)
}

// head is what the event stream watches: the newest event's seq and the
// runs' revisions, so any decision, transition or approval shows.
func (h *Handler) head(ctx context.Context) (string, error) {
	evs, err := h.opts.Store.Events(ctx, store.EventFilter{Limit: 1, Newest: true})
	if err != nil {
		return "", err
	}
	var seq int64
	if len(evs) > 0 {
		seq = evs[0].Seq
	}
	runs, err := h.opts.Store.Runs(ctx, store.RunFilter{Limit: 500})
	if err != nil {
		return "", err
	}
	var rev int64
	for _, r := range runs {
		rev += r.Revision
	}
	return fmt.Sprintf("%d-%d-%d", seq, len(runs), rev), nil
}

// stream sends "change" server-sent events whenever the store changes
// (as the store's Watcher reports, and polled every Options.Poll), and a
// comment every 15 s to keep the connection open. The client re-reads what it shows on each change.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, "retry: 1000\n\n")
	fl.Flush()
	pc := principalFrom(r.Context())
	// A store that can say when runs change (LISTEN/NOTIFY on PostgreSQL)
	// wakes the loop at once; the ticker covers the rest.
	var changes <-chan store.Change
	if w, ok := h.opts.Store.(store.Watcher); ok {
		if ch, err := w.Watch(r.Context()); err == nil {
			changes = ch
		}
	}
	tick := time.NewTicker(h.opts.Poll)
	defer tick.Stop()
	last, lastBeat := "", time.Now()
	for n := 0; ; n++ {
		cur, err := h.head(r.Context())
		if err == nil && cur != last {
			last = cur
			fmt.Fprintf(w, "event: change\ndata: %q\n\n", cur)
			fl.Flush()
		}
		if time.Since(lastBeat) > 15*time.Second {
			io.WriteString(w, ": keep-alive\n\n")
			fl.Flush()
			lastBeat = time.Now()
		}
		// A revoked token or an expired session ends the stream.
		if n%20 == 19 && pc.session != nil {
			if _, err := h.opts.Verify(pc.session.token); err != nil {
				return
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		case _, ok := <-changes:
			if !ok {
				changes = nil
			}
		}
	}
}

func (h *Handler) templates(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, workflow.TemplateNames())
}

func (h *Handler) template(w http.ResponseWriter, r *http.Request) {
	src, err := workflow.TemplateSource(r.PathValue("name"))
	if err != nil {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write(src)
}

// Diagnostic is one finding of the editor's validation.
type Diagnostic struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
}

// ValidateResult is api/validate's answer.
type ValidateResult struct {
	// Valid is true when no diagnostic is an error.
	Valid       bool         `json:"valid"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	// SVG previews the workflow ("" when it does not parse).
	SVG string `json:"svg"`
	// States counts the states drawn.
	States int `json:"states"`
}

// ValidateSource parses and validates a workflow source as
// `statewright workflows validate` does, and draws it when it parses.
func ValidateSource(src []byte) ValidateResult {
	def, diags, err := workflow.Parse(src, workflow.ParseOptions{Source: "editor"})
	var pe *workflow.ParseError
	if err != nil && errors.As(err, &pe) {
		diags = pe.Diagnostics
	}
	res := ValidateResult{Diagnostics: []Diagnostic{}}
	if def != nil {
		diags = append(diags, workflow.Validate(def)...)
		g := wfgraph.Build(def)
		res.SVG = wfgraph.SVG(g, "")
		res.States = len(def.States)
	}
	for _, d := range diags {
		res.Diagnostics = append(res.Diagnostics, Diagnostic{Severity: string(d.Severity), Code: d.Code, Message: d.Message, Line: d.Pos.Line, Col: d.Pos.Col})
	}
	res.Valid = def != nil && !diags.HasErrors()
	return res
}

func (h *Handler) validate(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Source string `json:"source"`
	}
	if err := readJSON(r, &in); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, ValidateSource([]byte(in.Source)))
}

// decisionInput is the body of approve and reject.
type decisionInput struct {
	ApprovalID string `json:"approval_id"`
	Reason     string `json:"reason"`
}

// pendingFor checks that the body names the run's pending approval; it
// answers the error itself.
func (h *Handler) pendingFor(w http.ResponseWriter, r *http.Request) (*store.Run, decisionInput, bool) {
	var in decisionInput
	if err := readJSON(r, &in); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return nil, in, false
	}
	run := h.loadRun(w, r)
	if run == nil {
		return nil, in, false
	}
	if in.ApprovalID == "" {
		writeError(w, http.StatusBadRequest, "approval_id is required: an approval is bound to its id")
		return nil, in, false
	}
	if run.PendingApproval == nil || run.PendingApproval.ID != in.ApprovalID || !run.Status.Live() {
		writeError(w, http.StatusConflict, "approval "+in.ApprovalID+" is not pending on this run")
		return nil, in, false
	}
	return run, in, true
}

func (h *Handler) actor(r *http.Request) runtime.Actor {
	pc := principalFrom(r.Context())
	return runtime.Actor{Kind: runtime.ActorHuman, Channel: "web", Name: pc.p.Name}
}

func (h *Handler) approve(w http.ResponseWriter, r *http.Request) {
	run, in, ok := h.pendingFor(w, r)
	if !ok {
		return
	}
	res, err := h.opts.Service.Approve(r.Context(), run.SessionKey, in.ApprovalID, h.actor(r))
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, runtime.ErrNoApproval) || errors.Is(err, runtime.ErrNoRun) || errors.Is(err, runtime.ErrPaused) {
			code = http.StatusConflict
		}
		writeError(w, code, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"approved": in.ApprovalID, "from": res.From, "to": res.To, "final": res.Final})
}

func (h *Handler) reject(w http.ResponseWriter, r *http.Request) {
	run, in, ok := h.pendingFor(w, r)
	if !ok {
		return
	}
	reason := in.Reason
	if reason == "" {
		reason = "rejected on the dashboard"
	}
	if err := h.opts.Service.Reject(r.Context(), run.SessionKey, in.ApprovalID, reason, h.actor(r)); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, runtime.ErrNoApproval) || errors.Is(err, runtime.ErrNoRun) {
			code = http.StatusConflict
		}
		writeError(w, code, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"rejected": in.ApprovalID, "state": run.State})
}

// stackLines renders a run's stack of sub-workflows, outermost first.
func stackLines(stack []runtime.StackEntry) []string {
	out := make([]string, 0, len(stack))
	for _, e := range stack {
		out = append(out, e.String())
	}
	return out
}

// verify answers the event log's verdict (store.Audit, as `statewright
// verify` runs it): {"ok": bool, "verdict": text}. It reads the whole log,
// so the page asks for it on sign-in and on request, not on every change.
func (h *Handler) verify(w http.ResponseWriter, r *http.Request) {
	var keys []ed25519.PublicKey
	if h.opts.TrustedKeys != nil {
		k, err := h.opts.TrustedKeys()
		if err != nil {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "verdict": "the trusted keys cannot be read: " + err.Error()})
			return
		}
		keys = k
	}
	v, err := store.Audit(r.Context(), h.opts.Store, keys, nil)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "verdict": "the event log does NOT verify: " + err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "verdict": v.String(), "checkpoint": v.Chain.Checkpoint, "uncovered": v.Chain.Uncovered})
}
