package mcpserver

import (
	"errors"

	"fmt"
	"github.com/statewright-go/statewright/control"
	"strings"
)

// StampKey is the tool-input key through which the harness's PreToolUse hook
// hands the MCP server the session a call belongs to. The hook adds it to
// every mcp__statewright__* call with updatedInput, replacing whatever the
// model put there.
const StampKey = control.StampKey

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

// validSessionID accepts harness session ids (UUIDs and similar tokens):
// an ASCII letter or digit, then at most 127 letters, digits, '.', '_' or
// '-'. It refuses separators, whitespace and anything a key could be
// spliced with. (Checked by hand rather than with a regexp: the bounded
// repetition compiled at package init cost the hook path about 2 ms.)
func validSessionID(id string) bool {
	if len(id) == 0 || len(id) > 128 || !isAlnum(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		if c := id[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// ValidHarness reports whether name can prefix session keys: a lower-case
// ASCII letter, then at most 31 lower-case letters, digits or '-'.
func ValidHarness(name string) bool {
	if len(name) == 0 || len(name) > 32 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

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
	if !validSessionID(id) {
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

// ParseSessionKey accepts a store session key "HARNESS:ID" or a bare
// session id, which it prefixes with harness. The harness and the id must
// be plausible (see ValidHarness); anything else is ErrBadSession.
func ParseSessionKey(harness, s string) (string, error) {
	h, id, ok := strings.Cut(s, ":")
	if !ok {
		h, id = harness, s
	}
	if !ValidHarness(h) || !validSessionID(id) {
		return "", fmt.Errorf("%w: %q", ErrBadSession, truncate(s, 64))
	}
	return h + ":" + id, nil
}
