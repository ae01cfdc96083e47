package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/workflow"
)

// RulePaused is the runtime's rule id for calls denied because a person
// paused the run: only read-only control tools work until it is resumed.
const RulePaused policy.Rule = "paused"

// reservedPrefix marks, in store.Run.Counters, a file reserved by an
// allowed edit that PostToolUse has not settled yet. Reserved files count
// toward max_files_per_state at once, so concurrent calls cannot overrun it.
const reservedPrefix = "reserved:"

// defaultAgent is the actor recorded when an adapter leaves Actor empty.
var defaultAgent = Actor{Kind: ActorAgent, Channel: "hook"}

// callOutcome is what a pre call record stores, replayed verbatim when the
// same tool_use_id is decided again.
type callOutcome struct {
	Verdict      policy.Verdict `json:"decision"`
	Rule         policy.Rule    `json:"rule"`
	Reason       string         `json:"reason"`
	AllowedTools []string       `json:"allowed_tools"`
	NextEvents   []string       `json:"next_events"`
	Tool         string         `json:"tool"`
	Enforced     bool           `json:"enforced"`
	State        string         `json:"state"`
	// WouldBe is the verdict the policy reached (differs from Verdict only
	// in audit-only mode).
	WouldBe policy.Verdict `json:"would_be"`
	// Call identifies the decided call (tool name and input digest): a
	// tool_use_id reused for another call must not replay this answer.
	Call string `json:"call,omitempty"`
	// Grant is what a person's yes grants when Verdict is Ask; it takes
	// effect only when RecordResult confirms the call went ahead.
	Grant *grant `json:"grant,omitempty"`
}

// callKey identifies a call's tool and input for replay checks.
func callKey(call *ToolCall) string {
	return call.Call.Tool + "\x00" + inputDigest(call)
}

// inputDigest is the digest of the call's input, computed once.
func inputDigest(call *ToolCall) string {
	if call.digest == "" {
		call.digest = store.InputDigest(call.Call.Input)
	}
	return call.digest
}

func (o *callOutcome) result(replayed bool) DecideResult {
	return DecideResult{
		Decision: policy.Decision{Verdict: o.Verdict, Rule: o.Rule, Reason: o.Reason,
			AllowedTools: o.AllowedTools, NextEvents: o.NextEvents, Tool: o.Tool},
		Enforced: o.Enforced, Replayed: replayed, State: o.State,
	}
}

// decisionData is the Data of a decision event.
type decisionData struct {
	Actor      Actor          `json:"actor"`
	Harness    policy.Harness `json:"harness,omitempty"`
	Canonical  string         `json:"canonical,omitempty"`
	Enforced   bool           `json:"enforced"`
	AuditOnly  bool           `json:"audit_only,omitempty"`
	Returned   string         `json:"returned,omitempty"`
	Iterations int64          `json:"iterations,omitempty"`
	Files      []string       `json:"files,omitempty"`
	Interrupt  string         `json:"interrupt,omitempty"`
	Status     store.Status   `json:"status,omitempty"`
	// Implicit names the event of an implicit transition taken first.
	Implicit string `json:"implicit_transition,omitempty"`
	// PermissionMode is the harness's permission mode, when it reports one.
	PermissionMode string `json:"permission_mode,omitempty"`
	// Grant is what a person's yes to an Ask would grant.
	Grant *grant `json:"grant,omitempty"`
	// Sandboxed: the call's command runs under the OS sandbox.
	Sandboxed bool `json:"sandboxed,omitempty"`
	// Hints: the MCP tool's annotations from its trusted server, which
	// the decision read.
	Hints *policy.ToolHints `json:"hints,omitempty"`
	// Ask is the call a permission ask rule parked (or the grant it used).
	Ask *askData `json:"ask,omitempty"`
}

