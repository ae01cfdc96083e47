//go:build e2e

package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

// TestPluginTestEvidence drives the real opencode and Pi, with the plugin
// `statewright init` installs, through the scenario of
// TestClaudeCodeTestEvidence (issue 15): the typo workflow is refused at
// start and at init --default-workflow; TESTS_PASS is refused after a
// zero-test run and after narrowed runs (-short, a package subset), and
// accepted after the real suite. The plugin replaces the bash tool's
// arguments with the hook's rewrite to `statewright testrun`, so the
// evidence comes from go test's structured report.
func TestPluginTestEvidence(t *testing.T) {
	for _, h := range []string{"opencode", "pi"} {
		t.Run(h, func(t *testing.T) {
			p := newPluginProjectWith(t, h, evidenceWorkflow)
			refusesTypo(t, p.bin, p.storePath, h, t.TempDir())
			writeEvidenceModule(t, p.dir)
			p.env = goTestEnv(t)

			session := ""
			for _, tc := range evidenceCases {
				id := strings.Replace(tc.id, "toolu_", "call_", 1)
				srv := fakemodel.NewChatCompletions(chatScript(
					fakemodel.Call(tool(id, "bash", map[string]any{"command": tc.command, "description": "run the tests"})),
					fakemodel.Say("Ran the tests."),
				), fakemodel.WithLog(t.Logf))
				var extra []string
				if session != "" {
					extra = []string{"--session", session}
				}
				var r *Run
				if h == "opencode" {
					r = p.opencodeRun(t, srv, extra...)
				} else {
					r = p.piRun(t, srv, extra...)
				}
				srv.Close()
				if session == "" {
					session, _ = p.session(t)
				}
				res := mustResult(t, srv, id, r)
				if strings.Contains(res.Content, "statewright") || strings.Contains(res.Content, `"Action"`) ||
					!strings.Contains(res.Content, "ok") {
					t.Fatalf("%s: the model was told %q; want go test's own text\n%s", tc.command, res.Content, r)
				}
				lt := p.lastTest(t, session)
				if lt["report"] != "go-json" || lt["runner"] != "go test" {
					t.Errorf("%s: runtime.last_test = %v; want go test's structured report", tc.command, lt)
				}
				out, err := p.transition(session, "TESTS_PASS")
				if tc.accepted != (err == nil) {
					t.Fatalf("TESTS_PASS after %q: err %v (runtime.last_test %v)\n%s", tc.command, err, lt, out)
				}
				if !tc.accepted && !strings.Contains(out, "tests_passed") {
					t.Errorf("TESTS_PASS after %q refused without naming the guard:\n%s", tc.command, out)
				}
			}
			if _, state := p.session(t); state != "done" {
				t.Errorf("after the real suite the run is in %q; want done", state)
			}
		})
	}
}

// transition sends event for the session as the operator, returning the
// command's output and its error.
func (p *pluginProject) transition(session, event string) (string, error) {
	cmd := exec.Command(p.bin, "transition", session, event, "--harness", p.harness, "--store", p.storePath)
	cmd.Dir = p.dir
	cmd.Env = append(cmd.Environ(), "XDG_CONFIG_HOME="+filepath.Join(filepath.Dir(p.storePath), "config"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// lastTest returns runtime.last_test of the session's run.
func (p *pluginProject) lastTest(t *testing.T, session string) map[string]any {
	t.Helper()
	lt, _ := p.evidence(t, session)["last_test"].(map[string]any)
	return lt
}
