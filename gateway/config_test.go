package gateway

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/policy"
)

func TestParseConfig(t *testing.T) {
	for _, c := range []struct {
		name, src, err string
		check          func(t *testing.T, c *Config)
	}{
		{name: "empty", src: "", check: func(t *testing.T, c *Config) {
			if c.Separator != "__" || time.Duration(c.Timeout) != DefaultTimeout || len(c.Upstreams) != 0 {
				t.Fatalf("defaults: %+v", c)
			}
		}},
		{name: "full", src: `
separator: "."
timeout: 5s
upstreams:
  - name: fs
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]
    env: {A: b}
  - name: docs
    url: https://docs.example/mcp
    headers: {Authorization: "Bearer x"}
    namespace: ""
    timeout: 1m
    tools:
      put_page: {as: Write, path: where, content: body}
`, check: func(t *testing.T, c *Config) {
			fs, docs := &c.Upstreams[0], &c.Upstreams[1]
			if fs.Map != PresetFilesystem || docs.Map != PresetNone {
				t.Errorf("maps: %q %q", fs.Map, docs.Map)
			}
			if time.Duration(fs.Timeout) != 5*time.Second || time.Duration(docs.Timeout) != time.Minute {
				t.Errorf("timeouts: %v %v", fs.Timeout, docs.Timeout)
			}
			if c.Prefix(fs) != "fs." || c.Prefix(docs) != "" {
				t.Errorf("prefixes: %q %q", c.Prefix(fs), c.Prefix(docs))
			}
		}},
		{name: "typo is an error", src: "upstream: []", err: "field upstream not found"},
		{name: "unknown upstream key", src: "upstreams: [{name: a, command: x, comand: y}]", err: "field comand not found"},
		{name: "bad name", src: "upstreams: [{name: A_B, command: x}]", err: "must be 1-32 of [a-z0-9-]"},
		{name: "duplicate", src: "upstreams: [{name: a, command: x}, {name: a, command: y}]", err: "named twice"},
		{name: "neither command nor url", src: "upstreams: [{name: a}]", err: "needs a command"},
		{name: "both", src: "upstreams: [{name: a, command: x, url: 'http://h/'}]", err: "both a command and a url"},
		{name: "bad url", src: "upstreams: [{name: a, url: 'ftp://h/'}]", err: "not an http(s) URL"},
		{name: "bad map", src: "upstreams: [{name: a, command: x, map: nope}]", err: "unknown map"},
		{name: "bad as", src: "upstreams: [{name: a, command: x, tools: {t: {as: Delete}}}]", err: "is not one of"},
		{name: "bad duration", src: "timeout: soon", err: "not a duration"},
		{name: "bad separator", src: "separator: 'a b'", err: "separator"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(c.src))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, cfg)
		})
	}
}

