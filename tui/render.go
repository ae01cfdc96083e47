package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/statewright-go/statewright/internal/eventtext"
	"github.com/statewright-go/statewright/internal/wfgraph"
	"github.com/statewright-go/statewright/store"
)

var (
	styleTitle   = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#5fafff"))
	styleHead    = lipgloss.NewStyle().Bold(true).Underline(true)
	styleDim     = lipgloss.NewStyle().Foreground(lipgloss.Color("#8a8a8a"))
	styleCurrent = lipgloss.NewStyle().Bold(true).Reverse(true)
	styleSel     = lipgloss.NewStyle().Reverse(true)
	styleAllow   = lipgloss.NewStyle().Foreground(lipgloss.Color("#5fd75f"))
	styleDeny    = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#ff5f5f"))
	styleAsk     = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#ffd75f"))
	styleWarn    = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#ffaf00"))
	styleErr     = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#ff5f5f"))
	styleOK      = lipgloss.NewStyle().Foreground(lipgloss.Color("#5fd75f"))
	plain        = lipgloss.NewStyle()
)

// trunc cuts plain text s to w cells (runes), with an ellipsis.
func trunc(s string, w int) string {
	if w <= 0 {
		return ""
	}
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	if w == 1 {
		return "…"
	}
	return string(r[:w-1]) + "…"
}

