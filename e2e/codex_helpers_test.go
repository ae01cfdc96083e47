//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store/sqlite"
)

// codexBinaryEnv overrides where the Codex binary is looked for.
const codexBinaryEnv = "STATEWRIGHT_CODEX"

// codexModel is the fake model's name, described to Codex by
// codexModelCatalog (model_catalog_json): without metadata Codex offers no
// apply_patch tool, and with the metadata of its own models (supports_search_tool)
// it hides MCP tools behind tool_search.
const codexModel = "gpt-fake"

// codexModelCatalog describes codexModel in Codex's model catalog format
// (as Codex 0.169.0 ships for its own models): the freeform apply_patch
// tool, the shell_command shell, MCP tools offered directly (no tool
// search), HTTP streaming rather than websockets.
const codexModelCatalog = `{"models":[{"slug":"gpt-fake","display_name":"fake","description":"fakemodel",
"base_instructions":"You are a coding agent driven by a scripted fake model in a test.",
"prefer_websockets":false,"support_verbosity":true,"default_verbosity":"low","apply_patch_tool_type":"freeform",
"web_search_tool_type":"text_and_image","input_modalities":["text"],"supports_image_detail_original":false,
"truncation_policy":{"mode":"tokens","limit":10000},"supports_parallel_tool_calls":true,"use_responses_lite":false,
"supports_reasoning_effort_updates":false,"include_skills_usage_instructions":false,"include_apps_usage_instructions":false,
"include_plugin_usage_instructions":false,"node_repl_auto_review_required":false,"node_repl_disabled":false,
"requires_sandboxed_review":false,"context_window":272000,"max_context_window":272000,"comp_hash":"fake",
"default_reasoning_summary":"none","default_reasoning_level":"medium",
"supported_reasoning_levels":[{"effort":"medium","description":"medium"}],"shell_type":"shell_command","visibility":"list",
"minimal_client_version":"0.124.0","supported_in_api":true,"priority":1,"experimental_supported_tools":[],
"available_in_plans":[],"supports_search_tool":false,"supports_experimental_context":false,"service_tiers":[],
"additional_speed_tiers":[],"supports_reasoning_summary_parameter":false,"supports_reasoning_summaries":false}]}`

// codexTimeout bounds one `codex exec` run.
const codexTimeout = 3 * time.Minute

// codexBinary returns the Codex binary: $STATEWRIGHT_CODEX, else the one
// scripts/install-harnesses.sh installs. A missing binary fails the test.
func codexBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(codexBinaryEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("$%s=%s: %v", codexBinaryEnv, p, err)
		}
		return p
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	prefix := os.Getenv("STATEWRIGHT_HARNESS_PREFIX")
	if prefix == "" {
		prefix = filepath.Join(root, ".harnesses")
	}
	p := filepath.Join(prefix, "node_modules", ".bin", "codex")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("Codex is not installed at %s: run `bash scripts/install-harnesses.sh` (needs npm), or set $%s to a codex %s binary",
			p, codexBinaryEnv, CodexVersion)
	}
	return p
}

// codexProject is a temporary project whose Codex home carries the hooks
// and MCP server `statewright init codex --user --default-workflow
// e2e-bugfix.json` writes.
type codexProject struct {
	codex, bin, dir, home, storePath, workflow string
}

