package doctorcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/agent/tools"
	"github.com/statewright-go/statewright/gateway"
	"github.com/statewright-go/statewright/internal/cli/sandboxcmd"
	"github.com/statewright-go/statewright/sandbox"
)

// checkAgentSandbox reports whether `statewright agent` can run the
// model's commands under bubblewrap here.
func checkAgentSandbox(ctx context.Context, r *doctorReport) {
	sb := tools.DetectSandbox(ctx)
	if sb.Bwrap != "" {
		r.ok("agent", "statewright agent runs commands under bubblewrap (%s): read-only filesystem outside the workspace, no network", sb.Bwrap)
		return
	}
	r.warn("agent", "statewright agent runs commands WITHOUT a sandbox: %s; file tools stay confined to the workspace, but run_command can reach anything your user can", sb.Why)
}

// checkHookSandbox reports whether the hooks run the agent's shell
// commands under the phase's OS sandbox (--sandbox, --require-sandbox) and
// whether one runs here; without one it says plainly that same-user
// secrecy cannot hold (docs/threat-model.md).
func checkHookSandbox(ctx context.Context, r *doctorReport, harnessName string, flags map[string]string) {
	a := sandbox.Probe(ctx)
	_, require := flags["require-sandbox"]
	_, on := flags["sandbox"]
	level, msg := hookSandboxFinding(a, harnessName, require, on)
	if level == "ok" {
		r.ok("sandbox", "%s", msg)
	} else {
		r.warn("sandbox", "%s", msg)
	}
	if a.OK() && (require || on) && unroutedShell[harnessName] == "" {
		if why := sandbox.FastPathRefusal(); why != "" {
			r.warn("sandbox fast path", "%s (docs/sandbox.md, \"The fast path\")", why)
		}
	}
}

// unroutedShell names the harnesses whose hooks cannot route a shell
// command through the sandbox's launcher, and why (docs/sandbox.md, "Per
// harness"): --sandbox changes nothing for them, --require-sandbox denies
// every shell call.
var unroutedShell = map[string]string{
	"cursor": "Cursor's hooks cannot rewrite a command, so none runs under the OS sandbox",
}

// hookSandboxFinding is checkHookSandbox's verdict ("ok" or "warn") for
// the sandbox a, the harness and its install flags.
func hookSandboxFinding(a sandbox.Availability, harnessName string, require, on bool) (level, msg string) {
	unrouted := unroutedShell[harnessName]
	switch {
	case !a.OK() && require:
		return "ok", fmt.Sprintf("no OS sandbox here (%s), and --require-sandbox denies every shell call; %s", a.Why, "same-user secrecy would be impossible without it")
	case !a.OK():
		return "warn", fmt.Sprintf("%s (%s)", sandboxcmd.NoSandboxWarning, a.Why)
	case unrouted != "" && require:
		return "ok", fmt.Sprintf("--require-sandbox denies every shell call: %s (docs/sandbox.md)", unrouted)
	case unrouted != "" && on:
		return "warn", fmt.Sprintf("--sandbox changes nothing here: %s; shell commands run unsandboxed, only the static law holds, and code the agent runs can read the operator token and the store; "+
			"install with --require-sandbox to deny shell calls instead (docs/sandbox.md, docs/threat-model.md)", unrouted)
	case unrouted != "":
		return "warn", fmt.Sprintf("an OS sandbox is available (%s) but %s: only the static law holds, and code the agent runs can read the operator token and the store; "+
			"install with --require-sandbox to deny shell calls instead (docs/sandbox.md, docs/threat-model.md)", a.String(), unrouted)
	case require || on:
		return "ok", fmt.Sprintf("every Bash call runs under the phase's OS sandbox (%s): secrets and the store hidden, the law read-only, writes only where the phase allows (docs/sandbox.md)", a.String())
	}
	return "warn", fmt.Sprintf("an OS sandbox is available (%s) but the hooks do not use it: run `statewright init %s --sandbox` (or --require-sandbox); until then code the agent runs can read the operator token and the store (docs/threat-model.md)", a.String(), harnessName)
}

// gatewayServer is a server of the project's .mcp.json that runs
// statewright's gateway (`statewright mcp` with upstream servers).
type gatewayServer struct {
	name string
	args []string
}

// gatewayServers lists the project's .mcp.json servers that run `statewright
// mcp` with upstreams (--upstream, or the project's trusted
// .statewright/gateway.yaml, unless --no-gateway-config).
func gatewayServers(project string) []gatewayServer {
	b, err := os.ReadFile(filepath.Join(project, ".mcp.json"))
	if err != nil {
		return nil
	}
	var cfg struct {
		MCPServers map[string]struct {
			Args []string `json:"args"`
		} `json:"mcpServers"`
	}
	if json.Unmarshal(b, &cfg) != nil {
		return nil
	}
	_, statErr := os.Stat(filepath.Join(project, gateway.ConfigFile))
	var out []gatewayServer
	for _, name := range slices.Sorted(maps.Keys(cfg.MCPServers)) {
		args := cfg.MCPServers[name].Args
		if len(args) == 0 || args[0] != "mcp" {
			continue
		}
		if hasFlag(args, "upstream") || (statErr == nil && !hasFlag(args, "no-gateway-config")) {
			out = append(out, gatewayServer{name: name, args: args})
		}
	}
	return out
}

// hasFlag reports whether args set the flag --name (alone, =VALUE, or
// =true for a boolean).
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--"+name || (strings.HasPrefix(a, "--"+name+"=") && a != "--"+name+"=false") {
			return true
		}
	}
	return false
}

// checkGatewaySandbox reports, for each gateway of the project's .mcp.json,
// whether its stdio upstream servers run under the OS sandbox
// (docs/sandbox.md, "Gateway upstream servers").
func checkGatewaySandbox(r *doctorReport, project string) {
	servers := gatewayServers(project)
	if len(servers) == 0 {
		return
	}
	a := sandbox.Detect()
	for _, s := range servers {
		level, msg := gatewaySandboxFinding(a, s)
		if level == "ok" {
			r.ok("gateway sandbox", "%s", msg)
		} else {
			r.warn("gateway sandbox", "%s", msg)
		}
	}
}

// gatewaySandboxFinding is checkGatewaySandbox's line for one gateway,
// with the sandbox a.
func gatewaySandboxFinding(a sandbox.Availability, s gatewayServer) (level, msg string) {
	require, on := hasFlag(s.args, "require-sandbox"), hasFlag(s.args, "sandbox")
	switch {
	case require && !a.OK():
		return "ok", fmt.Sprintf("gateway %q: no OS sandbox here (%s), and --require-sandbox refuses to start its upstream servers", s.name, a.Why)
	case (require || on) && a.OK():
		return "ok", fmt.Sprintf("gateway %q: its stdio upstream servers run under the OS sandbox, one process per session and phase, stopped when the phase changes", s.name)
	case on:
		return "warn", fmt.Sprintf("gateway %q: no OS sandbox here (%s), so its upstream servers run unsandboxed, as you: a tool the law cannot see into can write anywhere you can and read the operator token and the store", s.name, a.Why)
	}
	return "warn", fmt.Sprintf("gateway %q: its stdio upstream servers run unsandboxed, as you: add \"--sandbox\" (or \"--require-sandbox\") to its args in .mcp.json (docs/sandbox.md, \"Gateway upstream servers\")", s.name)
}
