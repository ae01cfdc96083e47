// Package tokens keeps the bearer tokens `statewright serve` accepts: agent
// tokens, which a governed agent's MCP client presents; hook credentials,
// which a harness's HTTP hooks present (and nothing else: an agent token
// cannot post a hook event, so the agent cannot forge one); and operator
// tokens, which prove a person (only they approve or weaken); and metrics
// tokens, which a monitoring system presents to scrape /metrics and reach
// nothing else.
//
// Tokens are stored hashed (sha256 of the token, hex) in one JSON file,
// mode 0600, under the operator's configuration directory, which the
// policy's self-protection keeps the agent's tools away from. A token is
// printed once, when created; the file never holds it. Tokens are 32 random
// bytes, so a fast hash is enough: nobody can guess a preimage.
//
// A File re-reads the file when it changed (size or modification time), so
// `statewright tokens revoke` takes effect on a running server at its next
// request.
package tokens

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Role is what a token may do.
type Role string

// Roles.
const (
	// Agent tokens reach the MCP endpoint and the operator API's reads as
	// the governed agent: they can never approve or weaken enforcement,
	// nor post a hook event.
	Agent Role = "agent"
	// Hook credentials post hook events to serve's hook endpoint, and
	// reach nothing else. A hook event reports what the agent did (a tool
	// call, its result, a prompt), so only the harness may send one: the
	// credential belongs in the harness's hook configuration, kept out of
	// the agent's environment and sandbox.
	Hook Role = "hook"
	// Operator tokens prove a person: they approve pending transitions and
	// may weaken enforcement (pause, deactivate).
	Operator Role = "operator"
	// Metrics tokens scrape the Prometheus metrics (serve's /metrics, `mcp
	// --metrics`) and reach nothing else: a monitoring system holds one
	// without holding the power to drive or approve a run.
	Metrics Role = "metrics"
)

// ParseRole accepts "agent", "hook", "operator" or "metrics".
func ParseRole(s string) (Role, error) {
	r := Role(strings.ToLower(strings.TrimSpace(s)))
	if !r.valid() {
		return "", fmt.Errorf("unknown token role %q (want agent, hook, operator or metrics)", s)
	}
	return r, nil
}

func (r Role) valid() bool { return r == Agent || r == Hook || r == Operator || r == Metrics }

