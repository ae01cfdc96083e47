package runtime

import (
	"os"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"slices"
	"strings"
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

// TestLstatStamp: the stamp HostCache checks a noted path against on
// every use (lstatStamp) is the one a discovery noted from os.Lstat, for
// every kind of path and error.
func TestLstatStamp(t *testing.T) {
	dir := t.TempDir()
	file, sub, link, dangling, closed := filepath.Join(dir, "f"), filepath.Join(dir, "d"), filepath.Join(dir, "l"), filepath.Join(dir, "dl"), filepath.Join(dir, "closed")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{os.Mkdir(sub, 0o755), os.Symlink(sub, link), os.Symlink(filepath.Join(dir, "nowhere"), dangling),
		os.Mkdir(closed, 0o755), os.WriteFile(filepath.Join(closed, "in"), nil, 0o644), os.Chmod(closed, 0)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	defer os.Chmod(closed, 0o755)
	for _, p := range []string{file, sub, link, dangling, filepath.Join(link, "x"), filepath.Join(dir, "missing"),
		filepath.Join(file, "under-a-file"), filepath.Join(closed, "in"), filepath.Join(dir, strings.Repeat("n", 300)), "/"} {
		for _, content := range []bool{false, true} {
			fi, err := os.Lstat(p)
			want, wantOK := stampOf(fi, err, content)
			got, gotOK := lstatStamp(p, content)
			if got != want || gotOK != wantOK {
				t.Errorf("lstatStamp(%s, %v) = %+v, %v; from os.Lstat %+v, %v", p, content, got, gotOK, want, wantOK)
			}
		}
	}
}

// BenchmarkHostCacheHolds is the check HostCache makes before it reuses
// an answer, on a discovery of this process's PATH and a home directory:
// "os.Lstat" is how it checked until hooktail, "lstatStamp" how it checks.
func BenchmarkHostCacheHolds(b *testing.B) {
	old := racyWindow
	racyWindow = 0
	defer func() { racyWindow = old }()
	dir := b.TempDir()
	project := filepath.Join(dir, "home", "proj")
	if err := os.MkdirAll(project, 0o755); err != nil {
		b.Fatal(err)
	}
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "PATH": os.Getenv("PATH")}
	var c HostCache
	c.Discover(HostOptions{ProjectDir: project, Store: filepath.Join(dir, "state.db"), Binary: filepath.Join(dir, "bin", "statewright"),
		Getenv: func(k string) string { return env[k] }})
	if len(c.entries) != 1 {
		b.Skip("no answer kept (not Linux)")
	}
	var e *hostEntry
	for _, v := range c.entries {
		e = v
	}
	b.Logf("%d noted paths", len(e.noted))
	b.Run("os.Lstat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, n := range e.noted {
				fi, err := os.Lstat(nativePath(n.path))
				if st, ok := stampOf(fi, err, n.stamp.content); !ok || st != n.stamp {
					b.Fatal("changed")
				}
			}
		}
	})
	b.Run("lstatStamp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !e.holds() {
				b.Fatal("changed")
			}
		}
	})
}
