//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/store"
)

// TestDoctorCodexTrust installs the Codex hooks as the README says (`init
// codex --user`) and asks the real Codex: untrusted, doctor fails with the
// exact fix, and a real session (no trust bypass) indeed runs unguarded;
// once a person records the trust doctor names, doctor passes and a real
// session is governed.
func TestDoctorCodexTrust(t *testing.T) {
	p := newCodexProject(t)
	// The fake provider, in the file as well (codex exec also gets it on
	// its command line): codex app-server, which doctor asks, loads the
	// configuration without the test's -c flags.
	cfg := filepath.Join(p.codexHome(), "config.toml")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"http://127.0.0.1:9/v1\"\nwire_api = \"responses\"\n")
	f.Close()
	env := []string{"HOME=" + p.home, "CODEX_HOME=" + p.codexHome(), "XDG_CONFIG_HOME=" + filepath.Join(p.home, ".config"),
		"CLAUDE_CONFIG_DIR=" + filepath.Join(p.home, ".claude")}
	out, code := doctor(t, p.bin, p.dir, env, "--codex", p.codex)
	if code != 1 || !hasLine(out, `^FAIL  trust +Codex does not trust 5 of statewright's 5 hooks \(untrusted\): it skips them silently`) ||
		!hasLine(out, `^ok    canary +.*rule self-protect`) {
		t.Fatalf("doctor on an untrusted install: exit %d; want 1 with the trust failure and a passing canary\n%s", code, out)
	}

	// Untrusted, the hooks are skipped: a real session is not governed.
	patchMain := func(id string) *fakemodel.Server {
		return fakemodel.NewResponses(script(
			fakemodel.Call(tool(id, "apply_patch", patch("main.txt", "old line", "new line"))),
			fakemodel.Say("Done."),
		), fakemodel.WithLog(t.Logf))
	}
	srv := patchMain("call_patch1")
	p.runIn(t, srv, p.dir, "Fix the bug.", "", false)
	srv.Close()
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "new line\n" {
		t.Fatalf("main.txt = %q: with untrusted hooks Codex was expected to run the patch unguarded (what doctor warns of)", b)
	}
	if runs := p.cli(t, "runs"); !strings.Contains(runs, "no runs") {
		t.Errorf("runs after an untrusted session: %q; want no runs (no hook ran)", runs)
	}
	if err := os.WriteFile(p.path("main.txt"), []byte("old line\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// A person reviews the hooks and records their trust, as doctor says.
	var fix []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[hooks.state.") || strings.HasPrefix(l, "trusted_hash = ") {
			fix = append(fix, l)
		}
	}
	if len(fix) != 10 {
		t.Fatalf("doctor's fix has %d lines, want a trust record per hook (5):\n%s", len(fix), out)
	}
	f, err = os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n" + strings.Join(fix, "\n") + "\n")
	f.Close()
	out, code = doctor(t, p.bin, p.dir, env, "--codex", p.codex)
	if code != 0 || !hasLine(out, `^ok    trust +Codex loads and trusts statewright's 5 hooks in `+regexp.QuoteMeta(cfg)) {
		t.Fatalf("doctor after trusting: exit %d; want 0 and the hooks trusted\n%s", code, out)
	}

	// Trusted, a real session without the bypass flag is governed.
	srv = patchMain("call_patch2")
	r := p.runIn(t, srv, p.dir, "Fix the bug.", "", false)
	srv.Close()
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "old line\n" {
		t.Errorf("main.txt = %q: the trusted hooks did not deny the patch in the read-only phase\n%s", b, r)
	}
	if got := codexToolOutput(t, srv, "call_patch2"); !strings.Contains(got, "blocked by PreToolUse hook") {
		t.Errorf("call_patch2: Codex told the model %q; want the hook's block", got)
	}
}

