package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/harness/claudecode"
	"github.com/statewright-go/statewright/store"
)

func init() { register(newInitCmd) }

func newInitCmd() *cobra.Command {
	initCmd := &cobra.Command{
		Use:   "init",
		Short: "Install statewright into a coding harness's project settings",
	}
	initCmd.AddCommand(newInitClaudeCodeCmd())
	for _, sub := range initSubcommands {
		initCmd.AddCommand(sub())
	}
	return initCmd
}

// initSubcommands are the other harnesses' init commands (`statewright init
// opencode`, ...), registered by their files with registerInit.
var initSubcommands []func() *cobra.Command

// registerInit adds a harness's init subcommand.
func registerInit(fns ...func() *cobra.Command) { initSubcommands = append(initSubcommands, fns...) }

// initOptions are `statewright init claude-code`'s flags.
type initOptions struct {
	project, storePath, binary string
	requireWorkflow, auditOnly bool
	defaultWorkflow            string
	deadline                   time.Duration
	timeout                    int
	dryRun, uninstall, noMCP   bool
	plugin                     bool
	storeIDFile                string
}

// defaultStoreIDFile is where `init claude-code --plugin` pins the store's
// id for the marketplace plugin's hooks (plugins/claude-code), whose
// hooks.json cannot carry it.
func defaultStoreIDFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "statewright", "claude-code.store-id")
}

func newInitClaudeCodeCmd() *cobra.Command {
	var o initOptions
	cmd := &cobra.Command{
		Use:   "claude-code",
		Short: "Write statewright's hooks into .claude/settings.json and its MCP server into .mcp.json",
		Long: `init claude-code registers statewright's hooks (SessionStart, UserPromptSubmit, PreToolUse,
PostToolUse, PostToolUseFailure, Stop, SubagentStop, SessionEnd) in the project's
.claude/settings.json and the statewright MCP server in .mcp.json. It merges: the user's
other settings, hooks and servers are kept as they are. Running it again updates
statewright's entries in place; --uninstall removes exactly them.

The hook commands name this binary by its absolute path, the store by its absolute path
and the store's id (so a deleted or recreated store denies), and PreToolUse's command
ends in a wrapper that turns a missing binary, a crash or a signal into a deny. The
store is created when missing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInitClaudeCode(cmd.Context(), &o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.project, "project", "", "the project directory (default: the working directory)")
	f.StringVar(&o.storePath, "store", "", "the store file, created when missing (default $"+store.EnvStore+", else the XDG state directory)")
	f.StringVar(&o.binary, "binary", "", "the statewright binary the hooks run (default: this one)")
	f.BoolVar(&o.requireWorkflow, "require-workflow", false, "deny every ordinary tool call while a session has no run")
	f.StringVar(&o.defaultWorkflow, "default-workflow", "", "start this workflow (template name or file) for every new session")
	f.BoolVar(&o.auditOnly, "audit-only", false, "record what would be denied, without denying (rollout)")
	f.DurationVar(&o.deadline, "deadline", defaultHookDeadline, "the hook's own deadline; must be under --timeout")
	f.IntVar(&o.timeout, "timeout", defaultHookTimeout, "the hook timeout written into settings.json, in seconds")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the changes instead of writing them")
	f.BoolVar(&o.uninstall, "uninstall", false, "remove what init added (hooks, MCP server, its approval)")
	f.BoolVar(&o.noMCP, "no-mcp", false, "do not register the MCP server")
	f.BoolVar(&o.plugin, "plugin", false, "for the marketplace plugin: create the store and pin its id in --store-id-file; write no project settings")
	f.StringVar(&o.storeIDFile, "store-id-file", "", "with --plugin: where to pin the store's id (default $XDG_CONFIG_HOME/statewright/claude-code.store-id)")
	return cmd
}

// mcpServerName is the name statewright's MCP server gets in .mcp.json; the
// control tools are then mcp__statewright__*.
const mcpServerName = "statewright"

// ourHookCommand recognises a hook command statewright's init wrote (by any
// binary path or name): the quoted binary, then "hook claude-code EVENT". It is
// compiled on first use: the hook path must not pay for it at package init.
var ourHookCommand = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^'[^']*' hook claude-code [a-z-]+( |$)`)
})

// fileChange is the new content of one file init manages; nil content
// removes the file.
type fileChange struct {
	path     string
	old, new []byte
	exists   bool
}

