package runtime

import (
	"os"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"slices"
	"testing"
)

// TestHostCacheKey: the cache's key holds every variable DiscoverHost
// reads.
func TestHostCacheKey(t *testing.T) {
	var asked []string
	DiscoverHost(HostOptions{ProjectDir: t.TempDir(), Getenv: func(k string) string {
		if !slices.Contains(asked, k) {
			asked = append(asked, k)
		}
		return ""
	}})
	slices.Sort(asked)
	if want := []string{"CLAUDE_ENV_FILE", "HOME", "PATH", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"}; !slices.Equal(asked, want) {
		t.Errorf("DiscoverHost reads %v; HostCache keys on %v", asked, want)
	}
}

// TestHostCacheSeesChanges: what an agent changes on the paths the
// discovery read (a PATH directory planted as a link, a new .git, a .git
// file pointing elsewhere, a worktree) is seen at the next use, as a
// fresh discovery sees it; while nothing changes the answer is kept.
func TestHostCacheSeesChanges(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("HostCache keeps answers on Linux only")
	}
	old := racyWindow
	racyWindow = 0
	defer func() { racyWindow = old }()
	dir := t.TempDir()
	home, project, elsewhere, other := filepath.Join(dir, "home"), filepath.Join(dir, "home", "proj"), filepath.Join(dir, "elsewhere"), filepath.Join(dir, "other")
	for _, d := range []string{project, elsewhere, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home, "PATH": filepath.Join(home, ".local", "bin") + ":" + other + ":/usr/bin"}
	o := HostOptions{ProjectDir: project, Store: filepath.Join(dir, "state.db"), Binary: filepath.Join(dir, "bin", "statewright"),
		Getenv: func(k string) string { return env[k] }}
	var c HostCache
	check := func(step string) {
		t.Helper()
		got, want := c.Discover(o), DiscoverHost(o)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("%s: the cache answers otherwise than a discovery:\n got %+v\nwant %+v", step, got, want)
		}
		if again := c.Discover(o); again != got {
			t.Fatalf("%s: the answer was not kept", step)
		}
	}
	check("start")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(home, ".local"), 0o755))
	check("~/.local made")
	must(os.Symlink(elsewhere, filepath.Join(home, ".local", "bin")))
	check("~/.local/bin planted as a link")
	if h := c.Discover(o); !slices.Contains(h.Protected, elsewhere) {
		t.Fatalf("the link's target %s is not protected: %v", elsewhere, h.Protected)
	}
	must(os.Mkdir(filepath.Join(home, ".git"), 0o755))
	check("a .git above the project")
	must(os.WriteFile(filepath.Join(project, ".git.new"), []byte("gitdir: "+filepath.Join(elsewhere, "wt")+"\n"), 0o644))
	must(os.Rename(filepath.Join(project, ".git.new"), filepath.Join(project, ".git")))
	check("a .git file in the project")
	if h := c.Discover(o); !slices.Contains(h.GitDirs, filepath.Join(elsewhere, "wt")) {
		t.Fatalf("the gitdir is not found: %v", h.GitDirs)
	}
	must(os.MkdirAll(filepath.Join(home, ".git", "worktrees", "w1"), 0o755))
	check("a worktree")
	must(os.Remove(filepath.Join(home, ".local", "bin")))
	check("the link removed")
	env["PATH"] = other
	check("PATH changed")
	env["HOME"] = other
	check("HOME changed")
}

// TestHostCacheRacy: an answer that read a path changed just now is not
// kept.
func TestHostCacheRacy(t *testing.T) {
	dir, bin := t.TempDir(), t.TempDir()
	var c HostCache
	o := HostOptions{ProjectDir: dir, Getenv: func(k string) string { return map[string]string{"HOME": dir, "PATH": bin}[k] }}
	c.Discover(o)
	if len(c.entries) != 0 {
		t.Errorf("kept an answer that read %s, made just now", bin)
	}
}
