package policy

import (
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
		{"/home/u/.ssh/id_ed25519", false, true},
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