func runInitClaudeCode(ctx context.Context, o *initOptions, out io.Writer) error {
	if o.plugin {
		return pinStoreID(ctx, o, out)
	}
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
	settingsPath := filepath.Join(project, ".claude", "settings.json")
	mcpPath := filepath.Join(project, ".mcp.json")
	settingsCh, err := readChange(settingsPath)
	if err != nil {
		return err
	}
	mcpCh, err := readChange(mcpPath)
	if err != nil {
		return err
	}
	settings, err := parseJSONObject(settingsCh.old)
	if err != nil {
		return failure{fmt.Sprintf("init: %s is not a JSON object (%v); fix it first, init never overwrites it", settingsPath, err)}
	}
	mcp, err := parseJSONObject(mcpCh.old)
	if err != nil {
		return failure{fmt.Sprintf("init: %s is not a JSON object (%v); fix it first, init never overwrites it", mcpPath, err)}
	}

	var summary []string
	if o.uninstall {
		n, err := removeHooks(settings)
		if err != nil {
			return failure{fmt.Sprintf("init: %s: %v", settingsPath, err)}
		}
		removed, err := removeMCP(mcp, settings)
		if err != nil {
			return failure{fmt.Sprintf("init: %s: %v", mcpPath, err)}
		}
		summary = append(summary, fmt.Sprintf("removed %d statewright hook(s)", n))
		if removed {
			summary = append(summary, "removed the statewright MCP server")
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
		if _, err := removeHooks(settings); err != nil {
			return failure{fmt.Sprintf("init: %s: %v", settingsPath, err)}
		}
		if err := addHooks(settings, hookCommands(bin, storePath, storeID, o), o.timeout); err != nil {
			return failure{fmt.Sprintf("init: %s: %v", settingsPath, err)}
		}
		summary = append(summary, fmt.Sprintf("hooks: %d events, binary %s, store %s (id %s)", len(claudecode.Events), bin, storePath, storeID))
		if !o.noMCP {
			if err := addMCP(mcp, settings, bin, storePath, storeID); err != nil {
				return failure{fmt.Sprintf("init: %s: %v", mcpPath, err)}
			}
			summary = append(summary, "MCP server "+mcpServerName+" on the same store")
		}
	}
	if settingsCh.new, err = renderOrRemove(settings); err != nil {
		return err
	}
	if mcpCh.new, err = renderOrRemove(mcp); err != nil {
		return err
	}
	for _, ch := range []*fileChange{settingsCh, mcpCh} {
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

func verb(ch *fileChange) string {
	switch {
	case ch.new == nil:
		return "remove"
	case !ch.exists:
		return "create"
	}
	return "change"
}

func pastVerb(ch *fileChange) string {
	switch {
	case ch.new == nil:
		return "removed"
	case !ch.exists:
		return "created"
	}
	return "updated"
}

func readChange(path string) (*fileChange, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		return &fileChange{path: path, old: b, exists: true}, nil
	case errors.Is(err, fs.ErrNotExist):
		return &fileChange{path: path}, nil
	}
	return nil, failure{fmt.Sprintf("init: %v", err)}
}

// renderOrRemove renders o, or returns nil (remove the file) when empty.
func renderOrRemove(o *jsonObject) ([]byte, error) {
	if o.empty() {
		return nil, nil
	}
	b, err := pretty(o)
	if err != nil {
		return nil, fmt.Errorf("init: render: %w", err)
	}
	return b, nil
}

// applyChange writes (atomically, keeping the file's mode) or removes a file.
func applyChange(ch *fileChange) error {
	if ch.new == nil {
		if err := os.Remove(ch.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("init: %w", err)
		}
		return nil
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(ch.path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(ch.path), 0o755); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(ch.path), ".statewright-init-*")
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	_, werr := tmp.Write(ch.new)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), mode)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("init: write %s: %w", ch.path, err)
	}
	if err := os.Rename(tmp.Name(), ch.path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("init: write %s: %w", ch.path, err)
	}
	return nil
}

// pinStoreID creates the store when missing and writes its id to the file
// the plugin's hooks read (mode 0600, in a 0700 directory).
func pinStoreID(ctx context.Context, o *initOptions, out io.Writer) error {
	file := o.storeIDFile
	if file == "" {
		file = defaultStoreIDFile()
	}
	if file == "" {
		return usagef("init: no config directory; name the pin file with --store-id-file")
	}
	storePath, err := store.ResolvePath(o.storePath, nil)
	if err != nil {
		return usageError{err}
	}
	id, created, err := ensureStore(ctx, storePath, o.dryRun)
	if err != nil {
		return err
	}
	verb := "pinned"
	if o.dryRun {
		verb = "would pin"
	} else {
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return fmt.Errorf("init: %w", err)
		}
		if err := applyChange(&fileChange{path: file, new: []byte(id + "\n")}); err != nil {
			return err
		}
		if err := os.Chmod(file, 0o600); err != nil {
			return fmt.Errorf("init: %w", err)
		}
	}
	if created {
		fmt.Fprintf(out, "created the store %s\n", storePath)
	}
	fmt.Fprintf(out, "%s store id %s in %s (the plugin's hooks deny on any other store)\n", verb, id, file)
	return nil
}