func TestMapCall(t *testing.T) {
	fs := &Upstream{Name: "fs", Map: PresetFilesystem, Tools: map[string]ToolMap{"secret_tool": {As: AsNone}}}
	for _, c := range []struct {
		tool, args string
		want       []string // tool + " " + input
		err        string
	}{
		{"write_file", `{"path":"/p/a.txt","content":"x\n"}`, []string{`Write {"content":"x\n","file_path":"/p/a.txt"}`}, ""},
		{"edit_file", `{"path":"a","edits":[{"oldText":"a","newText":"b"}],"dryRun":true}`,
			[]string{`MultiEdit {"edits":[{"newText":"b","oldText":"a"}],"file_path":"a"}`}, ""},
		{"read_text_file", `{"path":"a","head":3}`, []string{`Read {"file_path":"a"}`}, ""},
		{"read_multiple_files", `{"paths":["a","b"]}`, []string{`Read {"file_path":"a"}`, `Read {"file_path":"b"}`}, ""},
		{"move_file", `{"source":"a","destination":"b"}`, []string{`Write {"content":"","file_path":"a"}`, `Write {"content":"","file_path":"b"}`}, ""},
		{"create_directory", `{"path":"d"}`, []string{`Write {"content":"","file_path":"d"}`}, ""},
		{"search_files", `{"path":"src","pattern":"*.go"}`, []string{`Glob {"path":"src","pattern":"*.go"}`}, ""},
		{"list_allowed_directories", `{}`, []string{`LS {"path":"."}`}, ""},
		{"unknown_tool", `{"x":1}`, []string{`fs__unknown_tool {"x":1}`}, ""},
		{"secret_tool", ``, []string{`fs__secret_tool {}`}, ""},
		{"write_file", `{"content":"x"}`, nil, `argument "path" is missing`},
		{"write_file", `{"path":3}`, nil, `argument "path" is not a string`},
		{"write_file", `[1]`, nil, `not a JSON object`},
		{"edit_file", `{"path":"a"}`, nil, `not a list of edits`},
		{"read_multiple_files", `{"paths":[1]}`, nil, `non-string`},
		{"move_file", `{"source":"a"}`, nil, `"destination" is missing`},
		// Arguments an upstream could read otherwise than the mapping.
		{"write_file", `{"path":"a","content":"x","PATH":"/etc/passwd"}`, nil, `"path" and "PATH" differ only in case`},
		{"write_file", `{"Path":"/etc/passwd","path":"a","content":"x"}`, nil, `"Path" and "path" differ only in case`},
		{"write_file", `{"path":"a","path":"/etc/passwd","content":"x"}`, nil, `"path" appears twice`},
		{"write_file", `{"path":"a","p\u0061th":"/etc/passwd","content":"x"}`, nil, `"path" appears twice`},
		{"write_file", `{"path":"a","content":"x","\u212Aey":1,"key":2}`, nil, `differ only in case`}, // the Kelvin sign folds to k
		{"edit_file", `{"path":"a","edits":[{"oldText":"a","newText":"b","NEWTEXT":"c"}]}`, nil, `differ only in case`},
		{"edit_file", `{"path":"a","edits":[{"oldText":"a","newText":"b"},{"oldText":"a","newText":"b"}]}`,
			[]string{`MultiEdit {"edits":[{"newText":"b","oldText":"a"},{"newText":"b","oldText":"a"}],"file_path":"a"}`}, ""},
		{"write_file", `{"path":"a","content":"x","meta":{"path":1,"x":{"path":2}},"list":[{"path":3},{"path":4}]}`,
			[]string{`Write {"content":"x","file_path":"a"}`}, ""},
		// Unmapped tools are decided on their arguments as they came.
		{"unknown_tool", `{"x":1,"X":2}`, []string{`fs__unknown_tool {"x":1,"X":2}`}, ""},
		// ... but for a key given twice: the law checks every value of
		// an unmapped tool's arguments as decoded, where the first of the
		// two is gone; an upstream that keeps the first would read it.
		{"unknown_tool", `{"path":"/home/u/.ssh/id_rsa","path":"x"}`, nil, `"path" appears twice`},
		{"unknown_tool", `{"o":{"p":"/home/u/.ssh/id_rsa","p":"x"}}`, nil, `"p" appears twice`},
		{"unknown_tool", `null`, nil, `not a JSON object`},
		{"unknown_tool", ` [1]`, nil, `not a JSON object`},
		{"unknown_tool", `{"x":}`, nil, `not a JSON object`},
		{"unknown_tool", ` {"x":1} `, []string{`fs__unknown_tool  {"x":1} `}, ""},
	} {
		t.Run(c.tool, func(t *testing.T) {
			got, err := MapCall(fs, "fs__"+c.tool, c.tool, json.RawMessage(c.args))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var gs []string
			for _, m := range got {
				gs = append(gs, m.Tool+" "+string(m.Input))
			}
			if strings.Join(gs, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(gs, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestProbeArgsMap(t *testing.T) {
	fs := &Upstream{Name: "fs", Map: PresetFilesystem}
	for tool := range presets[PresetFilesystem] {
		if _, err := MapCall(fs, "fs__"+tool, tool, probeArgs(fs, tool, "/p/probe")); err != nil {
			t.Errorf("%s: probe arguments do not map: %v", tool, err)
		}
	}
}

func TestTrust(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.yaml")
	os.WriteFile(cfg, []byte("upstreams: []\n"), 0o644)
	tf := OpenTrust(filepath.Join(dir, "cfg", "trusted.json"))
	h := ConfigHash([]byte("upstreams: []\n"))
	if err := tf.Check(cfg, h); err == nil || !strings.Contains(err.Error(), "statewright trust") {
		t.Fatalf("untrusted: %v", err)
	}
	if _, err := tf.Trust(cfg, h, "me", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := tf.Check(cfg, h); err != nil {
		t.Fatalf("trusted: %v", err)
	}
	// Through a symlink: the same file.
	link := filepath.Join(dir, "link.yaml")
	os.Symlink(cfg, link)
	if err := tf.Check(link, h); err != nil {
		t.Fatalf("via symlink: %v", err)
	}
	if err := tf.Check(cfg, ConfigHash([]byte("changed"))); err == nil || !strings.Contains(err.Error(), "changed since it was trusted") {
		t.Fatalf("changed: %v", err)
	}
	if ok, err := tf.Revoke(cfg); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if err := tf.Check(cfg, h); err == nil {
		t.Fatal("trusted after revoke")
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("upstreams: [{name: fs, command: x, args: [a]}]"))
	f.Add([]byte("separator: '.'\ntimeout: 3s\nupstreams:\n - name: a\n   url: http://h/mcp\n   tools: {t: {as: Write, path: p}}"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		// A parsed config is checked: every upstream has a name, exactly one
		// of command or url, and a known map.
		for i := range c.Upstreams {
			u := &c.Upstreams[i]
			if !upstreamName().MatchString(u.Name) || (u.Command == "") == (u.URL == "") || presets[u.Map] == nil {
				t.Fatalf("accepted a bad upstream: %+v", u)
			}
		}
	})
}

func FuzzMapCall(f *testing.F) {
	fs := &Upstream{Name: "fs", Map: PresetFilesystem}
	f.Add("write_file", []byte(`{"path":"a","content":"b"}`))
	f.Add("edit_file", []byte(`{"path":"a","edits":[{"oldText":"a","newText":"b"}]}`))
	f.Add("move_file", []byte(`{"source":["a"],"destination":"b"}`))
	f.Add("read_multiple_files", []byte(`{"paths":"a"}`))
	f.Fuzz(func(t *testing.T, tool string, args []byte) {
		calls, err := MapCall(fs, "fs__"+tool, tool, args)
		if err != nil {
			return
		}
		if len(calls) == 0 {
			t.Fatal("no decision for an accepted call")
		}
		for _, c := range calls {
			if !json.Valid(c.Input) {
				t.Fatalf("invalid mapped input %q", c.Input)
			}
		}
	})
}

// TestTrustHints: the annotations recorded with a trust are returned only
// for the bytes trusted; HintsOf reads only hints set to true.
func TestTrustHints(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.yaml")
	os.WriteFile(cfg, []byte("upstreams: []\n"), 0o644)
	tf := OpenTrust(filepath.Join(dir, "cfg", "trusted.json"))
	h := ConfigHash([]byte("upstreams: []\n"))
	f, tr := false, true
	tools := []ToolInfo{
		{Tool: &mcp.Tool{Name: "fs__read", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &f}}},
		{Tool: &mcp.Tool{Name: "fs__wipe", Annotations: &mcp.ToolAnnotations{DestructiveHint: &tr, OpenWorldHint: &tr}}},
		{Tool: &mcp.Tool{Name: "fs__mkdir", Annotations: &mcp.ToolAnnotations{DestructiveHint: &f}}},
		{Tool: &mcp.Tool{Name: "fs__plain"}},
	}
	hints := HintsOf(tools)
	want := map[string]policy.ToolHints{"fs__read": {ReadOnly: true}, "fs__wipe": {Destructive: true, OpenWorld: true}, "fs__mkdir": {}}
	if !reflect.DeepEqual(hints, want) {
		t.Fatalf("HintsOf = %+v, want %+v", hints, want)
	}
	if _, err := tf.TrustTools(cfg, h, "me", time.Now(), hints); err != nil {
		t.Fatal(err)
	}
	got, err := tf.Hints(cfg, h)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Hints = %+v, %v", got, err)
	}
	if got, err := tf.Hints(cfg, ConfigHash([]byte("changed"))); err != nil || got != nil {
		t.Fatalf("Hints of changed bytes = %+v, %v; want none", got, err)
	}
	m := NewManager(&Config{}, dir, nil)
	m.SetHints(got)
	if hh := m.hintsFor("fs__wipe", "fs__wipe"); hh == nil || !hh.Destructive {
		t.Errorf("hintsFor unmapped = %+v", hh)
	}
	if hh := m.hintsFor("Write", "fs__wipe"); hh != nil {
		t.Errorf("hintsFor a mapped call = %+v, want nil", hh)
	}
}

// FuzzAmbiguousKeys: whatever the arguments, the check does not panic, and
// refuses what is not JSON and any object holding a key twice.
func FuzzAmbiguousKeys(f *testing.F) {
	for _, s := range []string{`{"path":"a"}`, `{"a":{"b":[{"c":1,"C":2}]}}`, `{"x":1,"x":2}`, `[{"a":1},{"a":1}]`, `{"K":1,"\u212a":2}`, `{`, `"s"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		err := ambiguousKeys(args)
		if !json.Valid(args) && err == nil {
			t.Fatalf("%q: not JSON, accepted", args)
		}
		var m map[string]json.RawMessage
		if err == nil && json.Unmarshal(args, &m) == nil && m != nil {
			// Every key read once: as many keys as the object holds.
			dec := json.NewDecoder(bytes.NewReader(args))
			depth, keys := 0, 0
			expectKey := false
			for {
				tok, terr := dec.Token()
				if terr != nil {
					break
				}
				switch tok {
				case json.Delim('{'), json.Delim('['):
					depth++
					expectKey = tok == json.Delim('{') && depth == 1
					continue
				case json.Delim('}'), json.Delim(']'):
					depth--
				}
				if depth == 1 && expectKey {
					if _, ok := tok.(string); ok {
						keys++
						expectKey = false
						continue
					}
				}
				if depth == 1 {
					expectKey = true
				}
			}
			if keys != len(m) {
				t.Fatalf("%q: accepted with %d keys for %d distinct ones", args, keys, len(m))
			}
		}
	})
}
