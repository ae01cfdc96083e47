// Package mcpcmd is `statewright mcp`: statewright's control tools and the
// gateway's upstream servers over MCP on stdio.
package mcpcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/gateway"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/internal/mcpio"
	"github.com/statewright-go/statewright/internal/telemetry"
	"github.com/statewright-go/statewright/mcpserver"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/serve"
	"github.com/statewright-go/statewright/store"
)

// NewCmdMCP returns `statewright mcp`.
func NewCmdMCP(f *cmdutil.Factory) *cobra.Command {
	var (
		harness    string
		trustEnv   bool
		projectDir string
		storeID    string
		session    string
		metricsAt  string
		tokensPath string
		gw         cmdutil.GatewayFlags
	)
	cmd := &cobra.Command{
		Use:     "mcp",
		Example: "  statewright mcp --store .statewright/state.db --harness claude-code   # what init registers; the harness starts it",
		Short:   "Serve the statewright control tools, and upstream MCP servers behind the workflow, over MCP (stdio)",
		Long: `mcp serves statewright's control tools to an agent over the Model Context
Protocol on stdin/stdout: statewright_list_workflows, statewright_start (alias
statewright_load_workflow), statewright_get_state, statewright_transition,
statewright_get_status, and statewright_pause, statewright_deactivate and
statewright_force_state, which only record a request that a human grants.

Every call must be tied to a session: the harness's PreToolUse hook adds the
session id to each mcp__statewright__* call as "statewright_session", and the
run is the store's run of "<harness>:<id>". A call without that stamp is
denied. --trust-env-session lets unstamped calls use $CLAUDE_CODE_SESSION_ID
instead; it is off by default because that variable is fixed when the server
starts and names the wrong session after /clear.

Upstream MCP servers (--upstream, or .statewright/gateway.yaml once trusted
with "statewright trust") are served behind the run's law: tools/list shows
the tools the current phase allows (namespaced NAME__TOOL), announces each
change of phase with notifications/tools/list_changed, and every call is
decided again when it is made; a filesystem server's writes are decided as
Write/Edit of their paths. Upstream calls need a known session: --session, or
--trust-env-session. See docs/gateway.md.

--metrics ADDR also serves the server's Prometheus metrics (the decisions its
runtime makes, as serve's /metrics) on an HTTP listener at ADDR, at GET
/metrics only, to a metrics or operator token of the token file serve uses;
ADDR is loopback unless a token exists, as for serve --listen. The address
it listens on is printed on stderr. See docs/telemetry.md.

statewright init claude-code registers it in .mcp.json; by hand:

  {"mcpServers": {"statewright": {"command": "/abs/path/statewright",
    "args": ["mcp", "--store", "/abs/path/state.db", "--store-id", "st_..."]}}}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := policy.ParseHarness(harness)
			if err != nil {
				return cmdutil.Usagef("--harness: %v", err)
			}
			if projectDir == "" {
				projectDir = os.Getenv("CLAUDE_PROJECT_DIR")
			}
			if projectDir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return cmdutil.Failure("mcp: no project directory: " + err.Error())
				}
				projectDir = wd
			}
			cmdutil.TuneGC()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// A named store must exist and be that store (as for the hooks);
			// an unnamed one is created on first use.
			st, err := f.OpenStore(ctx, cmd, store.Options{MustExist: storeID != "", ExpectID: storeID})
			if err != nil {
				return err
			}
			defer st.Close()
			workflows := runtime.DefaultWorkflows(projectDir)
			// Metrics are built only when asked for: a plain stdio server
			// builds no telemetry (docs/telemetry.md).
			var (
				metrics  *telemetry.Metrics
				observer runtime.Observer
				upstream gateway.Observer
				rtStore  store.Store = st
			)
			if metricsAt != "" {
				metrics = telemetry.NewMetrics(telemetry.MetricsOptions{Pending: telemetry.PendingApprovals(st)})
				observer = telemetry.NewObserver(metrics, nil, false)
				rtStore = metrics.Store(st)
				upstream = metrics
			}
			rt := runtime.New(rtStore, runtime.Options{ProjectDir: projectDir, Workflows: workflows, Observer: observer})
			key := ""
			if session != "" {
				if key, err = mcpserver.ParseSessionKey(string(h), session); err != nil {
					return cmdutil.Usagef("--session: %v", err)
				}
			}
			logger := cmdutil.StderrLogger(cmd)
			mgr, err := gw.Manager(projectDir, logger)
			if err != nil {
				return err
			}
			if err := gw.Sandbox(ctx, mgr, rt, projectDir, cmdutil.StoreFile(st), logger); err != nil {
				return err
			}
			if mgr != nil {
				if err := mgr.Start(ctx); err != nil {
					return cmdutil.Failure("mcp: " + err.Error())
				}
				defer mgr.Close()
			}
			g, err := gateway.New(gateway.Options{Runtime: rt, Store: st, Upstreams: mgr, Harness: string(h), ProjectDir: projectDir,
				Workflows: workflows, Version: f.Version(), TrustEnvSession: trustEnv, EnvSession: os.Getenv(mcpserver.EnvSessionVar),
				Check: st.CheckIdentity, PollInterval: gw.Poll, PageSize: gw.PageSize, ElicitApprovals: gw.Elicit,
				OnPending: gw.Notifier(logger), Logger: logger, Observer: upstream})
			if err != nil {
				return cmdutil.Usagef("mcp: %v", err)
			}
			defer g.Wait() // results recorded after their answers, before the store closes
			if metrics != nil {
				ln, h, err := metricsListener(metricsAt, tokensPath, metrics, logger)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "statewright mcp: metrics on http://%s/metrics\n", ln.Addr())
				mctx, cancel := context.WithCancel(ctx)
				done := make(chan struct{})
				go func() {
					defer close(done)
					if err := serve.Run(mctx, ln, h, time.Second); err != nil {
						logger.Warn("metrics listener stopped", "err", err)
					}
				}()
				defer func() { cancel(); <-done }()
			}
			srv, err := g.NewSession(gateway.SessionOptions{Session: key})
			if err != nil {
				return cmdutil.Usagef("mcp: %v", err)
			}
			t := srv.Transport(&mcpio.Transport{Reader: io.NopCloser(cmd.InOrStdin()), Writer: nopWriteCloser{cmd.OutOrStdout()}})
			if err := srv.Run(ctx, t); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) &&
				!errors.Is(err, mcp.ErrConnectionClosed) {
				return err
			}
			return nil
		},
	}
	cmdutil.AddStoreFlag(cmd)
	cmd.Flags().StringVar(&harness, "harness", mcpserver.DefaultHarness, "the harness whose sessions the server serves; session keys are HARNESS:ID")
	cmd.Flags().BoolVar(&trustEnv, "trust-env-session", false,
		"let a call without the hook's session stamp use $"+mcpserver.EnvSessionVar+" (stale after /clear; off by default)")
	cmd.Flags().StringVar(&storeID, "store-id", "", "the store's id (see statewright init): refuse to serve any other store, and never create one")
	cmd.Flags().StringVar(&session, "session", "", "serve this one session (HARNESS:ID or an id of --harness) to a client that cannot be stamped by a hook (a plain MCP client)")
	cmd.Flags().StringVar(&metricsAt, "metrics", "", "also serve Prometheus metrics at http://ADDR/metrics to metrics or operator tokens (loopback unless a token exists; :0 picks a port)")
	cmdutil.AddTokensFileFlag(cmd, &tokensPath)
	gw.Add(cmd)
	cmd.Flags().StringVar(&projectDir, "project-dir", "", "the project root, whose .statewright/workflows/ agents may start (default $CLAUDE_PROJECT_DIR, else the working directory)")
	return cmd
}

// metricsListener listens at addr and returns the handler that serves
// m at GET /metrics (and nothing else) to metrics and operator tokens of
// the token file at tokensPath, with serve's token, Host and Origin checks.
func metricsListener(addr, tokensPath string, m *telemetry.Metrics, logger *slog.Logger) (net.Listener, http.Handler, error) {
	tf, err := cmdutil.OpenTokens(tokensPath)
	if err != nil {
		return nil, nil, err
	}
	haveTokens, err := tf.Any()
	if err != nil {
		return nil, nil, cmdutil.Failure("mcp: " + err.Error())
	}
	if err := serve.CheckBind(addr, haveTokens); err != nil {
		return nil, nil, cmdutil.Usagef("--metrics: %v", err)
	}
	srv, err := serve.New(serve.Options{Tokens: tf, Addr: addr, Logger: logger})
	if err != nil {
		return nil, nil, cmdutil.Failure("mcp: " + err.Error())
	}
	srv.Handle("GET /metrics", serve.MetricsReaders, m.Handler())
	// Only /metrics: serve.New's /healthz stays unmounted here.
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", srv.Handler())
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, cmdutil.Failure("mcp: --metrics: " + err.Error())
	}
	return ln, mux, nil
}

// nopWriteCloser keeps the transport from closing the command's stdout.
type nopWriteCloser struct{ io.Writer }

// Close does nothing.
func (nopWriteCloser) Close() error { return nil }