// hookBinary returns the absolute, symlink-free path of the binary the
// hooks run.
func hookBinary(flag string) (string, error) {
	p := flag
	if p == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("init: cannot locate this binary (%w); name it with --binary", err)
		}
		p = exe
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", usageError{err}
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	fi, err := os.Stat(abs)
	if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return "", usagef("init: %s is not an executable file", abs)
	}
	if strings.Contains(abs, "'") {
		return "", usagef("init: the binary path %s holds a single quote", abs)
	}
	return abs, nil
}

// ensureStore opens (creating unless dryRun) the store and returns its id.
func ensureStore(ctx context.Context, path string, dryRun bool) (id string, created bool, err error) {
	if store.IsPostgresURL(path) {
		// A PostgreSQL store has no file to look at: ask the server.
		if strings.Contains(path, "'") {
			return "", false, usagef("init: the store URL holds a single quote")
		}
		st, err := openStoreAt(ctx, path, storeOptions{MustExist: true})
		created := false
		if errors.Is(err, store.ErrNoStore) {
			if dryRun {
				return "NEW-STORE-ID", true, nil
			}
			st, err = openStoreAt(ctx, path, storeOptions{})
			created = true
		}
		if err != nil {
			return "", false, failure{fmt.Sprintf("init: open store: %v", err)}
		}
		defer st.Close()
		return st.StoreID(), created, nil
	}
	_, statErr := os.Stat(path)
	missing := errors.Is(statErr, fs.ErrNotExist)
	if missing && dryRun {
		return "NEW-STORE-ID", true, nil
	}
	if strings.Contains(path, "'") {
		return "", false, usagef("init: the store path %s holds a single quote", path)
	}
	st, err := openStoreAt(ctx, path, storeOptions{MustExist: dryRun})
	if err != nil {
		return "", false, failure{fmt.Sprintf("init: open store: %v", err)}
	}
	defer st.Close()
	return st.StoreID(), missing, nil
}

// shq quotes s for a POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// hookCommands returns the command line for each event. PreToolUse's ends
// in a wrapper: whatever makes the hook fail (exit 127 for a missing
// binary, a signal, a crash) becomes exit 2, Claude Code's deny; a deny the
// hook gave itself passes through without a second message. The other
// events have no wrapper: exit 2 would erase a prompt or keep a Stop
// looping, so they fail open, as DESIGN.md asks.
func hookCommands(bin, storePath, storeID string, o *initOptions) map[claudecode.Event]string {
	flags := hookFlagsLine(storePath, storeID, o)
	out := map[claudecode.Event]string{}
	for _, ev := range claudecode.Events {
		c := shq(bin) + " hook claude-code " + ev.Arg() + flags
		if ev == claudecode.PreToolUse {
			c += failClosedWrapper("PreToolUse")
		}
		out[ev] = c
	}
	return out
}

// hookFlagsLine renders the flags every hook command carries: the store,
// its id, the deadline and the operator's choices.
func hookFlagsLine(storePath, storeID string, o *initOptions) string {
	flags := " --store " + shq(storePath) + " --store-id " + shq(storeID) + " --deadline " + o.deadline.String()
	if o.requireWorkflow {
		flags += " --require-workflow"
	}
	if o.defaultWorkflow != "" {
		flags += " --default-workflow " + shq(o.defaultWorkflow)
	}
	if o.auditOnly {
		flags += " --audit-only"
	}
	return flags
}

// failClosedWrapper is the shell tail of a blocking hook's command: any
// failure of the hook (exit 127 for a missing binary, a signal, a crash)
// becomes exit 2, the harness's deny; a deny the hook gave itself passes
// through without a second message.
func failClosedWrapper(event string) string {
	return ` || { c=$?; [ "$c" -eq 2 ] || echo "statewright: the ` + event + ` hook failed (exit $c: missing binary, crash or signal); the call is denied (fail closed)" >&2; exit 2; }`
}

// isOurHook reports whether a hook entry is one statewright's init wrote.
func isOurHook(raw json.RawMessage) bool {
	var h struct {
		Command string `json:"command"`
	}
	return json.Unmarshal(raw, &h) == nil && ourHookCommand().MatchString(h.Command)
}

