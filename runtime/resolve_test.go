package runtime

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/policy"
)

func TestResolve(t *testing.T) {
	root := t.TempDir()
	root = resolve(root).Real
	mk := func(p string) string {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(mk("proj/.claude/settings.json"), []byte("{}"), 0o644))
	must(os.MkdirAll(mk("elsewhere/sub/x"), 0o755))
	must(os.Symlink(".claude", mk("proj/x")))
	must(os.Symlink(filepath.Join(root, "elsewhere/sub"), mk("proj/out")))
	must(os.Symlink("loop", mk("proj/loop")))
	must(os.Link(mk("proj/.claude/settings.json"), mk("proj/hl.json")))

	r := NewResolver()
	in := r.Resolve(filepath.Join(root, "proj/x/settings.json"))
	if in.Real != filepath.Join(root, "proj/.claude/settings.json") || !in.Exists || len(in.Links) != 1 || !in.Links[0].Writable {
		t.Errorf("through a link: %+v", in)
	}
	// ".." applies after the link is followed, as the kernel does.
	in = r.Resolve(root + "/proj/out/../new.txt")
	if in.Real != filepath.Join(root, "elsewhere/new.txt") || in.Exists {
		t.Errorf("link then ..: %+v", in)
	}
	in = r.Resolve(filepath.Join(root, "proj/missing/dir/f"))
	if in.Real != filepath.Join(root, "proj/missing/dir/f") || in.Exists || in.Err != "" {
		t.Errorf("missing: %+v", in)
	}
	if in = r.Resolve(filepath.Join(root, "proj/loop")); in.Err == "" {
		t.Errorf("a link loop resolved: %+v", in)
	}
	if in = r.Resolve(filepath.Join(root, "proj/hl.json")); in.Nlink != 2 {
		t.Errorf("hard link count: %+v", in)
	}
}

