package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/gateway"
	"github.com/statewright-go/statewright/gateway/tokens"
	"github.com/statewright-go/statewright/harness/claudecode"
	"github.com/statewright-go/statewright/mcpserver"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/serve"
)

func init() { register(newServeCmd) }

// DefaultListen is `statewright serve`'s default address.
const DefaultListen = "127.0.0.1:8377"

func newServeCmd() *cobra.Command {
	var (
		listen, harness, projectDir, storeID, tokensPath string
		allowHosts, allowOrigins                         []string
		hook                                             hookOptions
		gw                                               gatewayFlags
	)
	cmd := &cobra.Command{
		Use:   "serve [--listen 127.0.0.1:PORT]",
		Short: "Serve MCP (streamable HTTP), the hook decision endpoint and operator actions over HTTP",
		Long: `serve is statewright's long-lived HTTP server, for many sessions at once:

  POST|GET|DELETE /mcp                 streamable-HTTP MCP: the control tools and the
                                       upstream servers' tools, filtered to each session's phase
  POST /hook/claude-code/{event}       the Claude Code hook decision, for harnesses that
                                       prefer an HTTP hook (body: the hook's JSON input)
  GET  /api/sessions/{session}         a run's state (any token)
  POST /api/sessions/{session}/{action} approve, reject, pause, resume, deactivate
                                       (operator tokens only; body {"approval_id": "..."})
  GET  /dashboard/                     the web dashboard (sign in with a token; operator
                                       tokens approve, agent tokens only look; docs/dashboard.md)
  GET  /healthz                        liveness (no token)

Every endpoint but /healthz needs "Authorization: Bearer TOKEN" (statewright
tokens create). Agent tokens never approve or weaken enforcement. Requests
whose Host or Origin is not this server's are refused (DNS rebinding). serve
listens on loopback by default and refuses a non-loopback address unless a
token exists. An MCP session acts on the session its token is bound to, or
the one named by the Statewright-Session header, or a fresh one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := policy.ParseHarness(harness)
			if err != nil {
				return usagef("--harness: %v", err)
			}
			// The hook endpoint resolves paths against the project the
			// operator named, else each hook's own cwd (serve may decide for
			// several projects); the rest defaults to the working directory.
			hookProjectDir := projectDir
			if projectDir == "" {
				if projectDir, err = os.Getwd(); err != nil {
					return failure{"serve: no project directory: " + err.Error()}
				}
			}
			tf, err := openTokens(tokensPath)
			if err != nil {
				return err
			}
			haveTokens, err := tf.Any()
			if err != nil {
				return failure{"serve: " + err.Error()}
			}
			if err := serve.CheckBind(listen, haveTokens); err != nil {
				return usagef("%v", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			st, err := openStoreWith(ctx, cmd, storeOptions{MustExist: storeID != "", ExpectID: storeID})
			if err != nil {
				return failure{err.Error()}
			}
			defer st.Close()
			logger := stderrLogger(cmd)
			var protected []string
			if exe, err := os.Executable(); err == nil {
				protected = append(protected, exe)
			}
			protected = append(protected, tf.Path())
			workflows := runtime.DefaultWorkflows(projectDir)
			svc := runtime.New(st, runtime.Options{
				Policy:    policy.Options{RequireWorkflow: hook.requireWorkflow, ProtectedPaths: protected},
				AuditOnly: hook.auditOnly, DefaultWorkflow: hook.defaultWorkflow, ProjectDir: projectDir, Workflows: workflows,
			})
			mgr, err := gw.manager(projectDir, logger)
			if err != nil {
				return err
			}
			if mgr != nil {
				if err := mgr.Start(ctx); err != nil {
					return failure{err.Error()}
				}
				defer mgr.Close()
			}
			g, err := gateway.New(gateway.Options{Runtime: svc, Store: st, Upstreams: mgr, Harness: string(h), ProjectDir: projectDir,
				Workflows: workflows, Version: buildVersion(), RequireWorkflow: hook.requireWorkflow, PollInterval: gw.poll,
				PageSize: gw.pageSize, ElicitApprovals: gw.elicit, OnPending: gw.notifier(logger), Logger: logger})
			if err != nil {
				return failure{err.Error()}
			}
			srv, err := serve.New(serve.Options{Tokens: tf, Addr: listen, AllowedHosts: allowHosts, AllowedOrigins: allowOrigins, Logger: logger})
			if err != nil {
				return failure{err.Error()}
			}
			mountServe(srv, g, svc, string(h), hookProjectDir, &hook)
			if err := mountDashboard(srv, svc, st, tf); err != nil {
				return failure{"serve: dashboard: " + err.Error()}
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return failure{"serve: " + err.Error()}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "statewright serve: listening on http://%s (MCP at /mcp, hooks at /hook/claude-code/EVENT, dashboard at /dashboard/)\n", ln.Addr())
			if !haveTokens {
				fmt.Fprintln(cmd.ErrOrStderr(), "statewright serve: no tokens exist yet, so every request but /healthz is refused: run `statewright tokens create --role agent`")
			}
			return serve.Run(ctx, ln, srv.Handler(), 5*time.Second)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", DefaultListen, "the address to listen on (loopback unless a token exists)")
	fl.StringVar(&harness, "harness", mcpserver.DefaultHarness, "the harness whose sessions are served; session keys are HARNESS:ID")
	fl.StringVar(&projectDir, "project-dir", "", "the project root (default the working directory)")
	fl.StringVar(&storeID, "store-id", "", "the store's id: refuse to serve any other store, and never create one")
	fl.StringArrayVar(&allowHosts, "allow-host", nil, "a further Host header value to accept (the name clients dial); repeatable")
	fl.StringArrayVar(&allowOrigins, "allow-origin", nil, "a browser origin allowed to call the server; repeatable")
	fl.BoolVar(&hook.requireWorkflow, "require-workflow", false, "deny every ordinary tool call of a session without a run")
	fl.StringVar(&hook.defaultWorkflow, "default-workflow", "", "start this workflow for a session without a run, at SessionStart")
	fl.BoolVar(&hook.auditOnly, "audit-only", false, "record what would be denied, without denying")
	addTokensFileFlag(cmd, &tokensPath)
	addStoreFlag(cmd)
	gw.add(cmd)
	return cmd
}

// mountServe mounts the MCP endpoint, the hook endpoint and the operator
// API on srv. hookProjectDir is the project the hook endpoint resolves paths against
// ("": each hook input's cwd).
func mountServe(srv *serve.Server, g *gateway.Gateway, svc *runtime.Service, harness, hookProjectDir string, hook *hookOptions) {
	mcpH := g.HTTPHandler(gateway.HTTPOptions{
		Resolve: func(r *http.Request) (gateway.SessionOptions, string, error) {
			t, _ := serve.Principal(r.Context())
			key, err := requestSession(r, t, harness)
			if err != nil {
				return gateway.SessionOptions{}, "", err
			}
			return gateway.SessionOptions{Session: key, Channel: "serve"}, t.ID, nil
		},
		Owner: func(r *http.Request) string {
			t, _ := serve.Principal(r.Context())
			return t.ID
		},
	})
	for _, m := range []string{"POST", "GET", "DELETE"} {
		srv.Handle(m+" /mcp", serve.AnyToken, mcpH)
	}
	srv.Handle("POST /hook/claude-code/{event}", serve.AnyToken, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveHook(w, r, svc, hook, hookProjectDir)
	}))
	srv.Handle("GET /api/sessions/{session}", serve.AnyToken, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := mcpserver.ParseSessionKey(harness, r.PathValue("session"))
		if err != nil {
			http.Error(w, "statewright: "+err.Error(), http.StatusBadRequest)
			return
		}
		if t, _ := serve.Principal(r.Context()); t.Session != "" && t.Session != key {
			http.Error(w, "statewright: this token is bound to another session", http.StatusForbidden)
			return
		}
		v, err := svc.Status(r.Context(), key)
		if err != nil {
			writeAPIError(w, err)
			return
		}
		v.Run = displayRun(v.Run)
		writeHTTPJSON(w, http.StatusOK, v)
	}))
	srv.Handle("POST /api/sessions/{session}/{action}", serve.OperatorOnly, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		operatorAction(w, r, svc, harness)
	}))
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
	t, _ := serve.Principal(r.Context())
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

// serveHook answers a Claude Code hook posted over HTTP. Claude Code reads a
// 2xx JSON body like a command hook's stdout and treats any other answer as
// a non-blocking error (the call goes ahead), so every decision, including
// a failure to decide, is a 200 whose JSON carries the verdict: a deny is
// permissionDecision "deny", never an HTTP error.
func serveHook(w http.ResponseWriter, r *http.Request, svc *runtime.Service, o *hookOptions, projectDir string) {
	ev, err := claudecode.ParseEvent(r.PathValue("event"))
	if err != nil {
		writeHookAnswer(w, claudecode.PreToolUse, claudecode.Failure(claudecode.PreToolUse, err.Error()))
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, claudecode.MaxInputBytes+1))
	if err != nil {
		writeHookAnswer(w, ev, claudecode.Failure(ev, "read hook input: "+err.Error()))
		return
	}
	in, err := claudecode.Decode(ev, data)
	if err != nil {
		writeHookAnswer(w, ev, claudecode.Failure(ev, err.Error()))
		return
	}
	if t, _ := serve.Principal(r.Context()); t.Session != "" && t.Session != claudecode.SessionKey(in.SessionID) {
		writeHookAnswer(w, ev, claudecode.Failure(ev, "this token is bound to session "+t.Session+", not "+claudecode.SessionKey(in.SessionID)))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), defaultHookDeadline)
	defer cancel()
	dir := projectDir
	if dir == "" {
		dir = in.Cwd
	}
	writeHookAnswer(w, ev, hookAnswer(ctx, ev, svc, in, o, dir))
}

// writeHookAnswer renders a hook answer as an HTTP hook response body.
func writeHookAnswer(w http.ResponseWriter, ev claudecode.Event, a claudecode.Answer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(httpHookBody(ev, a))
}

// httpHookBody turns a command hook's answer (exit code, stdout, stderr)
// into the JSON an HTTP hook returns: exit 0 is its stdout (or {}); the
// blocking exit 2 becomes the event's JSON block form with stderr as the
// reason; other exits are a notice.
func httpHookBody(ev claudecode.Event, a claudecode.Answer) []byte {
	reason := strings.TrimSpace(a.Stderr)
	var v any
	switch {
	case a.Exit == claudecode.ExitOK:
		if len(a.Stdout) > 0 {
			return a.Stdout
		}
		return []byte("{}\n")
	case a.Exit == claudecode.ExitBlock && ev == claudecode.PreToolUse:
		v = map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": string(ev),
			"permissionDecision": "deny", "permissionDecisionReason": reason}}
	case a.Exit == claudecode.ExitBlock:
		v = map[string]any{"decision": "block", "reason": reason}
	default:
		v = map[string]any{"systemMessage": reason}
	}
	b, _ := json.Marshal(v)
	return append(b, '\n')
}
