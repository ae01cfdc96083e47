package policy

import (
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// builtinProtected are the paths self-protection guards in every project
// (DESIGN.md pipeline step 1), as doublestar patterns over lower-cased paths.
// They are matched case-insensitively because macOS and Windows file
// systems are.
var builtinProtected = []string{
	"**/.statewright", "**/.statewright/**",
	"**/.config/statewright", "**/.config/statewright/**",
	"**/.claude/settings*.json", "**/.claude/hooks/**", "**/.claude/plugins/**",
	"**/.mcp.json",
	"**/.codex", "**/.codex/**",
	"**/.cursor/hooks.json", "**/.cursor/hooks/**", "**/.cursor/mcp.json",
	"**/.opencode/plugin/**", "**/.opencode/plugins/**", "**/.config/opencode/**",
	"**/opencode.json", "**/opencode.jsonc",
	"**/.pi/extensions/**", "**/.pi/agent/**", "**/.pi/settings.json",
	"**/.bashrc", "**/.bash_profile", "**/.bash_login", "**/.bash_logout", "**/.profile",
	"**/.zshrc", "**/.zshenv", "**/.zprofile", "**/.zlogin", "**/.config/fish/**", "**/.envrc",
	"**/.git/config", "**/.git/hooks", "**/.git/hooks/**",
}

// builtinMarkers are lower-case substrings that mark a protected path inside
// shell text that cannot be resolved statically (a dynamic redirect target,
// the arguments of a command that writes or runs code).
var builtinMarkers = []string{
	".statewright", ".config/statewright", "operator-token", "claude_env_file",
	".claude/settings", ".claude/hooks", ".claude/plugins", ".mcp.json",
	".codex/", ".cursor/hooks", ".cursor/mcp", ".opencode/plugin", "opencode/plugin", "opencode.json",
	".pi/agent", ".pi/extensions", ".pi/settings",
	".bashrc", ".bash_profile", ".bash_login", ".zshrc", ".zshenv", ".zprofile", ".zlogin",
	".profile", "config/fish", ".envrc", ".git/config", ".git/hooks",
}

// cleanPath cleans p lexically ("" stays "").
func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return path.Clean(p)
}

func baseName(p string) string { return path.Base(p) }

// resolvePath returns the path a call's target refers to: the runtime's
// resolved path when it supplied one, else p cleaned and joined to cwd.
func resolvePath(call *ToolCall, p string) string {
	if r, ok := call.ResolvedPaths[p]; ok && r != "" {
		return cleanPath(r)
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || call.Cwd == "" {
		return cleanPath(p)
	}
	return path.Join(call.Cwd, p)
}

// relPath returns abs relative to the project root (ProjectDir, else Cwd)
// when it lies inside it; otherwise abs unchanged.
func relPath(call *ToolCall, abs string) string {
	root := call.ProjectDir
	if root == "" {
		root = call.Cwd
	}
	if root == "" || !strings.HasPrefix(abs, "/") {
		return strings.TrimPrefix(abs, "./")
	}
	root = cleanPath(root)
	if abs == root {
		return "."
	}
	if root == "/" {
		return abs[1:]
	}
	if strings.HasPrefix(abs, root+"/") {
		return abs[len(root)+1:]
	}
	return abs
}

// isProtected reports whether a resolved path is one self-protection guards.
func (l *Law) isProtected(p string) bool {
	lp := strings.ToLower(p)
	m := strings.TrimPrefix(lp, "/")
	for _, pat := range builtinProtected {
		if ok, _ := doublestar.Match(pat, m); ok {
			return true
		}
	}
	for _, pp := range l.protected {
		if lp == pp || strings.HasPrefix(lp, strings.TrimSuffix(pp, "/")+"/") {
			return true
		}
		// A relative protected path protects that path below any directory.
		if !strings.HasPrefix(pp, "/") && (strings.HasSuffix(lp, "/"+pp) || strings.Contains(lp, "/"+pp+"/")) {
			return true
		}
	}
	return false
}

// hasMarker reports whether shell text names a protected path.
func (l *Law) hasMarker(s string) bool {
	ls := strings.ToLower(s)
	for _, m := range l.markers {
		if strings.Contains(ls, m) {
			return true
		}
	}
	return false
}

// isSecret reports whether a path or text names an operator credential,
// which no tool may read.
func isSecret(s string) bool {
	return containsFold(s, "operator-token") || containsFold(s, ".config/statewright")
}

// containsFold is an allocation-free ASCII case-insensitive strings.Contains
// for a lower-case needle.
func containsFold(s, lowerNeedle string) bool {
	n := len(lowerNeedle)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lowerNeedle[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

// matchScope matches a path against compiled scope globs: relative patterns
// against the project-relative path, absolute ones against the absolute path.
func matchScope(globs []pathGlob, abs, rel string) bool {
	for _, g := range globs {
		target := rel
		if g.abs {
			target = abs
		}
		if ok, _ := doublestar.Match(g.pattern, target); ok {
			return true
		}
	}
	return false
}
