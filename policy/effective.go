package policy

import (
	"sort"
	"strings"
)

// PhaseTools is what a phase lets the agent use, once its tool list, its
// permission rules, its domains and the trusted MCP annotations are read
// together (`workflows show`).
type PhaseTools struct {
	// Tools are allowed_tools' tools ("any" when it is absent), then the
	// tools and commands allow rules name, then the trusted MCP tools a
	// readOnlyHint admits here.
	Tools []string `json:"tools"`
	// Capabilities are the shell capabilities the phase grants.
	Capabilities []string `json:"capabilities,omitempty"`
	// Ask and Deny are the rules that make a person agree, or deny.
	Ask  []string `json:"ask,omitempty"`
	Deny []string `json:"deny,omitempty"`
	// Domains are the hosts the network may reach; nil when the phase
	// names none (Network alone decides), [] when it reaches none.
	Domains []string `json:"domains,omitempty"`
	// ReadOnlyHints: trusted MCP tools marked readOnlyHint join the phase.
	ReadOnlyHints bool `json:"mcp_read_only_hints,omitempty"`
}

// Effective returns the phase's effective tool set. hints are the trusted
// MCP tools' annotations by the name the harness gives them (nil: none
// known); the read-only ones join a phase that opts in and allows Read.
func (l *Law) Effective(state string, hints map[string]ToolHints) (PhaseTools, bool) {
	cs, ok := l.states[state]
	if !ok {
		return PhaseTools{}, false
	}
	var pt PhaseTools
	if cs.final {
		return pt, true
	}
	pt.Tools = append(pt.Tools, cs.allowedList...)
	pt.Capabilities = cs.caps.names()
	pt.ReadOnlyHints = cs.readOnlyHints
	if rs := cs.rules; rs != nil {
		for _, r := range rs.allow {
			pt.Tools = append(pt.Tools, r.text)
		}
		for _, r := range rs.ask {
			pt.Ask = append(pt.Ask, r.text)
		}
		for _, r := range rs.deny {
			pt.Deny = append(pt.Deny, r.text)
		}
		if rs.restrict {
			pt.Domains = append([]string{}, rs.grantDomains...)
		}
	}
	var admitted []string
	for name, h := range hints {
		h := h
		info := lookupTool(ClaudeCode, name)
		call := &ToolCall{Tool: name, Hints: &h}
		if !cs.anyTool && !cs.allowed.has(info, name) && cs.admitsReadOnly(info, call) {
			admitted = append(admitted, name+" (readOnlyHint)")
		}
	}
	sort.Strings(admitted)
	pt.Tools = append(pt.Tools, admitted...)
	return pt, true
}

// String is the one-line form `workflows show` prints.
func (pt PhaseTools) String() string { return strings.Join(pt.Tools, ", ") }
