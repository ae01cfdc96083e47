package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/install"
	"github.com/statewright-go/statewright/harness/internal/wire"
)

// MinVersion is the oldest Claude Code statewright supports: the version
// the end-to-end tests run (hook input with tool_use_id and
// permission_mode, JSON denies, updatedInput on MCP calls,
// PostToolUseFailure, SessionEnd).
const MinVersion = "2.1.332"

// ManagedSettings is Claude Code's managed policy settings file on Linux:
// it wins over every other scope.
var ManagedSettings = "/etc/claude-code/managed-settings.json"

// configDir is Claude Code's configuration directory: $CLAUDE_CONFIG_DIR,
// else ~/.claude ("" without a home).
func configDir() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".claude")
}

// settingsFile is one of Claude Code's settings files.
type settingsFile struct {
	scope, path string
}

// settingsFiles are the settings files Claude Code reads for a session in
// project, highest precedence first (managed, local project, shared
// project, user), as Claude Code merges them.
func settingsFiles(project string) []settingsFile {
	files := []settingsFile{
		{"managed", ManagedSettings},
		{"project", filepath.Join(project, LocalSettings)},
		{"project", filepath.Join(project, Settings)},
	}
	if d := configDir(); d != "" {
		files = append(files, settingsFile{"user", filepath.Join(d, "settings.json")})
	}
	return files
}

// Inspect implements harness.Inspector: statewright's hooks in every
// settings scope Claude Code reads for the project, and the marketplace
// plugin's pin; Claude Code's version, the permission mode a session
// starts in, and the MCP server.
func (adapter) Inspect(ctx context.Context, q harness.InspectQuery) ([]*harness.Install, error) {
	var (
		installs []*harness.Install
		common   []harness.Finding
		local    *harness.Install
	)
	mode, modeFrom := "", ""
	for _, sf := range settingsFiles(q.Project) {
		b, err := os.ReadFile(sf.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			common = append(common, harness.Failed("settings", err.Error()))
			continue
		}
		obj, err := install.ParseObject(b)
		if err != nil {
			common = append(common, harness.Failed("settings", fmt.Sprintf("%s is not a JSON object: %v (Claude Code ignores it)", sf.path, err)))
			continue
		}
		if raw, ok := obj.Get("disableAllHooks"); ok && string(raw) == "true" {
			common = append(common, harness.Failed("hooks", sf.path+" sets disableAllHooks: no hook runs, nothing is enforced"))
		}
		if mode == "" {
			if raw, ok := obj.Get("permissions"); ok {
				var p struct {
					DefaultMode string `json:"defaultMode"`
				}
				json.Unmarshal(raw, &p)
				mode, modeFrom = p.DefaultMode, sf.path
			}
		}
		in, err := settingsInstall(q.Project, sf, obj)
		if err != nil {
			common = append(common, harness.Failed("settings", fmt.Sprintf("%s: %v", sf.path, err)))
		}
		if in == nil {
			continue
		}
		if sf.path == filepath.Join(q.Project, LocalSettings) {
			local = in
		}
		installs = append(installs, in)
	}
	if in := pluginInstall(q.Project); in != nil {
		installs = append(installs, in)
	}
	if len(installs) == 0 {
		if len(common) > 0 {
			// Broken settings are worth saying even with nothing installed.
			installs = append(installs, &harness.Install{Scope: "settings", Findings: common})
		}
		return installs, nil
	}
	if len(installs) > 1 {
		var where []string
		for _, in := range installs {
			where = append(where, in.File)
		}
		common = append(common, harness.Warned("hooks", "statewright is registered more than once ("+strings.Join(where, ", ")+
			"): every one runs, and each decides every call"))
	}
	version, f := claudeVersion(ctx, q.Binary)
	common = append(common, f)
	common = append(common, permissionFinding(mode, modeFrom, version))
	first := installs[0]
	first.Findings = append(common, first.Findings...)
	if local != nil {
		local.Findings = append(local.Findings, checkMCP(q.Project, local.Hook)...)
	}
	return installs, nil
}

