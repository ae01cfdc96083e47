//go:build linux

package sandbox

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepWhenTheCommandEnds is the outcome test of the quarantine's
// timing: names of the law that did not exist (.git/commondir, .mcp.json,
// .codex) and that a sandboxed command creates are out of the person's
// tree when the rewritten command returns, before any PostToolUse: for a
// command that fails, for one the harness runs in the background (its
// PostToolUse came before it planted), for what its own background jobs
// plant, and on the fallback path of a bubblewrap per command. The
// harness's hook never runs here.
func TestSweepWhenTheCommandEnds(t *testing.T) {
	cases := []struct {
		name   string
		script string
		// background: the harness reports the call's end (PostToolUse,
		// here the hook's Sweep) right after starting it, before it plants.
		background bool
		fallback   bool
		code       int
	}{
		{name: "failing", script: "printf '../evil\\n' > .git/commondir; printf '{}' > .mcp.json; mkdir .codex; exit 3", code: 3},
		{name: "background", script: "sleep 0.5; printf '../evil\\n' > .git/commondir; printf '{}' > .mcp.json; mkdir .codex; sleep 0.2", background: true},
		{name: "jobs", script: "(printf '../evil\\n' > .git/commondir) & setsid sh -c 'printf {} > .mcp.json' & nohup mkdir .codex >/dev/null 2>&1 & sleep 0.3; exit 1", code: 1},
		{name: "fallback", script: "printf '../evil\\n' > .git/commondir; printf '{}' > .mcp.json; mkdir .codex; exit 4", fallback: true, code: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newServerFixture(t)
			git := filepath.Join(f.proj, ".git")
			write(t, filepath.Join(git, "HEAD"), "ref: refs/heads/main\n")
			planted := []string{filepath.Join(git, "commondir"), filepath.Join(f.proj, ".mcp.json"), filepath.Join(f.proj, ".codex")}
			c, outer := f.call("implementing", true, tc.script, planted...)
			if tc.fallback {
				breakServer(t, c)
			}
			cmd := exec.Command("/bin/bash", "-c", outer)
			cmd.Dir = f.proj
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.background {
				if msg := c.Sweep(); msg != "" {
					t.Fatalf("planted before it ran: %s", msg)
				}
			}
			code, _ := ExitStatus(cmd.Wait())
			if code != tc.code {
				t.Errorf("exit %d, want %d:\n%s", code, tc.code, out.String())
			}
			for _, p := range planted {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s is still in the person's tree after the command", p)
				}
				q := filepath.Join(filepath.Dir(filepath.Dir(c.Dir)), "quarantine", filepath.Base(c.Dir), strings.TrimPrefix(p, "/"))
				if _, err := os.Lstat(q); err != nil {
					t.Errorf("%s was not kept in the quarantine: %v", p, err)
				}
			}
			if !strings.Contains(out.String(), "[statewright] The command created "+planted[0]) {
				t.Errorf("the agent was not told:\n%s", out.String())
			}
		})
	}
}

// breakServer makes the call's sandbox server unstartable, so that the
// launcher falls back to a bubblewrap of its own (as TestServerFallback).
func breakServer(t *testing.T, c Call) {
	t.Helper()
	spec := filepath.Join(c.Dir, serverFile)
	b, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	var sp serverSpec
	if err := json.Unmarshal(b, &sp); err != nil {
		t.Fatal(err)
	}
	sp.Bwrap = "/nonexistent/bwrap"
	b, _ = json.Marshal(sp)
	if err := os.WriteFile(spec, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
