//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// nestedWorkflow allows an unmapped upstream's reader by its namespaced
// name, as a workflow does for any third-party server.
const nestedWorkflow = `{
  "id": "gw-nested",
  "initial": "reading",
  "states": {
    "reading": {
      "allowed_tools": ["files__read_multiple_files", "files__read_text_file"],
      "on": {"DONE": "done"}
    },
    "done": {"type": "final"}
  }
}`

// TestGatewayUnmappedNestedSecret is the attack of a secret's path nested in
// an upstream tool's arguments, through `statewright mcp` and the real
// filesystem server started under a name the gateway has no preset for (a
// third-party server: its tools are decided by their namespaced names, on
// their arguments as given). read_multiple_files takes its paths as a list.
// A list naming the project's .env beside an ordinary file is refused: the
// token is in no answer the client received and the store records the
// deny; the same tool with the ordinary file alone answers its content.
//
// Before 1ffafaa the law read the arguments' top-level strings only: the
// call was allowed and the server answered the .env's token.
func TestGatewayUnmappedNestedSecret(t *testing.T) {
	p := newGWProjectWith(t, nestedWorkflow)
	secret := "sk-e2e-nested-5b0e71c9"
	if err := os.WriteFile(filepath.Join(p.dir, ".env"), []byte("API_TOKEN="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The same server under a name without "server-filesystem": no preset.
	link := filepath.Join(t.TempDir(), "files-server")
	if err := os.Symlink(MCPServerBinary(t, "mcp-server-filesystem"), link); err != nil {
		t.Fatal(err)
	}
	gc := p.connect(t, "files="+link+" "+p.dir)
	if names := gc.toolNames(t); !names["files__read_multiple_files"] {
		t.Fatalf("files__read_multiple_files not listed: %v", names)
	}
	main := filepath.Join(p.dir, "src", "main.txt")

	res := gc.call(t, "files__read_multiple_files", map[string]any{"paths": []string{main}})
	if res.IsError || !strings.Contains(resultText(res), "two") {
		t.Fatalf("read of src/main.txt: isError=%v %q", res.IsError, resultText(res))
	}
	for _, args := range []map[string]any{
		{"paths": []string{main, filepath.Join(p.dir, ".env")}},
		{"paths": []string{".env", main}},
	} {
		res = gc.call(t, "files__read_multiple_files", args)
		if text := resultText(res); strings.Contains(text, secret) || !res.IsError || !strings.Contains(text, "denied") {
			t.Errorf("read_multiple_files %v: isError=%v %q; want a deny, without the token", args, res.IsError, text)
		}
	}

	st, err := sqlite.Open(context.Background(), p.storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	evs, err := st.Events(context.Background(), store.EventFilter{SessionKey: "claude-code:" + p.session, Kinds: []store.EventKind{store.KindDecision}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		if e.Tool == "files__read_multiple_files" {
			got = append(got, e.Decision)
		}
	}
	if strings.Join(got, " ") != "allow deny deny" {
		t.Errorf("decisions of files__read_multiple_files: %v; want [allow deny deny]", got)
	}
	if r := p.run(t); r.State != "reading" {
		t.Errorf("the run is in %q; want reading", r.State)
	}
}

// TestGatewayUpstreamBaseSecret is the attack of a relative path that the
// upstream resolves against a base of its own: the real filesystem server
// (under a name without a preset) resolves a relative path against its
// first allowed directory, not its working directory. With that directory
// the parent of both the project and the home directory, the home's SSH
// key is "<home's name>/.ssh/id_rsa" to the server, which the law had read
// as <project>/<home's name>/.ssh/id_rsa. The call is refused and the key
// is in no answer; a relative path to the project's own file still reads.
//
// Before d4dcfc5 the call was allowed and the server answered the key.
func TestGatewayUpstreamBaseSecret(t *testing.T) {
	p := newGWProjectWith(t, nestedWorkflow)
	base := filepath.Dir(p.dir)
	home := t.TempDir()
	if filepath.Dir(home) != base {
		t.Fatalf("the home %s is not beside the project %s", home, p.dir)
	}
	// The gateway's home directory (its secrets) is this one.
	t.Setenv("HOME", home)
	const key = "-----BEGIN OPENSSH PRIVATE KEY----- e2e-upstream-base"
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "files-server")
	if err := os.Symlink(MCPServerBinary(t, "mcp-server-filesystem"), link); err != nil {
		t.Fatal(err)
	}
	gc := p.connect(t, "files="+link+" "+base)
	res := gc.call(t, "files__read_text_file", map[string]any{"path": filepath.Join(filepath.Base(p.dir), "src", "main.txt")})
	if res.IsError || !strings.Contains(resultText(res), "two") {
		t.Fatalf("read of the project's src/main.txt from the server's base: isError=%v %q", res.IsError, resultText(res))
	}
	res = gc.call(t, "files__read_text_file", map[string]any{"path": filepath.Join(filepath.Base(home), ".ssh", "id_rsa")})
	if text := resultText(res); strings.Contains(text, key) || !res.IsError || !strings.Contains(text, "denied") {
		t.Errorf("read of the home's key relative to the server's base: isError=%v %q; want a deny, without the key", res.IsError, text)
	}
}
