package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
)

// resultData is the Data of a result event.
type resultData struct {
	Actor    Actor  `json:"actor"`
	Failed   bool   `json:"failed,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Program  string `json:"program,omitempty"`
	Test     bool   `json:"test,omitempty"`
	// TestsRun, Narrowed and Passed summarise runtime.last_test for a test
	// run (the audit trail shows why a guard held or not).
	TestsRun  *int     `json:"tests_run,omitempty"`
	Narrowed  bool     `json:"narrowed,omitempty"`
	Passed    bool     `json:"passed,omitempty"`
	Files     []string `json:"files,omitempty"`
	Interrupt string   `json:"interrupt,omitempty"`
	// Note explains why a result did not change the run (no decision on
	// record, the state moved on meanwhile, ...).
	Note string `json:"note,omitempty"`
	// Bytes is the size of the tool's output; Output the output itself,
	// bounded, when the workflow sets meta.capture_output.
	Bytes  int64  `json:"bytes,omitempty"`
	Output string `json:"output,omitempty"`
}

// RecordResult settles a call (PostToolUse / PostToolUseFailure). It is
// idempotent on the tool_use_id. For a call decided in the run's current
// state it
//
//   - settles the files the decision reserved: a successful call adds them
//     to the state's files edited, a failed one releases them;
//   - records shell evidence: runtime.last_command.{exit_code,program} and,
//     for a test run, runtime.last_test.{exit_code,passed}. A failed shell
//     call without an exit code counts as exit code 1, a successful one
//     without an exit code as 0;
//   - fires the interrupt the decision named after a successful edit
//     (engine.Interrupt), moving the run with a transition event;
//   - counts the output's bytes toward the state's context_budget_bytes
//     (RunView.ContextBytes; PhaseNotes warns past the budget).
//
// The result event records the output's size, and the output itself (at
// most 16 KiB) when the workflow sets meta.capture_output.
//
// Iterations were counted when the call was decided, failed or not.
func (s *Service) RecordResult(ctx context.Context, res ToolResult) error {
	if res.Session == "" {
		return fmt.Errorf("runtime: record result: %w: no session key", store.ErrInvalid)
	}
	if res.ToolUseID == "" {
		res.ToolUseID = res.Call.ToolUseID
	}
	if res.Actor.Kind == "" {
		res.Actor = defaultAgent
	}
	if res.ToolUseID != "" && !res.unrecorded() {
		// The first thing the transaction reads is the call's post record.
		ctx = store.WithCallPrefetch(ctx, store.CallRef{ToolUseID: res.ToolUseID, Phase: store.PhasePost})
	}
	err := s.st.Update(ctx, res.Session, func(tx store.Tx) error {
		return s.recordTx(tx, &res)
	})
	if err != nil {
		return fmt.Errorf("runtime: record result %s %s: %w", res.Session, res.Call.Tool, err)
	}
	return nil
}

// settledOutcome is the part of a pre record's callOutcome (same keys)
// that settling its call reads: decoding only these skips the lesson's
// reason and tool lists, which nothing here uses.
type settledOutcome struct {
	Verdict policy.Verdict `json:"decision"`
	Tool    string         `json:"tool"`
	Call    string         `json:"call,omitempty"`
	Grant   *grant         `json:"grant,omitempty"`
}

// unrecorded reports whether res settles a OneShot call that kept no
// call record (ToolResult.Decided).
func (res *ToolResult) unrecorded() bool { return res.Decided != nil && res.Decided.unrecorded }

func (s *Service) recordTx(tx store.Tx, res *ToolResult) error {
	id := res.ToolUseID
	var (
		pre *store.Call
		o   *settledOutcome // pre's outcome, when known without decoding it
	)
	if d := res.Decided; res.unrecorded() {
		// A one-shot call kept no record: its answer stands for it, and
		// its caller settles it once (ToolCall.OneShot).
		pre = &store.Call{RunID: d.runID, State: d.State}
		o = &settledOutcome{Verdict: d.Verdict, Tool: d.Tool}
	} else if id != "" {
		if _, err := tx.Call(id, store.PhasePost); err == nil {
			return nil // settled before: a retried hook
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		c, err := tx.Call(id, store.PhasePre)
		switch {
		case err == nil:
			pre = c
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
	}
	data := resultData{Actor: res.Actor, Failed: res.Failed, ExitCode: res.ExitCode}
	run := tx.Run()

	var (
		eff       policy.Effects
		canonical string
		granted   *grant
	)
	switch {
	case run == nil:
		data.Note = "no live run"
	case pre == nil:
		// No decision on record (the PreToolUse hook did not run or had no
		// id): the call still happened, so its shell evidence counts, but
		// no files were reserved.
		if isShellTool(res.Call.Harness, res.Call.Tool) {
			canonical = "Bash"
		}
		data.Note = "no decision on record"
	case pre.RunID != "" && pre.RunID != run.ID:
		run, data.Note = nil, "decided under another run"
	case pre.State != run.State:
		// The state moved on since the decision (an interrupt, a
		// transition): the evidence describes a phase that is over.
		run, data.Note = nil, "decided in state "+pre.State+"; the run is now in "+tx.Run().State
	default:
		if o == nil {
			o = new(settledOutcome)
			if err := json.Unmarshal(pre.Outcome, o); err != nil {
				return fmt.Errorf("decode decision: %w", err)
			}
		}
		if o.Verdict == policy.Ask && o.Grant != nil {
			// The harness asked a person. The call went ahead only if
			// they said yes: this result (not a failure) is the grant.
			run = nil
			if res.Failed || o.Call != "" && !strings.HasPrefix(o.Call, res.Call.Tool+"\x00") {
				data.Note = "asked a person; the call did not go ahead, so nothing was granted"
				break
			}
			granted = o.Grant
			data.Note = "asked a person, who said yes: " + o.Grant.Op + " granted"
			break
		}
		if o.Verdict != policy.Allow {
			// A call the runtime did not let through proves nothing.
			run, data.Note = nil, "the call was not allowed ("+o.Verdict.String()+")"
			break
		}
		canonical = o.Tool
		if len(pre.Effects) > 0 {
			if err := json.Unmarshal(pre.Effects, &eff); err != nil {
				return fmt.Errorf("decode effects: %w", err)
			}
		}
	}

	text := outputText(res.Output)
	data.Bytes = max(int64(len(text)), res.OutputBytes)
	if live := tx.Run(); live != nil && text != "" {
		if c, err := s.compiledFor(live); err == nil && c.Def.Meta != nil && c.Def.Meta.CaptureOutput {
			data.Output = captured(text)
		}
	}
	var fired *engine.Outcome
	if run != nil {
		// The output the agent received counts toward the phase's read budget.
		changed := countOutput(run, text, res.OutputBytes)
		// Settle the reserved files.
		for _, f := range eff.FilesEdited {
			k := reservedPrefix + f
			if run.Counters[k] > 0 {
				run.Counters[k]--
				if run.Counters[k] == 0 {
					delete(run.Counters, k)
				}
				changed = true
			}
			if !res.Failed && !slices.Contains(run.FilesEdited, f) {
				run.FilesEdited = append(run.FilesEdited, f)
				changed = true
			}
		}
		if !res.Failed {
			data.Files = eff.FilesEdited
		}
		// Shell evidence.
		if canonical == "Bash" {
			if cmd, ok := commandText(res.Call.Input); ok {
				code := 0
				switch {
				case res.ExitCode != nil:
					code = *res.ExitCode
				case res.Failed:
					code = 1
				}
				ev, err := decodeEvidence(run)
				if err != nil {
					return err
				}
				data.Test = shellEvidence(&ev, cmd, code, res.TestReport)
				if data.Test && ev.LastTest != nil {
					data.TestsRun, data.Narrowed, data.Passed = &ev.LastTest.TestsRun, ev.LastTest.Narrowed, ev.LastTest.Passed
				}
				if ev.LastCommand != nil {
					data.Program = ev.LastCommand.Program
					if data.ExitCode == nil {
						data.ExitCode = &code
					}
					b, err := json.Marshal(&ev)
					if err != nil {
						return fmt.Errorf("encode evidence: %w", err)
					}
					run.Evidence = b
					changed = true
				}
			}
		}
		// Interrupts after a successful edit.
		if !res.Failed && eff.FireInterrupt != "" && run.Status.Live() {
			c, err := s.compiledFor(run)
			if err != nil {
				return err
			}
			snap, err := snapshot(run)
			if err != nil {
				return err
			}
			out, err := engine.Interrupt(c.Def, snap, eff.FireInterrupt)
			switch {
			case err == nil:
				fired = &out
				data.Interrupt = eff.FireInterrupt
			case errors.Is(err, engine.ErrInterruptActive), errors.Is(err, engine.ErrFinalState):
				// Already in (or below) that interrupt: nothing to do.
			default:
				return fmt.Errorf("interrupt %s: %w", eff.FireInterrupt, err)
			}
		}
		if fired == nil && changed {
			if err := hold(tx, run); err != nil {
				return fmt.Errorf("write run: %w", err)
			}
		}
	}

	if id != "" && !res.unrecorded() {
		st := store.CallSettled
		if res.Failed {
			st = store.CallFailed
		}
		var state string
		if run != nil {
			state = run.State
		}
		if err := tx.Record(&store.Call{ToolUseID: id, Phase: store.PhasePost, Status: st, State: state}); err != nil {
			return fmt.Errorf("record call: %w", err)
		}
	}
	db, err := json.Marshal(&data)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	ev := &store.Event{Kind: store.KindResult, Tool: res.Call.Tool, ToolUseID: id, Data: db}
	if run != nil {
		ev.State = run.State
	}
	if len(res.Call.Input) > 0 {
		ev.InputDigest = store.InputDigest(res.Call.Input)
	}
	if err := tx.Append(ev); err != nil {
		return fmt.Errorf("append result: %w", err)
	}
	if fired != nil {
		_, err := s.applyTx(tx, run, *fired, res.Actor, map[string]any{"file": eff.InterruptFile})
		return err
	}
	if granted != nil {
		return s.grantTx(tx, res, granted)
	}
	return nil
}

var (
	shellToolsOnce sync.Once
	shellTools     map[policy.Harness]map[string]bool
)

// isShellTool reports whether raw is a shell tool of harness h, by the
// policy's alias tables.
func isShellTool(h policy.Harness, raw string) bool {
	shellToolsOnce.Do(func() {
		shellTools = map[policy.Harness]map[string]bool{}
		for _, hh := range policy.Harnesses {
			m := map[string]bool{}
			for _, pair := range policy.AliasTable(hh) {
				if pair[1] == "Bash" {
					m[pair[0]] = true
				}
			}
			shellTools[hh] = m
		}
	})
	if h == "" {
		h = policy.ClaudeCode
	}
	return shellTools[h][raw]
}