// implicitTx applies the implicit transition d names and decides the call
// again in the new phase. Anything unexpected (the engine refuses, the
// transition would need approval or child work, the call is still asking
// for a transition) denies: approval gates, guards, invokes and forks are
// never skipped.
func (s *Service) implicitTx(tx store.Tx, run *store.Run, call *ToolCall, d policy.Decision) (policy.Decision, error) {
	deny := func(why string) policy.Decision {
		return policy.Decision{Verdict: policy.Deny, Rule: policy.RuleInternal, Tool: d.Tool,
			Reason:       "Denied: the implicit transition " + d.Effects.Transition + " could not be taken (" + why + "); send it yourself (rule internal-error).",
			AllowedTools: d.AllowedTools, NextEvents: []string{d.Effects.Transition}}
	}
	c, err := s.compiledFor(run)
	if err != nil {
		return policy.Decision{}, err
	}
	snap, err := snapshot(run)
	if err != nil {
		return policy.Decision{}, err
	}
	out, err := engine.Step(c.Def, snap, d.Effects.Transition, nil)
	switch {
	case err != nil:
		return deny(err.Error()), nil
	case out.RequiresApproval || out.Deferred:
		return deny("it needs approval or child work"), nil
	case d.Effects.TransitionTarget != "" && out.To != d.Effects.TransitionTarget:
		return deny("it leads to '" + out.To + "', not '" + d.Effects.TransitionTarget + "'"), nil
	}
	if _, err := s.applyTx(tx, run, out, call.Actor, map[string]any{"implicit": true, "tool_use_id": call.Call.ToolUseID}); err != nil {
		return policy.Decision{}, err
	}
	if out.Final {
		return deny("it ends the workflow"), nil
	}
	rs, err := runState(run, tx.Now())
	if err != nil {
		return policy.Decision{}, err
	}
	d2 := c.Law.Decide(rs, &call.Call)
	if d2.Effects.Transition != "" {
		return deny("the call would need a second transition"), nil
	}
	return d2, nil
}

