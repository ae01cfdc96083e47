// Package dashboardcmd is `statewright dashboard`: the local web dashboard on
// a loopback address.
package dashboardcmd

import (
	"context"
	"crypto/ed25519"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/dashboard"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// operatorTokenVerifier checks tokens: an operator token of `statewright
// tokens` (stored hashed), or the older operator token file (`statewright
// token create`), both read on every check so a new or revoked token takes
// effect at once. It is the dashboard's minimal authentication until
// `statewright serve` mounts it with its agent and operator tokens.
func operatorTokenVerifier() func(string) (dashboard.Principal, error) {
	return func(tok string) (dashboard.Principal, error) {
		if ok, err := cmdutil.OperatorFromTokens(strings.TrimSpace(tok)); err != nil {
			return dashboard.Principal{}, err
		} else if ok {
			return dashboard.Principal{Role: dashboard.RoleOperator, Name: os.Getenv("USER")}, nil
		}
		p, err := cmdutil.OperatorTokenPath()
		if err != nil {
			return dashboard.Principal{}, err
		}
		want, err := os.ReadFile(p)
		if err != nil {
			return dashboard.Principal{}, fmt.Errorf("%w: no operator token file (%v)", dashboard.ErrBadToken, err)
		}
		w := strings.TrimSpace(string(want))
		if w == "" || tok == "" || subtle.ConstantTimeCompare([]byte(w), []byte(strings.TrimSpace(tok))) != 1 {
			return dashboard.Principal{}, dashboard.ErrBadToken
		}
		return dashboard.Principal{Role: dashboard.RoleOperator, Name: os.Getenv("USER")}, nil
	}
}

// hostGuard refuses requests whose Host header is not the listener's own
// loopback address or a loopback name (DNS rebinding).
func hostGuard(addr string, next http.Handler) http.Handler {
	_, port, _ := net.SplitHostPort(addr)
	ok := map[string]bool{addr: true, "localhost:" + port: true, "127.0.0.1:" + port: true, "[::1]:" + port: true}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ok[strings.ToLower(r.Host)] {
			http.Error(w, "host not allowed", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// NewCmdDashboard returns `statewright dashboard`.
func NewCmdDashboard(f *cmdutil.Factory) *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:     "dashboard [--listen 127.0.0.1:8378]",
		Example: "  statewright tokens create --role operator   # the token to sign in with\n  statewright dashboard --listen 127.0.0.1:0",
		Short:   "Serve the local web dashboard: runs, graphs, decisions, approvals, a workflow editor",
		Long: "dashboard serves the web dashboard on a loopback address until interrupted. Sign in with an operator token " +
			"(`statewright tokens create --role operator` prints one; the older `statewright token create` token works too; " +
			"the page asks for it once and keeps a session cookie). Approve and reject need that " +
			"token, a same-origin request and the page's CSRF token. It prints the URL on stdout. When `statewright serve` " +
			"is available it mounts the same dashboard next to the MCP endpoint, with its agent and operator tokens.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			host, _, err := net.SplitHostPort(listen)
			if err != nil {
				return cmdutil.Usagef("--listen %q: %v", listen, err)
			}
			if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				return cmdutil.Usagef("--listen %s: the dashboard binds loopback addresses only (127.0.0.1, ::1, localhost)", listen)
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "dashboard: sign in with an operator token: `statewright tokens create --role operator` prints one")
			return f.WithService(cmd, true, func(ctx context.Context, svc *runtime.Service, st store.Store) error {
				dash, err := dashboard.New(dashboard.Options{Service: svc, Store: st, Verify: operatorTokenVerifier(),
					TrustedKeys: func() ([]ed25519.PublicKey, error) { return cmdutil.TrustedKeys(nil) }})
				if err != nil {
					return cmdutil.Failure(err.Error())
				}
				ln, err := net.Listen("tcp", listen)
				if err != nil {
					return cmdutil.Failure("listen: " + err.Error())
				}
				addr := ln.Addr().String()
				srv := &http.Server{Handler: hostGuard(addr, dash), ReadHeaderTimeout: 10 * time.Second}
				fmt.Fprintf(cmd.OutOrStdout(), "http://%s/\n", addr)
				ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
				errc := make(chan error, 1)
				go func() { errc <- srv.Serve(ln) }()
				select {
				case err := <-errc:
					return cmdutil.Failure("serve: " + err.Error())
				case <-ctx.Done():
				}
				sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				_ = srv.Shutdown(sctx)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8378", "loopback address to listen on (port 0 picks a free one)")
	cmdutil.AddStoreFlag(cmd)
	return cmd
}
