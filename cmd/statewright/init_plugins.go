package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/harness/jsplugin"
	"github.com/statewright-go/statewright/harness/opencode"
	opencodeplugin "github.com/statewright-go/statewright/plugins/opencode"
	piplugin "github.com/statewright-go/statewright/plugins/pi"
	"github.com/statewright-go/statewright/store"
)

func init() {
	registerInit(func() *cobra.Command { return newInitPluginCmd(opencodeInit) },
		func() *cobra.Command { return newInitPluginCmd(piInit) })
}

// pluginInit describes how init installs a plugin harness.
type pluginInit struct {
	name, short, long string
	// pluginPath is where the plugin goes, relative to the project.
	pluginPath string
	source     []byte
	// mcp, when set, registers the MCP server in the project's config.
	mcp *pluginMCP
}

// pluginMCP is an MCP server entry in a JSON config file.
type pluginMCP struct {
	configPath string // relative to the project
	// add and remove edit the parsed config.
	add    func(cfg *jsonObject, argv []string) error
	remove func(cfg *jsonObject) (bool, error)
}

var opencodeInit = &pluginInit{
	name:  "opencode",
	short: "Install statewright's opencode plugin (.opencode/plugins/) and MCP server (opencode.json)",
	long: `init opencode writes statewright's plugin to .opencode/plugins/statewright.ts, with this
binary's absolute path, the store's path and the store's id written into it, and registers
the statewright MCP server (control tools statewright_statewright_*) in the project's
opencode.json. It merges: the user's other settings and servers are kept as they are.
Running it again updates statewright's entries in place; --uninstall removes exactly them.

The plugin decides every tool call with "statewright hook opencode" and blocks the call
(by throwing, opencode's convention) on a deny and on anything it cannot read: a missing
binary, a crash, a timeout, garbage. See docs/opencode.md.`,
	pluginPath: filepath.Join(".opencode", "plugins", "statewright.ts"),
	source:     opencodeplugin.Source,
	mcp: &pluginMCP{
		configPath: "opencode.json",
		add:        addOpencodeMCP,
		remove:     removeOpencodeMCP,
	},
}

var piInit = &pluginInit{
	name:  "pi",
	short: "Install statewright's Pi extension (.pi/extensions/statewright.ts)",
	long: `init pi writes statewright's extension to .pi/extensions/statewright.ts, with this binary's
absolute path, the store's path and the store's id written into it. Pi loads project
extensions from there. The extension decides every tool call with "statewright hook pi"
(tool_call, answering {block, reason} on a deny and on anything it cannot read) and
registers statewright's control tools (statewright_get_state, statewright_transition, ...),
since Pi has no MCP client. --uninstall removes it. See docs/pi.md.`,
	pluginPath: filepath.Join(".pi", "extensions", "statewright.ts"),
	source:     piplugin.Source,
}

