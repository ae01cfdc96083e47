package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/pflag"

	"github.com/statewright-go/statewright/harness/install"
)

const installLong = `init codex registers statewright's hooks (SessionStart, UserPromptSubmit, PreToolUse,
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
open. A project's .codex/config.toml is read only when the project is trusted.`

func installFlags(f *pflag.FlagSet, o *install.Options) {
	install.AddMCPFlag(f, o)
	f.StringVar(&o.Config, "config", "", "the config.toml to write (default: PROJECT/.codex/config.toml)")
	f.BoolVar(&o.User, "user", false, "write $CODEX_HOME/config.toml (default ~/.codex/config.toml) instead of the project's")
}

// MCPServerName is the key of statewright's MCP server in [mcp_servers].
const MCPServerName = "statewright"

// The markers around the block `init codex` owns in config.toml. Everything
// outside them is the user's and is kept byte for byte.
const (
	blockBegin = "# >>> statewright: managed by `statewright init codex`; change it with that command >>>"
	blockEnd   = "# <<< statewright <<<"
)

// configPath returns the config.toml init writes.
func configPath(p *install.Plan) (string, error) {
	switch {
	case p.Config != "" && p.User:
		return "", errors.New("--config and --user name different files; give one")
	case p.Config != "":
		return filepath.Abs(p.Config)
	case p.User:
		home := os.Getenv("CODEX_HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", errors.New("no home directory; name the file with --config")
			}
			home = filepath.Join(h, ".codex")
		}
		return filepath.Abs(filepath.Join(home, "config.toml"))
	}
	return filepath.Join(".codex", "config.toml"), nil
}

// Install implements harness.Adapter: statewright's marked block in
// config.toml, holding the MCP server and one hook group per event.
func (adapter) Install(p *install.Plan) error {
	// A user-level (or named) config.toml is read by every Codex session of
	// the user: its hooks decide only sessions working in this project.
	p.ScopeToProject = p.User || p.Config != ""
	path, err := configPath(p)
	if err != nil {
		return install.Usage(err)
	}
	err = p.Edit(path, func(old []byte) ([]byte, error) {
		var probe map[string]any
		if _, err := toml.Decode(string(old), &probe); err != nil {
			return nil, fmt.Errorf("not valid TOML (%v); fix it first, init never overwrites it", err)
		}
		rest, had, err := cutBlock(string(old))
		if err != nil {
			return nil, err
		}
		block := ""
		if p.Uninstall {
			if had {
				p.Note("removed statewright's hooks and MCP server")
			}
		} else {
			if err := conflicts(rest); err != nil {
				return nil, err
			}
			projectDir := ""
			if !p.User && p.Config == "" {
				projectDir = p.Project
			}
			block = renderBlock(p, projectDir)
			p.Note("hooks: %d events, binary %s, store %s (id %s)", len(Events), p.Binary, p.Store, p.StoreID)
			if !p.NoMCP {
				p.Note("MCP server %s on the same store", MCPServerName)
			}
			p.Note("trust the hooks in Codex before relying on them: Codex skips untrusted hooks silently, so until then sessions run unguarded " +
				"(run `codex` here and open /hooks; `statewright doctor` asks Codex whether it trusts them and prints the trust records to add)")
			if projectDir != "" {
				p.Note("Codex reads %s only in a project it trusts (trust_level = \"trusted\" under [projects] in %s)", path, UserConfig())
			}
		}
		merged := joinBlock(rest, block)
		if strings.TrimSpace(merged) == "" {
			return nil, nil
		}
		var check map[string]any
		if _, err := toml.Decode(merged, &check); err != nil {
			return nil, fmt.Errorf("merging would make it invalid TOML (%v); init left it as it was", err)
		}
		return []byte(merged), nil
	})
	if err != nil {
		return err
	}
	// A store inside the project (.statewright/) must not reach a commit.
	// config.toml itself is left alone: a project's .codex/config.toml is a
	// shared file that usually holds other settings (docs/codex.md).
	return p.IgnoreMachineLocal()
}

// cutBlock removes statewright's marked block from a config.toml and
// reports whether there was one. A begin marker without its end is an
// error: which lines are ours is then a guess.
func cutBlock(s string) (rest string, had bool, err error) {
	i := strings.Index(s, blockBegin)
	if i < 0 {
		if strings.Contains(s, blockEnd) {
			return "", false, errors.New("statewright's end marker without its begin marker; remove the broken block by hand")
		}
		return s, false, nil
	}
	j := strings.Index(s[i:], blockEnd)
	if j < 0 {
		return "", false, errors.New("statewright's begin marker without its end marker; remove the broken block by hand")
	}
	end := i + j + len(blockEnd)
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
	if strings.Contains(rest, blockBegin) {
		return "", false, errors.New("two statewright blocks; remove one by hand")
	}
	return rest, true, nil
}

// joinBlock appends block (if any) to the user's part of the file,
// separated by a blank line.
func joinBlock(rest, block string) string {
	if block == "" {
		return rest
	}
	rest = strings.TrimRight(rest, "\n")
	if rest == "" {
		return block
	}
	return rest + "\n\n" + block
}

// conflicts refuses a config whose own part already defines an MCP server
// named statewright.
func conflicts(rest string) error {
	var cfg struct {
		MCPServers map[string]any `toml:"mcp_servers"`
	}
	if _, err := toml.Decode(rest, &cfg); err != nil {
		return err
	}
	if _, ok := cfg.MCPServers[MCPServerName]; ok {
		return fmt.Errorf("an MCP server named %q is defined outside statewright's block; rename or remove it first", MCPServerName)
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

// renderBlock renders statewright's block: the MCP server (unless
// --no-mcp) and one hook group per event. Array-of-tables entries may
// appear anywhere in a TOML file, so the block merges with the user's own
// hooks.
func renderBlock(p *install.Plan, projectDir string) string {
	var b strings.Builder
	b.WriteString(blockBegin + "\n")
	if !p.NoMCP {
		args := []string{"mcp", "--harness", "codex", "--store", p.Store, "--store-id", p.StoreID}
		if projectDir != "" {
			args = append(args, "--project-dir", projectDir)
		}
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = tomlString(a)
		}
		fmt.Fprintf(&b, "[mcp_servers.%s]\ncommand = %s\nargs = [%s]\n\n", MCPServerName, tomlString(p.Binary), strings.Join(quoted, ", "))
	}
	for i, ev := range Events {
		c := p.HookCommand(ev.Arg(), ev == PreToolUse, string(ev))
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[[hooks.%s]]\n[[hooks.%s.hooks]]\ntype = \"command\"\ncommand = %s\ntimeout = %d\n", ev, ev, tomlString(c), p.Timeout)
	}
	b.WriteString(blockEnd + "\n")
	return b.String()
}
