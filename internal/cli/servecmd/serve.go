// Package servecmd is `statewright serve`: the long-lived HTTP server
// (package serve) with the MCP endpoint, the hook endpoint, the operator API
// and the dashboard.
package servecmd

import (
	"context"
	"crypto/ed25519"
	"fmt"
	hookrun "github.com/statewright-go/statewright/harness/hook"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/gateway"
	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/internal/telemetry"
	"github.com/statewright-go/statewright/mcpserver"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/serve"
	"github.com/statewright-go/statewright/store"
)

// DefaultListen is `statewright serve`'s default address.
const DefaultListen = "127.0.0.1:8377"

// NewCmdServe returns `statewright serve`.
func NewCmdServe(f *cmdutil.Factory) *cobra.Command {
	var (
		listen, harnessName, projectDir, storeID, tokensPath string
		allowHosts, allowOrigins                             []string
		hookOpts                                             harness.Options
		gw                                                   cmdutil.GatewayFlags
		checkpointEvery                                      time.Duration
		checkpointExport                                     string
	)
	cmd := &cobra.Command{
		Use:     "serve [--listen 127.0.0.1:PORT]",
		Example: "  statewright serve\n  statewright serve --listen 127.0.0.1:8377 --checkpoint-every 10m",
		Short:   "Serve MCP (streamable HTTP), the hook decision endpoint and operator actions over HTTP",
		Long: `serve is statewright's long-lived HTTP server, for many sessions at once:

  POST|GET|DELETE /mcp                 streamable-HTTP MCP: the control tools and the
                                       upstream servers' tools, filtered to each session's phase
  POST /hook/{harness}/{event}         the hook decision, for harnesses that prefer an HTTP
                                       hook (body: the hook's JSON input; a hook credential)
  GET  /api/sessions/{session}         a run's state (any token)
  POST /api/sessions/{session}/{action} approve, reject, pause, resume, deactivate
                                       (operator tokens only; body {"approval_id": "..."})
  GET  /dashboard/                     the web dashboard (sign in with a token; operator
                                       tokens approve, agent tokens only look; docs/dashboard.md)
  GET  /metrics                        Prometheus metrics: decisions by harness, state,
                                       decision and rule; decision, store and upstream
                                       latency; approvals pending (metrics or operator
                                       tokens; docs/telemetry.md)
  GET  /healthz                        liveness (no token)

Every endpoint but /healthz needs "Authorization: Bearer TOKEN" (statewright
tokens create). Agent tokens never approve or weaken enforcement; only hook
credentials (tokens create --role hook) post hook events, and the hook
endpoint answers every refusal with 200 and a deny in the harness's JSON. Requests
whose Host or Origin is not this server's are refused (DNS rebinding). serve
listens on loopback by default and refuses a non-loopback address unless a
token exists. An MCP session acts on the session its token is bound to, or
the one named by the Statewright-Session header, or a fresh one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := policy.ParseHarness(harnessName)
			if err != nil {
				return cmdutil.Usagef("--harness: %v", err)
			}
			// Before anything it must not do twice: it may re-execute
			// serve once.
			cmdutil.WidenTimerSlack()
			// The hook endpoint resolves paths against the project the
			// operator named, else each hook's own cwd (serve may decide for
			// several projects); the rest defaults to the working directory.
			hookProjectDir := projectDir
			if projectDir == "" {
				if projectDir, err = os.Getwd(); err != nil {
					return cmdutil.Failure("serve: no project directory: " + err.Error())
				}
			}
			tf, err := cmdutil.OpenTokens(tokensPath)
			if err != nil {
				return err
			}
			haveTokens, err := tf.Any()
			if err != nil {
				return cmdutil.Failure("serve: " + err.Error())
			}
			if err := serve.CheckBind(listen, haveTokens); err != nil {
				return cmdutil.Usagef("%v", err)
			}
			cmdutil.TuneGC()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			st, err := f.OpenStore(ctx, cmd, store.Options{MustExist: storeID != "", ExpectID: storeID})
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			defer st.Close()
			otel, err := telemetry.SetupOTel(ctx, telemetry.OTelOptions{Service: "statewright", Version: f.Version()})
			if err != nil {
				return cmdutil.Usagef("%v", err)
			}
			defer func() {
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				otel.Shutdown(sctx)
			}()
			// --checkpoint-export otel needs the OTLP log stream; say so
			// now rather than drop every checkpoint later.
			sendCheckpoint, err := checkpointSender(checkpointExport, otel)
			if err != nil {
				return err
			}
			// Structured logs: JSON unless stderr is a terminal, also over
			// OTLP when logs are exported; inputs and paths redacted.
			logger := telemetry.NewLogger(telemetry.LogOptions{W: cmd.ErrOrStderr(), Level: slog.LevelWarn, OTel: otel})
			var protected []string
			if exe, err := os.Executable(); err == nil {
				protected = append(protected, exe)
			}
			protected = append(protected, tf.Path())
			workflows := runtime.DefaultWorkflows(projectDir)
			// Telemetry is built here, when serve starts, never at package
			// init: a hook process of the same binary builds none of it
			// (docs/telemetry.md).
			metrics := telemetry.NewMetrics(telemetry.MetricsOptions{Pending: telemetry.PendingApprovals(st)})
			svc := runtime.New(metrics.Store(st), runtime.Options{
				Observer:  telemetry.NewObserver(metrics, otel, false),
				Policy:    policy.Options{RequireWorkflow: hookOpts.RequireWorkflow, ProtectedPaths: protected},
				AuditOnly: hookOpts.AuditOnly, DefaultWorkflow: hookOpts.DefaultWorkflow, ProjectDir: projectDir, Workflows: workflows,
			})
			mgr, err := gw.Manager(projectDir, logger)
			if err != nil {
				return err
			}
			if err := gw.Sandbox(ctx, mgr, svc, projectDir, cmdutil.StoreFile(st), logger); err != nil {
				return err
			}
			if mgr != nil {
				if err := mgr.Start(ctx); err != nil {
					return cmdutil.Failure(err.Error())
				}
				defer mgr.Close()
			}
			g, err := gateway.New(gateway.Options{Runtime: svc, Store: st, Upstreams: mgr, Harness: string(h), ProjectDir: projectDir,
				Workflows: workflows, Version: f.Version(), RequireWorkflow: hookOpts.RequireWorkflow, PollInterval: gw.Poll,
				PageSize: gw.PageSize, ElicitApprovals: gw.Elicit, OnPending: gw.Notifier(logger), Logger: logger, Observer: metrics})
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			defer g.Wait() // results recorded after their answers, before the store closes
			srv, err := serve.New(serve.Options{Tokens: tf, Addr: listen, AllowedHosts: allowHosts, AllowedOrigins: allowOrigins, Logger: logger,
				TrustedKeys: func() ([]ed25519.PublicKey, error) { return cmdutil.TrustedKeys(nil) }})
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			srv.Handle("GET /metrics", serve.MetricsReaders, metrics.Handler())
			srv.MountMCP(g, string(h))
			srv.MountAPI(svc, string(h))
			srv.MountHooks(serve.HookOptions{Adapters: adapters.All, Runtime: svc, Options: hookOpts, ProjectDir: hookProjectDir,
				Control: hookrun.Control(st)})
			if err := srv.MountDashboard(svc, st); err != nil {
				return cmdutil.Failure("serve: dashboard: " + err.Error())
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return cmdutil.Failure("serve: " + err.Error())
			}
			go cmdutil.SignAndSend(ctx, st, checkpointEvery, sendCheckpoint, logger)
			fmt.Fprintf(cmd.ErrOrStderr(), "statewright serve: listening on http://%s (MCP at /mcp, hooks at /hook/HARNESS/EVENT, dashboard at /dashboard/)\n", ln.Addr())
			if !haveTokens {
				fmt.Fprintln(cmd.ErrOrStderr(), "statewright serve: no tokens exist yet, so every request but /healthz is refused: run `statewright tokens create --role agent`")
			}
			return serve.Run(ctx, ln, srv.Handler(), 5*time.Second)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", DefaultListen, "the address to listen on (loopback unless a token exists)")
	fl.StringVar(&harnessName, "harness", mcpserver.DefaultHarness, "the harness whose sessions are served; session keys are HARNESS:ID")
	fl.StringVar(&projectDir, "project-dir", "", "the project root (default the working directory)")
	fl.StringVar(&storeID, "store-id", "", "the store's id: refuse to serve any other store, and never create one")
	fl.StringArrayVar(&allowHosts, "allow-host", nil, "a further Host header value to accept (the name clients dial); repeatable")
	fl.StringArrayVar(&allowOrigins, "allow-origin", nil, "a browser origin allowed to call the server; repeatable")
	fl.BoolVar(&hookOpts.RequireWorkflow, "require-workflow", false, "deny every ordinary tool call of a session without a run")
	fl.StringVar(&hookOpts.DefaultWorkflow, "default-workflow", "", "start this workflow for a session without a run, at SessionStart")
	fl.BoolVar(&hookOpts.AuditOnly, "audit-only", false, "record what would be denied, without denying")
	fl.DurationVar(&checkpointEvery, "checkpoint-every", 10*time.Minute, "sign a checkpoint of the event log this often, with the signing key beside the operator token (0: never)")
	fl.StringVar(&checkpointExport, "checkpoint-export", "", "also send each checkpoint here: a file outside the project (JSON lines), an http(s) webhook, or otel (a record on the OTLP log stream)")
	cmdutil.AddTokensFileFlag(cmd, &tokensPath)
	cmdutil.AddStoreFlag(cmd)
	gw.Add(cmd)
	return cmd
}

// checkpointSender returns what sends each signed checkpoint for
// --checkpoint-export: nothing (""), a record on the OTel log stream
// ("otel", which needs OTLP logs configured), or SendCheckpoint's file or
// webhook.
func checkpointSender(export string, o *telemetry.OTel) (func(context.Context, store.Checkpoint) error, error) {
	if export != "otel" {
		return cmdutil.CheckpointSender(export), nil
	}
	send, err := telemetry.CheckpointExporter(o)
	if err != nil {
		return nil, cmdutil.Usagef("--checkpoint-export otel: %v", err)
	}
	return send, nil
}
