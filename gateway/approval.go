package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// ElicitChannel is the channel recorded for approvals granted through MCP
// elicitation.
const ElicitChannel = "mcp-elicitation"

// afterControl runs after a control call that may have moved the run: it
// announces a changed tool list, and when the run is now parked on an
// approval it reports the pending approval and, where the operator allows
// it and the client supports elicitation, asks the client's person.
func (s *session) afterControl(ctx context.Context, r *mcp.CallToolRequest, res mcp.Result) mcp.Result {
	defer s.poke(ctx)
	if s.key == "" {
		return res
	}
	run, err := s.g.opts.Store.LiveRun(ctx, s.key)
	if err != nil || run.PendingApproval == nil || run.Status != store.StatusAwaitingApproval {
		return res
	}
	ap := run.PendingApproval
	s.mu.Lock()
	seen := s.elicited[ap.ID]
	s.elicited[ap.ID] = true
	s.mu.Unlock()
	if seen {
		return res
	}
	p := Pending{Session: s.key, RunID: run.ID, Workflow: run.WorkflowID, ApprovalID: ap.ID, Event: ap.Event, From: ap.From,
		To: ap.To, Message: ap.Message, ExpiresAt: ap.ExpiresAt.UTC().Format(time.RFC3339),
		Approve: "statewright approve " + s.key + " --id " + ap.ID}
	if f := s.g.opts.OnPending; f != nil {
		f(context.WithoutCancel(ctx), p)
	}
	if !s.g.opts.ElicitApprovals || !canElicit(r.Session) {
		return res
	}
	note := s.elicit(ctx, r.Session, run, p)
	if tr, ok := res.(*mcp.CallToolResult); ok && note != "" {
		tr.Content = append(tr.Content, &mcp.TextContent{Text: note})
	}
	return res
}

// canElicit reports whether the client announced form elicitation.
func canElicit(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

// elicit asks the client's person to approve p, bound to this run and
// this approval id: Approve refuses unless exactly that approval is still
// pending on the session's run. It returns a note for the agent.
func (s *session) elicit(ctx context.Context, ss *mcp.ServerSession, run *store.Run, p Pending) string {
	msg := fmt.Sprintf("statewright: the agent asks to move workflow %s (session %s, run %s) from '%s' to '%s'",
		p.Workflow, p.Session, p.RunID, p.From, p.To)
	if p.Message != "" {
		msg += ". The workflow says: " + p.Message
	}
	msg += ". Approve this transition? (approval " + p.ApprovalID + ")"
	ectx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	res, err := ss.Elicit(ectx, &mcp.ElicitParams{Message: msg, RequestedSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"approve": map[string]any{"type": "boolean", "title": "Approve",
				"description": fmt.Sprintf("Allow the run to move from '%s' to '%s'", p.From, p.To)},
		},
		"required": []string{"approve"},
	}})
	if err != nil {
		s.g.opts.Logger.Warn("elicit approval", "err", err)
		return "The approval question could not be put to a person through the MCP client (" + err.Error() + "); it stays pending for `" + p.Approve + "`."
	}
	name := "mcp-client"
	if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
		name = ip.ClientInfo.Name
	}
	by := runtime.Actor{Kind: runtime.ActorHuman, Channel: ElicitChannel, Name: name}
	approve, _ := res.Content["approve"].(bool)
	switch {
	case res.Action == "accept" && approve:
		// Bound to the run: the session must still have this run parked
		// on this very approval.
		cur, err := s.g.opts.Store.LiveRun(ctx, s.key)
		if err != nil || cur.ID != run.ID || cur.PendingApproval == nil || cur.PendingApproval.ID != p.ApprovalID {
			return "The person approved, but the run changed meanwhile; the approval was not applied."
		}
		tr, err := s.g.opts.Runtime.Approve(ctx, s.key, p.ApprovalID, by)
		if err != nil {
			return "The person approved, but statewright could not apply it: " + err.Error()
		}
		return fmt.Sprintf("A person approved the transition through the MCP client: the run moved from '%s' to '%s'. "+
			"Call statewright_get_state for the new phase's tools.", tr.From, tr.To)
	case res.Action == "decline" || (res.Action == "accept" && !approve):
		err := s.g.opts.Runtime.Reject(ctx, s.key, p.ApprovalID, "declined through MCP elicitation", by)
		if err != nil && !errors.Is(err, runtime.ErrNoApproval) {
			return "The person declined, but statewright could not record it: " + err.Error()
		}
		return fmt.Sprintf("A person declined the transition; the run stays in '%s'.", p.From)
	}
	return "The approval question was dismissed; the transition stays pending for `" + p.Approve + "`."
}