// runState maps a stored run to the policy's view of it. Files reserved by
// unsettled edits count as edited.
func runState(run *store.Run, now time.Time) (*policy.RunState, error) {
	rs := &policy.RunState{Active: true, State: run.State}
	switch {
	case run.Iterations < 0:
		rs.Iterations = 0
	case run.Iterations > math.MaxUint32:
		rs.Iterations = math.MaxUint32
	default:
		rs.Iterations = uint32(run.Iterations)
	}
	rs.FilesEdited = run.FilesEdited
	if n := reservedCount(run); n > 0 {
		files := slices.Clone(run.FilesEdited)
		for k, v := range run.Counters {
			if f, ok := strings.CutPrefix(k, reservedPrefix); ok && v > 0 && !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
		slices.Sort(files)
		rs.FilesEdited = files
	}
	// An expired approval no longer holds the run: the transition tool is
	// let through, and Transition withdraws the approval.
	if ap := run.PendingApproval; ap != nil && now.Before(ap.ExpiresAt) {
		rs.PendingApproval = &policy.Approval{ID: ap.ID, Event: ap.Event, To: ap.To, Message: ap.Message}
	}
	if len(run.History) > 0 {
		hist, err := decodeHistory(run)
		if err != nil {
			return nil, err
		}
		rs.History = hist
	}
	return rs, nil
}

func reservedCount(run *store.Run) int {
	n := 0
	for k, v := range run.Counters {
		if v > 0 && strings.HasPrefix(k, reservedPrefix) {
			n++
		}
	}
	return n
}

func decodeHistory(run *store.Run) ([]engine.Frame, error) {
	ints, _, err := readHistory(run)
	return ints, err
}

// Decide decides a tool call (PreToolUse): reads the run, calls the
// policy, reserves the effects, appends the decision event. Idempotent on
// the call's tool_use_id: a second Decide of the same id replays the first
// answer (Replayed) without counting again. Any error means the adapter
// must deny.
//
// Without a live run the call is decided dormant (self-protection and
// --require-workflow still apply) and recorded under the session — unless
// the session's last run completed in a final state: then the call is
// decided in that final state (docs/architecture.md, decision pipeline step 5: everything but
// read-only control tools and starting a new run is denied), so finishing a
// workflow does not set the agent free. A person's deactivate, by
// contrast, leaves the session dormant. A paused
// run denies everything but read-only control tools (RulePaused). In
// audit-only mode (Options.AuditOnly or the run's AuditOnly) the would-be
// decision is recorded and the call is allowed with Enforced false, except
// self-protection and human-only control tools, which are always enforced.
func (s *Service) decide(ctx context.Context, call ToolCall) (DecideResult, error) {
	if call.Session == "" {
		return DecideResult{}, fmt.Errorf("runtime: decide: %w: no session key", store.ErrInvalid)
	}
	if call.Actor.Kind == "" {
		call.Actor = defaultAgent
	}
	if call.Call.Resolver == nil && !s.opts.NoResolve {
		if s.opts.Resolver != nil {
			call.Call.Resolver = s.opts.Resolver
		} else {
			call.Call.Resolver = NewResolver()
		}
	}
	// Work that needs no store is done before the transaction, where
	// sessions run in parallel: the store commits many sessions'
	// decisions in one writer. The input's digest; and the facts of the
	// paths the call names (the file system's, not the store's), which
	// self-protection resolves in every state: the dormant law's decision
	// resolves them into the call's resolver, and the law in the
	// transaction finds them there.
	inputDigest(&call)
	// The tool input is decoded once, by whichever decision needs it
	// first, for both (policy.ToolCall.Decoded).
	if call.Call.Decoded == nil {
		call.Call.Decoded = &policy.DecodedInput{}
	}
	if call.Call.Resolver != nil {
		if law, err := s.dormantLaw(); err == nil {
			law.Decide(nil, &call.Call)
		}
	}
	settle := make([]ToolResult, len(call.Settle))
	for i, r := range call.Settle {
		if r.Session != call.Session {
			return DecideResult{}, fmt.Errorf("runtime: decide: %w: a result to settle belongs to session %q", store.ErrInvalid, r.Session)
		}
		if r.ToolUseID == "" {
			r.ToolUseID = r.Call.ToolUseID
		}
		if r.Actor.Kind == "" {
			r.Actor = defaultAgent
		}
		settle[i] = r
	}
	var res DecideResult
	// The call records the transaction reads: the settled calls' (but a
	// one-shot call's that kept none), then the call's own (but a
	// one-shot call's, which nothing replays).
	var reads []string
	for _, r := range settle {
		if r.ToolUseID != "" && !r.unrecorded() {
			reads = append(reads, r.ToolUseID)
		}
	}
	id := call.Call.ToolUseID
	if call.OneShot {
		id = ""
	}
	switch {
	case len(reads) > 0 && id != "":
		// A store may read them at once.
		ctx = store.WithCallReads(ctx, append(reads, id)...)
	case len(reads) > 0:
		ctx = store.WithCallReads(ctx, reads...)
	case id != "":
		// The first thing the transaction reads is the call's record.
		ctx = store.WithCallPrefetch(ctx, store.CallRef{ToolUseID: id, Phase: store.PhasePre})
	}
	err := s.st.Update(ctx, call.Session, func(tx store.Tx) error {
		res = DecideResult{} // fn may run more than once: the last run's answer counts
		if len(settle) == 0 {
			return s.decideOrReplay(tx, &call, &res)
		}
		// The results' own writes of the run (their counters) are held
		// and written with the decision's: one run write per transaction.
		h := &heldTx{Tx: tx}
		for i := range settle {
			r := settle[i] // recordTx may change it; a retry starts afresh
			if err := s.recordTx(h, &r); err != nil {
				return fmt.Errorf("runtime: record result %s %s: %w", r.Session, r.Call.Tool, err)
			}
		}
		if err := s.decideOrReplay(h, &call, &res); err != nil {
			return err
		}
		return h.flush()
	})
	if err != nil {
		return DecideResult{}, fmt.Errorf("runtime: decide %s %s: %w", call.Session, call.Call.Tool, err)
	}
	return res, nil
}

// decideOrReplay decides call in tx, or replays the answer recorded for
// its tool_use_id, into res.
func (s *Service) decideOrReplay(tx store.Tx, call *ToolCall, res *DecideResult) error {
	// Without a live run, a session whose last run completed is
	// decided in that run's final state.
	ended := tx.Last()
	if ended != nil && ended.Status != store.StatusCompleted {
		ended = nil
	}
	id := call.Call.ToolUseID
	if id != "" && !call.OneShot {
		prev, err := tx.Call(id, store.PhasePre)
		switch {
		case err == nil:
			var o callOutcome
			if err := json.Unmarshal(prev.Outcome, &o); err != nil {
				return fmt.Errorf("runtime: decide %s: replay: %w", id, err)
			}
			if o.Call != "" && o.Call != callKey(call) {
				return fmt.Errorf("runtime: decide %s: %w: tool_use_id already decided for another call", id, store.ErrInvalid)
			}
			*res = o.result(true)
			if res.Verdict == policy.Allow && call.Sandbox != nil {
				// Replayed: the profile of the phase the run is in now.
				prof, err := s.sandboxProfile(tx.Run(), ended, call.Sandbox)
				if err != nil {
					return err
				}
				res.Sandbox = prof
			}
			return nil
		case !errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("runtime: decide %s: %w", id, err)
		}
	}
	r, err := s.decideTx(tx, call, ended)
	*res = r
	return err
}

// heldTx holds a run write back until the transaction writes the run
// again, or until flush: Decide records the results it settles and then
// the decision in one transaction, and the results' counters (output
// bytes, settled files) need not be written before the decision's
// iteration. Run returns the held run, so everything after a hold reads
// it as written; any Put writes the run as it stands, the held changes
// with it. Only recordTx's plain write of a live run's counters is held
// (hold): writes that move the run (interrupts, transitions, grants) go
// through Put, and the revision a Put sets is the one they read.
type heldTx struct {
	store.Tx
	held *store.Run
}

// Run implements store.Tx: the held run when there is one.
func (t *heldTx) Run() *store.Run {
	if t.held != nil {
		return t.held.Clone()
	}
	return t.Tx.Run()
}

// Put implements store.Tx; r carries any held change (it was read
// through Run after the hold).
func (t *heldTx) Put(r *store.Run) error {
	t.held = nil
	return t.Tx.Put(r)
}

// flush writes the held run, if any.
func (t *heldTx) flush() error {
	if t.held == nil {
		return nil
	}
	r := t.held
	t.held = nil
	return t.Tx.Put(r)
}

// hold writes run, a live run's counters changed by a result, now, or
// holds it for the next write when tx holds writes (heldTx).
func hold(tx store.Tx, run *store.Run) error {
	if h, ok := tx.(*heldTx); ok && run.Status.Live() {
		h.held = run.Clone()
		return nil
	}
	return tx.Put(run)
}

func (s *Service) decideTx(tx store.Tx, call *ToolCall, ended *store.Run) (DecideResult, error) {
	run := tx.Run()
	var (
		law *policy.Law
		rs  *policy.RunState
		err error
	)
	if run == nil && ended != nil {
		// Decided in the completed run's final state; nothing is counted
		// or written to the ended run.
		c, err := s.compiledFor(ended)
		if err != nil {
			return DecideResult{}, err
		}
		law = c.Law
		if rs, err = runState(ended, tx.Now()); err != nil {
			return DecideResult{}, err
		}
	} else if run == nil {
		if law, err = s.dormantLaw(); err != nil {
			return DecideResult{}, err
		}
	} else {
		c, err := s.compiledFor(run)
		if err != nil {
			return DecideResult{}, err
		}
		law = c.Law
		if rs, err = runState(run, tx.Now()); err != nil {
			return DecideResult{}, err
		}
		if len(c.Warnings) > 0 && run.Iterations == 0 {
			// Once per state: the snapshot holds keys this version rejects
			// when loading; the run goes on under the law it started with.
			if err := tx.Append(snapshotWarning(run, c.Warnings)); err != nil {
				return DecideResult{}, err
			}
		}
	}
	d := law.Decide(rs, &call.Call)
	var implicit string
	switch {
	case run != nil && run.Status == store.StatusPaused && d.Rule != policy.RuleControlRead && d.Rule != policy.RuleSelfProtect &&
		d.Rule != policy.RuleControlHumanOnly:
		// (A human-only control tool is asked or denied below, so that a
		// person can still resume or end a paused run through the prompt.)
		d = policy.Decision{Verdict: policy.Deny, Rule: RulePaused, Tool: d.Tool,
			Reason:       "Denied: the run is paused by a person (rule paused); only read-only statewright control tools work until someone runs `statewright resume " + tx.SessionKey() + "`.",
			AllowedTools: []string{}, NextEvents: []string{}}
	case run != nil && d.Verdict == policy.Allow && d.Effects.Transition != "":
		// An implicit transition (meta.implicit_transitions: auto): take
		// it through the engine first, then decide the same call again in
		// the new phase, with fresh counters.
		implicit = d.Effects.Transition
		if d, err = s.implicitTx(tx, run, call, d); err != nil {
			return DecideResult{}, err
		}
		run = tx.Run()
	}

	// A permission ask rule where no person answers the harness's
	// prompt: a person's grant for this very call lets it run once, else
	// the call is parked for `statewright approve --call`.
	var parked *askData
	askChanged := false
	if d.Verdict == policy.Ask && d.Rule == policy.RulePermissionAsk && !call.HumanPrompt && run != nil && implicit == "" {
		d, parked, askChanged = parkOrGrant(tx, run, call, law, rs, d)
	}

	// A person must act: ask through the harness's prompt where a person
	// answers it, else deny with the command a person can run.
	var g *grant
	d, g = askFor(call, run, tx.SessionKey(), d)
	if run != nil && d.Verdict != policy.Allow {
		// Inside child work, say where the run goes when it ends: the
		// phase that allows the call may be the parent's.
		if n := s.subflowNote(run); n != "" {
			d.Reason += " " + n
		}
	}

	audit := s.opts.AuditOnly || (run != nil && run.AuditOnly)
	out := callOutcome{Verdict: d.Verdict, Rule: d.Rule, Reason: d.Reason, AllowedTools: d.AllowedTools,
		NextEvents: d.NextEvents, Tool: d.Tool, Enforced: true, WouldBe: d.Verdict, Call: callKey(call)}
	if run != nil {
		out.State = run.State
	} else if ended != nil {
		out.State = ended.State
	}
	if audit && d.Rule != policy.RuleSelfProtect && d.Rule != policy.RuleControlHumanOnly {
		out.Enforced = false
		out.Verdict = policy.Allow
	}
	if out.Verdict == policy.Ask {
		out.Grant = g
	}

	// Effects: iterations now, edited files reserved until PostToolUse.
	eff := d.Effects
	var reserved []string
	if run != nil {
		changed := askChanged
		if eff.CountIteration {
			run.Iterations++
			changed = true
		}
		if out.Verdict == policy.Allow && len(eff.FilesEdited) > 0 {
			if run.Counters == nil {
				run.Counters = map[string]int64{}
			}
			for _, f := range eff.FilesEdited {
				if !slices.Contains(reserved, f) {
					reserved = append(reserved, f)
					run.Counters[reservedPrefix+f]++
				}
			}
			changed = true
		}
		if changed {
			if err := tx.Put(run); err != nil {
				return DecideResult{}, fmt.Errorf("write run: %w", err)
			}
		}
	}

	unrecorded := false
	if id := call.Call.ToolUseID; id != "" {
		rec := &store.Call{ToolUseID: id, Phase: store.PhasePre, Status: store.CallDone, State: out.State}
		if run != nil && out.Verdict == policy.Allow && (len(reserved) > 0 || eff.FireInterrupt != "") {
			// The effects PostToolUse settles (reserved files, an
			// interrupt to fire); a call with none has nothing to settle
			// and records none.
			eff.FilesEdited = reserved
			eb, err := json.Marshal(&eff)
			if err != nil {
				return DecideResult{}, fmt.Errorf("encode effects: %w", err)
			}
			rec.Effects = eb
			rec.Status = store.CallReserved
		}
		if out.Grant != nil {
			rec.Status = store.CallReserved // until PostToolUse confirms (or never)
		}
		if call.OneShot && rec.Status == store.CallDone {
			// Nothing to replay and nothing reserved: the decision
			// event below is the call's record (ToolCall.OneShot).
			unrecorded = true
		} else {
			if rec.Outcome, err = json.Marshal(&out); err != nil {
				return DecideResult{}, fmt.Errorf("encode outcome: %w", err)
			}
			if err := tx.Record(rec); err != nil {
				return DecideResult{}, fmt.Errorf("record call: %w", err)
			}
		}
	}

	data := decisionData{Actor: call.Actor, Harness: call.Call.Harness, Canonical: d.Tool, Enforced: out.Enforced,
		AuditOnly: audit, Files: reserved, Interrupt: eff.FireInterrupt, PermissionMode: call.PermissionMode, Grant: out.Grant,
		Sandboxed: call.Call.Sandboxed, Hints: call.Call.Hints, Ask: parked}
	if out.Verdict != out.WouldBe {
		data.Returned = out.Verdict.String()
	}
	if run != nil {
		data.Iterations = run.Iterations
		data.Status = run.Status
	}
	data.Implicit = implicit
	db, err := json.Marshal(&data)
	if err != nil {
		return DecideResult{}, fmt.Errorf("encode event: %w", err)
	}
	ev := &store.Event{Kind: store.KindDecision, State: out.State, Tool: call.Call.Tool,
		Decision: out.WouldBe.String(), Rule: string(d.Rule), Reason: d.Reason, ToolUseID: call.Call.ToolUseID, Data: db}
	if len(call.Call.Input) > 0 {
		ev.InputDigest = inputDigest(call)
	}
	if err := tx.Append(ev); err != nil {
		return DecideResult{}, fmt.Errorf("append decision: %w", err)
	}
	res := out.result(false)
	if unrecorded {
		res.unrecorded = true
		if run != nil {
			res.runID = run.ID
		}
	}
	if out.Verdict == policy.Allow && call.Sandbox != nil {
		if res.Sandbox, err = s.sandboxProfile(run, ended, call.Sandbox); err != nil {
			return DecideResult{}, err
		}
	}
	return res, nil
}

// sandboxProfile derives the OS profile for a call decided on run (nil:
// dormant, or decided in the ended run's final state).
func (s *Service) sandboxProfile(run, ended *store.Run, env *policy.SandboxEnv) (*sandbox.Profile, error) {
	if run == nil {
		run = ended
	}
	var (
		law   *policy.Law
		state string
	)
	if run == nil {
		l, err := s.dormantLaw()
		if err != nil {
			return nil, err
		}
		law = l
	} else {
		c, err := s.compiledFor(run)
		if err != nil {
			return nil, err
		}
		law, state = c.Law, run.State
	}
	p, err := law.SandboxProfile(state, *env)
	if err != nil {
		return nil, fmt.Errorf("sandbox profile: %w", err)
	}
	p.Hidden = append(p.Hidden, projectSecrets(env.ProjectDir, law.IsSecret)...)
	return &p, nil
}

// snapshotWarning is the audit event saying a run's snapshot was read
// leniently, with its first findings.
func snapshotWarning(run *store.Run, ws workflow.Diagnostics) *store.Event {
	var parts []string
	for i, d := range ws {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(ws)-3))
			break
		}
		parts = append(parts, d.String())
	}
	return &store.Event{Kind: store.KindAdmin, State: run.State, Rule: "snapshot-lenient",
		Reason: "the run's workflow snapshot was read leniently (it holds keys this version rejects when a workflow is loaded; the run keeps the law it started with): " + strings.Join(parts, "; ")}
}
