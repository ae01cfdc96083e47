//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

// spellingsWorkflow's one working phase allows reads and writes anywhere but
// where the law always says no (statewright's own files, secrets).
const spellingsWorkflow = `{
  "id": "e2e-spellings",
  "initial": "fixing",
  "states": {
    "fixing": {
      "allowed_tools": ["Read", "Write", "Bash"],
      "on": {"FIXED": "done"}
    },
    "done": {"type": "final"}
  }
}`

// spellingsSecret is the token in the project's .env: it must never reach
// the model.
const spellingsSecret = "sk-e2e-9f3c1a77d2b84e05"

// TestPiSpellingDecoys is the attack of a tool input that names its file
// twice, under the spelling the law read first (file_path) and under the
// one Pi's tools read (path), run through the real Pi: its write and read
// tools accept both keys (their schemas allow extra properties) and act on
// path. The write aimed at statewright's own extension is refused and the
// extension is unchanged on disk; the read of the project's .env is
// refused and its token is in no request the model received. The same
// tools with one spelling work (the allowed write lands, the allowed read
// reaches the model), so the refusals are the law's, not Pi's.
//
// Before 5996a65 (edit fields) and 0a2e270 (read paths) the law decided
// both calls on file_path: Pi overwrote .pi/extensions/statewright.ts and
// sent the secret to the model.
func TestPiSpellingDecoys(t *testing.T) {
	spellingDecoys(t, "pi", "path", filepath.Join(".pi", "extensions", "statewright.ts"))
}

// TestOpencodeSpellingDecoys is TestPiSpellingDecoys through the real
// opencode: its write and read tools act on filePath, the law read
// file_path first. The decoy write aimed at statewright's opencode plugin
// is refused and the plugin unchanged on disk; the decoy read of .env is
// refused and its token is in no request the model received; the same
// tools with one spelling work.
func TestOpencodeSpellingDecoys(t *testing.T) {
	spellingDecoys(t, "opencode", "filePath", filepath.Join(".opencode", "plugins", "statewright.ts"))
}

