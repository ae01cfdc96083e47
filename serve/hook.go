package serve

import (
	"context"
	"net/http"
	"time"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/hook"
	"github.com/statewright-go/statewright/runtime"
)

// HookOptions configure the hook endpoint.
type HookOptions struct {
	// Adapters are the harnesses whose hooks may be posted.
	Adapters []harness.Adapter
	// Runtime decides every posted hook.
	Runtime *runtime.Service
	// Options are the operator's choices (require-workflow, default
	// workflow, audit-only).
	Options harness.Options
	// ProjectDir, when set, is the project every call resolves against;
	// else each hook input's own cwd (one serve may decide for several
	// projects).
	ProjectDir string
	// Control runs a plugin's control tool (nil: not available).
	Control func(ctx context.Context, svc *runtime.Service, r harness.ControlRequest) (string, bool, error)
	// Deadline bounds each answer (install.DefaultDeadline when 0).
	Deadline time.Duration
}

// HookPattern is where the hook endpoint is mounted. Claude Code's HTTP
// hooks post to /hook/claude-code/EVENT.
const HookPattern = "POST /hook/{harness}/{event}"

// MountHooks mounts the hook endpoint: POST /hook/{harness}/{event} with
// the hook's JSON input as the body, answered with status 200 and the
// harness's JSON answer (what its command hook would print; a deny by exit
// code becomes its JSON deny). It needs a hook credential. Every refusal
// (Host, Origin, a missing, wrong or revoked token, an agent or operator
// token, an unreadable token file, a store error)
// is answered the same way, 200 with a deny in the harness's convention:
// a harness lets the call through on any other status.
func (s *Server) MountHooks(o HookOptions) {
	if o.Deadline <= 0 {
		o.Deadline = hookDeadline
	}
	find := func(r *http.Request) harness.Adapter {
		for _, a := range o.Adapters {
			if a.Info().Name == r.PathValue("harness") {
				return a
			}
		}
		return nil
	}
	deny := func(w http.ResponseWriter, r *http.Request, _ int, msg string) {
		s.opts.Logger.Info("hook refused", "path", r.URL.Path, "remote", r.RemoteAddr, "why", msg)
		writeHookAnswer(w, find(r), r.PathValue("event"), harness.Answer{Exit: 2, Stderr: "statewright: " + msg}, msg)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := find(r)
		if a == nil {
			deny(w, r, http.StatusNotFound, "no harness "+r.PathValue("harness"))
			return
		}
		hk := &harness.Hook{Options: o.Options, ProjectDir: o.ProjectDir, Control: o.Control,
			Open: func(context.Context, string, ...string) (*runtime.Service, error) { return o.Runtime, nil }}
		req := &hook.Request{Adapter: a, Event: r.PathValue("event"), Stdin: r.Body, Hook: hk}
		ans := hook.Chain(hook.Respond, hook.Deadline(o.Deadline), hook.ReadInput(harness.MaxInputBytes))(r.Context(), req)
		writeHookAnswer(w, a, req.Event, ans, "")
	})
	s.handle(HookPattern, HookOnly, h, deny)
}

// hookDeadline bounds an HTTP hook's answer, like a hook command's default
// deadline.
const hookDeadline = 5 * time.Second

// writeHookAnswer writes a hook answer as an HTTP hook response: status
// 200 and the answer as JSON. A refusal (msg set) is answered as the
// event's failure, in the harness's convention when the harness is known.
func writeHookAnswer(w http.ResponseWriter, a harness.Adapter, event string, ans harness.Answer, msg string) {
	if msg != "" && a != nil {
		ans = a.Failure(event, msg)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(ans.JSON())
}
