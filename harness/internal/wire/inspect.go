package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/statewright-go/statewright/harness"
)

// InspectPlugin reads a plugin init wrote at file (absolute) for doctor:
// nil when there is none. The gate is the command line the plugin spawns
// for a tool call (its argv, the event, its flags: the code in
// plugins/shared/run.ts), read as the plugin reads it: the call runs only
// on exit 0 with decision "allow". The canary writes target (the
// harness's own plugin or configuration) with the harness's write tool,
// spelled as it spells it (tool, args). source is the plugin this binary
// would install (plugins.Source): a different file is an older version or
// edited by hand.
func InspectPlugin(project, file string, source []byte, tool string, args map[string]any) *harness.Install {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	in := &harness.Install{Scope: "project", File: file, FailClosed: true}
	fail := func(text string) *harness.Install {
		in.Findings = append(in.Findings, harness.Failed("plugin", text))
		return in
	}
	if err != nil {
		return fail(err.Error())
	}
	cfg, err := PluginConfigOf(b)
	switch {
	case err != nil && !bytes.Contains(b, []byte("statewright")):
		return nil // someone else's plugin of that name
	case err != nil:
		return fail(fmt.Sprintf("%s: %v (run `statewright init` again)", file, err))
	case cfg == nil:
		return fail(file + " has no command line: every tool call is blocked (run `statewright init` again)")
	}
	in.Events = PluginEvents.Args()
	in.Timeout = time.Duration(cfg.TimeoutMS) * time.Millisecond
	in.Hook = append(append(append([]string{}, cfg.Argv...), ToolBefore), cfg.Flags...)
	if want, err := RenderPlugin(source, *cfg); err == nil && !bytes.Equal(want, b) {
		in.Findings = append(in.Findings, harness.Warned("plugin", file+" differs from the plugin this binary installs (an older version, or edited): run `statewright init` again"))
	} else if err == nil {
		in.Findings = append(in.Findings, harness.Passed("plugin", file+" is the plugin this binary installs; it blocks a call unless the binary answers allow"))
	}
	input, _ := json.Marshal(map[string]any{"session": "statewright-doctor", "cwd": project, "tool": tool,
		"call_id": fmt.Sprintf("doctor-canary-%d", time.Now().UnixNano()), "args": args})
	in.Gate = &harness.Gate{Argv: in.Hook, Input: input, Blocked: pluginBlocked}
	return in
}

// pluginBlocked reads a tool-before answer as the plugin does.
func pluginBlocked(exit int, stdout, stderr []byte) (bool, string) {
	var a struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	err := json.Unmarshal(stdout, &a)
	if exit == 0 && err == nil && a.Decision == "allow" {
		return false, ""
	}
	if a.Reason != "" {
		return true, a.Reason
	}
	return true, strings.TrimSpace(string(stderr))
}

// HookBlocked reads a tool gate's answer as Claude Code and Codex do:
// blocked by exit 2 with the reason on stderr, or by a JSON deny (exit 0,
// hookSpecificOutput.permissionDecision "deny" and its reason).
func HookBlocked(exit int, stdout, stderr []byte) (bool, string) {
	if exit == ExitBlock {
		return true, strings.TrimSpace(string(stderr))
	}
	var out struct {
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if exit == 0 && json.Unmarshal(stdout, &out) == nil && out.HookSpecificOutput.PermissionDecision == "deny" {
		return true, out.HookSpecificOutput.PermissionDecisionReason
	}
	return false, strings.TrimSpace(string(stdout) + " " + string(stderr))
}
