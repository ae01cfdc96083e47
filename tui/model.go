// Package tui is `statewright tui`: a terminal view of the store's runs
// (a list of sessions; for one run its workflow graph with the current
// phase highlighted, the phase's allowed tools, the live decision stream,
// the pending approval with approve / reject keys, and the transition
// history), and a live view of a `statewright agent --events jsonl` stream.
//
// The models are bubbletea v2 models with no I/O of their own: the store
// view reads through a load function and changes runs only through the
// Approve and Reject functions its caller hands it, which the CLI binds
// to runtime.Service with an actor it has proven to be a person (see
// docs/tui.md).
package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// Options configure the store view.
type Options struct {
	// Load reads a snapshot; openRunID is the run whose detail is wanted ("" for none).
	Load func(ctx context.Context, openRunID string) Snapshot
	// Approve grants approval approvalID of session's run; Reject refuses
	// it. Nil when approvals are not available (the view says why: NoApproval).
	Approve func(ctx context.Context, session, approvalID string) (runtime.TransitionResult, error)
	Reject  func(ctx context.Context, session, approvalID, reason string) error
	// NoApproval says why Approve is nil.
	NoApproval string
	// Interval is how often the store is re-read (default 500ms).
	Interval time.Duration
	// OpenSession, when set, opens that session's newest run at start.
	OpenSession string
	// Now is the clock for relative times (default time.Now).
	Now func() time.Time
}

type mode int

const (
	modeList mode = iota
	modeDetail
	modeConfirm
)

// Model is the store view's bubbletea model.
type Model struct {
	opts   Options
	width  int
	height int

	snap     Snapshot
	loaded   bool
	selected int    // index into snap.Runs
	selID    string // run id of the selected row, kept across reloads
	openID   string // run id of the open detail ("" in the list)
	mode     mode
	scroll   int // decisions scrolled back from the newest (0: follow the newest)

	// Confirmation of an approval decision.
	confirmApprove bool
	confirmID      string
	confirmSession string
	input          string

	flash    string
	flashErr bool
}

// New returns the store view's model.
func New(opts Options) *Model {
	if opts.Interval <= 0 {
		opts.Interval = 500 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Model{opts: opts, width: 100, height: 30}
}

// snapshotMsg carries a freshly loaded snapshot.
type snapshotMsg Snapshot

// tickMsg asks for a reload.
type tickMsg struct{}

// doneMsg reports an approve/reject outcome.
type doneMsg struct {
	text string
	err  error
}

func (m *Model) load() tea.Cmd {
	open := m.openID
	load := m.opts.Load
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return snapshotMsg(load(ctx, open))
	}
}

func (m *Model) tick() tea.Cmd {
	return tea.Tick(m.opts.Interval, func(time.Time) tea.Msg { return tickMsg{} })
}

// Init loads the first snapshot and starts the refresh ticker.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.load(), m.tick())
}

// Update handles keys, window sizes, snapshots and ticks.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tickMsg:
		return m, tea.Batch(m.load(), m.tick())
	case snapshotMsg:
		m.applySnapshot(Snapshot(msg))
	case doneMsg:
		if msg.err != nil {
			m.flash, m.flashErr = msg.err.Error(), true
		} else {
			m.flash, m.flashErr = msg.text, false
		}
		return m, m.load()
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m *Model) applySnapshot(s Snapshot) {
	first := !m.loaded
	m.snap, m.loaded = s, true
	// Keep the selection on the same run.
	m.selected = min(m.selected, max(len(s.Runs)-1, 0))
	for i, r := range s.Runs {
		if r.ID == m.selID {
			m.selected = i
			break
		}
	}
	if len(s.Runs) > 0 {
		m.selID = s.Runs[m.selected].ID
	}
	if first && m.opts.OpenSession != "" {
		for i, r := range s.Runs {
			if r.SessionKey == m.opts.OpenSession || strings.HasSuffix(r.SessionKey, ":"+m.opts.OpenSession) {
				m.selected, m.selID, m.openID, m.mode = i, r.ID, r.ID, modeDetail
				break
			}
		}
	}
}

