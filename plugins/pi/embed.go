// Package pi embeds statewright's Pi extension (statewright.ts), which
// `statewright init pi` installs with its command line filled in.
package pi

import _ "embed"

// Source is the extension's TypeScript source, unconfigured.
//
//go:embed statewright.ts
var Source []byte
