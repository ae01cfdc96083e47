package tui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/statewright-go/statewright/agent/events"
	"github.com/statewright-go/statewright/internal/wfgraph"
)

// AgentSchemaVersion is the newest version of the agent event schema this
// renderer knows (docs/agent-events.md, agent/events). Lines of a newer
// version are still shown, with a note.
const AgentSchemaVersion = events.Version

// AgentEvent is one line of a `statewright agent --events jsonl` stream:
// the agent's own event type (agent/events), decoded leniently. Unknown
// fields are ignored; a line whose fields do not fit the types keeps its
// envelope (its typed payload is then nil); Payload keeps the raw object
// under the key named after Type, so events of types this build does not
// know are still shown.
type AgentEvent struct {
	events.Event
	// Payload is the object under the key named after Type (nil when absent).
	Payload map[string]any `json:"-"`
}

// ErrNotEvent is returned for a line that is not a JSON object with a type.
var ErrNotEvent = errors.New("tui: not an agent event")

// DecodeAgentEvent decodes one JSONL line. Blank lines and lines that are
// not a JSON object with a string "type" give an error wrapping ErrNotEvent.
// Unlike events.Decode it accepts other schema versions and badly typed
// fields, because a display must keep going.
func DecodeAgentEvent(line []byte) (AgentEvent, error) {
	line = bytes.TrimSpace(line)
	var raw map[string]json.RawMessage
	if len(line) == 0 || json.Unmarshal(line, &raw) != nil || raw == nil {
		return AgentEvent{}, fmt.Errorf("%w: not a JSON object", ErrNotEvent)
	}
	var typ string
	if err := json.Unmarshal(raw["type"], &typ); err != nil || typ == "" {
		return AgentEvent{}, fmt.Errorf("%w: no \"type\"", ErrNotEvent)
	}
	var ev AgentEvent
	if err := json.Unmarshal(line, &ev.Event); err != nil {
		// Field by field, so one badly typed field does not lose the rest.
		ev.Event = events.Event{Type: events.Type(typ)}
		get := func(key string, into any) { _ = json.Unmarshal(raw[key], into) }
		get("v", &ev.V)
		get("seq", &ev.Seq)
		get("time", &ev.Time)
		get("run_id", &ev.RunID)
		get("session", &ev.Session)
		get("depth", &ev.Depth)
		get("state", &ev.State)
		get("step", &ev.Step)
	}
	if p, ok := raw[typ]; ok {
		var m map[string]any
		if json.Unmarshal(p, &m) == nil {
			ev.Payload = m
		}
	}
	return ev, nil
}

// str returns the raw payload's field k as text ("" when absent).
func (e *AgentEvent) str(k string) string {
	if v, ok := e.Payload[k]; ok && v != nil {
		switch x := v.(type) {
		case string:
			return x
		case float64:
			return fmt.Sprint(x)
		default:
			b, _ := json.Marshal(x)
			return string(b)
		}
	}
	return ""
}

// StreamOptions configure the agent stream view.
type StreamOptions struct {
	// Input is the JSONL stream (stdin for `statewright tui -`).
	Input io.Reader
	// Graph returns the workflow named in run_start laid out, or nil.
	Graph func(workflow string) *wfgraph.Graph
	// MaxLines bounds the kept log (default 1000).
	MaxLines int
}

// StreamModel renders a live agent event stream.
type StreamModel struct {
	opts          StreamOptions
	sc            *bufio.Scanner
	width, height int

	workflow, task, model, runID, session, sandbox string
	state                                          string
	step                                           int
	toolCalls, allows, denies, asks, transitions   int
	bad                                            int
	newer                                          bool
	waiting                                        string // approval being waited on
	ended                                          string // outcome line
	eof                                            bool
	readErr                                        error
	graph                                          *wfgraph.Graph
	log                                            []logEntry
	others                                         map[string]int // events of unknown types, by type
}

// NewStream returns the agent stream model.
func NewStream(opts StreamOptions) *StreamModel {
	if opts.MaxLines <= 0 {
		opts.MaxLines = 1000
	}
	sc := bufio.NewScanner(opts.Input)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	return &StreamModel{opts: opts, sc: sc, width: 100, height: 30, others: map[string]int{}}
}

type lineMsg struct{ line []byte }
type eofMsg struct{ err error }

func (m *StreamModel) next() tea.Cmd {
	sc := m.sc
	return func() tea.Msg {
		if sc.Scan() {
			return lineMsg{append([]byte(nil), sc.Bytes()...)}
		}
		return eofMsg{sc.Err()}
	}
}

// Init starts reading the stream.
func (m *StreamModel) Init() tea.Cmd { return m.next() }

