// Package dashboard is statewright's local web dashboard: the runs, a run's
// workflow graph as SVG with the current phase, the decision log with
// filters, live updates over server-sent events, approve / reject bound to
// the run's pending approval id, and a workflow editor that validates as
// you type (errors at line:column) with a live graph preview.
//
// Handler is an http.Handler over the runtime and the store; every asset is
// embedded (nothing comes from a CDN). It serves at its root, with relative
// URLs only, so it can be mounted under any prefix with http.StripPrefix.
//
// Authentication is the caller's: Options.Verify maps a token to a role.
// A browser signs in once with a token (POST api/login) and gets an
// HttpOnly, SameSite=Strict session cookie and a CSRF token; every
// state-changing request made with the cookie must carry the CSRF token in
// the X-CSRF-Token header and a same-origin Origin. Clients may instead
// send "Authorization: Bearer TOKEN" on each request (no cookie, no CSRF).
// The token is re-verified on every request, so a revoked token stops
// working at once. Only the operator role approves or rejects; an agent
// token can look but never approve. See docs/dashboard.md.
package dashboard

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

//go:embed assets
var assets embed.FS

// Role is what a token may do.
type Role string

// Roles.
const (
	// RoleAgent may read (runs, events, graphs, validation), never approve.
	RoleAgent Role = "agent"
	// RoleOperator is a person: it may also approve and reject.
	RoleOperator Role = "operator"
)

// Principal is who a verified token belongs to.
type Principal struct {
	Role Role   `json:"role"`
	Name string `json:"name,omitempty"`
	// Session, when set, limits the principal to that session's runs (a
	// token bound to one session sees nothing else).
	Session string `json:"session,omitempty"`
}

// ErrBadToken is what Verify returns for an unknown or revoked token.
var ErrBadToken = errors.New("dashboard: invalid token")

// Options configure a Handler.
type Options struct {
	// Service is the runtime (views, approve, reject); Store lists runs and events.
	Service *runtime.Service
	Store   store.Store
	// Verify maps a token to its principal; ErrBadToken (or any error)
	// refuses it. Required.
	Verify func(token string) (Principal, error)
	// Poll is how often the event stream checks the store (default 500ms).
	Poll time.Duration
	// SessionTTL bounds a browser session (default 12h).
	SessionTTL time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// TrustedKeys returns the public keys checkpoints may be signed with,
	// for the log's verdict (GET api/verify); nil trusts none, and the
	// verdict then covers the chains alone.
	TrustedKeys func() ([]ed25519.PublicKey, error)
}

// Handler is the dashboard.
type Handler struct {
	opts Options
	mux  *http.ServeMux

	mu       sync.Mutex
	sessions map[string]*session
}

// session is one signed-in browser.
type session struct {
	token   string // re-verified on every request
	csrf    string
	expires time.Time
}

// cookieName names the session cookie.
const cookieName = "statewright_dashboard"

