// Package adapters lists the harnesses statewright supports. Adding a
// harness is one package implementing harness.Adapter and one line here:
// the hook command, serve's hook endpoint, init and the docs' tables all
// read this list.
package adapters

import (
	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/claudecode"
	"github.com/statewright-go/statewright/harness/codex"
	"github.com/statewright-go/statewright/harness/cursor"
	"github.com/statewright-go/statewright/harness/opencode"
	"github.com/statewright-go/statewright/harness/pi"
)

// All are the harnesses, in the order help and docs list them.
var All = []harness.Adapter{
	claudecode.Adapter,
	codex.Adapter,
	cursor.Adapter,
	opencode.Adapter,
	pi.Adapter,
}

// Find returns the harness named name ("claude-code"), or nil.
func Find(name string) harness.Adapter {
	for _, a := range All {
		if a.Info().Name == name {
			return a
		}
	}
	return nil
}

// Names returns the harnesses' names.
func Names() []string {
	out := make([]string, len(All))
	for i, a := range All {
		out[i] = a.Info().Name
	}
	return out
}
