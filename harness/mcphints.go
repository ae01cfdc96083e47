package harness

import (
	"path/filepath"
	"strings"

	"github.com/statewright-go/statewright/gateway"
	"github.com/statewright-go/statewright/policy"
)

// MCPHints returns the trusted annotations of an MCP tool the harness
// names mcp__SERVER__TOOL (docs/permissions.md, "MCP annotations"): the
// snapshot `statewright trust` recorded for the project's gateway
// configuration (.statewright/gateway.yaml, its current bytes trusted),
// looked up by TOOL, the gateway's namespaced name. Hooks never ask a
// server for its annotations. nil when the tool is no MCP tool, or the
// configuration is missing, not trusted, or records nothing for it.
func (h *Hook) MCPHints(project, tool string) *policy.ToolHints {
	rest, ok := strings.CutPrefix(tool, "mcp__")
	if !ok || project == "" {
		return nil
	}
	_, name, ok := strings.Cut(rest, "__")
	if !ok || name == "" {
		return nil
	}
	cfg := filepath.Join(project, gateway.ConfigFile)
	_, hash, err := gateway.LoadConfigFile(cfg)
	if err != nil {
		return nil
	}
	path, err := gateway.TrustPathFor(h.Env)
	if err != nil {
		return nil
	}
	hints, err := gateway.OpenTrust(path).Hints(cfg, hash)
	if err != nil {
		return nil
	}
	if hh, ok := hints[name]; ok {
		return &hh
	}
	return nil
}