// New returns the dashboard handler.
func New(opts Options) (*Handler, error) {
	if opts.Service == nil || opts.Store == nil {
		return nil, errors.New("dashboard: a runtime service and a store are required")
	}
	if opts.Verify == nil {
		return nil, errors.New("dashboard: a token check (Options.Verify) is required")
	}
	if opts.Poll <= 0 {
		opts.Poll = 500 * time.Millisecond
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = 12 * time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	h := &Handler{opts: opts, mux: http.NewServeMux(), sessions: map[string]*session{}}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	files := http.FileServerFS(static)
	h.mux.Handle("GET /{$}", noCache(files))
	h.mux.Handle("GET /static/", http.StripPrefix("/static", noCache(files)))
	h.mux.HandleFunc("POST /api/login", h.login)
	h.mux.HandleFunc("POST /api/logout", h.logout)
	h.mux.Handle("GET /api/session", h.auth(false, http.HandlerFunc(h.sessionInfo)))
	h.mux.Handle("GET /api/runs", h.auth(false, http.HandlerFunc(h.runs)))
	h.mux.Handle("GET /api/runs/{id}", h.auth(false, http.HandlerFunc(h.run)))
	h.mux.Handle("GET /api/runs/{id}/events", h.auth(false, http.HandlerFunc(h.events)))
	h.mux.Handle("GET /api/runs/{id}/graph.svg", h.auth(false, http.HandlerFunc(h.graphSVG)))
	h.mux.Handle("GET /api/stream", h.auth(false, http.HandlerFunc(h.stream)))
	h.mux.Handle("GET /api/templates", h.auth(false, http.HandlerFunc(h.templates)))
	h.mux.Handle("GET /api/templates/{name}", h.auth(false, http.HandlerFunc(h.template)))
	h.mux.Handle("POST /api/validate", h.auth(false, http.HandlerFunc(h.validate)))
	h.mux.Handle("GET /api/verify", h.auth(false, http.HandlerFunc(h.verify)))
	h.mux.Handle("POST /api/runs/{id}/approve", h.auth(true, http.HandlerFunc(h.approve)))
	h.mux.Handle("POST /api/runs/{id}/reject", h.auth(true, http.HandlerFunc(h.reject)))
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.mux.ServeHTTP(w, r)
}

func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("dashboard: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// bearer returns the token of an "Authorization: Bearer T" header.
func bearer(r *http.Request) string {
	a := r.Header.Get("Authorization")
	if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// sameOrigin reports whether the request's Origin (or, without one, its
// Referer) names the host it was sent to. Browsers send Origin on every
// POST; a request with neither is refused where it matters.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		o = r.Header.Get("Referer")
	}
	if o == "" || o == "null" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

type principalCtx struct {
	p       Principal
	session *session // nil for bearer requests
}

// auth authenticates a request (bearer header or session cookie), checks
// CSRF for cookie-authenticated writes, and, with operator, the role.
func (h *Handler) auth(operator bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var pc principalCtx
		if tok := bearer(r); tok != "" {
			p, err := h.opts.Verify(tok)
			if err != nil {
				writeError(w, http.StatusUnauthorized, "invalid token")
				return
			}
			pc.p = p
		} else {
			s := h.lookup(r)
			if s == nil {
				writeError(w, http.StatusUnauthorized, "sign in with a token first")
				return
			}
			p, err := h.opts.Verify(s.token)
			if err != nil {
				h.drop(r)
				writeError(w, http.StatusUnauthorized, "the token of this session is no longer valid; sign in again")
				return
			}
			pc.p, pc.session = p, s
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				if !sameOrigin(r) {
					writeError(w, http.StatusForbidden, "cross-origin request refused")
					return
				}
				got := r.Header.Get("X-CSRF-Token")
				if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) != 1 {
					writeError(w, http.StatusForbidden, "missing or wrong CSRF token")
					return
				}
			}
		}
		if operator && pc.p.Role != RoleOperator {
			writeError(w, http.StatusForbidden, "only an operator token approves or rejects; an agent token never does")
			return
		}
		next.ServeHTTP(w, r.WithContext(withPrincipal(r.Context(), pc)))
	})
}

func (h *Handler) lookup(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[c.Value]
	if s == nil {
		return nil
	}
	if !h.opts.Now().Before(s.expires) {
		delete(h.sessions, c.Value)
		return nil
	}
	return s
}

func (h *Handler) drop(r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		h.mu.Lock()
		delete(h.sessions, c.Value)
		h.mu.Unlock()
	}
}

// login exchanges a token for a session cookie and a CSRF token.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		writeError(w, http.StatusForbidden, "cross-origin request refused")
		return
	}
	var in struct {
		Token string `json:"token"`
	}
	if err := readJSON(r, &in); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	tok := strings.TrimSpace(in.Token)
	p, err := h.opts.Verify(tok)
	if tok == "" || err != nil {
		writeError(w, http.StatusUnauthorized, "invalid token")
		return
	}
	id := randomHex(32)
	s := &session{token: tok, csrf: randomHex(32), expires: h.opts.Now().Add(h.opts.SessionTTL)}
	h.mu.Lock()
	// Forget expired sessions while here.
	for k, old := range h.sessions {
		if !h.opts.Now().Before(old.expires) {
			delete(h.sessions, k)
		}
	}
	h.sessions[id] = s
	h.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, Expires: s.expires})
	writeJSON(w, http.StatusOK, map[string]any{"role": p.Role, "name": p.Name, "csrf": s.csrf})
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		writeError(w, http.StatusForbidden, "cross-origin request refused")
		return
	}
	h.drop(r)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

func (h *Handler) sessionInfo(w http.ResponseWriter, r *http.Request) {
	pc := principalFrom(r.Context())
	out := map[string]any{"role": pc.p.Role, "name": pc.p.Name}
	if pc.session != nil {
		out["csrf"] = pc.session.csrf
	}
	writeJSON(w, http.StatusOK, out)
}
