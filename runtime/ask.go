package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
)

// Asking a person through the harness's own prompt (docs/runtime.md, approvals).
//
// The policy answers Ask for a control tool that only a person may grant
// (pause, deactivate, ...); the runtime also asks when the agent calls the
// transition tool while the run awaits a person's approval. Such an Ask
// reaches the harness only when its adapter says that, in the call's
// permission mode, a person answers the harness's prompts
// (ToolCall.HumanPrompt); otherwise it becomes a deny that names the
// statewright command a person can run instead.
//
// An Ask is never a grant by itself. The decision records what a yes would
// grant; the grant happens only when RecordResult reports that the call
// with the same tool_use_id went ahead (PostToolUse: the person said yes
// and the tool ran). A failed call (PostToolUseFailure) or no result at all
// grants nothing. The grant is recorded as an approval event by a human
// actor on the prompt's channel, and the operation runs in the same
// transaction, on the run and approval the decision saw and no other.

// grant is what an Ask answered yes grants, stored with the call's decision.
type grant struct {
	// Op is the operation: approve, reject, pause, resume or deactivate.
	Op string `json:"op"`
	// RunID is the run the decision saw; a yes grants nothing on another.
	RunID string `json:"run_id"`
	// ApprovalID names the pending approval, for approve and reject.
	ApprovalID string `json:"approval_id,omitempty"`
	// PermissionMode is the harness's permission mode at the decision.
	PermissionMode string `json:"permission_mode,omitempty"`
}

// grantOps maps the canonical control operations a person may grant
// through a harness prompt to the operation the grant performs. Other
// human-only operations (force_state, off, create_workflow, ...) have no
// per-session operation to perform and are denied with a lesson instead.
var grantOps = map[string]string{
	"approve": "approve", "reject": "reject",
	"pause": "pause", "resume": "resume",
	"deactivate": "deactivate", "stop": "deactivate",
}

// RuleApprovalPrompt is the runtime's rule id for a transition request
// while the run awaits a person's approval, answered Ask where a person
// answers the harness's prompts.
const RuleApprovalPrompt policy.Rule = "approval-prompt"

// PromptChannel is the Actor.Channel recorded for a grant through the
// prompt of harness h (e.g. "prompt:claude-code").
func PromptChannel(h policy.Harness) string {
	if h == "" {
		h = policy.ClaudeCode
	}
	return "prompt:" + string(h)
}

// personCommand is the statewright command a person runs to do op on
// session directly.
func personCommand(op, session, approvalID string) string {
	switch op {
	case "approve", "reject":
		if approvalID != "" {
			return "statewright " + op + " " + session + " --id " + approvalID
		}
		return "statewright " + op + " " + session
	case "pause", "resume", "deactivate":
		return "statewright " + op + " " + session
	}
	return ""
}

// askFor turns d into the answer the harness gets when a person must act:
// Ask with the grant a yes would perform, when the adapter says a person
// answers prompts in this mode and the operation can be granted on this
// run; otherwise a deny whose reason names the command a person can run.
// Decisions that need no person pass through unchanged (nil grant).
func askFor(call *ToolCall, run *store.Run, session string, d policy.Decision) (policy.Decision, *grant) {
	var g *grant
	switch {
	case d.Verdict == policy.Ask && d.Rule == policy.RulePermissionAsk:
		// A permission ask rule (docs/permissions.md): a person's yes to the
		// harness's prompt lets this one call run; nothing else to grant.
		// Without a person the runtime parked the call before (parkOrGrant).
		if call.HumanPrompt {
			return d, nil
		}
	case d.Verdict == policy.Ask && d.Rule == policy.RuleSandboxEscape:
		// Nothing to grant: a person's yes lets this one call run
		// outside the sandbox, and the harness runs it only after that yes.
		if call.HumanPrompt {
			return d, nil
		}
	case d.Verdict == policy.Ask:
		op := grantOps[d.Tool]
		if op == "" || run == nil {
			break
		}
		g = &grant{Op: op, RunID: run.ID}
		if op == "approve" || op == "reject" {
			if run.PendingApproval == nil {
				g = nil
				break
			}
			g.ApprovalID = run.PendingApproval.ID
		}
	case d.Rule == policy.RuleApprovalPending && run != nil && run.PendingApproval != nil &&
		requestsEvent(call.Call.Input, run.PendingApproval.Event):
		// The agent asks again for the very transition that awaits
		// approval: a person's yes approves it. (Another event stays
		// denied: the pending one must be decided first.)
		ap := run.PendingApproval
		g = &grant{Op: "approve", RunID: run.ID, ApprovalID: ap.ID}
		if !call.HumanPrompt {
			break // the policy's deny, with the person's command below
		}
		d.Verdict = policy.Ask
		d.Rule = RuleApprovalPrompt
		d.Reason = fmt.Sprintf("The run awaits a person's approval %s to move from '%s' to '%s': %s. "+
			"Answer yes to approve it now (rule %s); answer no and the run stays in '%s'. "+
			"A person can also run `%s`.", ap.ID, ap.From, ap.To, ap.Message, RuleApprovalPrompt, ap.From,
			personCommand("approve", session, ap.ID))
	default:
		return d, nil
	}
	if g != nil && call.HumanPrompt {
		g.PermissionMode = call.PermissionMode
		return d, g
	}
	// No person will see a prompt (or nothing can be granted here): deny,
	// and teach what a person can do.
	d.Verdict = policy.Deny
	var b strings.Builder
	b.WriteString(strings.TrimSpace(d.Reason))
	if call.PermissionMode != "" {
		fmt.Fprintf(&b, " The harness runs in permission mode %q, where no person answers its prompts, so this is denied.", call.PermissionMode)
	} else {
		b.WriteString(" No person answers this harness's prompts here, so this is denied.")
	}
	cmd := ""
	if g != nil {
		cmd = personCommand(g.Op, session, g.ApprovalID)
	} else if op := grantOps[d.Tool]; op != "" {
		cmd = personCommand(op, session, "")
	}
	if cmd != "" {
		fmt.Fprintf(&b, " A person can run `%s`.", cmd)
	} else {
		b.WriteString(" A person can act with the statewright CLI (`statewright --help`).")
	}
	d.Reason = b.String()
	return d, nil
}