func TestReachHonoursReaderDefaults(t *testing.T) {
	root := resolve(t.TempDir()).Real
	write := func(p string) {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("repo/.git/HEAD")
	write("repo/.gitignore")
	if err := os.WriteFile(filepath.Join(root, "repo/.gitignore"), []byte("# secrets\n.env\nbuild/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write("repo/.env")
	write("repo/src/main.go")
	write("repo/build/key.pem")
	secret := func(p string) bool { return strings.HasSuffix(p, "/.env") || strings.HasSuffix(p, ".pem") }
	r := NewResolver()
	for _, tt := range []struct {
		w    policy.Walk
		want string
	}{
		{policy.Walk{Hidden: true, Ignored: true}, "found"}, // grep -r
		{policy.Walk{}, ""},                   // rg: .env is hidden and ignored, build/ ignored
		{policy.Walk{Hidden: true}, ""},       // rg --hidden: still gitignored
		{policy.Walk{Ignored: true}, "found"}, // rg --no-ignore: build/key.pem
	} {
		got, err := r.Reach(filepath.Join(root, "repo"), tt.w, secret)
		if err != nil {
			t.Fatal(err)
		}
		if (got != "") != (tt.want == "found") {
			t.Errorf("walk %+v reached %q", tt.w, got)
		}
	}
	// A negation is not modelled: the file is not used, so nothing is skipped.
	if err := os.WriteFile(filepath.Join(root, "repo/.gitignore"), []byte(".env\n!keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Reach(filepath.Join(root, "repo"), policy.Walk{Hidden: true}, secret); got == "" {
		t.Error("a .gitignore with a negation still hid the .env")
	}
	r.MaxWalk = 2
	if _, err := r.Reach(filepath.Join(root, "repo"), policy.Walk{Hidden: true, Ignored: true}, func(string) bool { return false }); err == nil {
		t.Error("a walk over its bound did not fail")
	}
}

func TestDiscoverHostWorktree(t *testing.T) {
	root := resolve(t.TempDir()).Real
	common := filepath.Join(root, "main", ".git")
	wt := filepath.Join(common, "worktrees", "w")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(wt, "commondir"), []byte("../..\n"), 0o644)
	proj := filepath.Join(root, "w")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, ".git"), []byte("gitdir: "+wt+"\n"), 0o644)
	h := DiscoverHost(HostOptions{ProjectDir: proj, Getenv: func(k string) string {
		if k == "HOME" {
			return root
		}
		return ""
	}})
	if len(h.GitDirs) != 2 || h.GitDirs[0] != wt || h.GitDirs[1] != common {
		t.Errorf("git dirs of a worktree: %v", h.GitDirs)
	}
	f := policy.HostFences(h, policy.SecretRules{})
	found := false
	for _, fe := range f.Protected {
		if fe.Path == filepath.Join(common, "hooks") {
			found = true
		}
	}
	if !found {
		t.Errorf("the common dir's hooks are not protected: %+v", f.Protected)
	}
}

// TestDiscoverHostHookFiles: the thin hook client and the slim sandbox
// launcher beside the binary are law (read-only to the agent), and the
// local decider's directory (socket and key) is hidden in the sandbox.
func TestDiscoverHostHookFiles(t *testing.T) {
	root := resolve(t.TempDir()).Real
	bin := filepath.Join(root, "bin", "statewright")
	h := DiscoverHost(HostOptions{ProjectDir: root, Binary: bin, Getenv: func(k string) string {
		if k == "HOME" {
			return root
		}
		return ""
	}})
	f := policy.HostFences(h, policy.SecretRules{})
	has := func(list []policy.Fence, p string) bool {
		for _, fe := range list {
			if fe.Match(p) {
				return true
			}
		}
		return false
	}
	for _, p := range []string{filepath.Join(root, "bin", "statewright-hook"), filepath.Join(root, "bin", "statewright-sandbox")} {
		if !has(f.Protected, p) {
			t.Errorf("%s is not protected", p)
		}
	}
	dec := filepath.Join(root, ".config", "statewright", "decider")
	for _, p := range []string{filepath.Join(dec, "key"), filepath.Join(dec, "d-0123.sock")} {
		if !has(f.Hidden, p) || !has(f.Secret, p) || !has(f.Protected, p) {
			t.Errorf("%s is not hidden, secret and protected", p)
		}
	}
}

// TestDiscoverHostPathDirs: the PATH directories under home are
// protected whether they exist yet or not (a git planted in
// ~/.pyenv/shims runs at the person's next commit), and so are other PATH
// directories this process can write; the project's own, the home
// directory itself, a directory holding the project and relative entries
// are not (protecting them as trees would protect the project). A linked
// worktree's commondir under the git directory is protected too.
func TestDiscoverHostPathDirs(t *testing.T) {
	root := resolve(t.TempDir()).Real
	home := filepath.Join(root, "home")
	proj := filepath.Join(home, "proj")
	prefix := filepath.Join(root, "brew", "bin")
	ro := filepath.Join(root, "ro")
	for _, d := range []string{filepath.Join(home, ".pyenv", "shims"), filepath.Join(proj, "node_modules", ".bin"), prefix, ro, filepath.Join(proj, ".git", "worktrees", "w")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	path := strings.Join([]string{filepath.Join(home, ".pyenv", "shims"), filepath.Join(home, ".npm-global", "bin"),
		filepath.Join(proj, "node_modules", ".bin"), home, root, prefix, ro, "bin", "/"}, string(os.PathListSeparator))
	h := DiscoverHost(HostOptions{ProjectDir: proj, Getenv: func(k string) string {
		switch k {
		case "HOME":
			return home
		case "PATH":
			return path
		}
		return ""
	}})
	for _, p := range []string{filepath.Join(home, ".pyenv", "shims"), filepath.Join(home, ".npm-global", "bin"), prefix,
		filepath.Join(proj, ".git", "worktrees", "w", "commondir")} {
		if !slices.Contains(h.Protected, p) {
			t.Errorf("%s is not protected: %q", p, h.Protected)
		}
	}
	notRO := []string{filepath.Join(proj, "node_modules", ".bin"), home, root, "bin", "/"}
	if os.Geteuid() != 0 {
		notRO = append(notRO, ro) // root can write it
	}
	for _, p := range notRO {
		if slices.Contains(h.Protected, p) {
			t.Errorf("%s is protected", p)
		}
	}
}
