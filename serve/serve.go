// Package serve is statewright's HTTP front: one listener for the
// streamable-HTTP MCP endpoint, the hook decision endpoint, the operator
// API, the dashboard and /healthz, behind bearer-token authentication and
// checks of the Host and Origin headers (DNS rebinding). It holds no run
// state: the handlers it mounts go to the runtime, which reads the store.
//
// The mux is open for more handlers: Handle mounts any http.Handler at a
// pattern with an access level and gets the same checks. The hook endpoint
// answers every refusal, authentication included, with status 200 and a
// deny in the harness's own convention: a harness treats any other answer
// as a non-blocking error and lets the call through.
package serve

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/statewright-go/statewright/gateway/tokens"
)

// Access is who may reach a mounted handler.
type Access int

// Access levels.
const (
	// Public handlers need no token (only /healthz).
	Public Access = iota
	// AnyToken handlers need a valid agent or operator token; a hook
	// credential or a metrics token gets 403.
	AnyToken
	// OperatorOnly handlers need a valid operator token; an agent token
	// gets 403.
	OperatorOnly
	// HookOnly handlers need a valid hook credential (tokens.Hook): an
	// agent token cannot stand in for it.
	HookOnly
	// MetricsReaders handlers (/metrics) need an operator or a metrics
	// token (tokens.Metrics).
	MetricsReaders
)

// Options configure a Server.
type Options struct {
	// Tokens is the token file every request is checked against. Required.
	Tokens *tokens.File
	// Addr is the listen address, for the Host and Origin checks (the
	// host:port clients dial). Loopback by default.
	Addr string
	// AllowedHosts are further Host header values (host or host:port)
	// accepted besides loopback names and Addr's host.
	AllowedHosts []string
	// AllowedOrigins are browser origins (scheme://host[:port]) allowed to
	// call the server besides the server's own loopback origins.
	AllowedOrigins []string
	// Logger receives one line per refused request (nil: discard).
	Logger *slog.Logger
	// TrustedKeys returns the keys checkpoints may be signed with, for the
	// dashboard's verdict on the event log (nil: none).
	TrustedKeys func() ([]ed25519.PublicKey, error)
}

// Server is the HTTP front. Mount handlers with Handle, then serve Handler().
type Server struct {
	opts Options
	mux  *http.ServeMux
}

// New returns a Server with /healthz mounted.
func New(opts Options) (*Server, error) {
	if opts.Tokens == nil {
		return nil, errors.New("serve: a token file is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, mux: http.NewServeMux()}
	s.Handle("GET /healthz", Public, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	}))
	return s, nil
}

// Handle mounts h at pattern (net/http ServeMux syntax, "POST /x/{id}"),
// reachable with the given access. Every request also passes the Host and
// Origin checks.
func (s *Server) Handle(pattern string, access Access, h http.Handler) {
	s.handle(pattern, access, h, s.refuse)
}

// refusal answers a refused request: status code and why.
type refusal func(w http.ResponseWriter, r *http.Request, code int, msg string)

// handle mounts h behind the Host and Origin checks and access, refused
// by refuse.
func (s *Server) handle(pattern string, access Access, h http.Handler, refuse refusal) {
	s.mux.Handle(pattern, s.checkOrigin(refuse, s.authorize(access, refuse, h)))
}

// Handler returns the server's root handler.
func (s *Server) Handler() http.Handler { return s.mux }

// principalKey is the context key of the authenticated token.
type principalKey struct{}

// Principal returns the token that authenticated the request (false on
// public handlers).
func Principal(ctx context.Context) (tokens.Token, bool) {
	t, ok := ctx.Value(principalKey{}).(tokens.Token)
	return t, ok
}

// WithPrincipal returns ctx carrying t, for tests of mounted handlers.
func WithPrincipal(ctx context.Context, t tokens.Token) context.Context {
	return context.WithValue(ctx, principalKey{}, t)
}