// requestsEvent reports whether a transition tool's input names event.
func requestsEvent(input json.RawMessage, event string) bool {
	var in struct {
		Event string `json:"event"`
	}
	if json.Unmarshal(input, &in) != nil {
		return false
	}
	return event != "" && strings.EqualFold(strings.TrimSpace(in.Event), event)
}

// grantData is the Data of the approval event a prompt's grant records.
type grantData struct {
	Action         string `json:"action"`
	Op             string `json:"op"`
	ApprovalID     string `json:"approval_id,omitempty"`
	PermissionMode string `json:"permission_mode,omitempty"`
	Actor          Actor  `json:"actor"`
	// Agent is who made the call the person answered.
	Agent     Actor  `json:"agent"`
	Performed bool   `json:"performed"`
	Error     string `json:"error,omitempty"`
}

// grantTx performs g for a call that PostToolUse confirmed, as a human on
// the prompt's channel, and records the grant as an approval event (after
// the operation's own events) saying whether it was performed. The run must
// still be the one the decision saw. An operation that can no longer be
// done (the approval expired or was withdrawn, the run is not paused) is
// recorded as not performed; only store errors fail the transaction.
func (s *Service) grantTx(tx store.Tx, res *ToolResult, g *grant) error {
	person := Actor{Kind: ActorHuman, Channel: PromptChannel(res.Call.Harness)}
	run := tx.Run()
	var refused, err error
	switch {
	case run == nil || run.ID != g.RunID:
		refused = fmt.Errorf("%w: the run the person was asked about is no longer live", ErrNoRun)
	case g.Op == "approve":
		_, refused, err = s.approveTx(tx, g.ApprovalID, person)
	case g.Op == "reject":
		if run.PendingApproval == nil || run.PendingApproval.ID != g.ApprovalID {
			refused = ErrNoApproval
			break
		}
		err = s.withdrawTx(tx, run, "rejected", "through the harness prompt", person)
	case g.Op == "pause":
		refused, err = s.adminTx(tx, "pause", person, pauseRun)
	case g.Op == "resume":
		refused, err = s.adminTx(tx, "resume", person, resumeRun)
	case g.Op == "deactivate":
		refused, err = s.adminTx(tx, "deactivate", person, deactivateRun)
	default:
		refused = fmt.Errorf("%w: unknown operation %q", ErrNotAllowed, g.Op)
	}
	if err != nil {
		// The operations refuse before they write anything; such a refusal
		// is recorded, a store error fails the hook.
		if !isRefusal(err) {
			return err
		}
		refused = err
	}
	data := grantData{Action: "prompt-granted", Op: g.Op, ApprovalID: g.ApprovalID, PermissionMode: g.PermissionMode,
		Actor: person, Agent: res.Actor, Performed: refused == nil}
	if refused != nil {
		data.Error = refused.Error()
	}
	state := ""
	if r := tx.Run(); r != nil {
		state = r.State
	}
	b, err := json.Marshal(&data)
	if err != nil {
		return fmt.Errorf("encode grant: %w", err)
	}
	ev := &store.Event{Kind: store.KindApproval, State: state, Tool: res.Call.Tool, ToolUseID: res.ToolUseID,
		Rule: "prompt-grant", Data: b}
	if err := tx.Append(ev); err != nil {
		return fmt.Errorf("append grant: %w", err)
	}
	return nil
}

// isRefusal reports whether err is an operation's refusal rather than a
// store failure.
func isRefusal(err error) bool {
	for _, e := range []error{ErrNoRun, ErrNoApproval, ErrPaused, ErrNotAllowed, ErrApprovalPending} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