// removeHooks removes statewright's hook entries from settings, and the
// groups, event lists and hooks object they leave empty. It returns how
// many entries it removed.
func removeHooks(settings *jsonObject) (int, error) {
	raw, ok := settings.get("hooks")
	if !ok {
		return 0, nil
	}
	hooks, err := parseJSONObject(raw)
	if err != nil {
		return 0, fmt.Errorf("\"hooks\": %w", err)
	}
	removed := 0
	for _, ev := range append([]string(nil), hooks.keys...) {
		var groups []json.RawMessage
		if err := json.Unmarshal(hooks.vals[ev], &groups); err != nil {
			return 0, fmt.Errorf("hooks.%s is not an array: %w", ev, err)
		}
		kept := groups[:0:0]
		for _, g := range groups {
			grp, err := parseJSONObject(g)
			if err != nil {
				return 0, fmt.Errorf("hooks.%s: %w", ev, err)
			}
			var entries []json.RawMessage
			if hr, ok := grp.get("hooks"); ok {
				if err := json.Unmarshal(hr, &entries); err != nil {
					return 0, fmt.Errorf("hooks.%s[].hooks is not an array: %w", ev, err)
				}
			}
			left := entries[:0:0]
			for _, e := range entries {
				if isOurHook(e) {
					removed++
					continue
				}
				left = append(left, e)
			}
			if len(left) == len(entries) {
				kept = append(kept, g)
				continue
			}
			if len(left) == 0 {
				continue // the group held only statewright's hooks
			}
			b, err := json.Marshal(left)
			if err != nil {
				return 0, err
			}
			grp.set("hooks", b)
			gb, err := grp.MarshalJSON()
			if err != nil {
				return 0, err
			}
			kept = append(kept, gb)
		}
		if len(kept) == 0 {
			hooks.del(ev)
			continue
		}
		b, err := marshalNoEscape(kept)
		if err != nil {
			return 0, err
		}
		hooks.set(ev, b)
	}
	if hooks.empty() {
		settings.del("hooks")
		return removed, nil
	}
	b, err := hooks.MarshalJSON()
	if err != nil {
		return 0, err
	}
	settings.set("hooks", b)
	return removed, nil
}

// addHooks appends one group per event holding statewright's hook.
func addHooks(settings *jsonObject, cmds map[claudecode.Event]string, timeout int) error {
	hooks := newJSONObject()
	if raw, ok := settings.get("hooks"); ok {
		h, err := parseJSONObject(raw)
		if err != nil {
			return fmt.Errorf("\"hooks\": %w", err)
		}
		hooks = h
	}
	for _, ev := range claudecode.Events {
		var groups []json.RawMessage
		if raw, ok := hooks.get(string(ev)); ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return fmt.Errorf("hooks.%s is not an array: %w", ev, err)
			}
		}
		grp := newJSONObject()
		if ev.ToolEvent() {
			grp.set("matcher", json.RawMessage(`"*"`))
		}
		entry := newJSONObject()
		entry.set("type", json.RawMessage(`"command"`))
		c, err := marshalNoEscape(cmds[ev])
		if err != nil {
			return err
		}
		entry.set("command", c)
		entry.set("timeout", json.RawMessage(strconv.Itoa(timeout)))
		eb, err := entry.MarshalJSON()
		if err != nil {
			return err
		}
		grp.set("hooks", json.RawMessage("["+string(eb)+"]"))
		gb, err := grp.MarshalJSON()
		if err != nil {
			return err
		}
		b, err := marshalNoEscape(append(groups, gb))
		if err != nil {
			return err
		}
		hooks.set(string(ev), b)
	}
	b, err := hooks.MarshalJSON()
	if err != nil {
		return err
	}
	settings.set("hooks", b)
	return nil
}

// mcpServer is statewright's entry in .mcp.json.
type mcpServer struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// isOurServer reports whether an .mcp.json server entry is one init wrote:
// a statewright binary, or any binary run as "mcp --store PATH --store-id ID".
func isOurServer(raw json.RawMessage) bool {
	var s mcpServer
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	return strings.HasPrefix(filepath.Base(s.Command), "statewright") ||
		(len(s.Args) == 5 && s.Args[0] == "mcp" && s.Args[1] == "--store" && s.Args[3] == "--store-id")
}

