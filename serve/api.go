package serve

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/statewright-go/statewright/dashboard"
	"github.com/statewright-go/statewright/gateway"
	"github.com/statewright-go/statewright/gateway/tokens"
	"github.com/statewright-go/statewright/mcpserver"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// MountMCP mounts the gateway's streamable-HTTP MCP endpoint at /mcp for
// agent and operator tokens. An MCP session acts on the session its token
// is bound to, or the one the Statewright-Session header names, or a fresh
// one of harness.
func (s *Server) MountMCP(g *gateway.Gateway, harness string) {
	mcpH := g.HTTPHandler(gateway.HTTPOptions{
		Resolve: func(r *http.Request) (gateway.SessionOptions, string, error) {
			t, _ := Principal(r.Context())
			key, err := requestSession(r, t, harness)
			if err != nil {
				return gateway.SessionOptions{}, "", err
			}
			return gateway.SessionOptions{Session: key, Channel: "serve"}, t.ID, nil
		},
		Owner: func(r *http.Request) string {
			t, _ := Principal(r.Context())
			return t.ID
		},
	})
	for _, m := range []string{"POST", "GET", "DELETE"} {
		s.Handle(m+" /mcp", AnyToken, mcpH)
	}
}

// MountAPI mounts the operator API: GET /api/sessions/{session} (a run's
// state, any token) and POST /api/sessions/{session}/{action} (approve,
// reject, pause, resume, deactivate: operator tokens only).
func (s *Server) MountAPI(svc *runtime.Service, harness string) {
	s.Handle("GET /api/sessions/{session}", AnyToken, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := mcpserver.ParseSessionKey(harness, r.PathValue("session"))
		if err != nil {
			http.Error(w, "statewright: "+err.Error(), http.StatusBadRequest)
			return
		}
		if t, _ := Principal(r.Context()); t.Session != "" && t.Session != key {
			http.Error(w, "statewright: this token is bound to another session", http.StatusForbidden)
			return
		}
		v, err := svc.Status(r.Context(), key)
		if err != nil {
			writeAPIError(w, err)
			return
		}
		run := v.Run.Clone()
		run.Snapshot = nil
		v.Run = run
		writeHTTPJSON(w, http.StatusOK, v)
	}))
	s.Handle("POST /api/sessions/{session}/{action}", OperatorOnly, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		operatorAction(w, r, svc, harness)
	}))
}

// DashboardPath is where the web dashboard is mounted.
const DashboardPath = "/dashboard/"

// MountDashboard mounts the web dashboard at DashboardPath. It is mounted
// Public at the server's level because a browser cannot put a bearer
// header on page loads or an EventSource: the dashboard signs browsers in
// with a token itself (session cookie, CSRF token) and checks every API
// call against the server's tokens; the Host and Origin checks still apply.
func (s *Server) MountDashboard(svc *runtime.Service, st store.Store) error {
	dash, err := dashboard.New(dashboard.Options{Service: svc, Store: st, Verify: tokenVerifier(s.opts.Tokens), TrustedKeys: s.opts.TrustedKeys})
	if err != nil {
		return err
	}
	s.Handle(DashboardPath, Public, http.StripPrefix(strings.TrimSuffix(DashboardPath, "/"), dash))
	s.Handle("GET "+strings.TrimSuffix(DashboardPath, "/"), Public, http.RedirectHandler(DashboardPath, http.StatusFound))
	return nil
}

// tokenVerifier maps the token file to the dashboard's roles: operator
// tokens may approve, agent tokens only look, and a token bound to one
// session sees only that session; a hook credential or a metrics token
// signs in nowhere.
// Revoked tokens fail at the next request.
func tokenVerifier(tf *tokens.File) func(string) (dashboard.Principal, error) {
	return func(tok string) (dashboard.Principal, error) {
		t, err := tf.Verify(tok)
		if err != nil {
			return dashboard.Principal{}, err
		}
		if t.Role == tokens.Hook || t.Role == tokens.Metrics {
			return dashboard.Principal{}, dashboard.ErrBadToken
		}
		p := dashboard.Principal{Role: dashboard.RoleAgent, Name: t.ID, Session: t.Session}
		if t.Name != "" {
			p.Name = t.Name + " (" + t.ID + ")"
		}
		if t.Role == tokens.Operator {
			p.Role = dashboard.RoleOperator
		}
		return p, nil
	}
}

