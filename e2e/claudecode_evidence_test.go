//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// evidenceWorkflow has one testing phase whose exit needs a whole-suite
// run of at least one test, as the bundled templates' tests_passed does.
const evidenceWorkflow = `{"id": "evidence", "initial": "testing", "trust_event_data": false,
 "guards": {"tests_passed": {"all": [
   {"field": "runtime.last_test.passed", "op": "eq", "value": true},
   {"field": "runtime.last_test.narrowed", "op": "eq", "value": false},
   {"field": "runtime.last_test.tests_run", "op": "gte", "value": 1}]}},
 "states": {
  "testing": {"allowed_tools": ["Read", "Bash"], "allowed_commands": ["go test"],
              "on": {"TESTS_PASS": {"target": "done", "guard": "tests_passed"}}},
  "done": {"type": "final"}}}`

// typoWorkflow misspells allowed_tools: read as written, the phase would be
// unrestricted.
const typoWorkflow = `{"id": "typo", "initial": "reading",
 "states": {"reading": {"allowed_tool": ["Read", "Grep"], "on": {"DONE": "done"}}, "done": {"type": "final"}}}`

// TestClaudeCodeTestEvidence drives the real Claude Code with the installed
// hooks (issue 15): a workflow with a typo in a permission key is refused
// wherever it would be loaded; TESTS_PASS is refused after a zero-test run
// (go test -run NoSuchTest ./..., which exits 0) and after a narrowed run,
// and accepted after the real suite — the evidence comes from go test's
// structured report, through the hook's rewrite to `statewright testrun`.
func TestClaudeCodeTestEvidence(t *testing.T) {
	p := newSWProject(t)
	refusesTypo(t, p.bin, p.storePath, "claude-code", p.dir, "--no-mcp")
	claudeCodeEvidence(t, p, "unsandboxed", goTestEnv(t)...)
}

// TestClaudeCodeSandboxTestEvidence is the same scenario with the hooks
// `init claude-code --sandbox` installs (issue 13): every go test runs
// inside the phase's OS sandbox, through the launcher that reads go test's
// report from its stdout outside the sandbox, and the evidence is the same
// (runtime.last_test.channel "stream"): refused after zero tests and
// narrowed runs, accepted after the suite.
func TestClaudeCodeSandboxTestEvidence(t *testing.T) {
	p := newSWProject(t, "--sandbox")
	claudeCodeEvidence(t, p, "stream", "XDG_CACHE_HOME="+sandboxCacheHome(t), "PATH="+os.Getenv("PATH"), "GOTOOLCHAIN=local", "GOFLAGS=-count=1")
}

// claudeCodeEvidence runs evidenceCases with the real Claude Code in p
// (with env added to Claude Code's), checking after each run the test
// evidence's channel and whether TESTS_PASS is accepted.
func claudeCodeEvidence(t *testing.T, p *swProject, channel string, env ...string) {
	writeEvidenceModule(t, p.dir)
	wf := filepath.Join(t.TempDir(), "evidence.json")
	os.WriteFile(wf, []byte(evidenceWorkflow), 0o644)
	p.cli(t, "start", wf, "--session", e2eSession)

	transition := func() (string, error) {
		cmd := exec.Command(p.bin, "transition", e2eSession, "TESTS_PASS", "--store", p.storePath)
		cmd.Dir = p.dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for i, tc := range evidenceCases {
		srv := fakemodel.NewAnthropic(script(
			fakemodel.Call(tool(tc.id, "Bash", map[string]any{"command": tc.command, "description": "run the tests", "timeout": 600000})),
			fakemodel.Say("Ran the tests."),
		), fakemodel.WithLog(t.Logf))
		args := []string{"--session-id", e2eSession}
		if i > 0 {
			args = []string{"--resume", e2eSession}
		}
		argv := append([]string{"-p", "Run the tests.", "--output-format", "stream-json", "--verbose",
			"--permission-mode", "bypassPermissions"}, args...)
		r, err := RunCommand(context.Background(), 3*claudeTimeout, p.dir, ClaudeEnv(p.home, srv.URL, env...), p.claude, argv...)
		if err != nil || r.TimedOut {
			t.Fatalf("claude: %v\n%s", err, r)
		}
		srv.Close()
		res := toolResult(t, srv, tc.id)
		if res.IsError || strings.Contains(res.Content, `"Action"`) {
			t.Fatalf("%s: tool_result %+v; want go test's own text\n%s", tc.command, res, r)
		}
		if lt := lastTest(t, p.storePath); lt["channel"] != channel || lt["runner"] != "go test" {
			t.Errorf("after %q: runtime.last_test = %v; want go test's report through channel %q", tc.command, lt, channel)
		}
		out, err := transition()
		if tc.accepted != (err == nil) {
			t.Fatalf("TESTS_PASS after %q: err %v\n%s", tc.command, err, out)
		}
		if !tc.accepted && !strings.Contains(out, "tests_passed") {
			t.Errorf("TESTS_PASS after %q refused without naming the guard:\n%s", tc.command, out)
		}
	}
	st, err := sqlite.Open(context.Background(), p.storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), store.RunFilter{SessionKey: "claude-code:" + e2eSession, Limit: 1})
	if err != nil || len(runs) != 1 || runs[0].State != "done" || runs[0].Status != store.StatusCompleted {
		t.Errorf("after the real suite: %+v, %v; want completed in done", runs, err)
	}
	if channel != "stream" {
		return
	}
	n := sandboxedDecisions(t, p.storePath)
	if n != len(evidenceCases) {
		t.Errorf("%d Bash decisions recorded as sandboxed, want %d", n, len(evidenceCases))
	}
}