// Token is one stored token (never the secret itself).
type Token struct {
	// ID names the token for list and revoke ("tok_" and 12 hex digits).
	ID string `json:"id"`
	// Name is the operator's label ("claude-code laptop").
	Name string `json:"name,omitempty"`
	// Role is agent, hook or operator.
	Role Role `json:"role"`
	// Hash is the hex sha256 of the token.
	Hash string `json:"hash"`
	// Session, when set, binds an agent token to one harness session key:
	// the server serves only that session to it.
	Session string `json:"session,omitempty"`
	// CreatedAt is when the token was created; RevokedAt when it was
	// revoked (zero while valid).
	CreatedAt time.Time `json:"created_at"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
}

// Revoked reports whether the token was revoked.
func (t Token) Revoked() bool { return !t.RevokedAt.IsZero() }

// fileFormat is the file's JSON.
type fileFormat struct {
	Version int     `json:"version"`
	Tokens  []Token `json:"tokens"`
}

// Errors, errors.Is-able.
var (
	// ErrNoToken: no token was presented.
	ErrNoToken = errors.New("tokens: no bearer token")
	// ErrBadToken: the token is unknown, malformed or revoked.
	ErrBadToken = errors.New("tokens: invalid or revoked token")
	// ErrNotFound: no token with that id.
	ErrNotFound = errors.New("tokens: no such token")
)

// Prefixes mark a token's role in its text, for people; the role that
// counts is the stored one.
const (
	agentPrefix    = "swa_"
	hookPrefix     = "swh_"
	operatorPrefix = "swo_"
	metricsPrefix  = "swm_"
)

// DefaultPath is where tokens live: $XDG_CONFIG_HOME/statewright/tokens.json,
// else ~/.config/statewright/tokens.json.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return "", errors.New("tokens: no configuration directory: set XDG_CONFIG_HOME or HOME")
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "statewright", "tokens.json"), nil
}

// Hash returns the stored form of a token.
func Hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// File is the token file. It is safe for concurrent use within a process;
// writers in several processes replace the file atomically (last writer
// wins, as for any operator configuration file).
type File struct {
	path string

	mu      sync.Mutex
	stamp   fileStamp
	loaded  bool
	byHash  map[string]Token
	entries []Token
}

type fileStamp struct {
	size  int64
	mtime time.Time
	ino   uint64
}

// Open returns the token file at path (it need not exist yet).
func Open(path string) *File { return &File{path: path} }

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// stampOf is what refresh compares to see whether the file changed.
func stampOf(st os.FileInfo) fileStamp {
	return fileStamp{size: st.Size(), mtime: st.ModTime(), ino: inode(st)}
}

// refresh re-reads the file when it changed since the last read. A missing
// file holds no tokens.
func (f *File) refresh() error {
	st, err := os.Stat(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		f.entries, f.byHash, f.loaded, f.stamp = nil, map[string]Token{}, true, fileStamp{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("tokens: stat %s: %w", f.path, err)
	}
	stamp := stampOf(st)
	if f.loaded && stamp == f.stamp {
		return nil
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return fmt.Errorf("tokens: read %s: %w", f.path, err)
	}
	var ff fileFormat
	if err := json.Unmarshal(b, &ff); err != nil {
		return fmt.Errorf("tokens: %s is not a token file: %w", f.path, err)
	}
	by := make(map[string]Token, len(ff.Tokens))
	for _, t := range ff.Tokens {
		if !t.Role.valid() {
			return fmt.Errorf("tokens: %s: token %s has unknown role %q", f.path, t.ID, t.Role)
		}
		by[t.Hash] = t
	}
	f.entries, f.byHash, f.loaded, f.stamp = ff.Tokens, by, true, stamp
	return nil
}

// Verify returns the stored token matching token, or ErrNoToken /
// ErrBadToken. A file it cannot read is an error (the caller denies).
func (f *File) Verify(token string) (Token, error) {
	token = strings.TrimSpace(token)
	if token == "" {
		return Token{}, ErrNoToken
	}
	// The file is stat'ed on every call, as refresh does, but outside the
	// lock, so that callers do not queue behind each other's system call:
	// when the loaded file is the one this stat sees, its tokens are
	// current as of the stat; anything else (a changed or missing file, a
	// stat that failed, nothing loaded yet) goes through refresh, which
	// stats again under the lock and reads the file or fails.
	st, statErr := os.Stat(f.path)
	f.mu.Lock()
	defer f.mu.Unlock()
	if statErr != nil || !f.loaded || stampOf(st) != f.stamp {
		if err := f.refresh(); err != nil {
			return Token{}, err
		}
	}
	h := Hash(token)
	t, ok := f.byHash[h]
	// The map lookup is on the hash, which leaks nothing about the token;
	// compare once more in constant time for good measure.
	if !ok || subtle.ConstantTimeCompare([]byte(t.Hash), []byte(h)) != 1 || t.Revoked() {
		return Token{}, ErrBadToken
	}
	return t, nil
}

// List returns every stored token, oldest first.
func (f *File) List() ([]Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refresh(); err != nil {
		return nil, err
	}
	out := append([]Token(nil), f.entries...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// HasOperator reports whether a valid operator token exists.
func (f *File) HasOperator() (bool, error) {
	ts, err := f.List()
	if err != nil {
		return false, err
	}
	for _, t := range ts {
		if t.Role == Operator && !t.Revoked() {
			return true, nil
		}
	}
	return false, nil
}

// Any reports whether any valid token exists.
func (f *File) Any() (bool, error) {
	ts, err := f.List()
	if err != nil {
		return false, err
	}
	for _, t := range ts {
		if !t.Revoked() {
			return true, nil
		}
	}
	return false, nil
}

// Create makes a new token of role, stores its hash and returns the secret
// (shown once) and the stored entry. session binds an agent token to one
// session key ("" for any).
func (f *File) Create(role Role, name, session string, now time.Time) (string, Token, error) {
	if !role.valid() {
		return "", Token{}, fmt.Errorf("tokens: unknown role %q", role)
	}
	if session != "" && role != Agent {
		return "", Token{}, errors.New("tokens: only agent tokens are bound to a session")
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", Token{}, fmt.Errorf("tokens: generate: %w", err)
	}
	prefix := map[Role]string{Agent: agentPrefix, Hook: hookPrefix, Operator: operatorPrefix, Metrics: metricsPrefix}[role]
	secret := prefix + hex.EncodeToString(b[:])
	h := Hash(secret)
	t := Token{ID: "tok_" + h[:12], Name: name, Role: role, Hash: h, Session: session, CreatedAt: now.UTC()}
	err := f.update(func(ts []Token) ([]Token, error) { return append(ts, t), nil })
	if err != nil {
		return "", Token{}, err
	}
	return secret, t, nil
}

// Revoke marks the token with id revoked (ErrNotFound when there is none).
// Revoking twice is not an error.
func (f *File) Revoke(id string, now time.Time) (Token, error) {
	var out Token
	err := f.update(func(ts []Token) ([]Token, error) {
		for i := range ts {
			if ts[i].ID == id {
				if !ts[i].Revoked() {
					ts[i].RevokedAt = now.UTC()
				}
				out = ts[i]
				return ts, nil
			}
		}
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	})
	return out, err
}

// update rewrites the file through fn, atomically (temporary file, mode
// 0600, rename).
func (f *File) update(fn func([]Token) ([]Token, error)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loaded = false
	if err := f.refresh(); err != nil {
		return err
	}
	ts, err := fn(append([]Token(nil), f.entries...))
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(fileFormat{Version: 1, Tokens: ts}, "", "  ")
	if err != nil {
		return fmt.Errorf("tokens: encode: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return fmt.Errorf("tokens: create directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".tokens-*.tmp")
	if err != nil {
		return fmt.Errorf("tokens: write: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("tokens: write: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("tokens: write: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("tokens: write: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return fmt.Errorf("tokens: write: %w", err)
	}
	f.loaded = false
	return f.refresh()
}
