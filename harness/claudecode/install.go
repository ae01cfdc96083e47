package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/statewright-go/statewright/harness/install"
)

const installLong = `init claude-code registers statewright's hooks (SessionStart, UserPromptSubmit, PreToolUse,
PostToolUse, PostToolUseFailure, Stop, SubagentStop, SessionEnd) in the project's
.claude/settings.json and the statewright MCP server in .mcp.json. It merges: the user's
other settings, hooks and servers are kept as they are. Running it again updates
statewright's entries in place; --uninstall removes exactly them.

The hook commands name this binary by its absolute path, the store by its absolute path
and the store's id (so a deleted or recreated store denies), and PreToolUse's command
ends in a wrapper that turns a missing binary, a crash or a signal into a deny. The
store is created when missing.`

func installFlags(f *pflag.FlagSet, o *install.Options) {
	install.AddMCPFlag(f, o)
	f.BoolVar(&o.Plugin, "plugin", false, "for the marketplace plugin: create the store and pin its id in --store-id-file; write no project settings")
	f.StringVar(&o.StoreIDFile, "store-id-file", "", "with --plugin: where to pin the store's id (default $XDG_CONFIG_HOME/statewright/claude-code.store-id)")
}

// MCPServerName is the name statewright's MCP server gets in .mcp.json; the
// control tools are then mcp__statewright__*.
const MCPServerName = "statewright"

// Settings and MCPConfig are the files init writes, relative to the project.
var (
	Settings  = filepath.Join(".claude", "settings.json")
	MCPConfig = ".mcp.json"
)

// DefaultStoreIDFile is where `init claude-code --plugin` pins the store's
// id for the marketplace plugin's hooks (plugins/claude-code), whose
// hooks.json cannot carry it.
func DefaultStoreIDFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "statewright", "claude-code.store-id")
}

// Install implements harness.Adapter: the hooks in .claude/settings.json,
// the MCP server in .mcp.json and its approval in the settings; or, with
// --plugin, the store's id pinned for the marketplace plugin's hooks.
func (adapter) Install(p *install.Plan) error {
	if p.Plugin {
		return pinStoreID(p)
	}
	settings, err := p.ReadObject(Settings)
	if err != nil {
		return err
	}
	mcp, err := p.ReadObject(MCPConfig)
	if err != nil {
		return err
	}
	n, err := removeHooks(p, settings)
	if err != nil {
		return p.Refuse(p.Path(Settings), err)
	}
	if p.Uninstall {
		p.Note("removed %d statewright hook(s)", n)
		removed, err := removeMCP(mcp, settings)
		if err != nil {
			return p.Refuse(p.Path(MCPConfig), err)
		}
		if removed {
			p.Note("removed the statewright MCP server")
		}
	} else {
		if err := addHooks(p, settings); err != nil {
			return p.Refuse(p.Path(Settings), err)
		}
		p.Note("hooks: %d events, binary %s, store %s (id %s)", len(Events), p.Binary, p.Store, p.StoreID)
		if !p.NoMCP {
			if err := addMCP(p, mcp, settings); err != nil {
				return p.Refuse(p.Path(MCPConfig), err)
			}
			p.Note("MCP server %s on the same store", MCPServerName)
		}
	}
	if err := p.WriteObject(Settings, settings); err != nil {
		return err
	}
	return p.WriteObject(MCPConfig, mcp)
}

// pinStoreID writes the store's id to the file the plugin's hooks read
// (mode 0600, in a 0700 directory).
func pinStoreID(p *install.Plan) error {
	file := p.StoreIDFile
	if file == "" {
		file = DefaultStoreIDFile()
	}
	if file == "" {
		return errors.New("no config directory; name the pin file with --store-id-file")
	}
	if p.Uninstall {
		return errors.New("--plugin --uninstall: remove the plugin with Claude Code's /plugin command")
	}
	if err := p.EditMode(file, 0o600, 0o700, func([]byte) ([]byte, error) { return []byte(p.StoreID + "\n"), nil }); err != nil {
		return err
	}
	p.Note("pinned store id %s in %s (the plugin's hooks deny on any other store)", p.StoreID, file)
	return nil
}

