package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/policy"
)

// ErrUntrusted: a gateway configuration names upstream servers and the
// operator has not trusted that exact file (`statewright trust`).
var ErrUntrusted = errors.New("gateway: configuration not trusted")

// TrustFile records the operator's consent to spawn the upstreams of
// specific gateway configurations: for each configuration file (absolute,
// symlinks resolved) the sha256 of the exact bytes trusted. A changed file
// is untrusted until trusted again. It lives in the operator's
// configuration directory, which the policy keeps the agent's tools away
// from.
type TrustFile struct{ path string }

// TrustRecord is one trusted configuration.
type TrustRecord struct {
	Config    string    `json:"config"`
	Hash      string    `json:"sha256"`
	TrustedAt time.Time `json:"trusted_at"`
	By        string    `json:"by,omitempty"`
	// Tools are the upstream tools' annotations as listed when the
	// configuration was trusted, by namespaced name (DECISIONS 31: the
	// law reads this snapshot, never what a server says later).
	Tools map[string]policy.ToolHints `json:"tools,omitempty"`
}

// DefaultTrustPath is $XDG_CONFIG_HOME/statewright/trusted-gateways.json,
// else ~/.config/statewright/trusted-gateways.json.
func DefaultTrustPath() (string, error) { return TrustPathFor(os.Getenv) }

// TrustPathFor is DefaultTrustPath in the environment getenv reads (a
// hook answered by the decider reads the hook's own).
func TrustPathFor(getenv func(string) string) (string, error) {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home := getenv("HOME")
		if home == "" {
			home = getenv("USERPROFILE") // os.UserHomeDir's on Windows
		}
		if home == "" {
			return "", errors.New("gateway: no configuration directory: set XDG_CONFIG_HOME or HOME")
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "statewright", "trusted-gateways.json"), nil
}

// OpenTrust returns the trust file at path (it need not exist).
func OpenTrust(path string) *TrustFile { return &TrustFile{path: path} }

// canonical returns the absolute, symlink-resolved path of a config file.
func canonical(config string) (string, error) {
	abs, err := filepath.Abs(config)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return abs, nil
}

func (t *TrustFile) read() ([]TrustRecord, error) {
	b, err := os.ReadFile(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gateway: read %s: %w", t.path, err)
	}
	var rs []TrustRecord
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("gateway: %s is not a trust file: %w", t.path, err)
	}
	return rs, nil
}

// Check returns nil when config's current bytes (hash) are trusted, else
// an error wrapping ErrUntrusted that says what to run.
func (t *TrustFile) Check(config, hash string) error {
	abs, err := canonical(config)
	if err != nil {
		return err
	}
	rs, err := t.read()
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Config == abs {
			if r.Hash == hash {
				return nil
			}
			return fmt.Errorf("%w: %s changed since it was trusted (sha256 %s…, trusted %s…); review it, then run `statewright trust %s`",
				ErrUntrusted, abs, hash[:12], r.Hash[:min(12, len(r.Hash))], abs)
		}
	}
	return fmt.Errorf("%w: %s names upstream MCP servers that statewright would start as you; review it, then run `statewright trust %s`",
		ErrUntrusted, abs, abs)
}

// Trust records consent to config's bytes with hash.
func (t *TrustFile) Trust(config, hash, by string, now time.Time) (TrustRecord, error) {
	return t.TrustTools(config, hash, by, now, nil)
}

// Hints returns the tool annotations snapshotted when config's current
// bytes (hash) were trusted; nil when they were not.
func (t *TrustFile) Hints(config, hash string) (map[string]policy.ToolHints, error) {
	abs, err := canonical(config)
	if err != nil {
		return nil, err
	}
	rs, err := t.read()
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		if r.Config == abs && r.Hash == hash {
			return r.Tools, nil
		}
	}
	return nil, nil
}

// TrustTools is Trust with the upstream tools' annotations snapshotted
// (HintsOf the tools listed at that moment).
func (t *TrustFile) TrustTools(config, hash, by string, now time.Time, tools map[string]policy.ToolHints) (TrustRecord, error) {
	abs, err := canonical(config)
	if err != nil {
		return TrustRecord{}, err
	}
	rs, err := t.read()
	if err != nil {
		return TrustRecord{}, err
	}
	rec := TrustRecord{Config: abs, Hash: hash, TrustedAt: now.UTC(), By: by, Tools: tools}
	out := rs[:0]
	for _, r := range rs {
		if r.Config != abs {
			out = append(out, r)
		}
	}
	out = append(out, rec)
	return rec, t.write(out)
}

// Revoke forgets config; it reports whether it was trusted.
func (t *TrustFile) Revoke(config string) (bool, error) {
	abs, err := canonical(config)
	if err != nil {
		return false, err
	}
	rs, err := t.read()
	if err != nil {
		return false, err
	}
	out := rs[:0]
	found := false
	for _, r := range rs {
		if r.Config == abs {
			found = true
			continue
		}
		out = append(out, r)
	}
	if !found {
		return false, nil
	}
	return true, t.write(out)
}

// List returns the trusted configurations, sorted by path.
func (t *TrustFile) List() ([]TrustRecord, error) {
	rs, err := t.read()
	sort.Slice(rs, func(i, j int) bool { return rs[i].Config < rs[j].Config })
	return rs, err
}

func (t *TrustFile) write(rs []TrustRecord) error {
	if rs == nil {
		rs = []TrustRecord{}
	}
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(t.path), ".trust-*.tmp")
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("gateway: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	return os.Rename(tmp.Name(), t.path)
}

// HintsOf returns the annotations of tools that the law reads, by
// namespaced name (tools without annotations are left out).
func HintsOf(tools []ToolInfo) map[string]policy.ToolHints {
	out := map[string]policy.ToolHints{}
	for _, t := range tools {
		if h, ok := hintsOf(t.Tool.Annotations); ok {
			out[t.Tool.Name] = h
		}
	}
	return out
}

// hintsOf reads MCP annotations: each hint counts only where the server
// set it to true (the spec's defaults for an absent destructiveHint and
// openWorldHint are not assumed).
func hintsOf(a *mcp.ToolAnnotations) (policy.ToolHints, bool) {
	if a == nil {
		return policy.ToolHints{}, false
	}
	h := policy.ToolHints{ReadOnly: a.ReadOnlyHint}
	h.Destructive = a.DestructiveHint != nil && *a.DestructiveHint
	h.OpenWorld = a.OpenWorldHint != nil && *a.OpenWorldHint
	return h, true
}
