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
PostToolUse, PostToolUseFailure, Stop, SubagentStop, SessionEnd) in the project's local,
uncommitted settings (.claude/settings.local.json) and the statewright MCP server in the
project's local scope of Claude Code's configuration (~/.claude.json, or
$CLAUDE_CONFIG_DIR/.claude.json, under the project's path). Nothing is written into files a
repository shares (.claude/settings.json, .mcp.json): a teammate's clone carries no path of
this machine. It merges: the user's other settings, hooks and servers are kept as they are.
Running it again replaces statewright's entries in place; entries an older version wrote
into .claude/settings.json or .mcp.json are removed. --uninstall removes every form, and
the directories it leaves empty. In a git repository, .claude/settings.local.json and the
store's .statewright/ directory are added to .gitignore.

The hook commands name the thin hook client (or this binary) by its absolute path, the
store by its absolute path and the store's id (so a deleted or recreated store denies), and
PreToolUse's command ends in a wrapper that turns a missing binary, a crash or a signal into
a deny. The store is created when missing.

With --plugin, init writes no project files: it pins the binary, the store and the flags
(--require-workflow, --default-workflow, --audit-only, --sandbox) for the marketplace plugin
(plugins/claude-code) in statewright's configuration directory, which the agent can neither
read nor change. The plugin governs every Claude Code session of this user, in every project.`

func installFlags(f *pflag.FlagSet, o *install.Options) {
	install.AddMCPFlag(f, o)
	f.BoolVar(&o.Plugin, "plugin", false, "for the marketplace plugin (every session of this user): pin the binary, store and flags in statewright's configuration directory; write no project files")
	f.StringVar(&o.StoreIDFile, "store-id-file", "", "with --plugin: the pin file (default $XDG_CONFIG_HOME/statewright/"+PluginPinName+")")
}

// MCPServerName is the name statewright's MCP server gets in Claude Code's
// configuration; the control tools are then mcp__statewright__*.
const MCPServerName = "statewright"

// The files init writes or cleans, relative to the project.
var (
	// LocalSettings holds the hooks: the project's settings that are not
	// committed.
	LocalSettings = filepath.Join(".claude", "settings.local.json")
	// Settings are the project's shared (committed) settings: older
	// versions wrote the hooks and the MCP server's approval there.
	Settings = filepath.Join(".claude", "settings.json")
	// MCPConfig is the project's shared MCP configuration: older versions
	// registered the server there.
	MCPConfig = ".mcp.json"
)

// UserConfig returns Claude Code's user configuration file, which holds
// the local scope's MCP servers per project: $CLAUDE_CONFIG_DIR/.claude.json,
// else ~/.claude.json.
func UserConfig() (string, error) {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, ".claude.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("no home directory for Claude Code's ~/.claude.json; set CLAUDE_CONFIG_DIR or use --no-mcp")
	}
	return filepath.Join(home, ".claude.json"), nil
}

// Install implements harness.Adapter: the hooks in the project's local
// settings, the MCP server in its local scope, older forms removed; or,
// with --plugin, the pin for the marketplace plugin.
func (adapter) Install(p *install.Plan) error {
	if p.Plugin {
		return pinPlugin(p)
	}
	if p.StoreIDFile != "" {
		return install.Usage(errors.New("--store-id-file goes with --plugin"))
	}
	// Older forms first: statewright's hooks and the server's approval in
	// the shared settings, the server in the shared .mcp.json.
	shared, err := p.ReadObject(Settings)
	if err != nil {
		return err
	}
	old, err := removeHooks(p, shared)
	if err != nil {
		return p.Refuse(p.Path(Settings), err)
	}
	// The shared files are rewritten only when they held something of
	// statewright's: they stay byte for byte the user's otherwise.
	if unapproved := unapprove(shared); old > 0 || unapproved {
		if err := p.WriteObject(Settings, shared); err != nil {
			return err
		}
	}
	if _, err := os.Stat(p.Path(MCPConfig)); err != nil {
		// No shared .mcp.json: nothing older to remove, nothing to collide with.
	} else if err := p.EditObject(MCPConfig, func(mcp *install.Object) error {
		removed, err := mcp.DeleteServer("mcpServers", MCPServerName, isOurServer)
		if removed {
			p.Note("removed statewright's MCP server from %s (shared with the repository; it now lives in the local scope)", MCPConfig)
		} else if raw, ok := mcpServer(mcp, MCPServerName); ok && !isOurServer(raw) && !p.Uninstall {
			return fmt.Errorf("an MCP server named %q exists and does not run statewright; rename or remove it first", MCPServerName)
		}
		return err
	}); err != nil {
		return err
	}

	local, err := p.ReadObject(LocalSettings)
	if err != nil {
		return err
	}
	unapprove(local)
	if p.Uninstall {
		n, err := removeHooks(p, local)
		if err != nil {
			return p.Refuse(p.Path(LocalSettings), err)
		}
		p.Note("removed %d statewright hook(s)", n+old)
	} else {
		if err := putHooks(p, local); err != nil {
			return p.Refuse(p.Path(LocalSettings), err)
		}
		if old > 0 {
			p.Note("moved %d statewright hook(s) out of %s (shared with the repository) into %s", old, Settings, LocalSettings)
		}
		p.Note("hooks: %d events in %s, binary %s, store %s (id %s)", len(Events), LocalSettings, p.HookBinary, p.Store, p.StoreID)
	}
	if err := p.WriteObject(LocalSettings, local); err != nil {
		return err
	}
	if err := localMCP(p); err != nil {
		return err
	}
	return p.IgnoreMachineLocal(LocalSettings)
}

// mcpServer returns the server entry name under o's "mcpServers".
func mcpServer(o *install.Object, name string) (json.RawMessage, bool) {
	servers, err := o.Object("mcpServers")
	if err != nil {
		return nil, false
	}
	return servers.Get(name)
}

// localMCP registers (or removes) the MCP server in the project's local
// scope of Claude Code's user configuration: projects[PROJECT].mcpServers.
// Local-scope servers need no approval and are never shared.
func localMCP(p *install.Plan) error {
	file, err := UserConfig()
	if err != nil {
		if p.Uninstall || p.NoMCP {
			return nil
		}
		return install.Usage(err)
	}
	key := projectKey(p.Project)
	if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) && (p.Uninstall || p.NoMCP) {
		return nil
	}
	return p.EditObjectMode(file, 0o600, func(cfg *install.Object) error {
		projects, err := cfg.Object("projects")
		if err != nil {
			return err
		}
		proj, err := projects.Object(key)
		if err != nil {
			return err
		}
		if p.Uninstall || p.NoMCP {
			removed, err := proj.DeleteServer("mcpServers", MCPServerName, isOurServer)
			if err != nil || !removed {
				return err
			}
			p.Note("removed the statewright MCP server from %s (project %s)", file, key)
		} else {
			if err := proj.PutServer("mcpServers", MCPServerName, mcpEntry{Type: "stdio", Command: p.Binary,
				Args: []string{"mcp", "--store", p.Store, "--store-id", p.StoreID}, Env: map[string]string{}}, isOurServer); err != nil {
				return err
			}
			p.Note("MCP server %s on the same store, in the local scope of %s (restart Claude Code sessions of this project)", MCPServerName, file)
		}
		if proj.Empty() {
			projects.Del(key)
		} else if err := projects.PutObject(key, proj); err != nil {
			return err
		}
		return cfg.PutObject("projects", projects)
	})
}

// projectKey is how Claude Code names the project in ~/.claude.json: its
// real path.
func projectKey(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return dir
}

// PluginPinName is the pin file of the marketplace plugin, in statewright's
// configuration directory.
const PluginPinName = "claude-code.plugin"

// legacyStoreIDName is the pin file older versions wrote for the plugin:
// the store's id alone.
const legacyStoreIDName = "claude-code.store-id"

// PluginPin returns where `init claude-code --plugin` pins the plugin's
// binary, store and flags: $XDG_CONFIG_HOME/statewright/claude-code.plugin
// (else ~/.config/...). The directory is protected by the law and hidden in
// the OS sandbox: the agent can neither read nor change it.
func PluginPin() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "statewright", PluginPinName)
}

// PluginPinText renders the pin: a comment, then one key=value per line
// (hook=, binary=, arg= for each hook flag, mcparg= for each MCP server
// flag), which plugins/claude-code/bin's wrappers read. Values are taken
// verbatim to the end of the line; none may hold a newline.
func PluginPinText(p *install.Plan) (string, error) {
	var b strings.Builder
	b.WriteString("# statewright init claude-code --plugin: the binary, store and flags of the plugin's hooks.\n")
	b.WriteString("# Change it with that command; the plugin's wrappers read it at every hook.\n")
	lines := []string{"hook=" + p.HookBinary, "binary=" + p.Binary}
	for _, a := range p.HookArgs() {
		lines = append(lines, "arg="+a)
	}
	for _, a := range []string{"--store", p.Store, "--store-id", p.StoreID} {
		lines = append(lines, "mcparg="+a)
	}
	for _, l := range lines {
		if strings.ContainsAny(l, "\n\r") {
			return "", fmt.Errorf("%q holds a line break", l)
		}
		b.WriteString(l + "\n")
	}
	return b.String(), nil
}

// pinPlugin writes (or removes) the plugin's pin, mode 0600 in a 0700
// directory, and removes the older store-id-only pin.
func pinPlugin(p *install.Plan) error {
	file := p.StoreIDFile
	if file == "" {
		file = PluginPin()
	}
	if file == "" {
		return install.Usage(errors.New("no configuration directory; name the pin file with --store-id-file"))
	}
	legacy := filepath.Join(filepath.Dir(file), legacyStoreIDName)
	if _, err := os.Stat(legacy); err == nil {
		if err := p.Edit(legacy, func([]byte) ([]byte, error) { return nil, nil }); err != nil {
			return err
		}
	}
	if p.Uninstall {
		if err := p.Edit(file, func(old []byte) ([]byte, error) {
			if old != nil {
				p.Note("removed the plugin's pin %s; remove the plugin itself with Claude Code's /plugin command", file)
			}
			return nil, nil
		}); err != nil {
			return err
		}
		return nil
	}
	text, err := PluginPinText(p)
	if err != nil {
		return err
	}
	if err := p.EditMode(file, 0o600, 0o700, func([]byte) ([]byte, error) { return []byte(text), nil }); err != nil {
		return err
	}
	p.Note("pinned the plugin's hooks to %s, store %s (id %s) in %s", p.HookBinary, p.Store, p.StoreID, file)
	p.Note("the plugin governs every Claude Code session of this user, in every project, with this one store")
	return nil
}

// unapprove drops statewright from enabledMcpjsonServers (older versions
// approved their .mcp.json server there) and reports whether it was there.
func unapprove(settings *install.Object) bool {
	raw, ok := settings.Get("enabledMcpjsonServers")
	if !ok {
		return false
	}
	var enabled []string
	if json.Unmarshal(raw, &enabled) != nil {
		return false
	}
	left := enabled[:0:0]
	for _, n := range enabled {
		if n != MCPServerName {
			left = append(left, n)
		}
	}
	switch {
	case len(left) == len(enabled):
		return false
	case len(left) == 0:
		settings.Del("enabledMcpjsonServers")
	default:
		_ = settings.Put("enabledMcpjsonServers", left)
	}
	return true
}

// hookGroup is one matcher group of a settings file's hooks.
type hookGroup struct {
	obj     *install.Object
	entries []json.RawMessage
}

// eventGroups parses the groups of one event.
func eventGroups(hooks *install.Object, ev string) ([]hookGroup, error) {
	raw, ok := hooks.Get(ev)
	if !ok {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("hooks.%s is not an array: %w", ev, err)
	}
	groups := make([]hookGroup, 0, len(list))
	for _, g := range list {
		obj, err := install.ParseObject(g)
		if err != nil {
			return nil, fmt.Errorf("hooks.%s: %w", ev, err)
		}
		var entries []json.RawMessage
		if hr, ok := obj.Get("hooks"); ok {
			if err := json.Unmarshal(hr, &entries); err != nil {
				return nil, fmt.Errorf("hooks.%s[].hooks is not an array: %w", ev, err)
			}
		}
		groups = append(groups, hookGroup{obj, entries})
	}
	return groups, nil
}

// putGroups writes an event's groups back; groups without entries go, and
// so does an event without groups.
func putGroups(hooks *install.Object, ev string, groups []hookGroup) error {
	var out []json.RawMessage
	for _, g := range groups {
		if len(g.entries) == 0 {
			continue
		}
		if err := g.obj.Put("hooks", g.entries); err != nil {
			return err
		}
		b, err := g.obj.MarshalJSON()
		if err != nil {
			return err
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		hooks.Del(ev)
		return nil
	}
	return hooks.Put(ev, out)
}

// isOurs reports whether a hook entry is one init wrote (any version, any
// binary path).
func isOurs(p *install.Plan, e json.RawMessage) bool {
	var h struct {
		Command string `json:"command"`
	}
	return json.Unmarshal(e, &h) == nil && p.IsOurHook(h.Command)
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
		groups, err := eventGroups(hooks, ev)
		if err != nil {
			return 0, err
		}
		changed := false
		for i := range groups {
			kept := groups[i].entries[:0:0]
			for _, e := range groups[i].entries {
				if isOurs(p, e) {
					removed++
					changed = true
					continue
				}
				kept = append(kept, e)
			}
			groups[i].entries = kept
		}
		if changed {
			if err := putGroups(hooks, ev, groups); err != nil {
				return 0, err
			}
		}
	}
	return removed, settings.PutObject("hooks", hooks)
}

// putHooks registers statewright's hook for every event, replacing an
// entry of an earlier init where it stands (the first one; any further
// ones go), or appending a group of its own.
func putHooks(p *install.Plan, settings *install.Object) error {
	hooks, err := settings.Object("hooks")
	if err != nil {
		return err
	}
	for _, ev := range Events {
		entry := install.NewObject()
		entry.Set("type", json.RawMessage(`"command"`))
		if err := entry.Put("command", p.HookCommand(ev.Arg(), ev == PreToolUse, string(ev))); err != nil {
			return err
		}
		entry.Set("timeout", json.RawMessage(strconv.Itoa(p.Timeout)))
		eb, err := entry.MarshalJSON()
		if err != nil {
			return err
		}
		groups, err := eventGroups(hooks, string(ev))
		if err != nil {
			return err
		}
		placed := false
		for i := range groups {
			kept := groups[i].entries[:0:0]
			for _, e := range groups[i].entries {
				switch {
				case !isOurs(p, e):
					kept = append(kept, e)
				case !placed:
					kept = append(kept, eb)
					placed = true
				}
			}
			groups[i].entries = kept
		}
		if !placed {
			grp := install.NewObject()
			if ev.ToolEvent() {
				grp.Set("matcher", json.RawMessage(`"*"`))
			}
			groups = append(groups, hookGroup{grp, []json.RawMessage{eb}})
		}
		if err := putGroups(hooks, string(ev), groups); err != nil {
			return err
		}
	}
	return settings.PutObject("hooks", hooks)
}

// mcpEntry is statewright's MCP server entry.
type mcpEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// isOurServer reports whether an MCP server entry is one init wrote: a
// statewright binary, or any binary run as "mcp --store PATH --store-id ID".
func isOurServer(raw json.RawMessage) bool {
	var s mcpEntry
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	return strings.HasPrefix(filepath.Base(s.Command), "statewright") ||
		(len(s.Args) == 5 && s.Args[0] == "mcp" && s.Args[1] == "--store" && s.Args[3] == "--store-id")
}

// LocalMCPServer returns statewright's MCP server entry in the project's
// local scope of Claude Code's configuration (UserConfig), and that file's
// name. raw is nil when there is none.
func LocalMCPServer(project string) (raw json.RawMessage, file string, err error) {
	file, err = UserConfig()
	if err != nil {
		return nil, "", err
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, file, nil
	}
	if err != nil {
		return nil, file, err
	}
	var cfg struct {
		Projects map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, file, fmt.Errorf("%s: %w", file, err)
	}
	return cfg.Projects[projectKey(project)].MCPServers[MCPServerName], file, nil
}