func newInitPluginCmd(p *pluginInit) *cobra.Command {
	var o initOptions
	cmd := &cobra.Command{
		Use:   p.name,
		Short: p.short,
		Long:  p.long,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInitPlugin(cmd.Context(), p, &o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.project, "project", "", "the project directory (default: the working directory)")
	f.StringVar(&o.storePath, "store", "", "the store file, created when missing (default $"+store.EnvStore+", else the XDG state directory)")
	f.StringVar(&o.binary, "binary", "", "the statewright binary the plugin runs (default: this one)")
	f.BoolVar(&o.requireWorkflow, "require-workflow", false, "deny every ordinary tool call while a session has no run")
	f.StringVar(&o.defaultWorkflow, "default-workflow", "", "start this workflow (template name or file) for every new session")
	f.BoolVar(&o.auditOnly, "audit-only", false, "record what would be denied, without denying (rollout)")
	f.DurationVar(&o.deadline, "deadline", defaultHookDeadline, "the hook's own deadline; must be under --timeout")
	f.IntVar(&o.timeout, "timeout", defaultHookTimeout, "how long the plugin waits for the binary before it blocks the call, in seconds")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the changes instead of writing them")
	f.BoolVar(&o.uninstall, "uninstall", false, "remove what init added")
	if p.mcp != nil {
		f.BoolVar(&o.noMCP, "no-mcp", false, "do not register the MCP server")
	}
	return cmd
}

func runInitPlugin(ctx context.Context, p *pluginInit, o *initOptions, out io.Writer) error {
	project := o.project
	if project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("init: %w", err)
		}
		project = wd
	}
	project, err := filepath.Abs(project)
	if err != nil {
		return usageError{fmt.Errorf("init: project: %w", err)}
	}
	if fi, err := os.Stat(project); err != nil || !fi.IsDir() {
		return usagef("init: project %s is not a directory", project)
	}
	pluginCh, err := readChange(filepath.Join(project, p.pluginPath))
	if err != nil {
		return err
	}
	changes := []*fileChange{pluginCh}
	var cfgCh *fileChange
	var cfg *jsonObject
	if p.mcp != nil {
		if cfgCh, err = readChange(filepath.Join(project, p.mcp.configPath)); err != nil {
			return err
		}
		if cfg, err = parseJSONObject(cfgCh.old); err != nil {
			return failure{fmt.Sprintf("init: %s is not a JSON object (%v); fix it first, init never overwrites it", cfgCh.path, err)}
		}
		changes = append(changes, cfgCh)
	}
	if pluginCh.exists && !isOurPlugin(pluginCh.old) {
		return failure{fmt.Sprintf("init: %s exists and is not statewright's plugin; move it away first", pluginCh.path)}
	}

	var summary []string
	if o.uninstall {
		if pluginCh.exists {
			summary = append(summary, "removed the statewright plugin")
		}
		pluginCh.new = nil
		if cfg != nil {
			removed, err := p.mcp.remove(cfg)
			if err != nil {
				return failure{fmt.Sprintf("init: %s: %v", cfgCh.path, err)}
			}
			if removed {
				summary = append(summary, "removed the statewright MCP server")
			}
		}
	} else {
		if o.timeout <= 0 || o.deadline <= 0 || o.deadline >= time.Duration(o.timeout)*time.Second {
			return usagef("init: --deadline (%v) must be positive and under --timeout (%ds): the plugin blocks a call whose answer comes later", o.deadline, o.timeout)
		}
		bin, err := hookBinary(o.binary)
		if err != nil {
			return err
		}
		storePath, err := store.ResolvePath(o.storePath, nil)
		if err != nil {
			return usageError{err}
		}
		storeID, created, err := ensureStore(ctx, storePath, o.dryRun)
		if err != nil {
			return err
		}
		if created {
			summary = append(summary, "created the store "+storePath)
		}
		if o.defaultWorkflow != "" {
			if _, _, err := loadWorkflow(o.defaultWorkflow, false); err != nil {
				return usagef("init: --default-workflow %s: %v", o.defaultWorkflow, err)
			}
			if !looksLikeTemplateName(o.defaultWorkflow) {
				if o.defaultWorkflow, err = filepath.Abs(o.defaultWorkflow); err != nil {
					return usageError{err}
				}
			}
		}
		flags := []string{"--store", storePath, "--store-id", storeID, "--deadline", o.deadline.String()}
		if o.requireWorkflow {
			flags = append(flags, "--require-workflow")
		}
		if o.defaultWorkflow != "" {
			flags = append(flags, "--default-workflow", o.defaultWorkflow)
		}
		if o.auditOnly {
			flags = append(flags, "--audit-only")
		}
		src, err := jsplugin.RenderPlugin(p.source, jsplugin.PluginConfig{
			Argv: []string{bin, "hook", p.name}, Flags: flags, TimeoutMS: o.timeout * 1000,
		})
		if err != nil {
			return fmt.Errorf("init: render the plugin: %w", err)
		}
		pluginCh.new = src
		summary = append(summary, fmt.Sprintf("plugin %s: binary %s, store %s (id %s)", p.pluginPath, bin, storePath, storeID))
		if cfg != nil {
			if o.noMCP {
				if _, err := p.mcp.remove(cfg); err != nil {
					return failure{fmt.Sprintf("init: %s: %v", cfgCh.path, err)}
				}
			} else {
				argv := []string{bin, "mcp", "--harness", p.name, "--store", storePath, "--store-id", storeID, "--project-dir", project}
				if err := p.mcp.add(cfg, argv); err != nil {
					return failure{fmt.Sprintf("init: %s: %v", cfgCh.path, err)}
				}
				summary = append(summary, "MCP server "+opencode.MCPServerName+" on the same store")
			}
		}
	}
	if cfg != nil {
		if cfgCh.new, err = renderOrRemove(cfg); err != nil {
			return err
		}
	}
	for _, ch := range changes {
		rel, _ := filepath.Rel(project, ch.path)
		switch {
		case bytes.Equal(ch.old, ch.new) && ch.exists == (ch.new != nil):
			fmt.Fprintf(out, "unchanged %s\n", rel)
		case o.dryRun:
			fmt.Fprintf(out, "--- %s (would %s)\n%s", rel, verb(ch), lineDiff(string(ch.old), string(ch.new)))
		default:
			if err := applyChange(ch); err != nil {
				return err
			}
			fmt.Fprintf(out, "%s %s\n", pastVerb(ch), rel)
		}
	}
	for _, s := range summary {
		if o.dryRun {
			s = "would: " + s
		}
		fmt.Fprintln(out, s)
	}
	return nil
}

