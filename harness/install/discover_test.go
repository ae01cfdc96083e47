package install

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindStore(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("claude/.claude/settings.local.json", `{"hooks":{"PreToolUse":[{"hooks":[{"command":"'/bin/statewright-hook' hook claude-code pre-tool-use --store '/s/claude.db' --store-id 'st_1'"}]}]}}`)
	write("claude/src/pkg/x.go", "package pkg")
	write("codex/.codex/config.toml", `command = "'/bin/statewright' hook codex pre-tool-use --store '/s/codex.db' --store-id 'st_1'"`)
	write("oc/.opencode/plugins/statewright.ts", `const CONFIG = {"argv":["/bin/statewright-hook","hook","opencode"],"flags":["--store","/s/oc.db","--store-id","st_1"]}`)
	write("pi/.pi/extensions/statewright.ts", `const CONFIG = {"flags":["--store", "/s/pi.db"]} // statewright`)
	write("db/.statewright/state.db", "")
	write("db/a/b/c", "")
	write("foreign/.claude/settings.json", `{"hooks":{"PreToolUse":[{"hooks":[{"command":"other --store '/s/x.db'"}]}]}}`)
	for _, tt := range []struct{ dir, want, from string }{
		{"claude", "/s/claude.db", "claude/.claude/settings.local.json"},
		{"claude/src/pkg", "/s/claude.db", "claude/.claude/settings.local.json"},
		{"codex", "/s/codex.db", "codex/.codex/config.toml"},
		{"oc", "/s/oc.db", "oc/.opencode/plugins/statewright.ts"},
		{"pi", "/s/pi.db", "pi/.pi/extensions/statewright.ts"},
		{"db/a/b", filepath.Join(root, "db/.statewright/state.db"), "db/.statewright/state.db"},
		{"foreign", "", ""},
	} {
		loc, from := FindStore(filepath.Join(root, tt.dir))
		wantFrom := ""
		if tt.from != "" {
			wantFrom = filepath.Join(root, tt.from)
		}
		if loc != tt.want || from != wantFrom {
			t.Errorf("FindStore(%s) = %q, %q; want %q, %q", tt.dir, loc, from, tt.want, wantFrom)
		}
	}
}