// TestCodexUserInstallPassesOtherDirectories runs the real Codex with the
// README's `init codex --user` install (--require-workflow) in a directory
// outside the project: the hooks pass it, nothing is recorded; in the
// project the same patch is denied.
func TestCodexUserInstallPassesOtherDirectories(t *testing.T) {
	p := newCodexProject(t, "--require-workflow")
	other, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "main.txt"), []byte("old line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fakemodel.NewResponses(script(
		fakemodel.Call(
			tool("call_patch", "apply_patch", patch("main.txt", "old line", "new line")),
			tool("call_sh", "exec_command", map[string]any{"cmd": "echo made > made.txt"}),
		),
		fakemodel.Say("Done."),
	), fakemodel.WithLog(t.Logf))
	r := p.runIn(t, srv, other, "Fix the bug.", "", true)
	srv.Close()
	if b, _ := os.ReadFile(filepath.Join(other, "main.txt")); string(b) != "new line\n" {
		t.Errorf("main.txt outside the project = %q: the project's hooks decided a session elsewhere\n%s", b, r)
	}
	if _, err := os.Stat(filepath.Join(other, "made.txt")); err != nil {
		t.Errorf("made.txt outside the project: %v; the shell call was decided by the project's hooks\n%s", err, r)
	}
	thread := threadID(t, r)
	var evs []store.Event
	if err := json.Unmarshal([]byte(p.cli(t, "history", thread, "--harness", "codex", "--json")), &evs); err != nil {
		t.Fatalf("history --json: %v", err)
	}
	if len(evs) != 0 {
		t.Errorf("the store recorded %d events for the session outside the project; want none: %+v", len(evs), evs)
	}

	// The control: in the project, the same patch is denied.
	srv = fakemodel.NewResponses(script(
		fakemodel.Call(tool("call_patch2", "apply_patch", patch("main.txt", "old line", "new line"))),
		fakemodel.Say("Done."),
	), fakemodel.WithLog(t.Logf))
	r = p.runIn(t, srv, p.dir, "Fix the bug.", "", true)
	srv.Close()
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "old line\n" {
		t.Errorf("main.txt in the project = %q: the patch was not denied\n%s", b, r)
	}
}

// TestDoctorPlugins runs doctor on the opencode plugin and the Pi
// extension `statewright init` installs: its canary (an edit of the
// harness's own configuration, run through the command line the plugin
// spawns) is denied by the policy, and the real harness denies the same
// edit; with the binary gone, doctor fails and says why.
func TestDoctorPlugins(t *testing.T) {
	for _, h := range []struct {
		harness, title, target, tool string
		args                         func(path string) map[string]any
		run                          func(p *pluginProject, t *testing.T, srv *fakemodel.Server) *Run
	}{
		{"opencode", "opencode", "opencode.json", "write",
			func(path string) map[string]any { return map[string]any{"filePath": path, "content": "{}"} },
			func(p *pluginProject, t *testing.T, srv *fakemodel.Server) *Run { return p.opencodeRun(t, srv) }},
		{"pi", "Pi", filepath.Join(".pi", "extensions", "statewright.ts"), "write",
			func(path string) map[string]any { return map[string]any{"path": path, "content": "x"} },
			func(p *pluginProject, t *testing.T, srv *fakemodel.Server) *Run { return p.piRun(t, srv) }},
	} {
		t.Run(h.harness, func(t *testing.T) {
			p := newPluginProject(t, h.harness)
			env := []string{"HOME=" + p.home, "XDG_CONFIG_HOME=" + filepath.Join(p.home, ".config"),
				"CLAUDE_CONFIG_DIR=" + filepath.Join(p.home, ".claude"), "CODEX_HOME=" + filepath.Join(p.home, ".codex")}
			out, code := doctor(t, p.bin, p.dir, env)
			if code != 0 || !hasLine(out, `^== `+h.title+` \(project: `) || !hasLine(out, `^ok    canary +.*rule self-protect`) ||
				!hasLine(out, `^ok    plugin +.*is the plugin this binary installs`) {
				t.Fatalf("doctor: exit %d; want 0 with the plugin found and its canary denied by the policy\n%s", code, out)
			}

			// The real harness denies the canary's edit the same way.
			target := p.path(h.target)
			before, _ := os.ReadFile(target)
			srv := fakemodel.NewChatCompletions(chatScript(
				fakemodel.Call(tool("call_canary", h.tool, h.args(target))),
				fakemodel.Say("Done."),
			), fakemodel.WithLog(t.Logf))
			r := h.run(p, t, srv)
			srv.Close()
			if after, _ := os.ReadFile(target); !bytes.Equal(before, after) {
				t.Errorf("%s changed: the real %s did not deny the edit doctor's canary is denied\n%s", h.target, h.title, r)
			}
			if res := mustResult(t, srv, "call_canary", r); !strings.Contains(res.Content, "self-protect") {
				t.Errorf("the model was told %q; want the self-protection deny", res.Content)
			}

			// The binary gone: the plugin blocks everything, and doctor says
			// the policy is not what decides.
			if err := os.Remove(p.bin); err != nil {
				t.Fatal(err)
			}
			out, code = doctor(t, statewrightBinary(t), p.dir, env)
			if code != 1 || !hasLine(out, `^FAIL  binary +the gate's binary .* is missing`) || !hasLine(out, `^FAIL  canary +the call was denied, but not by the policy`) {
				t.Errorf("doctor without the plugin's binary: exit %d; want 1, the binary and the canary failing\n%s", code, out)
			}
		})
	}
}
