// Package pi is statewright's Pi (pi-coding-agent) adapter. The Pi
// extension (plugins/pi, installed into .pi/extensions/) speaks the plugin
// wire of harness/internal/wire to `statewright hook pi EVENT`; this
// package says how Pi names things and installs the extension.
//
// Pi has no MCP client: the extension registers statewright's control
// tools itself under their MCP names (statewright_get_state,
// statewright_transition, ...) and runs each through `statewright hook pi
// control`, for the extension's session. See docs/pi.md.
package pi

import (
	"context"
	"path/filepath"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/install"
	"github.com/statewright-go/statewright/harness/internal/wire"
	"github.com/statewright-go/statewright/plugins"
	"github.com/statewright-go/statewright/policy"
)

// ControlPrefix is the tool-name prefix of the control tools the extension
// registers.
const ControlPrefix = "statewright_"

// Adapter is Pi's harness.Adapter.
var Adapter harness.Adapter = &adapter{wire.Plugin{
	Harness:         policy.Pi,
	ControlPrefixes: []string{ControlPrefix},
	TransitionTool:  ControlPrefix + "transition",
	NoAsk: "Pi's tool_call hook cannot ask a person in print or JSON mode, so statewright denies the call; " +
		"a person can act with the statewright CLI (statewright approve, transition) instead.",
	ShellTool: "bash",
}}

type adapter struct{ wire.Plugin }

// Info implements harness.Adapter.
func (*adapter) Info() harness.Info {
	return harness.Info{
		Name:         "pi",
		Title:        "Pi",
		Events:       wire.PluginEvents.Args(),
		Doc:          "docs/pi.md",
		HookHelp:     wire.PluginHookHelp,
		InstallShort: "Install statewright's Pi extension (.pi/extensions/statewright.ts)",
		InstallLong: `init pi writes statewright's extension to .pi/extensions/statewright.ts, with this binary's
absolute path, the store's path and the store's id written into it. Pi loads project
extensions from there. The extension decides every tool call with "statewright hook pi"
(tool_call, answering {block, reason} on a deny and on anything it cannot read) and
registers statewright's control tools (statewright_get_state, statewright_transition, ...),
since Pi has no MCP client. --uninstall removes it. See docs/pi.md.`,
	}
}

// Extension is where init writes the extension, relative to the project.
var Extension = filepath.Join(".pi", "extensions", "statewright.ts")

// Install implements harness.Adapter: the extension.
func (*adapter) Install(p *install.Plan) error {
	src, err := plugins.Source("pi")
	if err != nil {
		return err
	}
	return wire.InstallPlugin(p, Extension, src)
}

// Inspect implements harness.Inspector: the extension in the project's
// .pi/extensions/, its gate run as the extension runs it, with a write of
// the extension itself as canary.
func (*adapter) Inspect(_ context.Context, q harness.InspectQuery) ([]*harness.Install, error) {
	src, err := plugins.Source("pi")
	if err != nil {
		return nil, err
	}
	file := filepath.Join(q.Project, Extension)
	in := wire.InspectPlugin(q.Project, file, src, "write", map[string]any{"path": file, "content": "x"})
	if in == nil {
		return nil, nil
	}
	return []*harness.Install{in}, nil
}
