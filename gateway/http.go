package gateway

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SessionHeader is the HTTP header in which a client names the store
// session (a full key "claude-code:abc", or a bare id the gateway prefixes
// with its harness) when its token is not bound to one.
const SessionHeader = "Statewright-Session"

// HTTPOptions configure the streamable-HTTP endpoint.
type HTTPOptions struct {
	// Resolve maps a request that opens an MCP session to the session's
	// options and an owner id (the authenticated token's id). An error
	// refuses the request with 403 and the error's text.
	Resolve func(r *http.Request) (SessionOptions, string, error)
	// Owner returns the owner id of a request on an existing session; a
	// session is served only to the owner that opened it.
	Owner func(r *http.Request) string
	// SessionTimeout closes idle sessions (default 30 minutes).
	SessionTimeout time.Duration
}

// HTTPHandler returns the streamable-HTTP MCP endpoint: each MCP session
// gets its own server, bound to the owner (token) that opened it.
func (g *Gateway) HTTPHandler(o HTTPOptions) http.Handler {
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = 30 * time.Minute
	}
	sdk := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		so, ok := r.Context().Value(sessionOptionsKey{}).(SessionOptions)
		if !ok {
			return nil
		}
		srv, err := g.newServerWithID(so, func() string { return ownerPrefix(o.Owner(r)) + rand.Text() })
		if err != nil {
			g.opts.Logger.Warn("new MCP session", "err", err)
			return nil
		}
		return srv
	}, &mcp.StreamableHTTPOptions{SessionTimeout: o.SessionTimeout})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			// An existing session: only its owner may use it.
			if !strings.HasPrefix(id, ownerPrefix(o.Owner(r))) {
				http.Error(w, "statewright: this MCP session belongs to another token", http.StatusNotFound)
				return
			}
			sdk.ServeHTTP(w, r)
			return
		}
		so, _, err := o.Resolve(r)
		if err != nil {
			http.Error(w, "statewright: "+err.Error(), http.StatusForbidden)
			return
		}
		sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionOptionsKey{}, so)))
	})
}

type sessionOptionsKey struct{}

// ownerPrefix is the session id prefix that binds an MCP session to its owner.
func ownerPrefix(owner string) string { return strings.ReplaceAll(owner, ".", "_") + "." }
