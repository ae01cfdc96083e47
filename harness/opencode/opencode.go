// Package opencode is statewright's opencode adapter: the opencode plugin
// (plugins/opencode) speaks the [jsplugin] wire to `statewright hook
// opencode <event>`; this package says how opencode names things.
//
// opencode names an MCP server's tools "<server>_<tool>", so statewright's
// control tools, served by `statewright mcp --harness opencode` under the
// server name "statewright", reach the plugin as
// "statewright_statewright_transition" and so on. The plugin stamps the
// session into their arguments before they run.
package opencode

import (
	"github.com/statewright-go/statewright/harness/jsplugin"
	"github.com/statewright-go/statewright/policy"
)

// MCPServerName is the key of statewright's MCP server in opencode.json.
const MCPServerName = "statewright"

// ControlPrefix is the tool-name prefix of statewright's control tools as
// opencode names them.
const ControlPrefix = MCPServerName + "_statewright_"

// Adapter describes opencode to the plugin wire.
var Adapter = &jsplugin.Adapter{
	Harness:         policy.OpenCode,
	ControlPrefixes: []string{ControlPrefix},
	TransitionTool:  ControlPrefix + "transition",
	NoAsk: "opencode's plugin hooks cannot ask a person, so statewright denies the call; " +
		"a person can act with the statewright CLI (statewright approve, transition) instead.",
}
