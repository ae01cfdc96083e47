package gateway

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// TestProxiedCallsKeepNoCallRecords: the gateway's calls are one-shot
// (runtime.ToolCall.OneShot): a call that reserves nothing is recorded by
// its decision and result events only, with no call record.
func TestProxiedCallsKeepNoCallRecords(t *testing.T) {
	var st *sqlite.Store
	cs, svc := newGateway(t, newUpstream(t, &upstreamProbe{}), gatewaySetup{wrap: func(s *sqlite.Store) store.Store { st = s; return s }})
	ctx := context.Background()
	const n = 5
	for range n {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
			t.Fatalf("%v %v", err, res)
		}
	}
	waitFor(t, func() bool { return len(eventIDs(t, svc, store.KindResult)) == n }, "every result recorded")
	if d := eventIDs(t, svc, store.KindDecision); len(d) != n {
		t.Errorf("%d decision events, want %d", len(d), n)
	}
	run, err := st.LiveRun(ctx, "claude-code:t")
	if err != nil {
		t.Fatal(err)
	}
	calls, err := st.Calls(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 0 {
		t.Errorf("%d call records, want none", len(calls))
	}
	if run.Iterations != n {
		t.Errorf("%d iterations, want %d", run.Iterations, n)
	}
}

// failingStore reports a failure for the next Update once armed: after
// committing it (commit: a connection lost during COMMIT) or without
// running it at all.
type failingStore struct {
	*sqlite.Store
	armed  atomic.Bool
	commit bool
}

var errLost = errors.New("connection lost")

func (f *failingStore) Update(ctx context.Context, key string, fn func(store.Tx) error) error {
	if !f.armed.Swap(false) {
		return f.Store.Update(ctx, key, fn)
	}
	if f.commit {
		if err := f.Store.Update(ctx, key, fn); err != nil {
			return err
		}
	}
	return errLost
}

// TestFailedDecisionTransaction: when the transaction that carries the
// previous result and decides the next call reports a failure, the gateway
// looks the decision up in the log before recording anything again. Rolled
// back: the result is recorded alone and the call decided again (it goes
// ahead). Committed after all: the result is not recorded twice, and the
// call, whose answer the gateway does not know, is refused.
func TestFailedDecisionTransaction(t *testing.T) {
	for _, committed := range []bool{false, true} {
		t.Run(map[bool]string{false: "rolled back", true: "committed"}[committed], func(t *testing.T) {
			fs := &failingStore{commit: committed}
			cs, svc := newGateway(t, newUpstream(t, &upstreamProbe{}), gatewaySetup{decideOnWrap: true,
				wrap: func(s *sqlite.Store) store.Store { fs.Store = s; return fs }})
			ctx := context.Background()
			call := func() *mcp.CallToolResult {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "x"}})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			if res := call(); res.IsError {
				t.Fatalf("first call: %s", text(res))
			}
			// The second decision carries the first result (settleDelay
			// is far longer than this).
			fs.armed.Store(true)
			res := call()
			if res.IsError != committed {
				t.Fatalf("second call: error %v (%s), want %v", res.IsError, text(res), committed)
			}
			if res := call(); res.IsError {
				t.Fatalf("third call: %s", text(res))
			}
			// Every decision but the refused call's gets its result,
			// each once.
			var decisions []string
			waitFor(t, func() bool {
				decisions = eventIDs(t, svc, store.KindDecision)
				return len(eventIDs(t, svc, store.KindResult)) >= len(decisions)-map[bool]int{false: 0, true: 1}[committed]
			}, "every result recorded")
			if len(decisions) != 3 {
				t.Errorf("decisions %q, want 3 (one per call, none twice)", decisions)
			}
			results := eventIDs(t, svc, store.KindResult)
			want := decisions
			if committed {
				want = []string{decisions[0], decisions[2]} // the refused call has no result
			}
			if !slices.Equal(results, want) {
				t.Errorf("results of %q, want of %q (each once)", results, want)
			}
			run, err := fs.LiveRun(ctx, "claude-code:t")
			if err != nil {
				t.Fatal(err)
			}
			if run.Iterations != 3 {
				t.Errorf("%d iterations, want 3", run.Iterations)
			}
		})
	}
}

// eventIDs lists the tool_use_ids of the session's events of kind, in
// log order.
func eventIDs(t *testing.T, svc *runtime.Service, kind store.EventKind) []string {
	t.Helper()
	evs, err := svc.History(context.Background(), "claude-code:t")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range evs {
		if e.Kind == kind {
			ids = append(ids, e.ToolUseID)
		}
	}
	return ids
}
