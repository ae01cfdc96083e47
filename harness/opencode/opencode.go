// Package opencode is statewright's opencode adapter. The opencode plugin
// (plugins/opencode, installed into .opencode/plugins/) speaks the plugin
// wire of harness/internal/wire to `statewright hook opencode EVENT`; this
// package says how opencode names things and installs the plugin and the
// MCP server.
//
// opencode names an MCP server's tools "<server>_<tool>", so statewright's
// control tools, served by `statewright mcp --harness opencode` under the
// server name "statewright", reach the plugin as
// "statewright_statewright_transition" and so on. The plugin stamps the
// session into their arguments before they run. See docs/opencode.md.
package opencode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/install"
	"github.com/statewright-go/statewright/harness/internal/wire"
	"github.com/statewright-go/statewright/plugins"
	"github.com/statewright-go/statewright/policy"
)

// MCPServerName is the key of statewright's MCP server in opencode.json.
const MCPServerName = "statewright"

// ControlPrefix is the tool-name prefix of statewright's control tools as
// opencode names them.
const ControlPrefix = MCPServerName + "_statewright_"

// Adapter is opencode's harness.Adapter.
var Adapter harness.Adapter = &adapter{wire.Plugin{
	Harness:         policy.OpenCode,
	ControlPrefixes: []string{ControlPrefix},
	TransitionTool:  ControlPrefix + "transition",
	NoAsk: "opencode's plugin hooks cannot ask a person, so statewright denies the call; " +
		"a person can act with the statewright CLI (statewright approve, transition) instead.",
	ShellTool: "bash",
}}

type adapter struct{ wire.Plugin }

// Info implements harness.Adapter.
func (*adapter) Info() harness.Info {
	return harness.Info{
		Name:         "opencode",
		Title:        "opencode",
		Events:       wire.PluginEvents.Args(),
		Doc:          "docs/opencode.md",
		HookHelp:     wire.PluginHookHelp,
		InstallShort: "Install statewright's opencode plugin (.opencode/plugins/) and MCP server (opencode.json)",
		InstallLong: `init opencode writes statewright's plugin to .opencode/plugins/statewright.ts, with this
binary's absolute path, the store's path and the store's id written into it, and registers
the statewright MCP server (control tools statewright_statewright_*) in the project's
opencode.json. It merges: the user's other settings and servers are kept as they are.
Running it again updates statewright's entries in place; --uninstall removes exactly them.

The plugin decides every tool call with "statewright hook opencode" and blocks the call
(by throwing, opencode's convention) on a deny and on anything it cannot read: a missing
binary, a crash, a timeout, garbage. See docs/opencode.md.`,
		InstallFlags: func(f *pflag.FlagSet, o *install.Options) { install.AddMCPFlag(f, o) },
	}
}

// Plugin and Config are where init writes, relative to the project.
var (
	Plugin = filepath.Join(".opencode", "plugins", "statewright.ts")
	Config = "opencode.json"
)

// Install implements harness.Adapter: the plugin, and the MCP server in
// opencode.json.
func (*adapter) Install(p *install.Plan) error {
	src, err := plugins.Source("opencode")
	if err != nil {
		return err
	}
	if err := wire.InstallPlugin(p, Plugin, src); err != nil {
		return err
	}
	return p.EditObject(Config, func(cfg *install.Object) error {
		if p.Uninstall || p.NoMCP {
			removed, err := removeMCP(cfg)
			if removed && p.Uninstall {
				p.Note("removed the statewright MCP server")
			}
			return err
		}
		argv := []string{p.Binary, "mcp", "--harness", "opencode", "--store", p.Store, "--store-id", p.StoreID, "--project-dir", p.Project}
		if err := addMCP(cfg, argv); err != nil {
			return err
		}
		p.Note("MCP server %s on the same store", MCPServerName)
		return nil
	})
}

// server is statewright's entry under "mcp" in opencode.json.
type server struct {
	Type    string   `json:"type"`
	Command []string `json:"command"`
	Enabled bool     `json:"enabled"`
}

func isOurServer(raw json.RawMessage) bool {
	var s server
	if json.Unmarshal(raw, &s) != nil || len(s.Command) < 2 {
		return false
	}
	return strings.HasPrefix(filepath.Base(s.Command[0]), "statewright") || s.Command[1] == "mcp"
}

func addMCP(cfg *install.Object, argv []string) error {
	if _, ok := cfg.Get("$schema"); !ok && cfg.Empty() {
		cfg.Set("$schema", json.RawMessage(`"https://opencode.ai/config.json"`))
	}
	return cfg.PutServer("mcp", MCPServerName, server{Type: "local", Command: argv, Enabled: true}, isOurServer)
}

// removeMCP removes statewright's server, only if it runs statewright.
func removeMCP(cfg *install.Object) (bool, error) {
	removed, err := cfg.DeleteServer("mcp", MCPServerName, isOurServer)
	if keys := cfg.Keys(); removed && len(keys) == 1 && keys[0] == "$schema" {
		cfg.Del("$schema")
	}
	return removed, err
}

// Inspect implements harness.Inspector: the plugin in the project's
// .opencode/plugins/, its gate run as the plugin runs it, with a write of
// opencode.json as canary, and the MCP server in opencode.json.
func (*adapter) Inspect(_ context.Context, q harness.InspectQuery) ([]*harness.Install, error) {
	src, err := plugins.Source("opencode")
	if err != nil {
		return nil, err
	}
	in := wire.InspectPlugin(q.Project, filepath.Join(q.Project, Plugin), src, "write",
		map[string]any{"filePath": filepath.Join(q.Project, Config), "content": "{}"})
	if in == nil {
		return nil, nil
	}
	in.Findings = append(in.Findings, mcpFinding(q.Project, install.HookFlags(in.Hook)))
	return []*harness.Install{in}, nil
}

// mcpFinding checks statewright's MCP server in opencode.json: there, and
// on the plugin's store.
func mcpFinding(project string, flags map[string]string) harness.Finding {
	b, err := os.ReadFile(filepath.Join(project, Config))
	if err != nil {
		return harness.Warned("mcp", "no "+Config+": the agent has no statewright control tools (transitions only through the CLI)")
	}
	var cfg struct {
		MCP map[string]server `json:"mcp"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return harness.Failed("mcp", Config+": "+err.Error())
	}
	s, ok := cfg.MCP[MCPServerName]
	if !ok {
		return harness.Warned("mcp", "no "+MCPServerName+" server in "+Config+": the agent has no statewright control tools")
	}
	got := install.HookFlags(s.Command)
	if got["store"] != flags["store"] || got["store-id"] != flags["store-id"] {
		return harness.Failed("mcp", fmt.Sprintf("the MCP server in %s uses store %s (id %s), the plugin %s (id %s): they would disagree",
			Config, got["store"], got["store-id"], flags["store"], flags["store-id"]))
	}
	if !s.Enabled {
		return harness.Warned("mcp", "the "+MCPServerName+" server in "+Config+" is disabled")
	}
	return harness.Passed("mcp", "server "+MCPServerName+" in "+Config+" on the same store")
}