func (m *Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	key := k.String()
	if key == "ctrl+c" {
		return m, tea.Quit
	}
	switch m.mode {
	case modeConfirm:
		return m.confirmKey(k)
	case modeList:
		switch key {
		case "q":
			return m, tea.Quit
		case "up", "k":
			m.move(-1)
		case "down", "j":
			m.move(1)
		case "enter", "l", "right":
			if len(m.snap.Runs) > 0 {
				m.openID = m.snap.Runs[m.selected].ID
				m.mode, m.scroll = modeDetail, 0
				m.flash = ""
				return m, m.load()
			}
		}
	case modeDetail:
		switch key {
		case "q":
			return m, tea.Quit
		case "esc", "backspace", "h", "left":
			m.mode, m.openID, m.flash, m.scroll = modeList, "", "", 0
			m.snap.Detail = nil
			return m, m.load()
		case "a", "r":
			m.startConfirm(key == "a")
		case "pgup", "u":
			m.scroll += 5
		case "pgdown", "d":
			m.scroll = max(m.scroll-5, 0)
		case "end", "G":
			m.scroll = 0
		}
	}
	return m, nil
}

func (m *Model) move(d int) {
	if len(m.snap.Runs) == 0 {
		return
	}
	m.selected = (m.selected + d + len(m.snap.Runs)) % len(m.snap.Runs)
	m.selID = m.snap.Runs[m.selected].ID
}

// startConfirm opens the confirmation prompt for the open run's pending approval.
func (m *Model) startConfirm(approve bool) {
	d := m.snap.Detail
	if d == nil || d.View == nil || d.View.Run.PendingApproval == nil {
		m.flash, m.flashErr = "no approval is pending for this run", true
		return
	}
	if m.opts.Approve == nil || m.opts.Reject == nil {
		m.flash, m.flashErr = "approvals are not available here: "+m.opts.NoApproval, true
		return
	}
	m.mode = modeConfirm
	m.confirmApprove = approve
	m.confirmID = d.View.Run.PendingApproval.ID
	m.confirmSession = d.View.Run.SessionKey
	m.input = ""
	m.flash = ""
}

// confirmKey collects the typed confirmation: "yes" or the approval id,
// then Enter, as `statewright approve` asks for on a terminal.
func (m *Model) confirmKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch k.String() {
	case "esc":
		m.mode, m.flash, m.flashErr = modeDetail, "cancelled; nothing changed", false
		return m, nil
	case "enter":
		typed := strings.TrimSpace(m.input)
		m.mode = modeDetail
		if typed != "yes" && typed != m.confirmID {
			m.flash, m.flashErr = "not confirmed; nothing changed", true
			return m, nil
		}
		session, id := m.confirmSession, m.confirmID
		if m.confirmApprove {
			approve := m.opts.Approve
			return m, func() tea.Msg {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				res, err := approve(ctx, session, id)
				if err != nil {
					return doneMsg{err: err}
				}
				return doneMsg{text: fmt.Sprintf("approved %s: %s → %s", id, res.From, res.To)}
			}
		}
		reject := m.opts.Reject
		return m, func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := reject(ctx, session, id, "rejected in the TUI"); err != nil {
				return doneMsg{err: err}
			}
			return doneMsg{text: "rejected " + id}
		}
	case "backspace":
		if r := []rune(m.input); len(r) > 0 {
			m.input = string(r[:len(r)-1])
		}
	default:
		if t := k.Text; t != "" && len([]rune(m.input)) < 64 {
			m.input += t
		}
	}
	return m, nil
}

// View renders the current screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "statewright tui"
	return v
}

// Render returns the screen as text (for tests and the View).
func (m *Model) render() string {
	var body string
	switch {
	case !m.loaded:
		body = "loading…"
	case m.mode == modeList:
		body = m.renderList()
	default:
		body = m.renderDetail()
	}
	return fitScreen(body, m.width, m.height)
}

// selectedRun returns the run under the cursor, or nil.
func (m *Model) selectedRun() *store.Run {
	if m.selected < len(m.snap.Runs) {
		return m.snap.Runs[m.selected]
	}
	return nil
}

// Frame loads once and renders one screen of the store view, as the
// program would show it at start (the open session's detail when
// opts.OpenSession names one), for `statewright tui --print`.
func Frame(ctx context.Context, opts Options, width, height int) string {
	m := New(opts)
	m.width, m.height = width, height
	m.applySnapshot(opts.Load(ctx, ""))
	if m.openID != "" {
		m.applySnapshot(opts.Load(ctx, m.openID))
	}
	return m.render()
}
