package outcome

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// implementing is the bundled bugfix template's implementing phase: Write,
// Edit and Bash, no Exec, no limits on which files change.
func implementing(t *testing.T) *world {
	w := newWorld(t)
	w.start("bugfix", "LOCALIZED", "PLAN_READY")
	if s, _ := w.state(); s != "implementing" {
		t.Fatalf("state %s, want implementing", s)
	}
	return w
}

// TestHooksCannotBeRewritten: issue 13's attacks on the hooks from the
// bugfix implementing phase; each is denied, nothing of the law changes,
// and the deny says why.
func TestHooksCannotBeRewritten(t *testing.T) {
	w := implementing(t)
	settings := filepath.Join(".claude", filepath.Base(firstExisting(w.project, ".claude/settings.local.json", ".claude/settings.json")))
	evil := `{"hooks":{}}`
	attacks := []struct {
		name  string
		do    func() result
		teach string
	}{
		{"symlink then Write through it", func() result {
			if r := w.bash("ln -s .claude x"); r.allowed {
				return r
			}
			// The link may also exist already (made before the run).
			must(t, os.Symlink(".claude", filepath.Join(w.project, "y")))
			return w.call("Write", map[string]any{"file_path": filepath.Join(w.project, "y", filepath.Base(settings)), "content": evil})
		}, "protected"},
		{"variable target", func() result { return w.bash(`d=.claude; printf '{}' > $d/` + filepath.Base(settings)) }, "cannot be known"},
		{"glob target", func() result { return w.bash(`printf '{}' > .cl*/` + filepath.Base(settings)) }, "glob"},
		{"mv the directory", func() result { return w.bash("mv .claude claude-off") }, "protected"},
		{"mv a parent", func() result { return w.bash("mv ../proj ../proj2") }, "contains"},
		{"cp into it", func() result { w.write("f.json", evil); return w.bash("cp f.json .claude/") }, "protected"},
		{"cp a tree's contents over the project", func() result {
			w.write("evil/.claude/"+filepath.Base(settings), evil)
			return w.bash("cp -r evil/. .")
		}, "contains"},
		{"archive into it", func() result {
			w.write("a/settings.json", evil)
			w.run("tar", "-cf", "a.tar", "-C", "a", "settings.json")
			return w.bash("tar -xf a.tar -C .claude")
		}, ""},
		{"archive into the project", func() result { return w.bash("tar -xf a.tar") }, "cannot be known"},
		{"sed -i loop", func() result { return w.bash(`for f in .claude/*.json; do sed -i 's/hook/x/' "$f"; done`) }, ""},
		{"sed -i glob", func() result { return w.bash(`sed -i 's/hook/x/' .claude/*.json`) }, ""},
		{"hard link then Write", func() result {
			if r := w.bash("ln " + settings + " hl.json"); r.allowed {
				return r
			}
			must(t, os.Link(filepath.Join(w.project, settings), filepath.Join(w.project, "hl2.json")))
			return w.call("Write", map[string]any{"file_path": filepath.Join(w.project, "hl2.json"), "content": evil})
		}, "hard links"},
		{"append to ~/.gitconfig", func() result { return w.bash(`printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' >> ~/.gitconfig`) }, "protected"},
		{"Write ~/.gitconfig", func() result {
			return w.call("Write", map[string]any{"file_path": filepath.Join(w.home, ".gitconfig"), "content": "[core]\n"})
		}, "protected"},
		{"truncate the store through a glob", func() result { return w.bash(`: > ~/.local/state/statewright/*.db`) }, ""},
		{"remove the store", func() result { return w.bash(`rm -f ~/.local/state/statewright/state.db`) }, ""},
		{"symlink to ~/.config then Write tokens.json", func() result {
			if r := w.bash("ln -s ~/.config cfg"); r.allowed {
				return r
			}
			must(t, os.Symlink(filepath.Join(w.home, ".config"), filepath.Join(w.project, "cfg2")))
			return w.call("Write", map[string]any{"file_path": filepath.Join(w.project, "cfg2", "statewright", "tokens.json"), "content": `{"tokens":[]}`})
		}, "protected"},
		{"Write .mcp.json", func() result {
			return w.call("Write", map[string]any{"file_path": ".mcp.json", "content": `{"mcpServers":{}}`})
		}, "protected"},
		{"git hooks", func() result { return w.bash(`printf '#!/bin/sh\n' > .git/hooks/pre-commit`) }, "protected"},
		{"git config file", func() result { return w.bash(`echo '[core]' >> .git/config`) }, "protected"},
		{"Edit through ..", func() result {
			return w.call("Edit", map[string]any{"file_path": "src/../.claude/" + filepath.Base(settings), "old_string": "hook", "new_string": "x"})
		}, "protected"},
	}
	for _, a := range attacks {
		r := a.do()
		if r.allowed {
			t.Errorf("%s: allowed (output %q)", a.name, clip(r.output))
			continue
		}
		if !strings.Contains(r.reason, "implementing") || a.teach != "" && !strings.Contains(r.reason, a.teach) {
			t.Errorf("%s: the deny does not teach (want phase and %q): %s", a.name, a.teach, r.reason)
		}
	}
	w.lawUnchanged()
	if _, err := os.Stat(w.store); err != nil {
		t.Errorf("the store is gone: %v", err)
	}
}

