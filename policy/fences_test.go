package policy

import (
	"strings"
	"testing"
)

func TestHostFences(t *testing.T) {
	h := &Host{Home: "/home/u", ProjectDir: "/home/u/proj", GitDirs: []string{"/home/u/proj/.git"},
		Store: "/home/u/.local/state/statewright/state.db", Binary: "/usr/local/bin/statewright"}
	f := HostFences(h, SecretRules{})
	prot := compileFences(f.Protected, nil)
	sec := compileFences(f.Secret, f.NotSecret)
	hid := compileFences(f.Hidden, f.NotSecret)
	for _, tt := range []struct {
		path              string
		protected, secret bool
	}{
		{"/home/u/proj/.claude/settings.local.json", true, false},
		{"/home/u/proj/.claude", true, false},
		{"/home/u/.claude/settings.json", true, false},
		{"/home/u/.claude/.credentials.json", true, true},
		{"/home/u/.claude/projects/x/t.jsonl", true, true},
		{"/home/u/.codex/auth.json", true, true},
		{"/home/u/proj/.git/hooks/pre-commit", true, false},
		{"/home/u/proj/.git/config", true, false},
		{"/home/u/proj/.git/HEAD", false, false},
		{"/home/u/.gitconfig", true, false},
		{"/home/u/.config/git/config", true, false},
		{"/home/u/.config/statewright/operator-token", true, true},
		{"/home/u/.config/statewright/tokens.json", true, true},
		{"/home/u/.local/state/statewright/state.db-wal", true, false},
		{"/usr/local/bin/statewright", true, false},
		{"/home/u/.ssh/id_ed25519", true, true},
		{"/home/u/.ssh/config", true, true},
		{"/home/u/.aws/credentials", false, true},
		{"/home/u/.config/gh/hosts.yml", false, true},
		{"/home/u/proj/.env", false, true},
		{"/home/u/proj/svc/.env.production", false, true},
		{"/home/u/proj/.env.example", false, false},
		{"/home/u/proj/certs/key.pem", false, true},
		{"/home/u/proj/certs/key.pem.sample", false, false},
		{"/home/u/proj/src/id_rsa.go", false, false},
		{"/home/u/proj/src/main.go", false, false},
	} {
		_, p := prot.match(tt.path)
		_, s := sec.match(tt.path)
		if p != tt.protected || s != tt.secret {
			t.Errorf("%s: protected %v secret %v, want %v %v", tt.path, p, s, tt.protected, tt.secret)
		}
		if _, hidden := hid.match(tt.path); tt.secret && !hidden {
			t.Errorf("%s: a secret that the sandbox would not hide", tt.path)
		}
	}
	if _, ok := hid.match("/home/u/.local/state/statewright/state.db"); !ok {
		t.Error("the store is not hidden")
	}
	for _, fe := range f.Protected {
		if !fe.Pattern && !fe.Match(fe.Path) {
			t.Errorf("fence %s does not match itself", fe.Path)
		}
	}

	// A workflow switches the defaults off and adds its own; statewright's
	// own credentials stay secret.
	f = HostFences(h, SecretRules{NoDefaults: true, Paths: []string{"config/*.key", "vault-token", "~/.vault"}})
	sec = compileFences(f.Secret, f.NotSecret)
	for p, want := range map[string]bool{
		"/home/u/proj/.env": false, "/home/u/.ssh/id_rsa": false, "/home/u/proj/config/a.key": true,
		"/home/u/proj/x/vault-token": true, "/home/u/.vault/t": true, "/home/u/.config/statewright/operator-token": true,
	} {
		if _, got := sec.match(p); got != want {
			t.Errorf("with workflow rules, %s secret = %v, want %v", p, got, want)
		}
	}
}

// TestSecretAnchors: the default set matches issue 19 and DECISIONS 13 —
// anchored where the issue anchors it. *.pem is a secret in the project
// and the home directory, never in a system certificate store.
func TestSecretAnchors(t *testing.T) {
	h := &Host{Home: "/home/u", ProjectDir: "/srv/proj"}
	sec := compileFences(HostFences(h, SecretRules{}).Secret, notSecret)
	for p, want := range map[string]bool{
		"/srv/proj/.env": true, "/srv/proj/api/.env.local": true, "/home/u/.env": true,
		"/srv/proj/.env.example": false, "/srv/proj/.env.sample": false, "/srv/proj/.env.template": false,
		"/srv/proj/certs/server.pem": true, "/home/u/keys/deploy.pem": true,
		"/etc/ssl/certs/ca-certificates.pem": false, "/etc/ssl/certs/ISRG_Root_X1.pem": false,
		"/usr/share/ca-certificates/mozilla/x.pem": false, "/usr/lib/python3/dist-packages/certifi/cacert.pem": false,
		"/srv/proj/certs/server.pem.sample": false,
		"/home/u/.ssh/id_ed25519":           true, "/home/u/.ssh/id_rsa.pub": true, "/srv/proj/src/id_rsa.go": false,
		"/home/u/.aws/credentials": true, "/home/u/.config/gcloud/application_default_credentials.json": true,
		"/home/u/.netrc": true, "/srv/proj/.netrc": true,
	} {
		if _, got := sec.match(p); got != want {
			t.Errorf("%s: secret %v, want %v", p, got, want)
		}
	}
	// Without a host (statewright check), *.pem stays a secret at any depth: the safe side.
	none := compileFences(HostFences(nil, SecretRules{}).Secret, notSecret)
	if _, ok := none.match("/anywhere/key.pem"); !ok {
		t.Error("without a host, a .pem file is not a secret")
	}
}

