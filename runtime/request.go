package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/statewright-go/statewright/store"
)

// requestIDKey is the context key of a request id.
type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of one request (the MCP call's
// tool_use_id, an HTTP Idempotency-Key). A Transition made with it is
// applied at most once per session: a retry with the same id (after a
// timeout, or after the replica that took the first attempt died) finds
// the first attempt's record in the same transaction that would apply it,
// and answers the first result instead of moving the run again. An empty
// id changes nothing.
func WithRequestID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id ctx carries ("" for none).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestCallPrefix keeps request records apart from the harness's
// tool_use_id records in the store's call table.
const requestCallPrefix = "request:"

// onceTx runs apply inside tx at most once for request id: when the
// session has a record of id, it decodes the recorded result into out and
// applies nothing; otherwise it applies and, when keep says the result is
// worth replaying (not a refusal), records out under id in the same
// transaction. Without an id it just applies.
func onceTx[T any](tx store.Tx, id string, out *T, apply func() error, keep func() bool) error {
	if id == "" {
		return apply()
	}
	key := requestCallPrefix + id
	c, err := tx.Call(key, store.PhasePre)
	switch {
	case err == nil:
		if err := json.Unmarshal(c.Outcome, out); err != nil {
			return fmt.Errorf("replay request %s: %w", id, err)
		}
		return nil
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	if err := apply(); err != nil {
		return err
	}
	if !keep() {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("record request %s: %w", id, err)
	}
	return tx.Record(&store.Call{ToolUseID: key, Phase: store.PhasePre, Status: store.CallDone, Outcome: b})
}