func firstExisting(dir string, names ...string) string {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return n
		}
	}
	return names[len(names)-1]
}

// TestOrdinaryWorkStillSucceeds: the same phase still edits, writes and
// runs the tests; the law's files stay as they were.
func TestOrdinaryWorkStillSucceeds(t *testing.T) {
	w := implementing(t)
	if r := w.call("Edit", map[string]any{"file_path": filepath.Join(w.project, "calc.go"), "old_string": "return a + b", "new_string": "return b + a"}); !r.allowed {
		t.Fatalf("an ordinary edit was denied: %s", r.reason)
	}
	if b, _ := os.ReadFile(filepath.Join(w.project, "calc.go")); !strings.Contains(string(b), "return b + a") {
		t.Fatalf("the edit did not land: %s", b)
	}
	if r := w.call("Write", map[string]any{"file_path": filepath.Join(w.project, "calc_test.go"),
		"content": "package proj\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n"}); !r.allowed {
		t.Fatalf("writing a test was denied: %s", r.reason)
	}
	for _, cmd := range []string{"mkdir -p internal/x && echo 'package x' > internal/x/x.go", "gofmt -l .", "grep -n Add *.go", "rg Add .", "cat calc.go | head -3", "ls -la", "git status --short", "go vet ./..."} {
		if strings.HasPrefix(cmd, "rg ") {
			if _, err := os.Stat("/usr/bin/rg"); err != nil {
				continue
			}
		}
		if r := w.bash(cmd); !r.allowed {
			t.Errorf("%q was denied: %s", cmd, r.reason)
		}
	}
	w.cli("transition", w.session, "IMPLEMENTED", "--store", w.store)
	r := w.bash("go test ./...")
	if !r.allowed {
		t.Fatalf("go test was denied in testing: %s", r.reason)
	}
	if !strings.Contains(r.output, "ok") {
		t.Fatalf("go test did not pass: %s", r.output)
	}
	w.cli("transition", w.session, "TESTS_PASS", "--store", w.store)
	if s, _ := w.state(); s != "done" {
		t.Errorf("TESTS_PASS was not accepted: state %s", s)
	}
	w.lawUnchanged()
	w.noSecretShown()
}

// TestSecretsOutOfSight: from the read-only localizing phase (Read, Grep,
// Glob, LS, Bash) no read reaches the operator token, the tokens file, an
// SSH key or a .env file, however it is spelled; reads that reach no
// secret still work.
func TestSecretsOutOfSight(t *testing.T) {
	w := newWorld(t)
	w.write(filepath.Join(w.home, ".ssh", "id_ed25519"), "sshsecret-9f8e\n")
	w.start("bugfix")
	cfg := filepath.Join(w.home, ".config")
	token := filepath.Join(cfg, "statewright", "operator-token")
	must(t, os.Symlink(token, filepath.Join(w.project, "notes.txt"))) // a link planted before the run
	denied := []struct {
		name string
		do   func() result
	}{
		{"grep -r over ~/.config", func() result { return w.bash("grep -r . ~/.config") }},
		{"grep -R over home", func() result { return w.bash("grep -R sk ~") }},
		{"tail over a glob", func() result { return w.bash("tail -n +1 ~/.config/*/*") }},
		{"find -exec cat", func() result { return w.bash(`find ~ -type f -exec cat {} \;`) }},
		{"find -exec cat on the config dir", func() result { return w.bash(`find ~/.config -name '*' -exec cat {} +`) }},
		{"Grep tool on ~/.config", func() result { return w.call("Grep", map[string]any{"pattern": ".", "path": cfg}) }},
		{"Read the token", func() result { return w.call("Read", map[string]any{"file_path": token}) }},
		{"Read through a planted link", func() result {
			return w.call("Read", map[string]any{"file_path": filepath.Join(w.project, "notes.txt")})
		}},
		{"cat through a planted link", func() result { return w.bash("cat notes.txt") }},
		{"cat through ..", func() result { return w.bash("cat ../.config/statewright/operator-token") }},
		{"cat the tokens file", func() result { return w.bash("cat ~/.config/statewright/tokens.json") }},
		{"Read .env", func() result { return w.call("Read", map[string]any{"file_path": ".env"}) }},
		{"cat .env", func() result { return w.bash("cat .env") }},
		{"head an ssh key", func() result { return w.bash("head ~/.ssh/id_ed25519") }},
		{"a variable read", func() result { return w.bash(`f=~/.ssh/id_ed25519; cat "$f"`) }},
		{"grep -r over the project with a .env", func() result { return w.bash("grep -rn API .") }},
		{"cp -r the config dir out", func() result { return w.bash("cp -r ~/.config /tmp/cfgcopy-" + filepath.Base(w.home)) }},
		{"tar the config dir", func() result { return w.bash("tar -cf - ~/.config | tar -tvf -") }},
	}
	for _, a := range denied {
		r := a.do()
		if r.allowed {
			t.Errorf("%s: allowed (output %q)", a.name, clip(r.output))
		} else if !strings.Contains(r.reason, "localizing") {
			t.Errorf("%s: the deny does not name the phase: %s", a.name, r.reason)
		}
	}
	allowed := []func() result{
		func() result { return w.bash("rg API .") }, // rg skips the gitignored .env
		func() result { return w.call("Grep", map[string]any{"pattern": "Add", "path": w.project}) },
		func() result { return w.bash("ls -la ~/.config/statewright") }, // names, not content
		func() result { return w.call("Read", map[string]any{"file_path": filepath.Join(w.project, "calc.go")}) },
		func() result { return w.bash("grep -rn Add " + filepath.Join(w.project, "calc.go")) },
		func() result { return w.bash("cat .git/config") }, // reading the law is fine
	}
	for i, do := range allowed {
		if _, err := os.Stat("/usr/bin/rg"); err != nil && i == 0 {
			continue
		}
		if r := do(); !r.allowed {
			t.Errorf("ordinary read %d was denied: %s", i, r.reason)
		}
	}
	w.noSecretShown()
	w.lawUnchanged()

	// A project without any secret under it: grep -rn TODO . is fine.
	must(t, os.Remove(filepath.Join(w.project, ".env")))
	if r := w.bash("grep -rn TODO ."); !r.allowed {
		t.Errorf("grep -rn TODO . without a secret under it was denied: %s", r.reason)
	}
}