// lastTest returns runtime.last_test of the session's run, as the store
// holds it now.
func lastTest(t *testing.T, storePath string) map[string]any {
	t.Helper()
	st, err := sqlite.Open(context.Background(), storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), store.RunFilter{SessionKey: "claude-code:" + e2eSession, Limit: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %+v, %v", runs, err)
	}
	var ev struct {
		LastTest map[string]any `json:"last_test"`
	}
	if err := json.Unmarshal(runs[0].Evidence, &ev); err != nil {
		t.Fatalf("the run's evidence %s: %v", runs[0].Evidence, err)
	}
	return ev.LastTest
}

// refusesTypo checks that typoWorkflow is refused, naming the key and its
// position, wherever it would be loaded: start, validate, and init's
// --default-workflow for harness (with its further init flags) in project.
func refusesTypo(t *testing.T, bin, storePath, harness, project string, initFlags ...string) {
	t.Helper()
	typo := filepath.Join(t.TempDir(), "typo.json")
	os.WriteFile(typo, []byte(typoWorkflow), 0o644)
	for _, args := range [][]string{
		{"start", typo, "--session", "typo-session", "--harness", harness, "--store", storePath},
		{"workflows", "validate", typo},
		append([]string{"init", harness, "--project", project, "--store", storePath, "--default-workflow", typo}, initFlags...),
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), `unknown key "allowed_tool"`) || !strings.Contains(string(out), "typo.json:2:25") {
			t.Errorf("statewright %s: err %v, want a refusal naming the key and its position\n%s", strings.Join(args[:2], " "), err, out)
		}
	}
}

// evidenceCases are the test runs of the evidence scenario, in order, and
// whether TESTS_PASS is accepted after each: not after a run of zero tests
// (go test exits 0 on it), nor after a narrowed one, only after the whole
// suite.
var evidenceCases = []struct {
	id, command string
	accepted    bool
}{
	{"toolu_zero", "go test -run NoSuchTest ./...", false},
	{"toolu_short", "go test -short ./...", false},
	{"toolu_subset", "go test ./a", false},
	{"toolu_suite", "go test ./...", true},
}

// writeEvidenceModule writes a Go module with two packages of tests into
// dir.
func writeEvidenceModule(t *testing.T, dir string) {
	t.Helper()
	for name, body := range map[string]string{
		"go.mod":      "module example.com/evidence\n\ngo 1.22\n",
		"a/a.go":      "package a\n\nfunc Add(x, y int) int { return x + y }\n",
		"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) {}\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// goTestEnv is the environment a harness's go test runs with: the host's
// build cache (a cold one costs minutes on 2 cores), no toolchain
// download, no cached test results.
func goTestEnv(t *testing.T) []string {
	return []string{"GOCACHE=" + goEnv(t, "GOCACHE"), "GOMODCACHE=" + goEnv(t, "GOMODCACHE"), "GOTOOLCHAIN=local", "GOFLAGS=-count=1"}
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}
