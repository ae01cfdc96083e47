// Package pi is statewright's Pi (pi-coding-agent) adapter: the Pi
// extension (plugins/pi) speaks the [jsplugin] wire to `statewright hook pi
// <event>`; this package says how Pi names things.
//
// Pi has no MCP client: the extension registers statewright's control
// tools itself under their MCP names (statewright_get_state,
// statewright_transition, ...) and runs each through `statewright hook pi
// control`, which serves it from the same MCP server code in-process, for
// the extension's session.
package pi

import (
	"github.com/statewright-go/statewright/harness/jsplugin"
	"github.com/statewright-go/statewright/policy"
)

// ControlPrefix is the tool-name prefix of the control tools the extension
// registers.
const ControlPrefix = "statewright_"

// Adapter describes Pi to the plugin wire.
var Adapter = &jsplugin.Adapter{
	Harness:         policy.Pi,
	ControlPrefixes: []string{ControlPrefix},
	TransitionTool:  ControlPrefix + "transition",
	NoAsk: "Pi's tool_call hook cannot ask a person in print or JSON mode, so statewright denies the call; " +
		"a person can act with the statewright CLI (statewright approve, transition) instead.",
}
