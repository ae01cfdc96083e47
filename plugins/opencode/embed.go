// Package opencode embeds statewright's opencode plugin (statewright.ts),
// which `statewright init opencode` installs with its command line filled
// in.
package opencode

import _ "embed"

// Source is the plugin's TypeScript source, unconfigured.
//
//go:embed statewright.ts
var Source []byte
