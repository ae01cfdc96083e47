//go:build windows

package runtime

import (
	"strings"

	"github.com/statewright-go/statewright/policy"
)

// nativePath turns the policy's slash form of a Windows path
// (/c:/users/me, /unc:/server/share/x) back into the path Windows takes
// (c:\users\me, \\server\share\x) for the resolver's file system calls.
func nativePath(p string) string {
	switch {
	case strings.HasPrefix(p, "/unc:/"):
		return `\\` + strings.ReplaceAll(p[len("/unc:/"):], "/", `\`)
	case len(p) >= 3 && p[0] == '/' && p[2] == ':':
		return p[1:3] + `\` + strings.ReplaceAll(strings.TrimPrefix(p[3:], "/"), "/", `\`)
	}
	return strings.ReplaceAll(p, "/", `\`)
}

// slashTarget is a symbolic link's target in the policy's slash form: an
// absolute one normalised (an error when it has no such form), a relative
// one with slashes.
func slashTarget(t string) (string, error) {
	if len(t) >= 2 && t[1] == ':' || strings.HasPrefix(t, `\\`) {
		return policy.SlashWindowsPath(t)
	}
	return strings.ReplaceAll(t, `\`, "/"), nil
}