// isOurPlugin recognises a plugin file init wrote: it has the config slot.
func isOurPlugin(src []byte) bool {
	_, err := jsplugin.PluginConfigOf(src)
	return err == nil && bytes.Contains(src, []byte("statewright"))
}

// opencodeMCP is statewright's entry under "mcp" in opencode.json.
type opencodeMCP struct {
	Type    string   `json:"type"`
	Command []string `json:"command"`
	Enabled bool     `json:"enabled"`
}

func isOurOpencodeServer(raw json.RawMessage) bool {
	var s opencodeMCP
	if json.Unmarshal(raw, &s) != nil || len(s.Command) < 2 {
		return false
	}
	return strings.HasPrefix(filepath.Base(s.Command[0]), "statewright") || s.Command[1] == "mcp"
}

func addOpencodeMCP(cfg *jsonObject, argv []string) error {
	servers := newJSONObject()
	if raw, ok := cfg.get("mcp"); ok {
		s, err := parseJSONObject(raw)
		if err != nil {
			return fmt.Errorf("\"mcp\": %w", err)
		}
		servers = s
	}
	if raw, ok := servers.get(opencode.MCPServerName); ok && !isOurOpencodeServer(raw) {
		return fmt.Errorf("an MCP server named %q exists and does not run statewright; rename or remove it first", opencode.MCPServerName)
	}
	b, err := marshalNoEscape(opencodeMCP{Type: "local", Command: argv, Enabled: true})
	if err != nil {
		return err
	}
	servers.set(opencode.MCPServerName, b)
	sb, err := servers.MarshalJSON()
	if err != nil {
		return err
	}
	if _, ok := cfg.get("$schema"); !ok && cfg.empty() {
		cfg.set("$schema", json.RawMessage(`"https://opencode.ai/config.json"`))
	}
	cfg.set("mcp", sb)
	return nil
}

func removeOpencodeMCP(cfg *jsonObject) (bool, error) {
	raw, ok := cfg.get("mcp")
	if !ok {
		return false, nil
	}
	servers, err := parseJSONObject(raw)
	if err != nil {
		return false, fmt.Errorf("\"mcp\": %w", err)
	}
	s, ok := servers.get(opencode.MCPServerName)
	if !ok || !isOurOpencodeServer(s) {
		return false, nil
	}
	servers.del(opencode.MCPServerName)
	if servers.empty() {
		cfg.del("mcp")
	} else {
		sb, err := servers.MarshalJSON()
		if err != nil {
			return false, err
		}
		cfg.set("mcp", sb)
	}
	if len(cfg.keys) == 1 && cfg.keys[0] == "$schema" {
		cfg.del("$schema")
	}
	return true, nil
}