// pad right-pads plain text s to w runes (and cuts it to w).
func pad(s string, w int) string {
	s = trunc(s, w)
	if n := len([]rune(s)); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// oneLine collapses whitespace (newlines included) to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// fitScreen keeps at most h lines of body.
func fitScreen(body string, w, h int) string {
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	if h > 0 && len(lines) > h {
		lines = lines[:h]
	}
	return strings.Join(lines, "\n")
}

func clock(t time.Time) string {
	if t.IsZero() {
		return "--:--:--"
	}
	return t.Local().Format("15:04:05")
}

func (m *Model) footer(keys string) []string {
	var out []string
	if m.flash != "" {
		st := styleOK
		if m.flashErr {
			st = styleErr
		}
		out = append(out, st.Render(trunc(oneLine(m.flash), m.width)))
	}
	if m.snap.Err != nil {
		out = append(out, styleErr.Render(trunc("error: "+oneLine(m.snap.Err.Error()), m.width)))
	}
	return append(out, styleDim.Render(trunc(keys, m.width)))
}

func (m *Model) renderList() string {
	w := m.width
	var lines []string
	title := fmt.Sprintf("statewright · runs (%d)", len(m.snap.Runs))
	pending := 0
	for _, r := range m.snap.Runs {
		if r.PendingApproval != nil {
			pending++
		}
	}
	if pending > 0 {
		title += fmt.Sprintf(" · %d awaiting approval", pending)
	}
	lines = append(lines, styleTitle.Render(trunc(title, w)), "")
	if len(m.snap.Runs) == 0 {
		lines = append(lines, "no runs in this store yet (start one with `statewright start WORKFLOW --session ID`)")
	} else {
		cols := []int{36, 16, 16, 20, 8}
		lines = append(lines, styleHead.Render(trunc("  "+pad("SESSION", cols[0])+" "+pad("WORKFLOW", cols[1])+" "+pad("STATE", cols[2])+" "+
			pad("STATUS", cols[3])+" "+pad("UPDATED", cols[4]), w)))
		// Scroll so the selection stays visible.
		room := max(m.height-7, 3)
		start := 0
		if m.selected >= room {
			start = m.selected - room + 1
		}
		for i := start; i < len(m.snap.Runs) && i < start+room; i++ {
			r := m.snap.Runs[i]
			mark := "  "
			if i == m.selected {
				mark = "▶ "
			}
			status := string(r.Status)
			if r.PendingApproval != nil {
				status += " !"
			}
			line := trunc(mark+pad(r.SessionKey, cols[0])+" "+pad(r.WorkflowID, cols[1])+" "+pad(r.State, cols[2])+" "+
				pad(status, cols[3])+" "+pad(clock(r.UpdatedAt), cols[4]), w)
			if i == m.selected {
				line = styleSel.Render(line)
			}
			lines = append(lines, line)
		}
	}
	lines = append(lines, "")
	lines = append(lines, m.footer("↑/↓ select · enter open · q quit")...)
	return strings.Join(lines, "\n")
}

// graphLines draws the workflow as one line per state, in rank order:
// the state (highlighted when current) and its outgoing transitions.
func graphLines(g *wfgraph.Graph, current string, w int) []string {
	if g == nil || len(g.Nodes) == 0 {
		return []string{styleDim.Render("  (the workflow snapshot could not be drawn)")}
	}
	nameW := 0
	for _, n := range g.Nodes {
		nameW = max(nameW, len([]rune(n.Name)))
	}
	nameW = min(nameW, 24)
	// Working states in rank order first, then final states.
	nodes := make([]wfgraph.Node, 0, len(g.Nodes))
	for _, final := range []bool{false, true} {
		for _, n := range g.Nodes {
			if n.Final == final {
				nodes = append(nodes, n)
			}
		}
	}
	var lines []string
	for _, n := range nodes {
		var outs []string
		for _, e := range g.Out(n.Name) {
			outs = append(outs, e.Label+" → "+e.To)
		}
		tail := strings.Join(outs, " · ")
		switch {
		case n.Final:
			tail = "(final)"
		case n.Missing:
			tail = "(missing state)"
		case n.Return:
			tail = "(back to the interrupted state)"
		case tail == "":
			tail = "(no transitions)"
		}
		mark := "  "
		if n.Name == current {
			mark = "▶ "
		}
		name := pad(n.Name, nameW)
		rest := trunc("  "+tail, max(w-nameW-2, 0))
		if n.Name == current {
			lines = append(lines, mark+styleCurrent.Render(name)+rest)
		} else {
			lines = append(lines, mark+name+styleDim.Render(rest))
		}
	}
	return lines
}

func (m *Model) renderDetail() string {
	w := m.width
	d := m.snap.Detail
	if d == nil || d.View == nil {
		var lines []string
		lines = append(lines, styleTitle.Render("statewright"), "", "loading run…")
		return strings.Join(append(lines, m.footer("esc back · q quit")...), "\n")
	}
	v := d.View
	r := v.Run
	var top []string
	top = append(top, styleTitle.Render(trunc(fmt.Sprintf("statewright · %s · %s (%s)", r.SessionKey, r.WorkflowID, r.ID), w)))
	status := fmt.Sprintf("state %s · status %s · iterations %d", r.State, r.Status, r.Iterations)
	if v.MaxIterations != nil {
		status += fmt.Sprintf("/%d", *v.MaxIterations)
	}
	if r.AuditOnly {
		status += " · audit-only"
	}
	top = append(top, trunc(status, w), "")

	if len(v.Stack) > 0 {
		top = append(top, styleHead.Render(fmt.Sprintf("Sub-workflow %s (depth %d)", v.Workflow, len(v.Stack))))
		for i, e := range v.Stack {
			top = append(top, trunc(fmt.Sprintf("  %d. %s", i+1, e), w))
		}
		top = append(top, "")
	}

	top = append(top, styleHead.Render("Workflow"))
	top = append(top, graphLines(d.Graph, r.State, w)...)
	top = append(top, "")

	tools := "any tool"
	if v.IsFinal {
		tools = "none (final state)"
	} else if v.AllowedTools != nil {
		tools = strings.Join(v.AllowedTools, ", ")
		if tools == "" {
			tools = "none"
		}
	}
	top = append(top, styleHead.Render("Phase "+r.State))
	top = append(top, trunc("  allowed tools: "+tools, w))
	if len(v.NextEvents) > 0 {
		var evs []string
		for _, e := range v.NextEvents {
			evs = append(evs, e.String())
		}
		top = append(top, trunc("  next events:   "+strings.Join(evs, "; "), w))
	}
	if v.IsFinal {
		top = append(top, "  the run is in a final state")
	}
	top = append(top, "")

	if ap := r.PendingApproval; ap != nil {
		top = append(top, styleWarn.Render(trunc(fmt.Sprintf("Pending approval %s: %s → %s (event %s)", ap.ID, ap.From, ap.To, ap.Event), w)))
		top = append(top, trunc("  "+oneLine(ap.Message)+" · expires "+ap.ExpiresAt.Local().Format("2006-01-02 15:04"), w))
		if m.mode == modeConfirm {
			verb := "Approve"
			if !m.confirmApprove {
				verb = "Reject"
			}
			top = append(top, styleWarn.Render(trunc(fmt.Sprintf("  %s %s? Type yes (or the approval id) and press Enter, Esc cancels: ", verb, m.confirmID), w))+m.input+"█")
		} else {
			top = append(top, styleWarn.Render("  [a] approve  [r] reject"))
		}
		top = append(top, "")
	}

	foot := m.footer("a approve · r reject · PgUp/PgDn decisions · esc back · q quit")
	room := m.height - len(top) - len(foot) - 4
	histN := min(len(d.History), max(room/2, 2))
	decN := min(len(d.Decisions), max(room-histN, 2))

	var lines []string
	lines = append(lines, top...)
	// Scrolled back with PgUp: the window ends scroll decisions before the newest.
	back := min(m.scroll, max(len(d.Decisions)-decN, 0))
	end := len(d.Decisions) - back
	head := fmt.Sprintf("Decisions (%d–%d of %d, newest last)", end-decN+1, end, len(d.Decisions))
	if back > 0 {
		head += fmt.Sprintf(" · scrolled back %d, End follows the newest", back)
	}
	if len(d.Decisions) == 0 {
		head = "Decisions"
	}
	lines = append(lines, styleHead.Render(head))
	if len(d.Decisions) == 0 {
		lines = append(lines, styleDim.Render("  no tool calls decided yet"))
	}
	for _, e := range d.Decisions[end-decN : end] {
		lines = append(lines, decisionLine(&e, w))
	}
	lines = append(lines, "", styleHead.Render("Transitions"))
	for _, e := range d.History[len(d.History)-histN:] {
		lines = append(lines, trunc("  "+clock(e.Time)+" "+oneLine(eventtext.Describe(&e)), w))
	}
	lines = append(lines, "")
	lines = append(lines, foot...)
	return strings.Join(lines, "\n")
}

// decisionLine renders one decision event: time, verdict, tool, rule and reason.
func decisionLine(e *store.Event, w int) string {
	verdict := strings.ToUpper(e.Decision)
	st := styleAllow
	switch e.Decision {
	case "deny":
		st = styleDeny
	case "ask":
		st = styleAsk
	}
	var d map[string]any
	_ = json.Unmarshal(e.Data, &d)
	if d["enforced"] == false {
		verdict += "*"
	}
	head := "  " + clock(e.Time) + " "
	tool := pad(e.Tool, 12)
	rest := " [" + e.State + "] " + e.Rule
	if e.Reason != "" {
		rest += ": " + oneLine(e.Reason)
	}
	return head + st.Render(pad(verdict, 6)) + trunc(tool+rest, max(w-len([]rune(head))-6, 0))
}
