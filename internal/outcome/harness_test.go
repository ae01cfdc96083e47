// Package outcome holds outcome tests of the static law: each test installs
// statewright's hooks with `statewright init claude-code --require-workflow`
// into a throwaway project and home, drives the installed hook commands the
// way Claude Code does (stdin JSON through `sh -c`), really performs what
// they allow (bash runs the command, the Write lands on disk), and then
// looks at the disk, the store, the printed output and the run state.
package outcome

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bin is the statewright binary under test, built once.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "statewright-outcome-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "statewright")
	// statewright-sandbox beside it, as a release installs them: the
	// hooks' rewritten commands run the slim launcher (test commands too).
	for _, b := range []string{"statewright", "statewright-sandbox"} {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, b), "github.com/statewright-go/statewright/cmd/"+b)
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build "+b+":", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// world is one installed project: a home, a project (a git repository),
// a store, the hook commands init wrote, and one session.
type world struct {
	t        *testing.T
	home     string
	project  string
	store    string
	env      []string
	hooks    map[string]string // event → command
	session  string
	seq      int
	outputs  []string // everything the agent was shown
	snapshot map[string]string
	// runtimeSock is a service socket in XDG_RUNTIME_DIR (sandboxed worlds).
	runtimeSock net.Listener
}

// newWorld installs statewright into a fresh project and home.
func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldWith(t)
}

// newWorldWith is newWorld with further flags for init (--sandbox).
func newWorldWith(t *testing.T, initFlags ...string) *world {
	t.Helper()
	return newWorldAt(t, "proj", initFlags...)
}

// newWorldAt is newWorldWith with the project at rel under the home
// directory ("" for the home directory itself, where some people run
// their agent).
func newWorldAt(t *testing.T, rel string, initFlags ...string) *world {
	t.Helper()
	return newWorldStore(t, rel, "", initFlags...)
}

// newWorldStore is newWorldAt with the store at location store ("" for a
// SQLite file under the home directory; a PostgreSQL URL).
func newWorldStore(t *testing.T, rel, store string, initFlags ...string) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, home: filepath.Join(root, "home"), project: filepath.Join(root, "home", rel), session: "sess-" + filepath.Base(root)}
	w.store = filepath.Join(w.home, ".local", "state", "statewright", "state.db")
	if store != "" {
		w.store = store
	}
	for _, d := range []string{w.project, filepath.Join(w.home, ".config"), filepath.Join(w.home, ".local", "state", "statewright")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	gocache, _ := exec.Command("go", "env", "GOCACHE").Output()
	gomod, _ := exec.Command("go", "env", "GOMODCACHE").Output()
	w.env = append(os.Environ(),
		"GOCACHE="+strings.TrimSpace(string(gocache)), "GOMODCACHE="+strings.TrimSpace(string(gomod)),
		"HOME="+w.home, "XDG_CONFIG_HOME="+filepath.Join(w.home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(w.home, ".local", "state"), "STATEWRIGHT_STORE=",
		"CLAUDE_PROJECT_DIR="+w.project, "GIT_CONFIG_NOSYSTEM=1", "GOFLAGS=-mod=mod",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
	)
	w.run("git", "init", "-q", ".")
	w.write(".gitignore", ".env\n")
	w.write("go.mod", "module example.com/proj\n\ngo 1.22\n")
	w.write("calc.go", "package proj\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n")
	w.write(filepath.Join(w.home, ".gitconfig"), "[user]\n\tname = t\n")
	w.write(".env", "API_KEY=envsecret-1c2d\n")
	w.cli(append([]string{"init", "claude-code", "--project", w.project, "--store", w.store, "--require-workflow"}, initFlags...)...)
	w.hooks = readHooks(t, w.project)
	// The person's operator token, as `statewright tokens create` leaves it.
	tok := strings.TrimSpace(w.cli("tokens", "create", "--role", "operator"))
	w.write(filepath.Join(w.home, ".config", "statewright", "operator-token"), tok+"\n")
	w.snapshot = w.hashLaw()
	return w
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// abs returns p under the project unless it is absolute.
func (w *world) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(w.project, p)
}

func (w *world) write(p, content string) {
	w.t.Helper()
	must(w.t, os.MkdirAll(filepath.Dir(w.abs(p)), 0o755))
	must(w.t, os.WriteFile(w.abs(p), []byte(content), 0o644))
}

// run runs a program in the project as the test (not the agent) does.
func (w *world) run(name string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = w.project, w.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// cli runs the statewright CLI as the person does.
func (w *world) cli(args ...string) string {
	w.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = w.project, w.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		w.t.Fatalf("statewright %v: %v\n%s%s", args, err, out, stderr.String())
	}
	return string(out)
}

// readHooks returns the hook commands init wrote (settings.local.json
// where it writes them, else settings.json).
func readHooks(t *testing.T, project string) map[string]string {
	t.Helper()
	var b []byte
	var err error
	for _, f := range []string{"settings.local.json", "settings.json"} {
		if b, err = os.ReadFile(filepath.Join(project, ".claude", f)); err == nil {
			break
		}
	}
	must(t, err)
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	must(t, json.Unmarshal(b, &s))
	out := map[string]string{}
	for ev, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if strings.Contains(h.Command, " hook claude-code ") {
					out[ev] = h.Command
				}
			}
		}
	}
	if out["PreToolUse"] == "" {
		t.Fatalf("init wrote no PreToolUse hook: %s", b)
	}
	return out
}