// addMCP registers the MCP server on the same store and approves it in
// settings (enabledMcpjsonServers), so Claude Code starts it without asking.
func addMCP(mcp, settings *jsonObject, bin, storePath, storeID string) error {
	servers := newJSONObject()
	if raw, ok := mcp.get("mcpServers"); ok {
		s, err := parseJSONObject(raw)
		if err != nil {
			return fmt.Errorf("\"mcpServers\": %w", err)
		}
		servers = s
	}
	if raw, ok := servers.get(mcpServerName); ok && !isOurServer(raw) {
		return fmt.Errorf("an MCP server named %q exists and does not run statewright; rename or remove it first", mcpServerName)
	}
	b, err := marshalNoEscape(mcpServer{Type: "stdio", Command: bin, Args: []string{"mcp", "--store", storePath, "--store-id", storeID}})
	if err != nil {
		return err
	}
	servers.set(mcpServerName, b)
	sb, err := servers.MarshalJSON()
	if err != nil {
		return err
	}
	mcp.set("mcpServers", sb)

	var enabled []string
	if raw, ok := settings.get("enabledMcpjsonServers"); ok {
		if err := json.Unmarshal(raw, &enabled); err != nil {
			return fmt.Errorf("settings enabledMcpjsonServers is not a list of names: %w", err)
		}
	}
	for _, n := range enabled {
		if n == mcpServerName {
			return nil
		}
	}
	eb, err := marshalNoEscape(append(enabled, mcpServerName))
	if err != nil {
		return err
	}
	settings.set("enabledMcpjsonServers", eb)
	return nil
}

// removeMCP removes statewright's server (only if it runs statewright) and
// its approval.
func removeMCP(mcp, settings *jsonObject) (bool, error) {
	removed := false
	if raw, ok := mcp.get("mcpServers"); ok {
		servers, err := parseJSONObject(raw)
		if err != nil {
			return false, fmt.Errorf("\"mcpServers\": %w", err)
		}
		if s, ok := servers.get(mcpServerName); ok && isOurServer(s) {
			servers.del(mcpServerName)
			removed = true
			if servers.empty() {
				mcp.del("mcpServers")
			} else {
				sb, err := servers.MarshalJSON()
				if err != nil {
					return false, err
				}
				mcp.set("mcpServers", sb)
			}
		}
	}
	if raw, ok := settings.get("enabledMcpjsonServers"); ok && removed {
		var enabled []string
		if json.Unmarshal(raw, &enabled) == nil {
			left := enabled[:0:0]
			for _, n := range enabled {
				if n != mcpServerName {
					left = append(left, n)
				}
			}
			if len(left) == 0 {
				settings.del("enabledMcpjsonServers")
			} else if b, err := marshalNoEscape(left); err == nil {
				settings.set("enabledMcpjsonServers", b)
			}
		}
	}
	return removed, nil
}

// jsonObject is a JSON object that keeps its keys' order and its values'
// bytes, so that init can edit a user's settings file without reordering
// or reformatting what it does not own.
type jsonObject struct {
	keys []string
	vals map[string]json.RawMessage
}

func newJSONObject() *jsonObject { return &jsonObject{vals: map[string]json.RawMessage{}} }

// parseJSONObject parses data as one JSON object. Empty (or blank) data is
// an empty object. Duplicate keys are refused: which one a harness honours
// is not ours to guess.
func parseJSONObject(data []byte) (*jsonObject, error) {
	o := newJSONObject()
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := o.vals[k]; dup {
			return nil, fmt.Errorf("duplicate key %q", k)
		}
		o.keys = append(o.keys, k)
		o.vals[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON object")
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("trailing data after the JSON object")
	}
	return o, nil
}

func (o *jsonObject) get(k string) (json.RawMessage, bool) { v, ok := o.vals[k]; return v, ok }

// set sets k, keeping its position or appending it.
func (o *jsonObject) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *jsonObject) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *jsonObject) empty() bool { return len(o.keys) == 0 }

// MarshalJSON writes the object compactly in key order.
func (o *jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := marshalNoEscape(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		var c bytes.Buffer
		if err := json.Compact(&c, o.vals[k]); err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		b.Write(c.Bytes())
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// pretty renders v indented by two spaces with a final newline, the way
// Claude Code writes its own settings.
func pretty(v any) ([]byte, error) {
	raw, err := marshalNoEscape(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// marshalNoEscape is json.Marshal without HTML escaping (hook commands hold
// '&' and '>').
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// lineDiff renders a unified-style line diff of a and b (no hunks: every
// line, marked " ", "-" or "+"), for --dry-run. Files are small.
func lineDiff(a, b string) string {
	x, y := splitKeep(a), splitKeep(b)
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			out.WriteString("  " + x[i] + "\n")
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+ " + y[j] + "\n")
			j++
		default:
			out.WriteString("- " + x[i] + "\n")
			i++
		}
	}
	return out.String()
}

func splitKeep(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
