//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// Pinned versions: scripts/install-harnesses.sh installs exactly these.
const (
	OpencodeVersion = "1.18.33"
	PiVersion       = "0.73.1"
)

// pluginTimeout is the least time one opencode or Pi run gets.
const pluginTimeout = 4 * time.Minute

// pluginBudget bounds one opencode or Pi run: the time left before the
// test binary's -timeout, less a minute to report, and never less than
// pluginTimeout. A run that hangs still fails with its output (not with
// the test binary's panic); a slow, shared machine is not a failure (on a
// loaded 2-core host opencode alone took four minutes to reach its first
// model call, so a fixed bound was a timing assertion).
func pluginBudget(t *testing.T) time.Duration {
	d, ok := t.Deadline()
	if !ok {
		return 4 * pluginTimeout
	}
	return max(time.Until(d)-time.Minute, pluginTimeout)
}

// npmBinary returns the absolute path of a harness binary: $envVar, else
// the one scripts/install-harnesses.sh installs. A missing harness fails
// the test (never skips it) and says how to install it.
func npmBinary(t *testing.T, name, envVar, version string) string {
	t.Helper()
	if p := os.Getenv(envVar); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(abs); err != nil {
			t.Fatalf("e2e: $%s=%s: %v", envVar, p, err)
		}
		return abs
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	prefix := os.Getenv("STATEWRIGHT_HARNESS_PREFIX")
	if prefix == "" {
		prefix = filepath.Join(root, ".harnesses")
	}
	p := filepath.Join(prefix, "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("e2e: %s is not installed at %s: run `bash scripts/install-harnesses.sh` (needs npm and the npm registry), "+
			"or set $%s to a %s %s binary", name, p, envVar, name, version)
	}
	return p
}

// pluginProject is a temporary project with statewright's opencode plugin
// or Pi extension installed by `statewright init`, its own copy of the
// binary (so a test may remove or replace it) and its own store.
type pluginProject struct {
	harness                           string // "opencode" or "pi"
	bin, dir, home, storePath, wfPath string
	// env is added to the harness's environment.
	env []string
}

func newPluginProject(t *testing.T, harness string) *pluginProject {
	t.Helper()
	return newPluginProjectWith(t, harness, e2eWorkflow)
}