// Update consumes lines and keys.
func (m *StreamModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case lineMsg:
		m.Feed(msg.line)
		return m, m.next()
	case eofMsg:
		m.eof, m.readErr = true, msg.err
	case tea.KeyPressMsg:
		switch msg.String() {
		case "q", "ctrl+c", "esc":
			return m, tea.Quit
		}
	}
	return m, nil
}

// logEntry is one rendered event: a plain prefix, an optional styled
// head (a verdict) and a styled body, cut to the width when drawn.
type logEntry struct {
	prefix, head, body string
	headSt, bodySt     lipgloss.Style
}

func (e logEntry) render(w int) string {
	w -= len([]rune(e.prefix))
	out := e.prefix
	if e.head != "" {
		out += e.headSt.Render(pad(e.head, 6))
		w -= 6
	}
	return out + e.bodySt.Render(trunc(e.body, max(w, 0)))
}

func (m *StreamModel) addLog(ev *AgentEvent, st lipgloss.Style, s string) {
	m.addEntry(ev, logEntry{body: s, bodySt: st})
}

func (m *StreamModel) addEntry(ev *AgentEvent, e logEntry) {
	prefix := clock(ev.Time) + " "
	if ev.Step > 0 {
		prefix += fmt.Sprintf("#%-3d ", ev.Step)
	} else {
		prefix += "     "
	}
	if ev.Depth > 0 {
		prefix += strings.Repeat("  ", ev.Depth)
	}
	e.prefix = "  " + prefix
	m.log = append(m.log, e)
	if len(m.log) > m.opts.MaxLines {
		m.log = m.log[len(m.log)-m.opts.MaxLines:]
	}
}

// Feed renders one line of the stream into the model's state.
func (m *StreamModel) Feed(line []byte) {
	ev, err := DecodeAgentEvent(line)
	if err != nil {
		if len(bytes.TrimSpace(line)) > 0 {
			m.bad++
		}
		return
	}
	if ev.V > AgentSchemaVersion {
		m.newer = true
	}
	if ev.State != "" && ev.Depth == 0 {
		m.state = ev.State
	}
	if ev.Step > 0 && ev.Depth == 0 {
		m.step = ev.Step
	}
	if ev.RunID != "" && m.runID == "" {
		m.runID = ev.RunID
	}
	if ev.Session != "" && m.session == "" {
		m.session = ev.Session
	}
	switch {
	case ev.RunStart != nil:
		p := ev.RunStart
		if ev.Depth == 0 {
			m.workflow, m.task, m.model, m.sandbox = p.Workflow, p.Task, p.Model, p.Sandbox
			if m.opts.Graph != nil && m.workflow != "" {
				m.graph = m.opts.Graph(m.workflow)
			}
		}
		verb := "run started"
		if p.Resumed {
			verb = "run resumed"
		}
		m.addLog(&ev, plain, fmt.Sprintf("%s: %s, model %s", verb, p.Workflow, p.Model))
		for _, w := range p.Warnings {
			m.addLog(&ev, plain, "warning: "+w)
		}
	case ev.ModelRequest != nil:
		p := ev.ModelRequest
		m.addLog(&ev, styleDim, fmt.Sprintf("→ model %s: %d messages, tools %s", p.Model, p.Messages, strings.Join(p.Tools, ",")))
	case ev.ModelResponse != nil:
		p := ev.ModelResponse
		s := "← model"
		if p.Text != "" {
			s += ": " + oneLine(p.Text)
		}
		if len(p.ToolCalls) > 0 {
			s += " calls " + strings.Join(p.ToolCalls, ",")
		}
		m.addLog(&ev, styleDim, s)
	case ev.ToolCall != nil:
		m.toolCalls++
		m.addLog(&ev, plain, fmt.Sprintf("call %s %s", ev.ToolCall.Name, oneLine(string(ev.ToolCall.Args))))
	case ev.Decision != nil:
		p := ev.Decision
		st := styleAllow
		switch p.Verdict {
		case "allow":
			m.allows++
		case "deny":
			m.denies++
			st = styleDeny
		case "ask":
			m.asks++
			st = styleAsk
		}
		s := p.Name + " (" + p.Rule + ")"
		if p.Reason != "" {
			s += ": " + oneLine(p.Reason)
		}
		m.addEntry(&ev, logEntry{head: strings.ToUpper(p.Verdict), headSt: st, body: s})
	case ev.ToolResult != nil:
		p := ev.ToolResult
		s := "result " + p.Name
		if p.OK {
			s += " ok"
		} else {
			s += " failed"
		}
		if p.ExitCode != nil {
			s += fmt.Sprintf(" exit %d", *p.ExitCode)
		}
		m.addLog(&ev, styleDim, s)
	case ev.Transition != nil:
		p := ev.Transition
		if p.Refused {
			m.addLog(&ev, styleWarn, fmt.Sprintf("event %s refused: %s", p.Event, oneLine(p.Reason)))
			break
		}
		m.transitions++
		if ev.Depth == 0 && p.To != "" {
			m.state = p.To
		}
		m.waiting = ""
		m.addLog(&ev, styleTitle, fmt.Sprintf("%s → %s (event %s)", p.From, p.To, p.Event))
	case ev.ApprovalWait != nil:
		p := ev.ApprovalWait
		m.waiting = fmt.Sprintf("%s: %s → %s %s", p.ApprovalID, p.From, p.To, oneLine(p.Message))
		m.addLog(&ev, styleWarn, "waiting for approval "+m.waiting)
	case ev.Nudge != nil:
		m.addLog(&ev, styleWarn, fmt.Sprintf("nudge (%s): %s", ev.Nudge.Kind, oneLine(ev.Nudge.Message)))
	case ev.Child != nil:
		p := ev.Child
		m.addLog(&ev, plain, strings.Join(strings.Fields(fmt.Sprintf("%s %s %s %s %s", p.Kind, p.Phase, p.Workflow, p.Branch, p.Outcome)), " "))
	case ev.Error != nil:
		m.addLog(&ev, styleErr, "error: "+oneLine(ev.Error.Message))
	case ev.RunEnd != nil:
		p := ev.RunEnd
		if ev.Depth == 0 {
			m.ended = fmt.Sprintf("run ended: %s in %s after %d steps, %d tool calls, %d denials", p.Outcome, p.FinalState,
				p.Steps, p.ToolCalls, p.Denials)
			if p.FinalState != "" {
				m.state = p.FinalState
			}
		}
		m.addLog(&ev, styleTitle, "run ended: "+p.Outcome)
	default:
		// A type this build does not know, or a payload that did not fit
		// its type: show it raw.
		m.others[string(ev.Type)]++
		var keys []string
		for k := range ev.Payload {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+"="+oneLine(ev.str(k)))
		}
		m.addLog(&ev, styleDim, string(ev.Type)+" "+strings.Join(parts, " "))
	}
}