// start starts a bundled template for the session and moves it, as a
// person, through events to the phase under test.
func (w *world) start(template string, events ...string) {
	w.t.Helper()
	w.cli("start", template, "--session", w.session, "--store", w.store)
	for _, ev := range events {
		w.cli("transition", w.session, ev, "--store", w.store)
	}
}

// state returns the state and status of the session's newest run.
func (w *world) state() (string, string) {
	w.t.Helper()
	var runs []struct {
		SessionKey string `json:"session_key"`
		State      string `json:"state"`
		Status     string `json:"status"`
	}
	must(w.t, json.Unmarshal([]byte(w.cli("runs", "--all", "--json", "--store", w.store)), &runs))
	for i := len(runs) - 1; i >= 0; i-- {
		if strings.HasSuffix(runs[i].SessionKey, ":"+w.session) {
			return runs[i].State, runs[i].Status
		}
	}
	w.t.Fatalf("no run for %s", w.session)
	return "", ""
}

// hook runs the installed command for event with input on stdin, as
// Claude Code does, and returns its exit code, stdout and stderr.
func (w *world) hook(event string, input map[string]any) (int, string, string) {
	w.t.Helper()
	cmdline := w.hooks[event]
	if cmdline == "" {
		w.t.Fatalf("no %s hook", event)
	}
	input["session_id"] = strings.TrimPrefix(w.session, "claude-code:")
	input["hook_event_name"] = event
	input["cwd"] = w.project
	input["transcript_path"] = filepath.Join(w.home, ".claude", "projects", "t.jsonl")
	if _, ok := input["permission_mode"]; !ok {
		input["permission_mode"] = "default"
	}
	b, _ := json.Marshal(input)
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir, cmd.Env = w.project, w.env
	cmd.Stdin = bytes.NewReader(b)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// result is what happened to one tool call.
type result struct {
	allowed bool
	reason  string // the deny reason the agent is shown
	output  string // what the tool returned to the agent
}

// call decides a tool call through the installed PreToolUse hook and, when
// it is allowed, performs it as Claude Code would, then reports it with
// PostToolUse.
func (w *world) call(tool string, input map[string]any) result {
	w.t.Helper()
	id, input, denied := w.pre(tool, input)
	if denied != nil {
		return *denied
	}
	out, failed := w.perform(tool, input)
	w.outputs = append(w.outputs, out)
	post := "PostToolUse"
	if failed {
		post = "PostToolUseFailure"
	}
	w.hook(post, map[string]any{"tool_name": tool, "tool_input": input, "tool_use_id": id,
		"tool_response": map[string]any{"stdout": out, "exitCode": map[bool]int{true: 1, false: 0}[failed]}})
	return result{allowed: true, output: out}
}

// pre decides a tool call through the installed PreToolUse hook and
// returns its id and the input the harness runs (the rewritten one, when
// the hook rewrote it), or the deny.
func (w *world) pre(tool string, input map[string]any) (id string, run map[string]any, denied *result) {
	w.t.Helper()
	w.seq++
	id = fmt.Sprintf("toolu_%d_%d", time.Now().UnixNano(), w.seq)
	code, stdout, stderr := w.hook("PreToolUse", map[string]any{"tool_name": tool, "tool_input": input, "tool_use_id": id})
	var ans struct {
		HookSpecificOutput struct {
			PermissionDecision       string          `json:"permissionDecision"`
			PermissionDecisionReason string          `json:"permissionDecisionReason"`
			UpdatedInput             json.RawMessage `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	_ = json.Unmarshal([]byte(stdout), &ans)
	if up := ans.HookSpecificOutput.UpdatedInput; len(up) > 0 && ans.HookSpecificOutput.PermissionDecision == "allow" {
		// Claude Code runs the rewritten input (a test command through
		// `statewright testrun`, a shell command through the launcher).
		var m map[string]any
		if err := json.Unmarshal(up, &m); err != nil {
			w.t.Fatalf("PreToolUse updatedInput is not an object: %s", up)
		}
		input = m
	}
	switch {
	case code == 2:
		w.outputs = append(w.outputs, stderr)
		return id, nil, &result{reason: stderr}
	case code != 0:
		w.t.Fatalf("PreToolUse exited %d: %s %s", code, stdout, stderr)
	case ans.HookSpecificOutput.PermissionDecision == "deny" || ans.HookSpecificOutput.PermissionDecision == "ask":
		w.outputs = append(w.outputs, ans.HookSpecificOutput.PermissionDecisionReason)
		return id, nil, &result{reason: ans.HookSpecificOutput.PermissionDecisionReason}
	}
	return id, input, nil
}

// perform runs an allowed call the way Claude Code's tools do.
func (w *world) perform(tool string, in map[string]any) (string, bool) {
	str := func(k string) string { s, _ := in[k].(string); return s }
	switch tool {
	case "Bash":
		cmd := exec.Command("bash", "-c", str("command"))
		cmd.Dir, cmd.Env = w.project, w.env
		out, err := cmd.CombinedOutput()
		return string(out), err != nil
	case "Write":
		p := w.abs(str("file_path"))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err.Error(), true
		}
		if err := os.WriteFile(p, []byte(str("content")), 0o644); err != nil {
			return err.Error(), true
		}
		return "File written", false
	case "Edit":
		p := w.abs(str("file_path"))
		b, err := os.ReadFile(p)
		if err != nil {
			return err.Error(), true
		}
		if !strings.Contains(string(b), str("old_string")) {
			return "old_string not found", true
		}
		return "Edited", os.WriteFile(p, []byte(strings.Replace(string(b), str("old_string"), str("new_string"), 1)), 0o644) != nil
	case "Read":
		b, err := os.ReadFile(w.abs(str("file_path")))
		if err != nil {
			return err.Error(), true
		}
		return string(b), false
	case "Grep":
		dir := str("path")
		if dir == "" {
			dir = w.project
		}
		cmd := exec.Command("grep", "-rn", "--", str("pattern"), w.abs(dir))
		cmd.Env = w.env
		out, _ := cmd.CombinedOutput()
		return string(out), false
	}
	return "", false
}

// bash is call("Bash", {command}).
func (w *world) bash(command string) result {
	w.t.Helper()
	return w.call("Bash", map[string]any{"command": command})
}

// bashDenied runs each command through the hook and fails the test when
// one is allowed (what it printed is shown) or its deny does not name
// phase (any deny when phase is empty).
func (w *world) bashDenied(phase string, cmds ...string) {
	w.t.Helper()
	for _, cmd := range cmds {
		if r := w.bash(cmd); r.allowed {
			w.t.Errorf("%q was allowed: %s", cmd, clip(r.output))
		} else if !strings.Contains(r.reason, phase) {
			w.t.Errorf("%q: the deny does not name the phase: %s", cmd, r.reason)
		}
	}
}

// bashAllowed runs each command through the hook and fails the test when
// one is denied.
func (w *world) bashAllowed(cmds ...string) {
	w.t.Helper()
	for _, cmd := range cmds {
		if r := w.bash(cmd); !r.allowed {
			w.t.Errorf("%q was denied: %s", cmd, r.reason)
		}
	}
}

// lawFiles are the files the law consists of in a world, relative to home.
func (w *world) lawFiles() []string {
	var out []string
	for _, root := range []string{filepath.Join(w.project, ".claude"), filepath.Join(w.home, ".config", "statewright"), filepath.Join(w.project, ".git", "hooks")} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
	}
	return append(out, filepath.Join(w.project, ".mcp.json"), filepath.Join(w.home, ".gitconfig"),
		filepath.Join(w.project, ".git", "config"), w.store)
}

// hashLaw hashes every law file (the store by existence only: it changes
// with every decision).
func (w *world) hashLaw() map[string]string {
	m := map[string]string{}
	for _, p := range w.lawFiles() {
		b, err := os.ReadFile(p)
		switch {
		case err != nil:
			m[p] = "missing"
		case p == w.store:
			m[p] = "present"
		default:
			s := sha256.Sum256(b)
			m[p] = hex.EncodeToString(s[:])
		}
	}
	return m
}

// lawUnchanged fails the test when a law file changed, appeared or vanished.
func (w *world) lawUnchanged() {
	w.t.Helper()
	now := w.hashLaw()
	for p, h := range w.snapshot {
		if now[p] != h {
			w.t.Errorf("protected file %s changed (%s → %s)", p, h[:min(8, len(h))], now[p][:min(8, len(now[p]))])
		}
	}
	for p := range now {
		if _, ok := w.snapshot[p]; !ok {
			w.t.Errorf("protected file %s appeared", p)
		}
	}
}

// secrets are the values that must never reach the agent.
func (w *world) secrets() []string {
	b, err := os.ReadFile(filepath.Join(w.home, ".config", "statewright", "operator-token"))
	must(w.t, err)
	return []string{strings.TrimSpace(string(b)), "envsecret-1c2d", "sshsecret-9f8e", "npmsecret-77aa"}
}

// noSecretShown fails the test when a secret appears in anything the agent saw.
func (w *world) noSecretShown() {
	w.t.Helper()
	for _, o := range w.outputs {
		for _, s := range w.secrets() {
			if strings.Contains(o, s) {
				w.t.Errorf("a secret reached the agent: %q", clip(o))
			}
		}
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