// requestSession resolves the store session an MCP session acts on: the
// token's bound session, else the Statewright-Session header, else a fresh
// session of its own.
func requestSession(r *http.Request, t tokens.Token, harness string) (string, error) {
	hdr := strings.TrimSpace(r.Header.Get(gateway.SessionHeader))
	if t.Session != "" {
		if hdr != "" {
			k, err := mcpserver.ParseSessionKey(harness, hdr)
			if err != nil || k != t.Session {
				return "", fmt.Errorf("this token is bound to session %s; the %s header names another", t.Session, gateway.SessionHeader)
			}
		}
		return t.Session, nil
	}
	if hdr != "" {
		return mcpserver.ParseSessionKey(harness, hdr)
	}
	return harness + ":gw-" + strings.ToLower(rand.Text()), nil
}

// operatorAction runs approve, reject, pause, resume or deactivate for a
// person holding an operator token.
func operatorAction(w http.ResponseWriter, r *http.Request, svc *runtime.Service, harness string) {
	key, err := mcpserver.ParseSessionKey(harness, r.PathValue("session"))
	if err != nil {
		http.Error(w, "statewright: "+err.Error(), http.StatusBadRequest)
		return
	}
	t, _ := Principal(r.Context())
	by := runtime.Actor{Kind: runtime.ActorHuman, Channel: "serve:operator-token", Name: t.ID}
	if t.Name != "" {
		by.Name = t.Name + " (" + t.ID + ")"
	}
	var body struct {
		ApprovalID string `json:"approval_id"`
		Reason     string `json:"reason"`
	}
	if r.ContentLength != 0 {
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&body); err != nil && !errors.Is(err, io.EOF) {
			http.Error(w, "statewright: the body is not a JSON object: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	ctx := r.Context()
	// An Idempotency-Key makes a retried approval (the replica that took
	// the first attempt died before answering) answer the first result
	// instead of "no approval pending"; keys are per token.
	if k := strings.TrimSpace(r.Header.Get("Idempotency-Key")); k != "" {
		ctx = runtime.WithRequestID(ctx, "http:"+t.ID+":"+k)
	}
	pendingID := func() (string, error) {
		v, err := svc.Status(ctx, key)
		if err != nil {
			return "", err
		}
		ap := v.Run.PendingApproval
		if ap == nil {
			return "", fmt.Errorf("%w: none is pending for %s", runtime.ErrNoApproval, key)
		}
		if body.ApprovalID != "" && body.ApprovalID != ap.ID {
			return "", fmt.Errorf("%w: %s is not pending (pending: %s)", runtime.ErrNoApproval, body.ApprovalID, ap.ID)
		}
		return ap.ID, nil
	}
	var out any
	switch r.PathValue("action") {
	case "approve":
		id, err := body.ApprovalID, error(nil)
		if id == "" || runtime.RequestID(ctx) == "" {
			id, err = pendingID()
		}
		if err == nil {
			out, err = svc.Approve(ctx, key, id, by)
		}
		if err != nil {
			writeAPIError(w, err)
			return
		}
	case "reject":
		id, err := pendingID()
		if err == nil {
			err = svc.Reject(ctx, key, id, body.Reason, by)
		}
		if err != nil {
			writeAPIError(w, err)
			return
		}
		out = map[string]any{"rejected": id}
	case "pause", "resume", "deactivate":
		op := map[string]func(context.Context, string, runtime.Actor) error{
			"pause": svc.Pause, "resume": svc.Resume, "deactivate": svc.Deactivate}[r.PathValue("action")]
		if err := op(ctx, key, by); err != nil {
			writeAPIError(w, err)
			return
		}
		out = map[string]any{"done": r.PathValue("action"), "session": key}
	default:
		http.Error(w, "statewright: unknown action (approve, reject, pause, resume, deactivate)", http.StatusNotFound)
		return
	}
	writeHTTPJSON(w, http.StatusOK, out)
}

func writeHTTPJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// writeAPIError maps runtime errors to HTTP statuses.
func writeAPIError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, runtime.ErrNoRun), errors.Is(err, runtime.ErrNoApproval):
		code = http.StatusNotFound
	case errors.Is(err, runtime.ErrNotAllowed):
		code = http.StatusForbidden
	case errors.Is(err, runtime.ErrPaused), errors.Is(err, runtime.ErrApprovalPending), errors.Is(err, runtime.ErrTransition):
		code = http.StatusConflict
	}
	http.Error(w, "statewright: "+err.Error(), code)
}
