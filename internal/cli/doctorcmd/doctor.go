// Package doctorcmd is `statewright doctor`: it finds statewright's install
// in every harness (each adapter's harness.Inspector: Claude Code's project
// and user settings and its plugin, Codex's project and user config.toml,
// Cursor, the opencode plugin, the Pi extension), checks what each names
// (binary, fail-closed wrapper, timing, store), runs a canary deny through
// each installed gate exactly as its harness runs it, and reports what the
// harness itself records (Codex's hook trust, Claude Code's permission
// mode).
package doctorcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/harness/claudecode"
	"github.com/statewright-go/statewright/harness/hook"
	"github.com/statewright-go/statewright/harness/install"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/store"
)

// MinClaudeCodeVersion is the oldest Claude Code statewright supports.
const MinClaudeCodeVersion = claudecode.MinVersion

type doctorOptions struct {
	project, claude, codex string
	asJSON                 bool
}

// NewCmdDoctor returns `statewright doctor`.
func NewCmdDoctor(f *cmdutil.Factory) *cobra.Command {
	var o doctorOptions
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that statewright is installed, on a healthy store, and enforcing, in every harness",
		Long: `doctor finds statewright's install in every harness that would govern a session in the
project: Claude Code (the project's .claude/settings.local.json and settings.json, the user's
settings, managed settings, the marketplace plugin), Codex (the project's .codex/config.toml and
the user's config.toml), Cursor (.cursor/hooks.json, ~/.cursor/hooks.json), the opencode plugin
(.opencode/plugins/) and the Pi extension (.pi/extensions/).

For each one found it checks the hooks are registered and run an existing binary on an existing
store with the id they name, that the tool gate fails closed and answers before the harness's
timeout, and runs a canary call (an edit of the harness's own hook configuration, which the law
denies in every state) through the installed gate exactly as the harness runs it: the hook
command through sh for Claude Code, Codex and Cursor, the command line the plugin spawns for
opencode and Pi. It reports what the harness records itself: Codex's hook trust (asked of Codex,
codex app-server), the permission mode Claude Code sessions start in, Claude Code's version, the
MCP server. It then lists which protections are in force.
It exits 1 when something essential is wrong, or when nothing is installed.`,
		Example: "  statewright doctor\n  statewright doctor --project ~/src/app --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), f, &o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the checks as JSON ({ok, checks: [{section, level, check, message}]})")
	cmd.Flags().StringVar(&o.project, "project", "", "the project directory (default: the working directory)")
	cmd.Flags().StringVar(&o.claude, "claude", "", "the claude binary (default: claude on $PATH)")
	cmd.Flags().StringVar(&o.codex, "codex", "", "the codex binary, asked about hook trust (default: codex on $PATH)")
	return cmd
}

// doctorReport collects check results: printed as they come, or kept for
// one JSON document (--json).
type doctorReport struct {
	w       io.Writer
	fails   int
	asJSON  bool
	section string // the install the checks are about ("" after the last)
	checks  []doctorCheck
}

// doctorCheck is one result of `doctor --json`.
type doctorCheck struct {
	Section string `json:"section,omitempty"` // "Claude Code (project: …)"
	Level   string `json:"level"`             // ok, warn or fail
	Check   string `json:"check"`
	Message string `json:"message"`
}

// heading starts the checks of one install ("" ends the last).
func (r *doctorReport) heading(title string) {
	r.section = title
	if !r.asJSON {
		fmt.Fprintln(r.w, strings.TrimSpace("== "+title))
	}
}

func (r *doctorReport) add(level, label, check, format string, args []any) {
	msg := fmt.Sprintf(format, args...)
	if r.asJSON {
		r.checks = append(r.checks, doctorCheck{Section: r.section, Level: level, Check: check, Message: msg})
		return
	}
	fmt.Fprintf(r.w, "%-5s %-11s %s\n", label, check, msg)
}

func (r *doctorReport) ok(check, format string, args ...any) { r.add("ok", "ok", check, format, args) }