// settingsInstall reads statewright's hooks in one settings file: nil when
// it has none.
func settingsInstall(project string, sf settingsFile, obj *install.Object) (*harness.Install, error) {
	raw, ok := obj.Get("hooks")
	if !ok {
		return nil, nil
	}
	var hooks map[string][]struct {
		Hooks []struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Timeout int    `json:"timeout"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(raw, &hooks); err != nil {
		return nil, fmt.Errorf("\"hooks\" does not have Claude Code's shape: %w", err)
	}
	in := &harness.Install{Scope: sf.scope, File: sf.path}
	seen := map[Event]bool{}
	for name, groups := range hooks {
		ev, err := ParseEvent(name)
		if err != nil {
			continue
		}
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h.Type != "command" || !install.IsHookOf("claude-code", h.Command) {
					continue
				}
				seen[ev] = true
				if ev != PreToolUse || in.Gate != nil {
					continue
				}
				in.Hook = install.SplitCommand(h.Command)
				in.Timeout = time.Duration(h.Timeout) * time.Second
				if h.Timeout == 0 {
					in.Timeout = 60 * time.Second // Claude Code's default
				}
				in.FailClosed = install.WrapsFailClosed(h.Command)
				if !in.FailClosed {
					in.FailOpen = "PreToolUse has no `|| exit 2` wrapper: a crash or a missing binary lets calls through"
				}
				in.Gate = canaryGate(project, h.Command, "CLAUDE_PROJECT_DIR="+project)
			}
		}
	}
	if len(seen) == 0 {
		return nil, nil
	}
	harness.SetEvents(in, Events, seen)
	return in, nil
}

// canaryGate is the PreToolUse command as Claude Code runs it (sh -c, in
// the project, with env), and the canary: an Edit of the project's
// .claude/settings.json.
func canaryGate(project, command string, env ...string) *harness.Gate {
	input, _ := json.Marshal(map[string]any{
		"session_id": "statewright-doctor", "transcript_path": "", "cwd": project, "permission_mode": "default",
		"hook_event_name": "PreToolUse", "tool_name": "Edit",
		"tool_input":  map[string]any{"file_path": filepath.Join(project, Settings), "old_string": "a", "new_string": "b"},
		"tool_use_id": fmt.Sprintf("doctor-canary-%d", time.Now().UnixNano()),
	})
	return &harness.Gate{Shell: command, Env: env, Input: input, Blocked: wire.HookBlocked}
}

// pluginInstall finds the marketplace plugin's pin and, in Claude Code's
// plugin registry, the installed plugin whose hooks read it: nil when
// there is no pin.
func pluginInstall(project string) *harness.Install {
	pin := PluginPin()
	b, err := os.ReadFile(pin)
	if pin == "" || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	in := &harness.Install{Scope: "plugin", File: pin, FailClosed: true}
	if err != nil {
		in.Findings = append(in.Findings, harness.Failed("plugin", fmt.Sprintf("the pin %s cannot be read: %v (every hook of the plugin fails, and PreToolUse denies)", pin, err)))
		return in
	}
	hook, args := "", []string(nil)
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "hook="):
			hook = strings.TrimPrefix(l, "hook=")
		case strings.HasPrefix(l, "arg="):
			args = append(args, strings.TrimPrefix(l, "arg="))
		}
	}
	in.Hook = append([]string{hook, "hook", "claude-code", PreToolUse.Arg()}, args...)
	in.Timeout = 10 * time.Second // plugins/claude-code/hooks/hooks.json
	for _, ev := range Events {
		in.Events = append(in.Events, string(ev))
	}
	root, where := installedPlugin()
	if root == "" {
		in.Findings = append(in.Findings, harness.Failed("plugin", "the pin exists, but Claude Code's plugin registry ("+where+
			") lists no installed statewright plugin: no session runs its hooks (install it with /plugin, see plugins/claude-code/README.md)"))
		// The canary still runs what the plugin's wrapper would run.
		in.Gate = canaryGate(project, install.Shq(hook)+" hook claude-code pre-tool-use "+shqAll(args))
		return in
	}
	hooks, err := os.ReadFile(filepath.Join(root, "hooks", "hooks.json"))
	var cfg struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err == nil {
		err = json.Unmarshal(hooks, &cfg)
	}
	if err != nil || len(cfg.Hooks[string(PreToolUse)]) == 0 || len(cfg.Hooks[string(PreToolUse)][0].Hooks) == 0 {
		in.Findings = append(in.Findings, harness.Failed("plugin", fmt.Sprintf("the installed plugin %s has no PreToolUse hook in hooks/hooks.json (%v)", root, err)))
		return in
	}
	h := cfg.Hooks[string(PreToolUse)][0].Hooks[0]
	if h.Timeout > 0 {
		in.Timeout = time.Duration(h.Timeout) * time.Second
	}
	in.FailClosed = install.WrapsFailClosed(h.Command)
	if !in.FailClosed {
		in.FailOpen = "the plugin's PreToolUse has no `|| exit 2` wrapper"
	}
	in.Findings = append(in.Findings, harness.Passed("plugin", "installed at "+root+"; its hooks run the binary and flags pinned in "+pin+
		", for every Claude Code session of this user"))
	in.Gate = canaryGate(project, h.Command, "CLAUDE_PROJECT_DIR="+project, "CLAUDE_PLUGIN_ROOT="+root)
	return in
}

func shqAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = install.Shq(a)
	}
	return strings.Join(q, " ")
}

// installedPlugin returns the install path of statewright's plugin in
// Claude Code's plugin registry (plugins/installed_plugins.json of its
// configuration directory): a plugin whose bin/statewright-hook reads the
// pin. where names the registry.
func installedPlugin() (root, where string) {
	dir := configDir()
	if dir == "" {
		return "", "no configuration directory"
	}
	where = filepath.Join(dir, "plugins", "installed_plugins.json")
	b, err := os.ReadFile(where)
	if err != nil {
		return "", where
	}
	var reg struct {
		Plugins map[string]json.RawMessage `json:"plugins"`
	}
	if json.Unmarshal(b, &reg) != nil {
		return "", where
	}
	for _, raw := range reg.Plugins {
		// Version 2 lists installs per plugin; version 1 one object.
		var list []struct {
			InstallPath string `json:"installPath"`
		}
		if json.Unmarshal(raw, &list) != nil {
			var one struct {
				InstallPath string `json:"installPath"`
			}
			json.Unmarshal(raw, &one)
			list = append(list, one)
		}
		for _, e := range list {
			w, err := os.ReadFile(filepath.Join(e.InstallPath, "bin", "statewright-hook"))
			if err == nil && bytes.Contains(w, []byte(PluginPinName)) {
				return e.InstallPath, where
			}
		}
	}
	return "", where
}

// claudeVersion runs `claude --version` (binary, else claude on $PATH) and
// checks it against MinVersion.
func claudeVersion(ctx context.Context, binary string) (string, harness.Finding) {
	if binary == "" {
		p, err := exec.LookPath("claude")
		if err != nil {
			return "", harness.Warned("claude", "claude is not on $PATH; cannot check its version (need >= "+MinVersion+"; --claude PATH)")
		}
		binary = p
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--version")
	cmd.Env = append(os.Environ(), "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	out, err := cmd.Output()
	if err != nil {
		return "", harness.Failed("claude", fmt.Sprintf("%s --version: %v", binary, err))
	}
	ver := strings.Fields(string(out))
	if len(ver) == 0 {
		return "", harness.Failed("claude", binary+" --version printed nothing")
	}
	if CompareVersions(ver[0], MinVersion) < 0 {
		return ver[0], harness.Failed("claude", fmt.Sprintf("Claude Code %s is older than the supported minimum %s", ver[0], MinVersion))
	}
	return ver[0], harness.Passed("claude", fmt.Sprintf("Claude Code %s (minimum %s)", ver[0], MinVersion))
}

// CompareVersions compares dotted numeric versions ("2.1.332").
func CompareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(strings.TrimFunc(pa[i], func(r rune) bool { return r < '0' || r > '9' }))
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// permissionFinding says which permission mode a session starts in and
// what statewright's asks become there. mode is permissions.defaultMode
// from the first settings file that sets it (from), "" when none does:
// then Claude Code 2.1.332 starts in "default" (what it reports to the
// hooks offline, TestDoctorClaudeCodePermissionMode), unless its gated
// auto-mode default is on for the account or host, which nothing on disk
// shows; in "auto" a classifier, not a person, answers the prompts.
func permissionFinding(mode, from, version string) harness.Finding {
	if mode == "" {
		v := version
		if v == "" {
			v = "(version unknown)"
		}
		return harness.Warned("permission", "no settings file sets permissions.defaultMode: Claude Code "+v+" starts in mode default, "+
			"where a person answers prompts and may grant what statewright asks, unless Claude Code's gated auto-mode default is on "+
			"for this account or host (doctor cannot see that): in auto nobody answers, and statewright's asks become denies. "+
			"Set permissions.defaultMode in "+LocalSettings+" to know")
	}
	source := "permissions.defaultMode in " + from
	if AskGrants(mode) {
		return harness.Passed("permission", "sessions start in mode "+mode+" ("+source+"): a person answers Claude Code's prompts, so a human-only call statewright asks about may be granted there")
	}
	return harness.Passed("permission", "sessions start in mode "+mode+" ("+source+"): nobody answers prompts, so statewright's asks become denies "+
		"(human-only calls: approve, pause, deactivate go through the statewright CLI); --permission-mode at launch overrides it")
}

// checkMCP checks the MCP server of a project install: in the project's
// local scope (or the older .mcp.json), on the same store as the hooks.
func checkMCP(project string, hook []string) []harness.Finding {
	flags := install.HookFlags(hook)
	storePath, storeID := flags["store"], flags["store-id"]
	var srv struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	var out []harness.Finding
	raw, where, err := LocalMCPServer(project)
	switch {
	case err != nil:
		return []harness.Finding{harness.Failed("mcp", err.Error())}
	case raw != nil:
		if err := json.Unmarshal(raw, &srv); err != nil {
			return []harness.Finding{harness.Failed("mcp", fmt.Sprintf("%s: the %q server: %v", where, MCPServerName, err))}
		}
		where = "the local scope of " + where
	default:
		// The older form: the server in the project's shared .mcp.json.
		b, err := os.ReadFile(filepath.Join(project, MCPConfig))
		if err != nil {
			return []harness.Finding{harness.Warned("mcp", fmt.Sprintf("no %q server in the project's local scope (%s) or .mcp.json: the agent has no statewright control tools (transitions only through the CLI)", MCPServerName, where))}
		}
		var cfg struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			return []harness.Finding{harness.Failed("mcp", ".mcp.json: "+err.Error())}
		}
		raw, ok := cfg.MCPServers[MCPServerName]
		if !ok {
			return []harness.Finding{harness.Warned("mcp", fmt.Sprintf("no %q server in the project's local scope (%s) or .mcp.json: the agent has no statewright control tools", MCPServerName, where))}
		}
		if err := json.Unmarshal(raw, &srv); err != nil {
			return []harness.Finding{harness.Failed("mcp", fmt.Sprintf(".mcp.json: the %q server: %v", MCPServerName, err))}
		}
		where = ".mcp.json"
		out = append(out, harness.Warned("mcp", fmt.Sprintf("the %q server is in .mcp.json, which the repository shares (an older init): run `statewright init claude-code` again to move it into the local scope", MCPServerName)))
		if !mcpApproved(project) {
			out = append(out, harness.Warned("mcp", fmt.Sprintf("the %q server is not in enabledMcpjsonServers: Claude Code asks before starting it", MCPServerName)))
		}
	}
	var gotStore, gotID string
	for i := 0; i+1 < len(srv.Args); i++ {
		switch srv.Args[i] {
		case "--store":
			gotStore = srv.Args[i+1]
		case "--store-id":
			gotID = srv.Args[i+1]
		}
	}
	if gotStore != storePath || gotID != storeID {
		return append(out, harness.Failed("mcp", fmt.Sprintf("the MCP server in %s uses store %s (id %s), the hooks %s (id %s): they would disagree", where, gotStore, gotID, storePath, storeID)))
	}
	if len(hook) > 0 && !install.SameInstall(srv.Command, hook[0]) {
		out = append(out, harness.Warned("mcp", fmt.Sprintf("the MCP server runs %s, the hooks %s", srv.Command, hook[0])))
	}
	return append(out, harness.Passed("mcp", fmt.Sprintf("server %q on the same store (%s)", MCPServerName, where)))
}

// mcpApproved reports whether the project's shared settings approve the
// .mcp.json server.
func mcpApproved(project string) bool {
	b, err := os.ReadFile(filepath.Join(project, Settings))
	if err != nil {
		return false
	}
	var s struct {
		Enabled []string `json:"enabledMcpjsonServers"`
		All     bool     `json:"enableAllProjectMcpServers"`
	}
	json.Unmarshal(b, &s)
	for _, n := range s.Enabled {
		if n == MCPServerName {
			return true
		}
	}
	return s.All
}
