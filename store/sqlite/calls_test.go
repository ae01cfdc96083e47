package sqlite

import (
	"errors"
	"fmt"
	"testing"

	"github.com/statewright-go/statewright/store"
)

// TestCallSeesItsOwnRecords: Call answers from the records of a
// tool_use_id it read earlier in the transaction, and a Record in the same
// transaction is seen at once (the pre record, its settlement by the post
// record), as is the next transaction's read of the store.
func TestCallSeesItsOwnRecords(t *testing.T) {
	s, _ := openTemp(t, Options{})
	const key, id = "cc:calls", "toolu_1"
	// want runs inside the writer's transaction: it returns an error
	// rather than stopping the test there.
	want := func(tx store.Tx, phase store.Phase, status store.CallStatus) error {
		c, err := tx.Call(id, phase)
		switch {
		case status == "" && !errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("Call(%s) = %+v, %v; want not found", phase, c, err)
		case status == "":
			return nil
		case err != nil:
			return fmt.Errorf("Call(%s): %w; want %q", phase, err, status)
		case c.ToolUseID != id || c.Phase != phase || c.SessionKey != key || c.Status != status:
			return fmt.Errorf("Call(%s) = %+v; want %q", phase, c, status)
		}
		return nil
	}
	type step struct {
		phase  store.Phase
		status store.CallStatus // "": not found
		record bool             // record this phase before asking
	}
	for i, steps := range [][]step{
		{{phase: store.PhasePre}, {phase: store.PhasePost}, {phase: store.PhasePre, record: true, status: store.CallReserved}, {phase: store.PhasePost}},
		{{phase: store.PhasePost}, {phase: store.PhasePre, status: store.CallReserved},
			{phase: store.PhasePost, record: true, status: store.CallSettled}, {phase: store.PhasePre, status: store.CallSettled}},
		{{phase: store.PhasePre, status: store.CallSettled}, {phase: store.PhasePost, status: store.CallSettled}},
	} {
		err := s.Update(bg, key, func(tx store.Tx) error {
			for _, st := range steps {
				if st.record {
					if err := tx.Record(&store.Call{ToolUseID: id, Phase: st.phase}); err != nil {
						return err
					}
				}
				if err := want(tx, st.phase, st.status); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("transaction %d: %v", i+1, err)
		}
	}
}
