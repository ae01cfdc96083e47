package harness

import (
	"context"
	"time"
)

// Inspector is the part of an adapter that `statewright doctor` asks: it
// finds statewright's installs in its harness's configuration (every scope
// the harness reads for a session in the project: project, user, plugin),
// says how the harness runs each install's tool gate, and reports what
// only the harness knows (Codex's hook trust, Claude Code's permission
// mode). Every Adapter is one; doctor runs the checks they share (binary,
// wrapper, timing, store, canary) once for all.
type Inspector interface {
	Inspect(ctx context.Context, q InspectQuery) ([]*Install, error)
}

// InspectQuery is what doctor asks about.
type InspectQuery struct {
	// Project is the absolute project directory.
	Project string
	// Binary is the harness's own executable, to ask it what it records
	// (its version, its hook trust): the operator's flag, else "" and the
	// adapter looks it up on $PATH.
	Binary string
}

// Level is a finding's severity.
type Level int

// Levels.
const (
	OK Level = iota
	Warn
	Fail
)

// Finding is one line of doctor's report.
type Finding struct {
	Level Level
	// Check names what was checked ("trust", "mcp"); Text says what holds.
	Check, Text string
}

// Passed returns a check that passed.
func Passed(check, text string) Finding { return Finding{OK, check, text} }

// Warned returns a warning.
func Warned(check, text string) Finding { return Finding{Warn, check, text} }

// Failed returns a failed check.
func Failed(check, text string) Finding { return Finding{Fail, check, text} }

// Install is one statewright install a harness reads.
type Install struct {
	// Scope says where it applies ("project", "user", "plugin"); File is the
	// file that registers it.
	Scope, File string
	// Events are the statewright hook events registered; Missing the ones
	// init registers that are not.
	Events, Missing []string
	// Hook is the statewright command line the tool gate ends up running:
	// binary, "hook", harness, event, flags (nil when it cannot be known).
	Hook []string
	// Gate is how the harness runs the tool gate; nil: no gate registered.
	Gate *Gate
	// Timeout is how long the harness waits for the gate before it kills it
	// (0: unknown).
	Timeout time.Duration
	// FailClosed says whether the harness blocks the call when the gate
	// itself fails (a missing binary, a crash, a timeout); FailOpen says
	// why not.
	FailClosed bool
	FailOpen   string
	// Findings are the harness's own checks.
	Findings []Finding
}

// Gate is a tool gate as the harness runs it, with the canary call.
type Gate struct {
	// Shell is the command line the harness runs with sh -c; Argv, when
	// set instead, the program and arguments a plugin spawns.
	Shell string
	Argv  []string
	// Env is added to the environment the harness gives the gate.
	Env []string
	// Input is the canary: the gate's input, as the harness writes it, for
	// an edit of the harness's own hook configuration, which the law denies
	// in every state.
	Input []byte
	// Blocked reads the gate's answer as the harness does: whether the call
	// is blocked, and the text the model is given.
	Blocked func(exit int, stdout, stderr []byte) (blocked bool, text string)
}

// SetEvents fills in's Events and Missing from all, the events init
// registers, and seen, the ones found registered.
func SetEvents[E ~string](in *Install, all []E, seen map[E]bool) {
	for _, ev := range all {
		if seen[ev] {
			in.Events = append(in.Events, string(ev))
		} else {
			in.Missing = append(in.Missing, string(ev))
		}
	}
}