// spellingDecoys runs the decoy attack through the real harness h (pi or
// opencode), whose write and read tools act on key: a write naming ok.txt
// as file_path and statewright's own file own (relative to the project)
// as key, and a read naming main.txt as file_path and .env as key, beside
// the same tools with key alone. It checks the disk, what the model was
// told and the store.
func spellingDecoys(t *testing.T, h, key, own string) {
	p := newPluginProjectWith(t, h, spellingsWorkflow)
	ext := p.path(own)
	before, err := os.ReadFile(ext)
	if err != nil {
		t.Fatalf("the file init installs for %s: %v", h, err)
	}
	if err := os.WriteFile(p.path(".env"), []byte("API_TOKEN="+spellingsSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := p.path("ok.txt")
	srv := fakemodel.NewChatCompletions(chatScript(
		fakemodel.Call(tool("call_ok", "write", map[string]any{key: ok, "content": "fine\n"})),
		fakemodel.Call(tool("call_write", "write", map[string]any{
			"file_path": ok, key: ext, "content": "// statewright switched off\n"})),
		fakemodel.Call(tool("call_read", "read", map[string]any{"file_path": p.path("main.txt"), key: p.path(".env")})),
		fakemodel.Call(tool("call_readok", "read", map[string]any{key: p.path("main.txt")})),
		fakemodel.Say("Done."),
	), fakemodel.WithLog(t.Logf))
	var r *Run
	switch h {
	case "pi":
		r = p.piRun(t, srv)
	case "opencode":
		r = p.opencodeRun(t, srv)
	default:
		t.Fatalf("no driver for harness %q", h)
	}
	srv.Close()

	// The disk: the allowed write landed, the decoy write did not.
	if b, _ := os.ReadFile(ok); string(b) != "fine\n" {
		t.Errorf("ok.txt = %q; want the allowed write's \"fine\\n\" (did %s run the calls?)\n%s", b, h, r)
	}
	if after, _ := os.ReadFile(ext); string(after) != string(before) {
		t.Errorf("the decoy write changed statewright's %s to %q", own, after)
	}
	// What the model was told: the decoys denied by statewright, the
	// allowed read's content, and nowhere the secret.
	for _, id := range []string{"call_write", "call_read"} {
		if res := mustResult(t, srv, id, r); !strings.Contains(res.Content, "statewright") || !strings.Contains(res.Content, "twice") {
			t.Errorf("%s: the model was told %q; want statewright's deny of a field given twice", id, res.Content)
		}
	}
	if res := mustResult(t, srv, "call_readok", r); !strings.Contains(res.Content, "old line") {
		t.Errorf("call_readok: the model was told %q; want main.txt's content", res.Content)
	}
	for _, req := range srv.Requests() {
		if strings.Contains(string(req.Body), spellingsSecret) {
			t.Errorf("request #%d to the model carries the .env token", req.Seq)
		}
	}
	unknownRequests(t, srv)

	// The store: the decoys recorded as denied, the rest allowed.
	session, state := p.session(t)
	if state != "fixing" {
		t.Errorf("the run is in %q; want fixing", state)
	}
	decisions, _ := p.decisions(t, session)
	for id, want := range map[string]string{"call_ok": "allow", "call_write": "deny", "call_read": "deny", "call_readok": "allow"} {
		if decisions[id] != want {
			t.Errorf("history: decision for %s = %q, want %q (all: %v)", id, decisions[id], want, decisions)
		}
	}
}

// TestPiAtPrefixedPaths is the attack of Pi's file-mention syntax: its
// file tools drop a leading "@" from their path before they open it
// (path-utils.js, expandPath), and the law read "@.env" as a relative path
// of that name. Through the real Pi: a read of "@.env" and of
// "@<project>/.env" is refused and the token is in no request the model
// received; a write of "@config/prod.yaml" in a phase whose denied_paths
// hold config/** is refused and the file is not created; "@main.txt" reads
// main.txt (Pi honours the "@").
//
// Before piPathAsRead (harness/internal/wire) two were allowed: Pi sent the .env
// token to the model and wrote config/prod.yaml ("@<project>/.env" was
// denied already: its base name is .env*).
func TestPiAtPrefixedPaths(t *testing.T) {
	p := newPluginProjectWith(t, "pi", `{
  "id": "e2e-at",
  "initial": "fixing",
  "states": {
    "fixing": {
      "allowed_tools": ["Read", "Write", "Bash"],
      "denied_paths": ["config/**"],
      "on": {"FIXED": "done"}
    },
    "done": {"type": "final"}
  }
}`)
	if err := os.WriteFile(p.path(".env"), []byte("API_TOKEN="+spellingsSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.path("config"), 0o755); err != nil {
		t.Fatal(err)
	}
	prod := p.path(filepath.Join("config", "prod.yaml"))
	srv := fakemodel.NewChatCompletions(chatScript(
		fakemodel.Call(tool("call_main", "read", map[string]any{"path": "@main.txt"})),
		fakemodel.Call(tool("call_env", "read", map[string]any{"path": "@.env"})),
		fakemodel.Call(tool("call_envabs", "read", map[string]any{"path": "@" + p.path(".env")})),
		fakemodel.Call(tool("call_prod", "write", map[string]any{"path": "@config/prod.yaml", "content": "debug: true\n"})),
		fakemodel.Say("Done."),
	), fakemodel.WithLog(t.Logf))
	r := p.piRun(t, srv)
	srv.Close()

	if res := mustResult(t, srv, "call_main", r); !strings.Contains(res.Content, "old line") {
		t.Errorf("call_main: the model was told %q; want main.txt's content (Pi drops the @)", res.Content)
	}
	noFile(t, prod, "the write of @config/prod.yaml went past denied_paths")
	for _, id := range []string{"call_env", "call_envabs", "call_prod"} {
		if res := mustResult(t, srv, id, r); !strings.Contains(res.Content, "statewright") {
			t.Errorf("%s: the model was told %q; want statewright's deny", id, res.Content)
		}
	}
	for _, req := range srv.Requests() {
		if strings.Contains(string(req.Body), spellingsSecret) {
			t.Errorf("request #%d to the model carries the .env token", req.Seq)
		}
	}
	unknownRequests(t, srv)
	session, _ := p.session(t)
	decisions, _ := p.decisions(t, session)
	for id, want := range map[string]string{"call_main": "allow", "call_env": "deny", "call_envabs": "deny", "call_prod": "deny"} {
		if decisions[id] != want {
			t.Errorf("history: decision for %s = %q, want %q (all: %v)", id, decisions[id], want, decisions)
		}
	}
}