func newCodexProject(t *testing.T, initArgs ...string) *codexProject {
	t.Helper()
	p := &codexProject{codex: codexBinary(t), dir: t.TempDir(), home: t.TempDir()}
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
	p.workflow = filepath.Join(state, "e2e-bugfix.json")
	if err := os.WriteFile(p.workflow, []byte(e2eWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.path("main.txt"), []byte("old line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.codexHome(), 0o700); err != nil {
		t.Fatal(err)
	}
	catalog := filepath.Join(p.codexHome(), "models.json")
	if err := os.WriteFile(catalog, []byte(codexModelCatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	// The user's own settings, which init must keep.
	base := "# the user's settings\nmodel = \"" + codexModel + "\"\nmodel_provider = \"fake\"\nmodel_catalog_json = \"" + catalog + "\"\n"
	if err := os.WriteFile(filepath.Join(p.codexHome(), "config.toml"), []byte(base), 0o600); err != nil {
		t.Fatal(err)
	}
	// The workflow starts at SessionStart: Codex picks its session id itself,
	// so a person cannot start the run for it beforehand.
	args := append([]string{"init", "codex", "--user", "--project", p.dir, "--store", p.storePath,
		"--default-workflow", p.workflow}, initArgs...)
	cmd := exec.Command(p.bin, args...)
	cmd.Env = append(os.Environ(), "CODEX_HOME="+p.codexHome())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("statewright init codex: %v\n%s", err, out)
	}
	t.Logf("init:\n%s", out)
	return p
}

func (p *codexProject) codexHome() string       { return filepath.Join(p.home, ".codex") }
func (p *codexProject) path(name string) string { return filepath.Join(p.dir, name) }

// service opens the store as the operator would.
func (p *codexProject) service(t *testing.T) (*runtime.Service, func()) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), p.storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	return runtime.New(st, runtime.Options{ProjectDir: p.dir}), func() { st.Close() }
}

// cli runs the project's statewright binary as the operator and returns
// stdout.
func (p *codexProject) cli(t *testing.T, args ...string) string {
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

// codexEnv is a complete environment for Codex offline: its own HOME and
// CODEX_HOME, nothing of the caller's but PATH and LANG.
func (p *codexProject) codexEnv() []string {
	return []string{
		"HOME=" + p.home,
		"CODEX_HOME=" + p.codexHome(),
		"PATH=" + envOr("PATH", "/usr/local/bin:/usr/bin:/bin"),
		"LANG=" + envOr("LANG", "C.UTF-8"),
		"RUST_LOG=warn",
	}
}

// run runs `codex exec` (or, with a thread id, `codex exec resume ID`) in
// the project against srv: the fake provider is configured on the command
// line, the sandbox and approvals are off (the test machine has no
// sandbox; statewright's hooks are what is under test), and hook trust is
// bypassed as the flag for vetted automation allows.
func (p *codexProject) run(t *testing.T, srv *fakemodel.Server, prompt, resume string) *Run {
	t.Helper()
	return p.runIn(t, srv, p.dir, prompt, resume, true)
}

// runIn is run in directory dir; bypassTrust false runs the hooks only if
// a person trusted them (Codex's default).
func (p *codexProject) runIn(t *testing.T, srv *fakemodel.Server, dir, prompt, resume string, bypassTrust bool) *Run {
	t.Helper()
	args := []string{"exec"}
	if resume != "" {
		args = append(args, "resume")
	}
	args = append(args,
		"-c", `model_providers.fake.name="fake"`,
		"-c", `model_providers.fake.base_url="`+srv.URL+`/v1"`,
		"-c", `model_providers.fake.wire_api="responses"`,
		"-c", `model_providers.fake.request_max_retries=0`,
		"-c", `model_providers.fake.stream_max_retries=0`,
		"--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json")
	if bypassTrust {
		args = append(args, "--dangerously-bypass-hook-trust")
	}
	if resume != "" {
		args = append(args, resume)
	}
	args = append(args, prompt)
	r, err := RunCommand(context.Background(), codexTimeout, dir, p.codexEnv(), p.codex, args...)
	if err != nil {
		t.Fatalf("start codex: %v", err)
	}
	t.Logf("codex ran in %v (exit %d)", r.Elapsed.Round(time.Millisecond), r.ExitCode)
	if r.TimedOut {
		t.Fatalf("codex timed out\n%s\n%s", r, srv.Summary())
	}
	return r
}

// threadID returns the Codex thread (session) id a --json run reported.
func threadID(t *testing.T, r *Run) string {
	t.Helper()
	for _, ev := range r.Events() {
		if ev["type"] == "thread.started" {
			if id, ok := ev["thread_id"].(string); ok && id != "" {
				return id
			}
		}
	}
	t.Fatalf("codex reported no thread.started event\n%s", r)
	return ""
}

// patch is an apply_patch body replacing one line of a file.
func patch(file, from, to string) map[string]any {
	return map[string]any{"input": fmt.Sprintf("*** Begin Patch\n*** Update File: %s\n@@\n-%s\n+%s\n*** End Patch\n", file, from, to)}
}