// TestToolchainConfigProtected: files outside the project that make the
// user's own later builds, installs and editors run code are protected, on
// the static law's side and in the sandbox's read-only set (one
// definition); the project's own build configuration is not.
func TestToolchainConfigProtected(t *testing.T) {
	h := &Host{Home: "/home/u", ProjectDir: "/srv/proj"}
	f := HostFences(h, SecretRules{})
	prot := compileFences(f.Protected, nil)
	for p, want := range map[string]bool{
		"/home/u/.config/go/env": true, "/home/u/.npmrc": true, "/home/u/.yarnrc.yml": true,
		"/home/u/.cargo/config.toml": true, "/home/u/.config/pip/pip.conf": true, "/home/u/.pip/pip.conf": true,
		"/home/u/.gradle/init.d/evil.gradle": true, "/home/u/.m2/settings.xml": true, "/home/u/.mavenrc": true,
		"/home/u/.config/direnv/direnvrc": true, "/home/u/.docker/config.json": true, "/home/u/.ssh/authorized_keys": true,
		"/home/u/.local/bin/git": true, "/home/u/go/bin/gopls": true, "/home/u/.vimrc": true,
		"/home/u/.config/Code/User/tasks.json": true,
		"/srv/proj/.envrc":                     true, "/srv/proj/.vscode/tasks.json": true, "/srv/proj/.vscode/settings.json": true,
		"/srv/proj/.npmrc": false, "/srv/proj/.cargo/config.toml": false, "/srv/proj/package.json": false,
		"/srv/proj/.vscode/extensions.json": false, "/home/u/go/src/x.go": false,
	} {
		if _, got := prot.match(p); got != want {
			t.Errorf("%s: protected %v, want %v", p, got, want)
		}
	}
	trees := ProtectedTrees("/srv/proj", "/home/u")
	for _, want := range []string{"/home/u/.config/go/env", "/home/u/.npmrc", "/srv/proj/.vscode/tasks.json"} {
		found := false
		for _, tr := range trees {
			found = found || tr == want
		}
		if !found {
			t.Errorf("the sandbox's read-only set lacks %s", want)
		}
	}
	for argv, want := range map[string]string{
		"go env -w GOFLAGS=-toolexec=/tmp/x": "~/.config/go/env", "go env -u GOFLAGS": "~/.config/go/env",
		"go env GOPATH": "", "npm config set script-shell /tmp/x": "~/.npmrc", "npm set node-options=--require=x": "~/.npmrc",
		"npm config get registry": "", "npm --global config set x y": "~/.npmrc", "pip config set global.index-url http://x": "~/.config/pip/pip.conf",
		"pip install x": "", "yarn config set yarnPath /tmp/x.js": "~/.yarnrc",
	} {
		if got := ToolchainConfigWrite(strings.Fields(argv)); got != want {
			t.Errorf("ToolchainConfigWrite(%s) = %q, want %q", argv, got, want)
		}
	}
}

func TestHasSeq(t *testing.T) {
	for _, tt := range []struct {
		p, q string
		want bool
	}{
		{"/a/.claude/x", "/.claude", true}, {"/a/.claude", "/.claude", true}, {"/a/.claudex", "/.claude", false},
		{".claude/x", "/.claude", true}, {"/a/x.claude", "/.claude", false}, {"/a/.git/config", "/.git/config", true},
		{"/a/.git/configs", "/.git/config", false},
	} {
		if got := hasSeq(tt.p, tt.q); got != tt.want {
			t.Errorf("hasSeq(%q, %q) = %v", tt.p, tt.q, got)
		}
	}
}

// TestFenceMatchNamesTheFenceAsWritten: matching ignores ASCII case, but
// what a lesson names is the fence with its own case (a home such as
// /tmp/home.7huM must not read as /tmp/home.7hum).
func TestFenceMatchNamesTheFenceAsWritten(t *testing.T) {
	s := compileFences([]Fence{
		{Path: "/tmp/Home.7huM/.claude"},
		{Path: "**/.MyTool", Pattern: true},
		{Path: "**/Deep/Tree/**", Pattern: true},
		{Path: "/tmp/Home.7huM/Logs/*.Secret", Pattern: true},
		{Path: "*.PEM", Pattern: true},
		{Path: "/opt/lower"},
	}, nil)
	for _, tt := range []struct{ path, want string }{
		{"/tmp/Home.7huM/.claude/settings.json", "/tmp/Home.7huM/.claude"},
		{"/tmp/home.7hum/.CLAUDE", "/tmp/Home.7huM/.claude"},
		{"/srv/x/.mytool/cfg", ".MyTool"},
		{"/srv/deep/tree/a", "Deep/Tree"},
		{"/tmp/Home.7huM/Logs/a.Secret", "/tmp/Home.7huM/Logs/*.Secret"},
		{"/srv/key.pem", "**/*.PEM"},
		{"/opt/lower/x", "/opt/lower"},
	} {
		got, ok := s.match(tt.path)
		if !ok || got != tt.want {
			t.Errorf("match(%q) = %q, %v; want %q, true", tt.path, got, ok, tt.want)
		}
	}
	if got, ok := s.match("/tmp/Home.7huM/other"); ok {
		t.Errorf("match(/tmp/Home.7huM/other) = %q, true; want no match", got)
	}
}
