// Package doctorcmd is `statewright doctor`: checks that a Claude Code
// install enforces (hooks, binary, fail-closed wrapper, timing, store, MCP
// server, sandbox) and runs a canary call.
package doctorcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/harness/claudecode"
	"github.com/statewright-go/statewright/harness/hook"
	"github.com/statewright-go/statewright/harness/install"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/internal/hookwire"
	"github.com/statewright-go/statewright/store"
)

// MinClaudeCodeVersion is the oldest Claude Code statewright supports: the
// version the end-to-end tests run (hook input with tool_use_id and
// permission_mode, exit-2 denies, updatedInput on MCP calls,
// PostToolUseFailure, SessionEnd).
const MinClaudeCodeVersion = "2.1.332"

type doctorOptions struct {
	project, claude string
}

// NewCmdDoctor returns `statewright doctor`.
func NewCmdDoctor(f *cmdutil.Factory) *cobra.Command {
	var o doctorOptions
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that statewright's Claude Code hooks are installed, on a healthy store, and enforcing",
		Long: `doctor checks the project's Claude Code installation: the hooks are registered and run this
binary on an existing store with the id they name, PreToolUse fails closed, the hook deadline is
under the harness timeout, the MCP server uses the same store, Claude Code is recent enough, and a
canary call (an edit of .claude/settings.json, run through the registered PreToolUse command
exactly as Claude Code runs it) is denied. It then lists which protections are in force.
It exits 1 when something essential is wrong.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), f, &o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.project, "project", "", "the project directory (default: the working directory)")
	cmd.Flags().StringVar(&o.claude, "claude", "", "the claude binary (default: claude on $PATH)")
	return cmd
}

// doctorReport collects check results.
type doctorReport struct {
	w     io.Writer
	fails int
}

func (r *doctorReport) ok(check, format string, args ...any) {
	fmt.Fprintf(r.w, "ok    %-11s %s\n", check, fmt.Sprintf(format, args...))
}

func (r *doctorReport) warn(check, format string, args ...any) {
	fmt.Fprintf(r.w, "warn  %-11s %s\n", check, fmt.Sprintf(format, args...))
}

func (r *doctorReport) fail(check, format string, args ...any) {
	r.fails++
	fmt.Fprintf(r.w, "FAIL  %-11s %s\n", check, fmt.Sprintf(format, args...))
}

// installedHook is one statewright hook found in a settings file.
type installedHook struct {
	file    string
	event   claudecode.Event
	command string
	timeout int // seconds; 0 when unset (Claude Code's default, 60)
	args    []string
	flags   map[string]string
}

func runDoctor(ctx context.Context, f *cmdutil.Factory, o *doctorOptions, out io.Writer) error {
	project := o.project
	if project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		project = wd
	}
	project, _ = filepath.Abs(project)
	r := &doctorReport{w: out}

	// 1. Hooks.
	var files []string
	for _, f := range []string{filepath.Join(project, ".claude", "settings.json"), filepath.Join(project, ".claude", "settings.local.json")} {
		files = append(files, f)
	}
	if home, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(home, ".claude", "settings.json"))
	}
	hooks := map[claudecode.Event]*installedHook{}
	var settings *install.Object
	for i, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			r.fail("settings", "%v", err)
			continue
		}
		obj, err := install.ParseObject(b)
		if err != nil {
			r.fail("settings", "%s is not a JSON object: %v (Claude Code ignores it)", f, err)
			continue
		}
		if i == 0 {
			settings = obj
		}
		if raw, ok := obj.Get("disableAllHooks"); ok && string(raw) == "true" {
			r.fail("hooks", "%s sets disableAllHooks: no hook runs, nothing is enforced", f)
		}
		found, err := findHooks(f, obj)
		if err != nil {
			r.fail("settings", "%s: %v", f, err)
		}
		for _, h := range found {
			if prev := hooks[h.event]; prev != nil {
				r.warn("hooks", "%s is registered twice (%s and %s): both run", h.event, prev.file, h.file)
				continue
			}
			hooks[h.event] = h
		}
	}
	pre := hooks[claudecode.PreToolUse]
	if pre == nil {
		r.fail("hooks", "no statewright PreToolUse hook in %s: nothing is enforced (run `statewright init claude-code`)", strings.Join(files, ", "))
	} else {
		var missing []string
		for _, ev := range claudecode.Events {
			if hooks[ev] == nil {
				missing = append(missing, string(ev))
			}
		}
		if len(missing) > 0 {
			r.warn("hooks", "PreToolUse is registered, but not %s (run `statewright init claude-code`)", strings.Join(missing, ", "))
		} else {
			r.ok("hooks", "all %d events registered (%s)", len(claudecode.Events), pre.file)
		}
	}
	if pre == nil {
		return r.finish()
	}

	// 2. Binary, wrapper, timing, store.
	bin := ""
	if len(pre.args) > 0 {
		bin = pre.args[0]
	}
	self, _ := os.Executable()
	switch fi, err := os.Stat(bin); {
	case !filepath.IsAbs(bin):
		r.fail("binary", "the hook runs %q, not an absolute path: a changed $PATH changes the law", bin)
	case err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		r.fail("binary", "the hook's binary %s is missing or not executable (the wrapper denies every call)", bin)
	case self != "" && !sameFile(self, fullBinaryOf(bin)):
		r.warn("binary", "the hooks run %s, not this binary (%s)", bin, self)
	case fullBinaryOf(bin) != bin:
		r.ok("binary", "%s, the thin client of this binary", bin)
	default:
		r.ok("binary", "%s", bin)
	}
	if strings.Contains(pre.command, "exit 2") && strings.Contains(pre.command, "||") {
		r.ok("fail-closed", "PreToolUse turns a missing binary, crash or signal into a deny (|| ... exit 2)")
	} else {
		r.fail("fail-closed", "PreToolUse has no `|| exit 2` wrapper: a crash or missing binary lets calls through")
	}
	deadline := install.DefaultDeadline
	if d, err := time.ParseDuration(pre.flags["deadline"]); err == nil {
		deadline = d
	}
	timeout := time.Duration(pre.timeout) * time.Second
	if pre.timeout == 0 {
		timeout = 60 * time.Second
	}
	if deadline < timeout {
		r.ok("timing", "hook deadline %v < harness timeout %v; store busy timeout %v", deadline, timeout, hook.BusyTimeout(deadline))
	} else {
		r.fail("timing", "hook deadline %v is not under the harness timeout %v: Claude Code kills the hook first and fails open", deadline, timeout)
	}
	storePath, storeID := pre.flags["store"], pre.flags["store-id"]
	for _, h := range hooks {
		if h.flags["store"] != storePath || h.flags["store-id"] != storeID {
			r.fail("store", "the %s hook uses store %s (id %s), PreToolUse uses %s (id %s)", h.event, h.flags["store"], h.flags["store-id"], storePath, storeID)
		}
	}
	if storeID == "" && pre.flags["store-id-file"] != "" {
		if b, err := os.ReadFile(pre.flags["store-id-file"]); err == nil {
			storeID = strings.TrimSpace(string(b))
		}
	}
	if st, err := f.OpenStoreAt(ctx, storePath, store.Options{MustExist: true, ExpectID: storeID, BusyTimeout: time.Second}); err != nil {
		r.fail("store", "%v", err)
	} else {
		r.ok("store", "%s (id %s)", storePath, storeID)
		// The log's tamper evidence: every chain, and the newest signed
		// checkpoint (statewright verify says the same).
		if keys, err := cmdutil.TrustedKeys(nil); err != nil {
			r.fail("audit", "%v", err)
		} else if v, err := store.Audit(ctx, st, keys, nil); err != nil {
			r.fail("audit", "the event log does NOT verify: %v", err)
		} else if v.Newest == nil {
			r.warn("audit", "%s", v.String())
		} else {
			r.ok("audit", "%s", v.String())
		}
		st.Close()
	}

	// 3. MCP server on the same store.
	checkMCP(r, project, settings, bin, storePath, storeID)

	// 4. Claude Code's version.
	checkClaudeVersion(ctx, r, o.claude)

	// 5. Canary: the registered PreToolUse command must deny an edit of the settings.
	canary(ctx, r, project, pre.command)

	// 6. Protections in force.
	r.ok("protection", "self-protection: the store, workflows, this binary, hook settings, .mcp.json, shell rc files and .git/hooks are never writable by the agent")
	if _, on := pre.flags["require-workflow"]; on {
		r.ok("protection", "--require-workflow: with no run, every ordinary tool call is denied")
	} else {
		r.warn("protection", "no --require-workflow: a session without a run is dormant (tools allowed)")
	}
	if _, on := pre.flags["audit-only"]; on {
		r.warn("protection", "--audit-only: decisions are recorded but NOT enforced")
	}
	if wf := pre.flags["default-workflow"]; wf != "" {
		r.ok("protection", "--default-workflow %s starts for every new session", wf)
	}
	mode := ""
	if settings != nil {
		if raw, ok := settings.Get("permissions"); ok {
			var p struct {
				DefaultMode string `json:"defaultMode"`
			}
			json.Unmarshal(raw, &p)
			mode = p.DefaultMode
		}
	}
	if mode == "" || claudecode.AskGrants(mode) {
		r.ok("protection", "permission mode default: a person answers Claude Code's prompts, so a human-only call may be granted there")
	} else {
		r.ok("protection", "permission mode %s: nobody answers prompts, so human-only calls are denied (use the statewright CLI)", mode)
	}
	checkHookSandbox(ctx, r, pre.flags)
	checkAgentSandbox(ctx, r)
	return r.finish()
}

func (r *doctorReport) finish() error {
	if r.fails > 0 {
		return cmdutil.Failure(fmt.Sprintf("doctor: %d problem(s) found", r.fails))
	}
	fmt.Fprintln(r.w, "doctor: statewright is installed and enforcing")
	return nil
}

// fullBinaryOf returns the full statewright binary a hook command runs:
// for the thin hook client, the "statewright" beside it, which it hands
// over to (cmd/statewright-hook); for any other binary, that binary.
func fullBinaryOf(bin string) string {
	base := filepath.Base(bin)
	ext := filepath.Ext(base)
	if strings.TrimSuffix(base, ext) != hookwire.ClientName {
		return bin
	}
	dir := filepath.Dir(bin)
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		dir = filepath.Dir(r)
	}
	return filepath.Join(dir, "statewright"+ext)
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// findHooks returns the statewright hooks registered in a settings object.
func findHooks(file string, settings *install.Object) ([]*installedHook, error) {
	raw, ok := settings.Get("hooks")
	if !ok {
		return nil, nil
	}
	var hooks map[string][]struct {
		Hooks []struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Timeout int    `json:"timeout"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(raw, &hooks); err != nil {
		return nil, fmt.Errorf("\"hooks\" does not have Claude Code's shape: %w", err)
	}
	var out []*installedHook
	for name, groups := range hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h.Type != "command" || !install.IsHookOf("claude-code", h.Command) {
					continue
				}
				ev, err := claudecode.ParseEvent(name)
				if err != nil {
					continue
				}
				args := shellWords(h.Command)
				ih := &installedHook{file: file, event: ev, command: h.Command, timeout: h.Timeout, args: args, flags: map[string]string{}}
				for i := 4; i < len(args); i++ {
					f, ok := strings.CutPrefix(args[i], "--")
					if !ok {
						continue
					}
					if k, v, ok := strings.Cut(f, "="); ok {
						ih.flags[k] = v
					} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
						ih.flags[f] = args[i+1]
						i++
					} else {
						ih.flags[f] = ""
					}
				}
				out = append(out, ih)
			}
		}
	}
	return out, nil
}