// BearerToken returns the token of an "Authorization: Bearer T" header.
func BearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// authorize checks the bearer token for access.
func (s *Server) authorize(access Access, refuse refusal, h http.Handler) http.Handler {
	if access == Public {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, err := s.opts.Tokens.Verify(BearerToken(r))
		switch {
		case errors.Is(err, tokens.ErrNoToken) || errors.Is(err, tokens.ErrBadToken):
			refuse(w, r, http.StatusUnauthorized, "a valid bearer token is required (statewright tokens create)")
			return
		case err != nil:
			// The token file cannot be read: fail closed.
			refuse(w, r, http.StatusServiceUnavailable, "the token file cannot be read: "+err.Error())
			return
		}
		switch {
		case access == OperatorOnly && t.Role != tokens.Operator:
			refuse(w, r, http.StatusForbidden, "this needs an operator token; agent tokens never approve or weaken enforcement")
			return
		case access == HookOnly && t.Role != tokens.Hook:
			refuse(w, r, http.StatusForbidden, "posting hook events needs a hook credential (statewright tokens create --role hook); "+string(t.Role)+" tokens cannot post them")
			return
		case access == AnyToken && t.Role == tokens.Hook:
			refuse(w, r, http.StatusForbidden, "a hook credential only posts hook events")
			return
		case access == AnyToken && t.Role == tokens.Metrics:
			refuse(w, r, http.StatusForbidden, "a metrics token only scrapes /metrics")
			return
		case access == MetricsReaders && t.Role != tokens.Operator && t.Role != tokens.Metrics:
			refuse(w, r, http.StatusForbidden, "/metrics needs a metrics or operator token (statewright tokens create --role metrics)")
			return
		}
		h.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), t)))
	})
}

// refuse answers an error without revealing more than the reason.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	s.opts.Logger.Info("refused", "code", code, "method", r.Method, "url", r.URL.Path, "remote", r.RemoteAddr, "why", msg)
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="statewright"`)
	}
	http.Error(w, "statewright: "+msg, code)
}

// checkOrigin refuses requests whose Host is not one of the server's names
// and browser requests from foreign origins (DNS rebinding, cross-site
// requests to a loopback server).
func (s *Server) checkOrigin(refuse refusal, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			refuse(w, r, http.StatusForbidden, fmt.Sprintf("Host %q is not this server's (DNS rebinding protection; see --allow-host)", r.Host))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !s.originAllowed(o) {
			refuse(w, r, http.StatusForbidden, fmt.Sprintf("Origin %q may not call this server (see --allow-origin)", o))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// hostAllowed accepts loopback names, the listen address's host and the
// configured hosts.
func (s *Server) hostAllowed(hostport string) bool {
	if hostport == "" {
		return false
	}
	host := hostOnly(hostport)
	if IsLoopbackHost(host) {
		return true
	}
	if a := hostOnly(s.opts.Addr); a != "" && !isUnspecified(a) && strings.EqualFold(a, host) {
		return true
	}
	for _, h := range s.opts.AllowedHosts {
		if strings.EqualFold(h, hostport) || strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// originAllowed accepts the configured origins and http(s) origins whose
// host the Host check accepts.
func (s *Server) originAllowed(origin string) bool {
	if slices.ContainsFunc(s.opts.AllowedOrigins, func(o string) bool { return strings.EqualFold(strings.TrimRight(o, "/"), origin) }) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return s.hostAllowed(u.Host)
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.Trim(h, "[]")
	}
	return strings.Trim(hostport, "[]")
}

func isUnspecified(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

// IsLoopbackHost reports whether host (no port) names the loopback
// interface: localhost, *.localhost, or a loopback IP.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckBind refuses a listen address that is not loopback unless tokens
// are configured (hasTokens): a server reachable from the network without
// a token would let anyone drive the agent's runs. A missing host (":8080")
// or an unspecified one (0.0.0.0) counts as non-loopback.
func CheckBind(addr string, hasTokens bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve: listen address %q: %w (want HOST:PORT, e.g. 127.0.0.1:8377)", addr, err)
	}
	if IsLoopbackHost(host) {
		return nil
	}
	if !hasTokens {
		return fmt.Errorf("serve: refusing to listen on non-loopback %s without a token: create one first (statewright tokens create --role agent)", addr)
	}
	return nil
}

// Run serves h on ln until ctx ends, then shuts down gracefully (at most
// grace for in-flight requests).
func Run(ctx context.Context, ln net.Listener, h http.Handler, grace time.Duration) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return nil
}
