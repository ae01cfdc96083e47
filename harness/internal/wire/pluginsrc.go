package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/statewright-go/statewright/harness/install"
)

// PluginConfig is the command line a plugin runs, written into its source
// by `statewright init`.
type PluginConfig struct {
	// Argv is the binary and the subcommand, e.g. ["/abs/statewright",
	// "hook", "opencode"]; the plugin appends the event and Flags.
	Argv []string `json:"argv"`
	// Flags follow the event: --store, --store-id, --deadline, ...
	Flags []string `json:"flags"`
	// TimeoutMS is how long the plugin waits for an answer before it
	// blocks the call; keep it above the hook's --deadline.
	TimeoutMS int `json:"timeout_ms"`
}

// The markers around the configuration in a plugin's source.
var (
	configStart = []byte("/*STATEWRIGHT_CONFIG*/")
	configEnd   = []byte("/*END_STATEWRIGHT_CONFIG*/")
)

// ErrNoConfigSlot reports a plugin source without the configuration markers.
var ErrNoConfigSlot = errors.New("plugin source has no /*STATEWRIGHT_CONFIG*/ … /*END_STATEWRIGHT_CONFIG*/ slot")

func configSlot(src []byte) (start, end int, err error) {
	i := bytes.Index(src, configStart)
	j := bytes.Index(src, configEnd)
	// The end marker must follow the start marker whole: they share no bytes.
	if i < 0 || j < i+len(configStart) || bytes.Count(src, configStart) != 1 || bytes.Count(src, configEnd) != 1 {
		return 0, 0, ErrNoConfigSlot
	}
	return i + len(configStart), j, nil
}

// RenderPlugin returns src with cfg written into its configuration slot.
func RenderPlugin(src []byte, cfg PluginConfig) ([]byte, error) {
	if len(cfg.Argv) == 0 || cfg.TimeoutMS <= 0 {
		return nil, errors.New("plugin config needs argv and a positive timeout")
	}
	i, j, err := configSlot(src)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cfg); err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(src)+b.Len())
	out = append(out, src[:i]...)
	out = append(out, ' ')
	out = append(out, bytes.TrimSpace(b.Bytes())...)
	out = append(out, ' ')
	return append(out, src[j:]...), nil
}

// PluginConfigOf reads the configuration written into a plugin's source:
// nil when the slot holds null (an unconfigured plugin).
func PluginConfigOf(src []byte) (*PluginConfig, error) {
	i, j, err := configSlot(src)
	if err != nil {
		return nil, err
	}
	raw := bytes.TrimSpace(src[i:j])
	if string(raw) == "null" {
		return nil, nil
	}
	var cfg PluginConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("plugin config: %w", err)
	}
	return &cfg, nil
}

// InstallPlugin plans the plugin file at path (relative to the project):
// source with the hook's command line written into its configuration
// slot, or, when uninstalling, its removal. A file there that is not
// statewright's plugin is refused, never overwritten. The file names this
// machine's binary and store, so it goes into .gitignore (IgnoreMachineLocal).
func InstallPlugin(p *install.Plan, path string, source []byte) error {
	if err := renderPlugin(p, path, source); err != nil {
		return err
	}
	return p.IgnoreMachineLocal(path)
}

func renderPlugin(p *install.Plan, path string, source []byte) error {
	return p.Edit(path, func(old []byte) ([]byte, error) {
		if old != nil && !isOurPlugin(old) {
			return nil, errors.New("exists and is not statewright's plugin; move it away first")
		}
		if p.Uninstall {
			if old != nil {
				p.Note("removed the statewright plugin")
			}
			return nil, nil
		}
		src, err := RenderPlugin(source, PluginConfig{
			Argv: p.HookArgv(), Flags: p.HookArgs(), TimeoutMS: p.Timeout * 1000,
		})
		if err != nil {
			return nil, fmt.Errorf("render the plugin: %w", err)
		}
		p.Note("plugin %s: binary %s, store %s (id %s)", path, p.Binary, p.Store, p.StoreID)
		return src, nil
	})
}

// isOurPlugin recognises a plugin file init wrote: it has the config slot.
func isOurPlugin(src []byte) bool {
	_, err := PluginConfigOf(src)
	return err == nil && bytes.Contains(src, []byte("statewright"))
}
