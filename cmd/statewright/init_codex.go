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

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/harness/codex"
	"github.com/statewright-go/statewright/store"
)

// The markers around the block `init codex` owns in config.toml. Everything
// outside them is the user's and is kept byte for byte.
const (
	codexBlockBegin = "# >>> statewright: managed by `statewright init codex`; change it with that command >>>"
	codexBlockEnd   = "# <<< statewright <<<"
)

// codexInitOptions are `statewright init codex`'s own flags beside the
// shared ones.
type codexInitOptions struct {
	initOptions
	config string
	user   bool
}

func init() { registerInit(newInitCodexCmd) }

func newInitCodexCmd() *cobra.Command {
	var o codexInitOptions
	cmd := &cobra.Command{
		Use:   "codex",
		Short: "Write statewright's hooks and MCP server into Codex's config.toml",
		Long: `init codex registers statewright's hooks (SessionStart, UserPromptSubmit, PreToolUse,
PostToolUse, Stop) and the statewright MCP server ([mcp_servers.statewright], run as
"statewright mcp --harness codex") in Codex's config.toml: the project's .codex/config.toml
by default, $CODEX_HOME/config.toml (default ~/.codex/config.toml) with --user, or the file
--config names.

It merges: statewright's entries live in one marked block, everything else in the file is
kept byte for byte, and the merged file is checked with a TOML parser before it is written.
Running it again replaces the block; --uninstall removes it. The hook commands name this
binary and the store by absolute path and the store's id; PreToolUse's command turns a
missing binary, a crash or a signal into exit 2 (Codex's deny).

Codex runs a hook only once a person has trusted it (/hooks in the Codex TUI), or under
"codex exec --dangerously-bypass-hook-trust"; an untrusted hook is skipped, which fails
open. A project's .codex/config.toml is read only when the project is trusted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInitCodex(cmd.Context(), &o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.project, "project", "", "the project directory (default: the working directory)")
	f.StringVar(&o.config, "config", "", "the config.toml to write (default: PROJECT/.codex/config.toml)")
	f.BoolVar(&o.user, "user", false, "write $CODEX_HOME/config.toml (default ~/.codex/config.toml) instead of the project's")
	f.StringVar(&o.storePath, "store", "", "the store file, created when missing (default $"+store.EnvStore+", else the XDG state directory)")
	f.StringVar(&o.binary, "binary", "", "the statewright binary the hooks run (default: this one)")
	f.BoolVar(&o.requireWorkflow, "require-workflow", false, "deny every ordinary tool call while a session has no run")
	f.StringVar(&o.defaultWorkflow, "default-workflow", "", "start this workflow (template name or file) for every new session")
	f.BoolVar(&o.auditOnly, "audit-only", false, "record what would be denied, without denying (rollout)")
	f.DurationVar(&o.deadline, "deadline", defaultHookDeadline, "the hook's own deadline; must be under --timeout")
	f.IntVar(&o.timeout, "timeout", defaultHookTimeout, "the hook timeout written into config.toml, in seconds")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the changes instead of writing them")
	f.BoolVar(&o.uninstall, "uninstall", false, "remove what init added (hooks and MCP server)")
	f.BoolVar(&o.noMCP, "no-mcp", false, "do not register the MCP server")
	return cmd
}

// codexConfigPath returns the config.toml init codex writes and the project
// directory.
func codexConfigPath(o *codexInitOptions) (cfg, project string, err error) {
	project = o.project
	if project == "" {
		if project, err = os.Getwd(); err != nil {
			return "", "", fmt.Errorf("init: %w", err)
		}
	}
	if project, err = filepath.Abs(project); err != nil {
		return "", "", usageError{fmt.Errorf("init: project: %w", err)}
	}
	if fi, err := os.Stat(project); err != nil || !fi.IsDir() {
		return "", "", usagef("init: project %s is not a directory", project)
	}
	switch {
	case o.config != "" && o.user:
		return "", "", usagef("init: --config and --user name different files; give one")
	case o.config != "":
		cfg, err = filepath.Abs(o.config)
	case o.user:
		home := os.Getenv("CODEX_HOME")
		if home == "" {
			h, herr := os.UserHomeDir()
			if herr != nil {
				return "", "", usagef("init: no home directory; name the file with --config")
			}
			home = filepath.Join(h, ".codex")
		}
		cfg, err = filepath.Abs(filepath.Join(home, "config.toml"))
	default:
		cfg = filepath.Join(project, ".codex", "config.toml")
	}
	return cfg, project, err
}

func runInitCodex(ctx context.Context, o *codexInitOptions, out io.Writer) error {
	cfgPath, project, err := codexConfigPath(o)
	if err != nil {
		return err
	}
	ch, err := readChange(cfgPath)
	if err != nil {
		return err
	}
	var probe map[string]any
	if _, err := toml.Decode(string(ch.old), &probe); err != nil {
		return failure{fmt.Sprintf("init: %s is not valid TOML (%v); fix it first, init never overwrites it", cfgPath, err)}
	}
	rest, had, err := cutCodexBlock(string(ch.old))
	if err != nil {
		return failure{fmt.Sprintf("init: %s: %v", cfgPath, err)}
	}
	var summary []string
	block := ""
	if o.uninstall {
		if had {
			summary = append(summary, "removed statewright's hooks and MCP server")
		}
	} else {
		if o.timeout <= 0 || o.deadline <= 0 || o.deadline >= time.Duration(o.timeout)*time.Second {
			return usagef("init: --deadline (%v) must be positive and under --timeout (%ds): a hook the harness kills at its timeout fails open", o.deadline, o.timeout)
		}
		bin, err := hookBinary(o.binary)
		if err != nil {
			return err
		}
		storePath, err := store.ResolvePath(o.storePath, nil)
		if err != nil {
			return usageError{err}
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
		if err := codexConflicts(rest); err != nil {
			return failure{fmt.Sprintf("init: %s: %v", cfgPath, err)}
		}
		storeID, created, err := ensureStore(ctx, storePath, o.dryRun)
		if err != nil {
			return err
		}
		if created {
			summary = append(summary, "created the store "+storePath)
		}
		projectDir := ""
		if !o.user && o.config == "" {
			projectDir = project
		}
		block = codexBlock(bin, storePath, storeID, projectDir, &o.initOptions)
		summary = append(summary, fmt.Sprintf("hooks: %d events, binary %s, store %s (id %s)", len(codex.Events), bin, storePath, storeID))
		if !o.noMCP {
			summary = append(summary, "MCP server "+mcpServerName+" on the same store")
		}
		summary = append(summary, "trust the hooks in Codex (/hooks) before relying on them: Codex skips untrusted hooks")
	}
	merged := joinCodexBlock(rest, block)
	if strings.TrimSpace(merged) == "" {
		ch.new = nil
	} else {
		var check map[string]any
		if _, err := toml.Decode(merged, &check); err != nil {
			return failure{fmt.Sprintf("init: merging into %s would make it invalid TOML (%v); init left it as it was", cfgPath, err)}
		}
		ch.new = []byte(merged)
	}
	shown := cfgPath
	if rel, err := filepath.Rel(project, cfgPath); err == nil && !strings.HasPrefix(rel, "..") {
		shown = rel
	}
	switch {
	case bytes.Equal(ch.old, ch.new) && ch.exists == (ch.new != nil):
		fmt.Fprintf(out, "unchanged %s\n", shown)
	case o.dryRun:
		fmt.Fprintf(out, "--- %s (would %s)\n%s", shown, verb(ch), lineDiff(string(ch.old), string(ch.new)))
	default:
		if err := applyChange(ch); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s %s\n", pastVerb(ch), shown)
	}
	for _, s := range summary {
		if o.dryRun {
			s = "would: " + s
		}
		fmt.Fprintln(out, s)
	}
	return nil
}

// cutCodexBlock removes statewright's marked block from a config.toml and
// reports whether there was one. A begin marker without its end is an
// error: which lines are ours is then a guess.
func cutCodexBlock(s string) (rest string, had bool, err error) {
	i := strings.Index(s, codexBlockBegin)
	if i < 0 {
		if strings.Contains(s, codexBlockEnd) {
			return "", false, fmt.Errorf("statewright's end marker without its begin marker; remove the broken block by hand")
		}
		return s, false, nil
	}
	j := strings.Index(s[i:], codexBlockEnd)
	if j < 0 {
		return "", false, fmt.Errorf("statewright's begin marker without its end marker; remove the broken block by hand")
	}
	end := i + j + len(codexBlockEnd)
	if end < len(s) && s[end] == '\n' {
		end++
	}
	before := strings.TrimRight(s[:i], "\n")
	after := s[end:]
	switch {
	case before == "":
		rest = strings.TrimLeft(after, "\n")
	case after == "":
		rest = before + "\n"
	default:
		rest = before + "\n\n" + strings.TrimLeft(after, "\n")
	}
	if strings.Contains(rest, codexBlockBegin) {
		return "", false, fmt.Errorf("two statewright blocks; remove one by hand")
	}
	return rest, true, nil
}

// joinCodexBlock appends block (if any) to the user's part of the file,
// separated by a blank line.
func joinCodexBlock(rest, block string) string {
	if block == "" {
		return rest
	}
	rest = strings.TrimRight(rest, "\n")
	if rest == "" {
		return block
	}
	return rest + "\n\n" + block
}

// codexConflicts refuses a config whose own part already defines an MCP
// server named statewright.
func codexConflicts(rest string) error {
	var cfg struct {
		MCPServers map[string]any `toml:"mcp_servers"`
	}
	if _, err := toml.Decode(rest, &cfg); err != nil {
		return err
	}
	if _, ok := cfg.MCPServers[mcpServerName]; ok {
		return fmt.Errorf("an MCP server named %q is defined outside statewright's block; rename or remove it first", mcpServerName)
	}
	return nil
}

// tomlString quotes s as a TOML basic string (JSON's escapes are all valid
// TOML escapes).
func tomlString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimRight(b.String(), "\n")
}

// codexBlock renders statewright's block: the MCP server (unless --no-mcp)
// and one hook group per event. Array-of-tables entries may appear anywhere
// in a TOML file, so the block merges with the user's own hooks.
func codexBlock(bin, storePath, storeID, projectDir string, o *initOptions) string {
	var b strings.Builder
	b.WriteString(codexBlockBegin + "\n")
	if !o.noMCP {
		args := []string{"mcp", "--harness", "codex", "--store", storePath, "--store-id", storeID}
		if projectDir != "" {
			args = append(args, "--project-dir", projectDir)
		}
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = tomlString(a)
		}
		fmt.Fprintf(&b, "[mcp_servers.%s]\ncommand = %s\nargs = [%s]\n\n", mcpServerName, tomlString(bin), strings.Join(quoted, ", "))
	}
	flags := hookFlagsLine(storePath, storeID, o)
	for i, ev := range codex.Events {
		c := shq(bin) + " hook codex " + ev.Arg() + flags
		if ev == codex.PreToolUse {
			c += failClosedWrapper("PreToolUse")
		}
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[[hooks.%s]]\n[[hooks.%s.hooks]]\ntype = \"command\"\ncommand = %s\ntimeout = %d\n", ev, ev, tomlString(c), o.timeout)
	}
	b.WriteString(codexBlockEnd + "\n")
	return b.String()
}