// newPluginProjectWith is newPluginProject with the default workflow's
// JSON and further init flags.
func newPluginProjectWith(t *testing.T, harness, workflowJSON string, initArgs ...string) *pluginProject {
	t.Helper()
	p := &pluginProject{harness: harness, dir: t.TempDir(), home: t.TempDir()}
	var err error
	if p.dir, err = filepath.EvalSymlinks(p.dir); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	p.bin = filepath.Join(state, "bin", "statewright")
	os.MkdirAll(filepath.Dir(p.bin), 0o755)
	src, err := os.ReadFile(statewrightBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	p.storePath = filepath.Join(state, "store", "state.db")
	p.wfPath = filepath.Join(state, "e2e-bugfix.json")
	if err := os.WriteFile(p.wfPath, []byte(workflowJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.path("main.txt"), []byte("old line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The operator's default workflow starts for every new session: the
	// harness makes its session id up, so no one can start it beforehand.
	out, err := exec.Command(p.bin, append([]string{"init", harness, "--project", p.dir, "--store", p.storePath,
		"--default-workflow", p.wfPath}, initArgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("statewright init %s: %v\n%s", harness, err, out)
	}
	t.Logf("init %s:\n%s", harness, out)
	return p
}

func (p *pluginProject) path(name string) string { return filepath.Join(p.dir, name) }

// cli runs the project's statewright binary as the operator.
func (p *pluginProject) cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(p.bin, args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(filepath.Dir(p.storePath), "config"), "STATEWRIGHT_STORE="+p.storePath)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("statewright %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// session returns the one session of this harness the store has a run
// for, without the "harness:" prefix, and its run's state.
func (p *pluginProject) session(t *testing.T) (id, state string) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), p.storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range runs {
		keys = append(keys, r.SessionKey+"="+r.State)
		if strings.HasPrefix(r.SessionKey, p.harness+":") {
			if id != "" && id != strings.TrimPrefix(r.SessionKey, p.harness+":") {
				t.Fatalf("more than one %s session in the store: %v", p.harness, keys)
			}
			id, state = strings.TrimPrefix(r.SessionKey, p.harness+":"), r.State
		}
	}
	if id == "" {
		t.Fatalf("the store has no %s session (the plugin never started the default workflow): %v", p.harness, keys)
	}
	return id, state
}

// lastExit returns runtime.last_command.exit_code of the session's run.
func (p *pluginProject) lastExit(t *testing.T, session string) (int, bool) {
	t.Helper()
	lc, _ := p.evidence(t, session)["last_command"].(map[string]any)
	switch c := lc["exit_code"].(type) {
	case int:
		return c, true
	case *int:
		if c != nil {
			return *c, true
		}
	case float64:
		return int(c), true
	}
	return 0, false
}

// evidence returns the runtime evidence of the session's run (what guards
// read under runtime.*), as the store holds it.
func (p *pluginProject) evidence(t *testing.T, session string) map[string]any {
	t.Helper()
	st, err := sqlite.Open(context.Background(), p.storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v, err := runtime.New(st, runtime.Options{ProjectDir: p.dir}).Status(context.Background(), p.harness+":"+session)
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	return v.Runtime
}

// decisions returns the store's decisions for the session, by call id, and
// the states its transitions reached, as `statewright history --json`
// shows them.
func (p *pluginProject) decisions(t *testing.T, session string) (map[string]string, []string) {
	t.Helper()
	var evs []store.Event
	if err := json.Unmarshal([]byte(p.cli(t, "history", session, "--harness", p.harness, "--json")), &evs); err != nil {
		t.Fatalf("history --json: %v", err)
	}
	decisions := map[string]string{}
	var transitions []string
	for _, e := range evs {
		switch e.Kind {
		case store.KindDecision:
			decisions[e.ToolUseID] = e.Decision
		case store.KindTransition:
			transitions = append(transitions, e.State)
		}
	}
	return decisions, transitions
}

// chatScript is a fake model script for the Chat Completions harnesses.
func chatScript(turns ...fakemodel.Turn) fakemodel.Script {
	return fakemodel.Script{Turns: turns, ExhaustedText: "Stopping now."}
}

// baseEnv is the environment both harnesses start from: nothing of the
// caller's beyond PATH and LANG, so no real key or config leaks in.
func baseEnv(home string) []string {
	return []string{
		"HOME=" + home,
		"PATH=" + envOr("PATH", "/usr/local/bin:/usr/bin:/bin"),
		"LANG=" + envOr("LANG", "C.UTF-8"),
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
	}
}

// OpencodeEnv returns the environment for running opencode offline against
// a fake Chat Completions server at baseURL: an OpenAI-compatible provider
// "fake" in OPENCODE_CONFIG_CONTENT (layered over the project's
// opencode.json, which init owns), no auto-update, no models.dev fetch, no
// LSP downloads, no sharing, and npm in offline mode (opencode installs
// @opencode-ai/plugin into every config directory at startup; offline, that
// fails at once instead of retrying for a minute).
func OpencodeEnv(home, baseURL string) []string {
	cfg, _ := json.Marshal(map[string]any{
		"autoupdate": false,
		"share":      "disabled",
		"provider": map[string]any{"fake": map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "fakemodel",
			"options": map[string]any{"baseURL": baseURL + "/v1", "apiKey": "fakemodel"},
			"models":  map[string]any{"fake-model": map[string]any{"name": "fake-model"}, "fake-big": map[string]any{"name": "fake-big"}},
		}},
		"model":       "fake/fake-model",
		"small_model": "fake/fake-model",
	})
	os.MkdirAll(filepath.Join(home, "tmp"), 0o700)
	return append(baseEnv(home),
		"OPENCODE_CONFIG_CONTENT="+string(cfg),
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_CLAUDE_CODE=1",
		"npm_config_offline=true",
	)
}

// PiEnv returns the environment for running Pi offline against a fake Chat
// Completions server at baseURL: its agent directory (home/.pi-agent) holds
// a models.json with an openai-completions provider "fake"; PI_OFFLINE
// turns off update checks, package checks and install telemetry.
func PiEnv(t *testing.T, home, baseURL string) []string {
	t.Helper()
	agent := filepath.Join(home, ".pi-agent")
	os.MkdirAll(agent, 0o700)
	os.MkdirAll(filepath.Join(home, "tmp"), 0o700)
	models, _ := json.Marshal(map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": baseURL + "/v1", "api": "openai-completions", "apiKey": "fakemodel",
		"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
		"models": []any{map[string]any{"id": "fake-model"}, map[string]any{"id": "fake-big"}},
	}}})
	if err := os.WriteFile(filepath.Join(agent, "models.json"), models, 0o600); err != nil {
		t.Fatal(err)
	}
	return append(baseEnv(home),
		"PI_CODING_AGENT_DIR="+agent,
		"PI_OFFLINE=1",
		"PI_SKIP_VERSION_CHECK=1",
		"PI_TELEMETRY=0",
	)
}

// opencodeRun runs `opencode run` in the project against srv; extra
// arguments (--session ID) come before the prompt.
func (p *pluginProject) opencodeRun(t *testing.T, srv *fakemodel.Server, extra ...string) *Run {
	t.Helper()
	bin := npmBinary(t, "opencode", "STATEWRIGHT_OPENCODE", OpencodeVersion)
	args := append([]string{"run", "--print-logs", "--auto"}, extra...)
	args = append(args, "Fix the bug.")
	r, err := RunCommand(context.Background(), pluginBudget(t), p.dir, append(OpencodeEnv(p.home, srv.URL), p.env...), bin, args...)
	if err != nil {
		t.Fatalf("start opencode: %v", err)
	}
	t.Logf("opencode ran in %v (exit %d)", r.Elapsed.Round(time.Millisecond), r.ExitCode)
	if r.TimedOut {
		t.Fatalf("opencode timed out\n%s\n%s", r, srv.Summary())
	}
	return r
}

// piRun runs `pi -p` in the project against srv.
func (p *pluginProject) piRun(t *testing.T, srv *fakemodel.Server, extra ...string) *Run {
	t.Helper()
	bin := npmBinary(t, "pi", "STATEWRIGHT_PI", PiVersion)
	args := append([]string{"-p", "--provider", "fake", "--model", "fake-model"}, extra...)
	args = append(args, "Fix the bug.")
	r, err := RunCommand(context.Background(), pluginBudget(t), p.dir, append(PiEnv(t, p.home, srv.URL), p.env...), bin, args...)
	if err != nil {
		t.Fatalf("start pi: %v", err)
	}
	t.Logf("pi ran in %v (exit %d)", r.Elapsed.Round(time.Millisecond), r.ExitCode)
	if r.TimedOut {
		t.Fatalf("pi timed out\n%s\n%s", r, srv.Summary())
	}
	return r
}

// mustResult returns the tool result the model received for id.
func mustResult(t *testing.T, srv *fakemodel.Server, id string, r *Run) fakemodel.ToolResult {
	t.Helper()
	res, ok := srv.ToolResult(id)
	if !ok {
		t.Fatalf("the model never received a result for %s\n%s\n%s", id, srv.Summary(), r)
	}
	return res
}

// noFile fails the test when path exists.
func noFile(t *testing.T, path, why string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s exists (stat err %v): %s", path, err, why)
	}
}

// unknownRequests fails the test when the harness called an endpoint the
// fake server does not serve (a sign it tried to phone somewhere).
func unknownRequests(t *testing.T, srv *fakemodel.Server) {
	t.Helper()
	if u := srv.Unknown(); len(u) > 0 {
		var b strings.Builder
		for _, r := range u {
			fmt.Fprintf(&b, "%s %s\n", r.Method, r.Path)
		}
		t.Errorf("the harness called endpoints the fake model does not serve:\n%s", b.String())
	}
}