func (r *doctorReport) warn(check, format string, args ...any) {
	r.add("warn", "warn", check, format, args)
}

func (r *doctorReport) fail(check, format string, args ...any) {
	r.fails++
	r.add("fail", "FAIL", check, format, args)
}

func (r *doctorReport) finding(f harness.Finding) {
	switch f.Level {
	case harness.OK:
		r.ok(f.Check, "%s", f.Text)
	case harness.Warn:
		r.warn(f.Check, "%s", f.Text)
	default:
		r.fail(f.Check, "%s", f.Text)
	}
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
	r := &doctorReport{w: out, asJSON: o.asJSON}
	binaries := map[string]string{"claude-code": o.claude, "codex": o.codex}
	gates := 0
	var (
		sandboxFlags   map[string]string
		sandboxHarness string
	)
	for _, a := range adapters.All {
		info := a.Info()
		installs, err := a.Inspect(ctx, harness.InspectQuery{Project: project, Binary: binaries[info.Name]})
		if err != nil {
			r.heading(info.Title)
			r.fail("install", "%v", err)
			continue
		}
		for _, in := range installs {
			where := in.Scope
			if in.File != "" {
				where += ": " + in.File
			}
			r.heading(info.Title + " (" + where + ")")
			if checkInstall(ctx, r, f, info, project, in) {
				gates++
				if sandboxFlags == nil {
					sandboxFlags, sandboxHarness = install.HookFlags(in.Hook), info.Name
				}
			}
		}
	}
	if gates == 0 {
		r.fail("install", "no harness has statewright's tool gate installed for %s: nothing is enforced here "+
			"(run `statewright init HARNESS`: %s)", project, strings.Join(adapters.Names(), ", "))
		return r.finish()
	}
	r.heading("")
	checkHookSandbox(ctx, r, sandboxHarness, sandboxFlags)
	checkAgentSandbox(ctx, r)
	checkGatewaySandbox(r, project)
	return r.finish()
}

// checkInstall checks one install and reports whether it has a tool gate.
func checkInstall(ctx context.Context, r *doctorReport, f *cmdutil.Factory, info harness.Info, project string, in *harness.Install) bool {
	for _, fd := range in.Findings {
		r.finding(fd)
	}
	if len(in.Events) > 0 {
		if len(in.Missing) > 0 {
			r.warn("hooks", "%d events registered, not %s (run `statewright init %s`)", len(in.Events), strings.Join(in.Missing, ", "), info.Name)
		} else {
			r.ok("hooks", "all %d events registered", len(in.Events))
		}
	}
	if in.Gate == nil {
		if len(in.Events) > 0 {
			r.fail("hooks", "no statewright tool gate (PreToolUse) in %s: nothing is enforced by it (run `statewright init %s`)", in.File, info.Name)
		}
		return false
	}
	flags := install.HookFlags(in.Hook)

	// Binary, wrapper, timing, store.
	bin := ""
	if len(in.Hook) > 0 {
		bin = in.Hook[0]
	}
	self, _ := os.Executable()
	switch fi, err := os.Stat(bin); {
	case !filepath.IsAbs(bin):
		r.fail("binary", "the gate runs %q, not an absolute path: a changed $PATH changes the law", bin)
	case err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		r.fail("binary", "the gate's binary %s is missing or not executable (every call is denied)", bin)
	case self != "" && !install.SameInstall(self, bin):
		r.warn("binary", "the gate runs %s, not this binary (%s)", bin, self)
	case install.FullBinary(bin) != bin:
		r.ok("binary", "%s, the thin client of this binary", bin)
	default:
		r.ok("binary", "%s", bin)
	}
	if in.FailClosed {
		r.ok("fail-closed", "a missing binary, a crash or a signal of the gate is a deny")
	} else {
		r.fail("fail-closed", "%s", in.FailOpen)
	}
	deadline := install.DefaultDeadline
	if d, err := time.ParseDuration(flags["deadline"]); err == nil {
		deadline = d
	}
	switch {
	case in.Timeout == 0:
		r.warn("timing", "hook deadline %v; the harness's timeout is unknown", deadline)
	case deadline < in.Timeout:
		r.ok("timing", "hook deadline %v < harness timeout %v; store busy timeout %v", deadline, in.Timeout, hook.BusyTimeout(deadline))
	default:
		r.fail("timing", "hook deadline %v is not under the harness timeout %v: %s kills the hook first", deadline, in.Timeout, info.Title)
	}
	checkStore(ctx, r, f, flags)

	// The canary, through the installed gate.
	canary(ctx, r, project, in.Gate)

	// Protections in force.
	if _, on := flags["require-workflow"]; on {
		r.ok("protection", "--require-workflow: with no run, every ordinary tool call is denied")
	} else {
		r.warn("protection", "no --require-workflow: a session without a run is dormant (tools allowed)")
	}
	if _, on := flags["audit-only"]; on {
		r.warn("protection", "--audit-only: decisions are recorded but NOT enforced")
	}
	if wf := flags["default-workflow"]; wf != "" {
		r.ok("protection", "--default-workflow %s starts for every new session", wf)
	}
	return true
}

