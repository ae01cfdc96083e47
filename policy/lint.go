package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/statewright-go/statewright/workflow"
)

// CodeUnknownTool is the diagnostic code of a tool name that no harness's
// alias table, capability word or the privilege ladder knows.
const CodeUnknownTool = "unknown-tool"

// KnownTool reports whether a workflow's allowed_tools or disallowed_tools
// entry names something the law knows: a canonical tool, a raw name from
// any harness's alias table, a capability word, a meta-tool, statewright's
// control tools, a tool the privilege ladder rates, an MCP tool
// (mcp__server__tool, matched by its exact name) or a "prefix*" entry.
func KnownTool(name string) bool {
	l := strings.ToLower(name)
	if strings.HasSuffix(name, "*") || strings.HasPrefix(l, "mcp__") {
		return true
	}
	if _, ok := workflowNames[l]; ok {
		return true
	}
	if _, ok := capabilityWords[strings.NewReplacer("_", "", "-", "").Replace(l)]; ok {
		return true
	}
	if _, ok := knownNames()[l]; ok {
		return true
	}
	return workflow.KnownToLadder(name)
}

// knownNames is every raw and canonical name of every alias table, lower-cased.
func knownNames() map[string]string {
	m := map[string]string{}
	for _, h := range Harnesses {
		for n := range harnessTables[h] {
			m[strings.ToLower(n)] = n
		}
	}
	for _, c := range canonicalNames {
		if c != "" {
			m[strings.ToLower(c)] = c
		}
	}
	for w := range capabilityWords {
		m[w] = capabilityDisplay(w)
	}
	return m
}

func capabilityDisplay(w string) string {
	for _, cn := range capNames {
		if strings.EqualFold(strings.ReplaceAll(cn.name, " ", ""), w) {
			return cn.name
		}
	}
	switch w {
	case "gitwrite":
		return "GitWrite"
	case "nestedagent":
		return "NestedAgent"
	}
	return strings.ToUpper(w[:1]) + w[1:]
}

// SuggestTool returns the known tool name closest to name when it looks
// like a typo of it ("Raed" → "Read"), or "".
func SuggestTool(name string) string {
	names := knownNames()
	display := make([]string, 0, len(names))
	for _, n := range names {
		display = append(display, n)
	}
	return workflow.Suggest(name, display)
}

// LintToolNames warns about every allowed_tools and disallowed_tools entry
// that no alias table knows, with a did-you-mean: a typo such as "Raed"
// allows nothing, and in disallowed_tools it takes nothing away.
func LintToolNames(def *workflow.Definition) workflow.Diagnostics {
	if def == nil {
		return nil
	}
	var out workflow.Diagnostics
	states := make([]string, 0, len(def.States))
	for n := range def.States {
		states = append(states, n)
	}
	sort.Strings(states)
	for _, sn := range states {
		s := def.States[sn]
		if s == nil {
			continue
		}
		for _, list := range []struct {
			key   string
			names []string
		}{{"allowed_tools", s.AllowedTools}, {"disallowed_tools", s.DisallowedTools}} {
			for i, n := range list.names {
				if KnownTool(n) {
					continue
				}
				if _, rated := def.ToolPrivileges[n]; rated {
					continue
				}
				msg := fmt.Sprintf("state '%s' %s entry %q is a tool no harness names", sn, list.key, n)
				if sg := SuggestTool(n); sg != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", sg)
				} else {
					msg += " (a custom tool: rate it in tool_privileges to silence this)"
				}
				out = append(out, workflow.Diagnostic{Severity: workflow.SeverityWarning, Code: CodeUnknownTool,
					Message: msg, Pos: s.FieldPos(fmt.Sprintf("%s[%d]", list.key, i)), Source: def.Source})
			}
		}
	}
	return out
}
