package policy

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/workflow"
)

func TestSandboxProfile(t *testing.T) {
	src := `
id: sb
initial: planning
states:
  planning:
    allowed_tools: [Read, Grep, Bash]
    on: {GO: implementing}
  implementing:
    allowed_tools: [Read, Edit, Write, Bash]
    sandbox: {writable: [~/.cache/tool, /opt/out, .claude/commands, .git/hooks], hidden: [.env]}
    on: {GO: scoped}
  scoped:
    allowed_tools: [Edit, Network]
    allowed_paths: ["src/**/*.go", "docs/a.md", "**/*.txt"]
    denied_paths: [src/vendor, "src/**/*_gen.go"]
    on: {GO: done, COMMIT: committing}
  committing:
    allowed_tools: [Read, Bash, GitWrite]
    on: {GO: done}
  done: {type: final}
`
	def, _, err := workflow.Parse([]byte(src), workflow.ParseOptions{Source: "sb.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Compile(def, Options{ProtectedPaths: []string{"/usr/local/bin/statewright", "workflows/sb.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	env := SandboxEnv{
		ProjectDir: "/p", Home: "/h", Store: "/h/.local/state/statewright/state.db",
		Secrets:    []string{"/h/.config/statewright/operator-token", "/run/sw"},
		SessionDir: "/h/.cache/statewright/sandbox/s1", CallDir: "/h/.cache/statewright/sandbox/s1/calls/c1",
		GoModCache: "/h/go/pkg/mod",
	}
	type want struct {
		writable, notWritable, readOnly, notReadOnly, hidden, env []string
		network                                                   bool
	}
	common := want{
		readOnly: []string{"/p/.claude", "/p/.git/config", "/p/.git/hooks", "/p/.git/modules", "/h/.gitconfig", "/h/.bashrc",
			"/p/.statewright", "/h/.config/statewright", "/usr/local/bin/statewright", "/p/workflows/sb.yaml", "/h/.cache/statewright/sandbox"},
		hidden: []string{"/h/.ssh", "/h/.aws", "/h/.config/gh", "/h/.claude/.credentials.json", "/h/.claude/projects", "/h/.codex/auth.json",
			"/h/.config/statewright/operator-token", "/run/sw", "/h/.local/state/statewright/state.db", "/h/.local/state/statewright/state.db-wal",
			"/h/.local/state/statewright/state.db-shm", "/h/.local/state/statewright/state.db-journal"},
	}
	cases := map[string]want{
		"planning": {
			writable:    []string{"/p/target", "/p/.pytest_cache", "/h/.cache/statewright/sandbox/s1/cache", env.CallDir},
			notWritable: []string{"/p"},
			env:         []string{"GOPROXY=file:///h/go/pkg/mod/cache/download,off", "GOCACHE=/h/.cache/statewright/sandbox/s1/cache/go-build", "TMPDIR=/tmp"},
		},
		"implementing": {
			writable:    []string{"/p", "/h/.cache/tool", "/opt/out"},
			notWritable: []string{"/p/.claude/commands", "/p/.git/hooks"},
			readOnly:    []string{"/p/.git"}, // no GitWrite: the whole repository
			hidden:      []string{"/p/.env"},
		},
		// GitWrite without an edit tool: git writes its repository, its
		// configuration and hooks stay read-only.
		"committing": {writable: []string{"/p/.git"}, notWritable: []string{"/p"}, notReadOnly: []string{"/p/.git"}, readOnly: []string{"/p/.git/commondir"}},
		"scoped": {
			writable:    []string{"/p/src", "/p/docs/a.md", "/p"},
			notWritable: []string{"/p/target"},
			readOnly:    []string{"/p/src/vendor"},
			network:     true,
			env:         []string{"GOPROXY=file:///h/go/pkg/mod/cache/download,https://proxy.golang.org,direct"},
		},
		"done": {notWritable: []string{"/p", "/p/target"}},
	}
	for state, w := range cases {
		t.Run(state, func(t *testing.T) {
			p, err := l.SandboxProfile(state, env)
			if err != nil {
				t.Fatal(err)
			}
			if p.Phase != state || p.Network != w.network || p.Tmp != "/h/.cache/statewright/sandbox/s1/tmp" {
				t.Errorf("phase %q network %v tmp %q", p.Phase, p.Network, p.Tmp)
			}
			check := func(what string, list, want []string, in bool) {
				for _, x := range want {
					if slices.Contains(list, x) != in {
						t.Errorf("%s: %s in=%v, want %v (%q)", what, x, !in, in, list)
					}
				}
			}
			check("writable", p.Writable, w.writable, true)
			check("writable", p.Writable, w.notWritable, false)
			check("read-only", p.ReadOnly, append(w.readOnly, common.readOnly...), true)
			check("read-only", p.ReadOnly, w.notReadOnly, false)
			check("hidden", p.Hidden, append(w.hidden, common.hidden...), true)
			check("env", p.Env, w.env, true)
			for _, x := range p.Writable {
				if strings.Contains(x, "*") {
					t.Errorf("glob in writable: %s", x)
				}
			}
		})
	}
	if _, err := l.SandboxProfile("nope", env); err == nil {
		t.Error("unknown state: no error")
	}
}

func TestSandboxLesson(t *testing.T) {
	src := `
id: sb
initial: planning
states:
  planning:
    allowed_tools: [Read, Bash]
    on: {GO: implementing, SKIP: review}
  implementing:
    allowed_tools: [Read, Edit, Bash]
    on: {DONE: review}
  review:
    allowed_tools: [Read]
    on: {OK: done}
  done: {type: final}
`
	def, _, err := workflow.Parse([]byte(src), workflow.ParseOptions{Source: "sb.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Compile(def, Options{})
	if err != nil {
		t.Fatal(err)
	}
	env := SandboxEnv{ProjectDir: "/p", Home: "/h", Store: "/p/.statewright/state.db"}
	for _, c := range []struct{ state, path, want string }{
		{"planning", "/p/src/a.go", "It is writable after GO (to 'implementing')."},
		{"review", "/p/src/a.go", "No single event leads to a phase where it is writable."},
		{"implementing", "/p/.claude/settings.json", "read-only in every phase"},
		{"implementing", "/h/.ssh/id_ed25519", "hides /h/.ssh/id_ed25519"},
		{"implementing", "/p/.statewright/state.db", "hides"},
	} {
		if got := l.SandboxLesson(c.state, c.path, env); !strings.Contains(got, c.want) {
			t.Errorf("SandboxLesson(%s, %s) = %q, want it to contain %q", c.state, c.path, got, c.want)
		}
	}
}

// TestSandboxHidesPhaseReadFences: a phase's literal denied_paths and
// Read(...) deny paths are hidden in its sandbox, like secrets.
func TestSandboxHidesPhaseReadFences(t *testing.T) {
	src := `{"id":"h","initial":"w","states":{"w":{"allowed_tools":["Read","Bash","Edit"],"denied_paths":["private"],
	  "permissions":{"deny":["Read(./keys/prod.key)","Read(*.secret)"]},"on":{"X":"o"}},"o":{"allowed_tools":["Read","Bash"],"on":{"Y":"d"}},"d":{"type":"final"}}}`
	def, _, err := workflow.Parse([]byte(src), workflow.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	law, err := Compile(def, Options{Host: &Host{Home: "/home/u", ProjectDir: "/srv/p"}})
	if err != nil {
		t.Fatal(err)
	}
	prof, err := law.SandboxProfile("w", SandboxEnv{ProjectDir: "/srv/p", Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/srv/p/private", "/srv/p/keys/prod.key"} {
		if !slices.Contains(prof.Hidden, want) {
			t.Errorf("phase w hides %v, want %s among them", prof.Hidden, want)
		}
	}
	other, _ := law.SandboxProfile("o", SandboxEnv{ProjectDir: "/srv/p", Home: "/home/u"})
	if slices.Contains(other.Hidden, "/srv/p/private") {
		t.Error("another phase hides phase w's denied_paths")
	}
}

// TestSandboxNetworkFromDomains: where a phase names domains, its sandbox
// has no direct network and the proxy carries the phase's list.
func TestSandboxNetworkFromDomains(t *testing.T) {
	src := `{"id":"n","initial":"plain","allowed_domains":null,
	  "permissions":{"deny":["WebFetch(domain:evil.example)"]},
	  "states":{
	    "plain":{"allowed_tools":["Read","Bash"],"on":{"A":"net"}},
	    "net":{"allowed_tools":["Read","Bash","Network"],"on":{"B":"listed"}},
	    "listed":{"allowed_tools":["Read","Bash","Network"],"allowed_domains":["docs.python.org","*.github.com"],"on":{"C":"none"}},
	    "none":{"allowed_tools":["Read","Bash","Network"],"allowed_domains":[],"on":{"D":"granted"}},
	    "granted":{"allowed_tools":["Read","Bash"],"permissions":{"allow":["WebFetch(domain:pypi.org)"]},"on":{"E":"done"}},
	    "done":{"type":"final"}}}`
	def, _, err := workflow.Parse([]byte(src), workflow.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	law, err := Compile(def, Options{Host: &Host{Home: "/home/u", ProjectDir: "/srv/p"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		state   string
		network bool
		proxy   *sandbox.NetPolicy
	}{
		// No Network capability: the deny rule changes nothing.
		{"plain", false, nil},
		// Network with a deny rule: every host but that one, through the proxy.
		{"net", false, &sandbox.NetPolicy{AllowAll: true, Deny: []string{"evil.example"}}},
		{"listed", false, &sandbox.NetPolicy{Allow: []string{"docs.python.org", "*.github.com"}, Deny: []string{"evil.example"}}},
		// An empty list: no network, and no proxy.
		{"none", false, nil},
		// An allow rule grants its host without the capability.
		{"granted", false, &sandbox.NetPolicy{Allow: []string{"pypi.org"}, Deny: []string{"evil.example"}}},
		{"done", false, nil},
	} {
		prof, err := law.SandboxProfile(c.state, SandboxEnv{ProjectDir: "/srv/p", Home: "/home/u"})
		if err != nil {
			t.Fatal(err)
		}
		if prof.Network != c.network || !reflect.DeepEqual(prof.Proxy, c.proxy) {
			t.Errorf("%s: network %v, proxy %+v; want %v, %+v", c.state, prof.Network, prof.Proxy, c.network, c.proxy)
		}
	}
}

// TestSandboxKeepsHostLaw: the protected paths the runtime found on the
// host (PATH directories under home, a worktree's git directories) and
// the home's rc files and unit directories are read-only in the sandbox
// as they are for the static law: one set for both walls. With GitWrite
// the worktree's git directories are writable, their config is not.
func TestSandboxKeepsHostLaw(t *testing.T) {
	src := `{"id":"h","initial":"w","states":{"w":{"allowed_tools":["Read","Bash","Edit","GitWrite"],"on":{"X":"d"}},"d":{"type":"final"}}}`
	def, _, err := workflow.Parse([]byte(src), workflow.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	host := &Host{Home: "/home/u", ProjectDir: "/home/u/p", GitDirs: []string{"/srv/main/.git/worktrees/p", "/srv/main/.git"},
		Protected: []string{"/home/u/.pyenv/shims"}}
	law, err := Compile(def, Options{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	prof, err := law.SandboxProfile("w", SandboxEnv{ProjectDir: "/home/u/p", Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/home/u/.pyenv/shims", "/home/u/.psqlrc", "/home/u/.tmux.conf", "/home/u/.config/systemd",
		"/home/u/.config/autostart", "/home/u/.config/environment.d", "/home/u/.local/lib", "/home/u/.ssh",
		"/srv/main/.git/config", "/srv/main/.git/commondir", "/srv/main/.git/worktrees/p/commondir"} {
		if !slices.Contains(prof.ReadOnly, want) {
			t.Errorf("%s is not read-only in the sandbox", want)
		}
	}
	for _, want := range []string{"/home/u/p", "/srv/main/.git/worktrees/p", "/srv/main/.git"} {
		if !slices.Contains(prof.Writable, want) {
			t.Errorf("%s is not writable with GitWrite: %q", want, prof.Writable)
		}
	}
}