// shellWords splits the leading simple command of a hook command line into
// words (single and double quotes, backslashes), stopping at the first
// unquoted operator (||, &&, ;, |).
func shellWords(s string) []string {
	var (
		words []string
		cur   strings.Builder
		in    bool
	)
	flush := func() {
		if in {
			words = append(words, cur.String())
			cur.Reset()
			in = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == '|' || c == '&' || c == ';':
			flush()
			return words
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	flush()
	return words
}

func checkMCP(r *doctorReport, project string, settings *install.Object, bin, storePath, storeID string) {
	var srv struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	raw, where, err := claudecode.LocalMCPServer(project)
	switch {
	case err != nil:
		r.fail("mcp", "%v", err)
		return
	case raw != nil:
		if err := json.Unmarshal(raw, &srv); err != nil {
			r.fail("mcp", "%s: the %q server: %v", where, claudecode.MCPServerName, err)
			return
		}
		where = "the local scope of " + where
	default:
		// The older form: the server in the project's shared .mcp.json.
		b, err := os.ReadFile(filepath.Join(project, claudecode.MCPConfig))
		if err != nil {
			r.warn("mcp", "no %q server in the project's local scope (%s) or .mcp.json: the agent has no statewright control tools (transitions only through the CLI)", claudecode.MCPServerName, where)
			return
		}
		var cfg struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			r.fail("mcp", ".mcp.json: %v", err)
			return
		}
		raw, ok := cfg.MCPServers[claudecode.MCPServerName]
		if !ok {
			r.warn("mcp", "no %q server in the project's local scope (%s) or .mcp.json: the agent has no statewright control tools", claudecode.MCPServerName, where)
			return
		}
		if err := json.Unmarshal(raw, &srv); err != nil {
			r.fail("mcp", ".mcp.json: the %q server: %v", claudecode.MCPServerName, err)
			return
		}
		where = ".mcp.json"
		r.warn("mcp", "the %q server is in .mcp.json, which the repository shares (an older init): run `statewright init claude-code` again to move it into the local scope", claudecode.MCPServerName)
		enabled := false
		if settings != nil {
			if raw, ok := settings.Get("enabledMcpjsonServers"); ok {
				var names []string
				json.Unmarshal(raw, &names)
				for _, n := range names {
					enabled = enabled || n == claudecode.MCPServerName
				}
			}
			if raw, ok := settings.Get("enableAllProjectMcpServers"); ok && string(raw) == "true" {
				enabled = true
			}
		}
		if !enabled {
			r.warn("mcp", "the %q server is not in enabledMcpjsonServers: Claude Code asks before starting it", claudecode.MCPServerName)
		}
	}
	var gotStore, gotID string
	for i := 0; i+1 < len(srv.Args); i++ {
		switch srv.Args[i] {
		case "--store":
			gotStore = srv.Args[i+1]
		case "--store-id":
			gotID = srv.Args[i+1]
		}
	}
	if gotStore != storePath || gotID != storeID {
		r.fail("mcp", "the MCP server in %s uses store %s (id %s), the hooks %s (id %s): they would disagree", where, gotStore, gotID, storePath, storeID)
		return
	}
	if full := fullBinaryOf(bin); srv.Command != full && !sameFile(srv.Command, full) {
		r.warn("mcp", "the MCP server runs %s, the hooks %s", srv.Command, bin)
	}
	r.ok("mcp", "server %q on the same store (%s)", claudecode.MCPServerName, where)
}

func checkClaudeVersion(ctx context.Context, r *doctorReport, claude string) {
	if claude == "" {
		p, err := exec.LookPath("claude")
		if err != nil {
			r.warn("claude", "claude is not on $PATH; cannot check its version (need >= %s; --claude PATH)", MinClaudeCodeVersion)
			return
		}
		claude = p
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "--version")
	cmd.Env = append(os.Environ(), "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	out, err := cmd.Output()
	if err != nil {
		r.fail("claude", "%s --version: %v", claude, err)
		return
	}
	ver := strings.Fields(string(out))
	if len(ver) == 0 {
		r.fail("claude", "%s --version printed nothing", claude)
		return
	}
	if compareVersions(ver[0], MinClaudeCodeVersion) < 0 {
		r.fail("claude", "Claude Code %s is older than the supported minimum %s", ver[0], MinClaudeCodeVersion)
		return
	}
	r.ok("claude", "Claude Code %s (minimum %s)", ver[0], MinClaudeCodeVersion)
}

// compareVersions compares dotted numeric versions ("2.1.332").
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(strings.TrimFunc(pa[i], func(r rune) bool { return r < '0' || r > '9' }))
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// canary runs the registered PreToolUse command through sh, exactly as
// Claude Code does, with a call that must be denied in every state.
func canary(ctx context.Context, r *doctorReport, project, command string) {
	input, _ := json.Marshal(map[string]any{
		"session_id": "statewright-doctor", "transcript_path": "", "cwd": project, "permission_mode": "default",
		"hook_event_name": "PreToolUse", "tool_name": "Edit",
		"tool_input":  map[string]any{"file_path": filepath.Join(project, ".claude", "settings.json"), "old_string": "a", "new_string": "b"},
		"tool_use_id": fmt.Sprintf("doctor-canary-%d", time.Now().UnixNano()),
	})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = project
	cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+project)
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		r.fail("canary", "cannot run the PreToolUse command: %v", err)
		return
	}
	// The hook denies with Claude Code's JSON (exit 0, permissionDecision
	// "deny"); exit 2 is the wrapper's, when the hook itself failed.
	first := strings.ReplaceAll(strings.TrimSpace(stderr.String()), "\n", " | ")
	var out struct {
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	json.Unmarshal(stdout.Bytes(), &out)
	reason := out.HookSpecificOutput.PermissionDecisionReason
	denied := code == 0 && out.HookSpecificOutput.PermissionDecision == "deny"
	switch {
	case denied && strings.Contains(reason, "rule self-protect"):
		r.ok("canary", "an edit of .claude/settings.json is denied: %s", reason)
	case denied:
		r.fail("canary", "the call was denied, but not by the policy: the hook could not decide (%s)", reason)
	case code == 2:
		r.fail("canary", "the call was denied, but not by the policy: the hook could not decide (%s)", first)
	default:
		r.fail("canary", "an edit of .claude/settings.json was NOT denied: exit %d, stdout %q, stderr %q", code, stdout.String(), first)
	}
}