// checkStore opens the store a gate names, with the id it names, and
// verifies its log.
func checkStore(ctx context.Context, r *doctorReport, f *cmdutil.Factory, flags map[string]string) {
	storePath, storeID := flags["store"], flags["store-id"]
	if storeID == "" && flags["store-id-file"] != "" {
		if b, err := os.ReadFile(flags["store-id-file"]); err == nil {
			storeID = strings.TrimSpace(string(b))
		}
	}
	st, err := f.OpenStoreAt(ctx, storePath, store.Options{MustExist: true, ExpectID: storeID, BusyTimeout: time.Second})
	if err != nil {
		r.fail("store", "%v", err)
		return
	}
	defer st.Close()
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
}

// canary runs the gate as its harness does (a command line through sh, in
// the project; or the argv a plugin spawns) with a call the law denies in
// every state, and reads the answer as the harness reads it.
func canary(ctx context.Context, r *doctorReport, project string, g *harness.Gate) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	if g.Shell != "" {
		cmd = exec.CommandContext(ctx, "sh", "-c", g.Shell)
	} else {
		cmd = exec.CommandContext(ctx, g.Argv[0], g.Argv[1:]...)
	}
	cmd.Dir = project
	cmd.Env = append(os.Environ(), g.Env...)
	cmd.Stdin = bytes.NewReader(g.Input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil && g.Shell == "":
		// The plugin could not spawn the binary: it blocks the call.
		r.fail("canary", "the call was denied, but not by the policy: the gate cannot run (%v)", err)
		return
	case err != nil:
		r.fail("canary", "cannot run the gate: %v", err)
		return
	}
	blocked, text := g.Blocked(code, stdout.Bytes(), stderr.Bytes())
	text = strings.ReplaceAll(strings.TrimSpace(text), "\n", " | ")
	switch {
	case blocked && strings.Contains(text, "rule self-protect"):
		r.ok("canary", "an edit of the harness's hook configuration is denied: %s", text)
	case blocked:
		r.fail("canary", "the call was denied, but not by the policy: the hook could not decide (%s)", text)
	default:
		r.fail("canary", "an edit of the harness's hook configuration was NOT denied: exit %d, %s", code, text)
	}
}

func (r *doctorReport) finish() error {
	if r.asJSON {
		if err := cmdutil.PrintJSON(r.w, struct {
			OK     bool          `json:"ok"`
			Checks []doctorCheck `json:"checks"`
		}{r.fails == 0, r.checks}); err != nil {
			return err
		}
		if r.fails > 0 {
			return cmdutil.Failure("")
		}
		return nil
	}
	if r.fails > 0 {
		return cmdutil.Failure(fmt.Sprintf("doctor: %d problem(s) found", r.fails))
	}
	fmt.Fprintln(r.w, "doctor: statewright is installed and enforcing")
	return nil
}
