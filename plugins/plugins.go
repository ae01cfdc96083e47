// Package plugins holds the files statewright installs into harnesses that
// load a plugin of their own: the opencode plugin and the Pi extension
// (TypeScript). Both share the code that runs the statewright binary
// (shared/run.ts), which Source writes into each in place of its
// /*STATEWRIGHT_COMMON*/ marker. plugins/claude-code is the Claude Code
// marketplace plugin, installed by Claude Code itself.
package plugins

import (
	"bytes"
	"embed"
	"fmt"
)

//go:embed shared/run.ts opencode/statewright.ts pi/statewright.ts
var files embed.FS

var commonMarker = []byte("/*STATEWRIGHT_COMMON*/\n")

// Source returns the plugin of the named harness ("opencode", "pi") with
// the shared code in place, its command line not yet filled in.
func Source(harness string) ([]byte, error) {
	src, err := files.ReadFile(harness + "/statewright.ts")
	if err != nil {
		return nil, fmt.Errorf("no plugin for %s", harness)
	}
	common, err := files.ReadFile("shared/run.ts")
	if err != nil {
		return nil, err
	}
	if bytes.Count(src, commonMarker) != 1 {
		return nil, fmt.Errorf("the %s plugin has no single %s marker", harness, bytes.TrimSpace(commonMarker))
	}
	return bytes.Replace(src, commonMarker, common, 1), nil
}