// View renders the stream screen.
func (m *StreamModel) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "statewright tui - agent"
	return v
}

func (m *StreamModel) render() string {
	w := m.width
	var top []string
	title := "statewright · agent"
	if m.workflow != "" {
		title += " · " + m.workflow
	}
	if m.runID != "" {
		title += " (" + m.runID + ")"
	}
	top = append(top, styleTitle.Render(trunc(title, w)))
	if m.task != "" {
		top = append(top, trunc("task: "+oneLine(m.task), w))
	}
	state := m.state
	if state == "" {
		state = "?"
	}
	top = append(top, trunc(fmt.Sprintf("state %s · step %d · model %s · tool calls %d · allowed %d · denied %d · transitions %d",
		state, m.step, m.model, m.toolCalls, m.allows, m.denies, m.transitions), w))
	if m.graph != nil && len(m.graph.Nodes) > 0 {
		top = append(top, "", styleHead.Render("Workflow"))
		top = append(top, graphLines(m.graph, m.state, w)...)
	}
	if m.waiting != "" {
		top = append(top, "", styleWarn.Render(trunc("Waiting for approval "+m.waiting+" (statewright approve, the store view or the dashboard)", w)))
	}
	top = append(top, "", styleHead.Render("Events"))
	var foot []string
	if m.ended != "" {
		foot = append(foot, styleTitle.Render(trunc(m.ended, w)))
	}
	var notes []string
	if m.bad > 0 {
		notes = append(notes, fmt.Sprintf("%d unreadable lines skipped", m.bad))
	}
	if m.newer {
		notes = append(notes, fmt.Sprintf("stream uses a schema newer than v%d: some events may show raw", AgentSchemaVersion))
	}
	if len(notes) > 0 {
		foot = append(foot, styleWarn.Render(trunc(strings.Join(notes, " · "), w)))
	}
	switch {
	case m.readErr != nil:
		foot = append(foot, styleErr.Render(trunc("stream error: "+m.readErr.Error(), w)))
	case m.eof:
		foot = append(foot, styleDim.Render("end of stream"))
	}
	foot = append(foot, styleDim.Render("q quit"))
	room := max(m.height-len(top)-len(foot), 1)
	logs := m.log
	if len(logs) > room {
		logs = logs[len(logs)-room:]
	}
	var lines []string
	lines = append(lines, top...)
	for _, l := range logs {
		lines = append(lines, l.render(w))
	}
	for len(lines) < m.height-len(foot) {
		lines = append(lines, "")
	}
	lines = append(lines, foot...)
	return fitScreen(strings.Join(lines, "\n"), w, m.height)
}
