package mcpserver

import (
	"errors"
	"fmt"
	"regexp"
)

// StampKey is the tool-input key through which the harness's PreToolUse hook
// hands the MCP server the session a call belongs to. The hook adds it to
// every mcp__statewright__* call with updatedInput, replacing whatever the
// model put there.
const StampKey = "statewright_session"

// EnvSessionVar is the variable Claude Code sets in an MCP server's
// environment when it spawns the server. It names the session the server
// was started in, which stops being the current one after /clear, so the
// server reads it only when told to (Options.TrustEnvSession).
const EnvSessionVar = "CLAUDE_CODE_SESSION_ID"

// DefaultHarness is the harness whose sessions the server serves unless
// told otherwise; session keys are "<harness>:<session id>".
const DefaultHarness = "claude-code"

// ErrNoSession is returned when a control call cannot be tied to a
// session: no stamp, and the environment is not trusted (or empty).
var ErrNoSession = errors.New("mcpserver: call not tied to a session")

// ErrBadSession is returned for a stamp or environment value that is not a
// plausible session id.
var ErrBadSession = errors.New("mcpserver: malformed session id")

// sessionIDPattern accepts harness session ids (UUIDs and similar tokens)
// and refuses separators, whitespace and anything a key could be spliced
// with.
var sessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// harnessPattern accepts harness names such as "claude-code" or "codex".
var harnessPattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// ValidHarness reports whether name can prefix session keys.
func ValidHarness(name string) bool { return harnessPattern.MatchString(name) }

// Source says where a call's session came from.
type Source string

// Session sources.
const (
	// SourceStamp: the hook's stamp in the tool input.
	SourceStamp Source = "stamp"
	// SourceEnv: the server's environment (only with TrustEnvSession).
	SourceEnv Source = "env"
)

// resolveSession returns the store session key for a call: the stamp when
// present; else envSession when trustEnv; else ErrNoSession. The stamp wins
// over the environment because the environment goes stale after /clear.
func resolveSession(harness, stamp string, trustEnv bool, envSession string) (string, Source, error) {
	id, src := stamp, SourceStamp
	if id == "" {
		if !trustEnv || envSession == "" {
			return "", "", ErrNoSession
		}
		id, src = envSession, SourceEnv
	}
	if !sessionIDPattern.MatchString(id) {
		return "", "", fmt.Errorf("%w: %s %q", ErrBadSession, src, truncate(id, 64))
	}
	return harness + ":" + id, src, nil
}

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