// removeHooks removes statewright's hook entries from settings, and the
// groups, event lists and hooks object they leave empty. It returns how
// many entries it removed.
func removeHooks(p *install.Plan, settings *install.Object) (int, error) {
	hooks, err := settings.Object("hooks")
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, ev := range hooks.Keys() {
		raw, _ := hooks.Get(ev)
		var groups []json.RawMessage
		if err := json.Unmarshal(raw, &groups); err != nil {
			return 0, fmt.Errorf("hooks.%s is not an array: %w", ev, err)
		}
		kept := groups[:0:0]
		for _, g := range groups {
			grp, err := install.ParseObject(g)
			if err != nil {
				return 0, fmt.Errorf("hooks.%s: %w", ev, err)
			}
			var entries []json.RawMessage
			if hr, ok := grp.Get("hooks"); ok {
				if err := json.Unmarshal(hr, &entries); err != nil {
					return 0, fmt.Errorf("hooks.%s[].hooks is not an array: %w", ev, err)
				}
			}
			left := entries[:0:0]
			for _, e := range entries {
				var h struct {
					Command string `json:"command"`
				}
				if json.Unmarshal(e, &h) == nil && p.IsOurHook(h.Command) {
					removed++
					continue
				}
				left = append(left, e)
			}
			switch {
			case len(left) == len(entries):
				kept = append(kept, g)
			case len(left) > 0:
				if err := grp.Put("hooks", left); err != nil {
					return 0, err
				}
				gb, err := grp.MarshalJSON()
				if err != nil {
					return 0, err
				}
				kept = append(kept, gb)
			}
			// A group that held only statewright's hooks goes.
		}
		if len(kept) == 0 {
			hooks.Del(ev)
			continue
		}
		if err := hooks.Put(ev, kept); err != nil {
			return 0, err
		}
	}
	return removed, settings.PutObject("hooks", hooks)
}

// addHooks appends one group per event holding statewright's hook.
func addHooks(p *install.Plan, settings *install.Object) error {
	hooks, err := settings.Object("hooks")
	if err != nil {
		return err
	}
	for _, ev := range Events {
		var groups []json.RawMessage
		if raw, ok := hooks.Get(string(ev)); ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return fmt.Errorf("hooks.%s is not an array: %w", ev, err)
			}
		}
		grp := install.NewObject()
		if ev.ToolEvent() {
			grp.Set("matcher", json.RawMessage(`"*"`))
		}
		entry := install.NewObject()
		entry.Set("type", json.RawMessage(`"command"`))
		if err := entry.Put("command", p.HookCommand(ev.Arg(), ev == PreToolUse, string(ev))); err != nil {
			return err
		}
		entry.Set("timeout", json.RawMessage(strconv.Itoa(p.Timeout)))
		if err := grp.Put("hooks", []*install.Object{entry}); err != nil {
			return err
		}
		gb, err := grp.MarshalJSON()
		if err != nil {
			return err
		}
		if err := hooks.Put(string(ev), append(groups, gb)); err != nil {
			return err
		}
	}
	return settings.PutObject("hooks", hooks)
}

// mcpServer is statewright's entry in .mcp.json.
type mcpServer struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// isOurServer reports whether an .mcp.json server entry is one init wrote:
// a statewright binary, or any binary run as "mcp --store PATH --store-id ID".
func isOurServer(raw json.RawMessage) bool {
	var s mcpServer
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	return strings.HasPrefix(filepath.Base(s.Command), "statewright") ||
		(len(s.Args) == 5 && s.Args[0] == "mcp" && s.Args[1] == "--store" && s.Args[3] == "--store-id")
}

// addMCP registers the MCP server on the same store and approves it in
// settings (enabledMcpjsonServers), so Claude Code starts it without asking.
func addMCP(p *install.Plan, mcp, settings *install.Object) error {
	if err := mcp.PutServer("mcpServers", MCPServerName, mcpServer{Type: "stdio", Command: p.Binary,
		Args: []string{"mcp", "--store", p.Store, "--store-id", p.StoreID}}, isOurServer); err != nil {
		return err
	}
	var enabled []string
	if raw, ok := settings.Get("enabledMcpjsonServers"); ok {
		if err := json.Unmarshal(raw, &enabled); err != nil {
			return fmt.Errorf("settings enabledMcpjsonServers is not a list of names: %w", err)
		}
	}
	for _, n := range enabled {
		if n == MCPServerName {
			return nil
		}
	}
	return settings.Put("enabledMcpjsonServers", append(enabled, MCPServerName))
}

// removeMCP removes statewright's server (only if it runs statewright) and
// its approval.
func removeMCP(mcp, settings *install.Object) (bool, error) {
	if removed, err := mcp.DeleteServer("mcpServers", MCPServerName, isOurServer); !removed || err != nil {
		return removed, err
	}
	var enabled []string
	if raw, ok := settings.Get("enabledMcpjsonServers"); ok && json.Unmarshal(raw, &enabled) == nil {
		left := enabled[:0:0]
		for _, n := range enabled {
			if n != MCPServerName {
				left = append(left, n)
			}
		}
		if len(left) == 0 {
			settings.Del("enabledMcpjsonServers")
		} else if err := settings.Put("enabledMcpjsonServers", left); err != nil {
			return false, err
		}
	}
	return true, nil
}