// TestGitIsChecked: where GitWrite is granted, git cannot revert, stash,
// clean away or rewrite the law, in any spelling; ordinary git work passes.
func TestGitIsChecked(t *testing.T) {
	w := newWorld(t)
	w.run("git", "add", "-A")
	w.run("git", "commit", "-qm", "init")
	wf := filepath.Join(t.TempDir(), "git.json")
	must(t, os.WriteFile(wf, []byte(`{"id":"gitwork","initial":"work","states":{"work":{"allowed_tools":["Read","Edit","Write","Bash","GitWrite","Destructive"],"on":{"DONE":"done"}},"done":{"type":"final"}}}`), 0o644))
	w.cli("start", wf, "--session", w.session, "--store", w.store)
	w.bashDenied("",
		"git clean -fdx",
		"git clean -fdX",
		"git -C . clean -fdx",
		"git stash -u",
		"git stash --all",
		"git checkout -- .claude",
		"git -C .claude checkout -- .",
		"git restore .claude",
		"git reset --hard",
		"git checkout .",
		"git --work-tree=. clean -fdx",
		"git --git-dir=.git --work-tree=. checkout -- .claude",
		"git rm -r --cached .claude && git rm -rf .claude",
		"git mv .claude claude2",
		"git apply /dev/null",
		"git config core.hooksPath /tmp",
	)
	w.bashAllowed("git status", "git add calc.go", "git commit -qm x --allow-empty", "git clean -fd src/", "git checkout -- calc.go", "git log --oneline -1")
	w.lawUnchanged()
	if _, err := os.Stat(filepath.Join(w.home, ".local", "state", "statewright")); err != nil {
		t.Errorf("the state directory is gone: %v", err)
	}
}

// TestGitReadsOutsideTheIndex: git commands that print files outside the
// index (diff --no-index, grep --no-index or --untracked) are reads like
// cat and grep -r: from the read-only localizing phase they reach no
// secret, and still work where none is reached.
func TestGitReadsOutsideTheIndex(t *testing.T) {
	w := newWorld(t)
	w.start("bugfix")
	w.bashDenied("localizing",
		"git diff --no-index /dev/null .env",
		"git diff --no-index /dev/null ~/.config",
		"git diff --no-index -- /dev/null ../.config/statewright/operator-token",
		"git grep --no-index API",
		"git grep --untracked -e API -- .",
		"git -C . grep --no-index -e API",
	)
	w.bashAllowed("git diff --no-index go.mod calc.go", "git grep --no-index Add calc.go", "git grep Add")
	w.noSecretShown()
	w.lawUnchanged()
}

// TestNameListsAreReads: programs that only list names (wc, du, file,
// find, tree) read a file's content when they take their names from it,
// and print it (each name, or in an error): from the read-only localizing
// phase those reads of a secret are denied; counting a secret's lines is
// still fine.
func TestNameListsAreReads(t *testing.T) {
	w := newWorld(t)
	w.start("bugfix")
	w.bashDenied("localizing",
		"wc -l --files0-from=.env",
		"du --files0-from .env",
		"file -f .env",
		"file -bf .env",
		"find -files0-from .env -prune",
		"tree --fromfile .env",
		"wc -c --files0-from=../.config/statewright/operator-token",
	)
	w.bashAllowed("wc -l .env", "du -s .", "file calc.go")
	w.noSecretShown()
}
