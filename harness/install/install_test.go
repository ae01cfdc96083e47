package install

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

func testEnv() Env {
	return Env{
		OpenStore: func(ctx context.Context, loc string, create bool) (store.Store, error) {
			return sqlite.Open(ctx, loc, sqlite.Options{MustExist: !create})
		},
		Workflow: func(name string) (string, error) {
			if name != "bugfix" {
				return "", errors.New("no such workflow")
			}
			return name, nil
		},
	}
}

// plan is a harness that keeps one hook command in conf.json.
func plan(p *Plan) error {
	return p.EditObject("conf.json", func(o *Object) error {
		if cmd, ok := o.Get("hook"); ok && !p.IsOurHook(strings.Trim(string(cmd), `"`)) {
			return errors.New("a foreign hook")
		}
		if p.Uninstall {
			o.Del("hook")
			return nil
		}
		p.Note("hooks for %s", p.StoreID)
		return o.Put("hook", p.HookCommand("gate", true, "Gate"))
	})
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bin := filepath.Join(dir, "statewright")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "conf.json")
	if err := os.WriteFile(conf, []byte(`{"z": 1, "a": [1,2]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o := Options{Project: dir, Store: filepath.Join(dir, "state", "state.db"), Binary: bin, Deadline: 5 * time.Second, Timeout: 10,
		DefaultWorkflow: "bugfix", RequireWorkflow: true}
	var out bytes.Buffer
	step := func(o Options) string {
		t.Helper()
		out.Reset()
		if err := Run(ctx, "fake", o, testEnv(), plan, &out); err != nil {
			t.Fatalf("Run: %v", err)
		}
		return out.String()
	}

	dry := o
	dry.DryRun = true
	got := step(dry)
	if !strings.Contains(got, "--- conf.json (would change)") || !strings.Contains(got, "would: created the store") ||
		!strings.Contains(got, "+   \"hook\": \"'"+bin+"' hook fake gate --store") {
		t.Errorf("dry run:\n%s", got)
	}
	if _, err := os.Stat(o.Store); !errors.Is(err, os.ErrNotExist) {
		t.Error("a dry run created the store")
	}

	got = step(o)
	b, _ := os.ReadFile(conf)
	if !strings.HasPrefix(got, "updated conf.json\ncreated the store ") || !strings.Contains(string(b), `"z": 1,`) ||
		!strings.Contains(string(b), "--require-workflow --default-workflow 'bugfix' || { c=$?") {
		t.Errorf("install:\n%s\n%s", got, b)
	}
	if fi, _ := os.Stat(conf); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v; the file keeps its mode", fi.Mode())
	}
	if got = step(o); !strings.HasPrefix(got, "unchanged conf.json\n") {
		t.Errorf("again:\n%s", got)
	}

	un := Options{Project: dir, Uninstall: true}
	if got = step(un); !strings.HasPrefix(got, "updated conf.json") {
		t.Errorf("uninstall:\n%s", got)
	}
	if b, _ := os.ReadFile(conf); strings.Contains(string(b), "hook") {
		t.Errorf("uninstall left %s", b)
	}
}

func TestRunRefuses(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "statewright")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	base := Options{Project: dir, Store: filepath.Join(dir, "state.db"), Binary: bin, Deadline: 5 * time.Second, Timeout: 10}
	usage := func(err error) bool {
		var u interface{ Usage() bool }
		return errors.As(err, &u) && u.Usage()
	}
	for _, c := range []struct {
		name  string
		mod   func(*Options)
		file  string
		usage bool
		want  string
	}{
		{"deadline over the timeout", func(o *Options) { o.Deadline = 10 * time.Second }, "", true, "under --timeout"},
		{"no such project", func(o *Options) { o.Project = filepath.Join(dir, "nope") }, "", true, "not a directory"},
		{"not executable", func(o *Options) { o.Binary = filepath.Join(dir, "conf.json") }, "{}", true, "not an executable"},
		{"unknown workflow", func(o *Options) { o.DefaultWorkflow = "nope" }, "", true, "--default-workflow nope"},
		{"not JSON", func(*Options) {}, "{", false, "is not a JSON object"},
		{"duplicate keys", func(*Options) {}, `{"a":1,"a":2}`, false, "duplicate key"},
		{"a foreign entry", func(*Options) {}, `{"hook":"my-linter"}`, false, "a foreign hook"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.file != "" {
				os.WriteFile(filepath.Join(dir, "conf.json"), []byte(c.file), 0o644)
			}
			o := base
			c.mod(&o)
			err := Run(context.Background(), "fake", o, testEnv(), plan, new(bytes.Buffer))
			if err == nil || usage(err) != c.usage || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v (usage %v); want %q, usage %v", err, usage(err), c.want, c.usage)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "conf.json")); c.file != "" && string(b) != c.file {
				t.Errorf("a refused file was changed: %s", b)
			}
		})
	}
}

func TestObjectKeepsWhatItDoesNotOwn(t *testing.T) {
	o, err := ParseObject([]byte(`{"b": {"x":  1}, "a": "&<>"}`))
	if err != nil {
		t.Fatal(err)
	}
	o.Set("c", []byte(`true`))
	o.SetFirst("v", []byte(`1`))
	b, err := o.MarshalJSON()
	if err != nil || string(b) != `{"v":1,"b":{"x":1},"a":"&<>","c":true}` {
		t.Errorf("%s %v", b, err)
	}
	o.Del("b")
	if keys := strings.Join(o.Keys(), ","); keys != "v,a,c" {
		t.Errorf("keys %s", keys)
	}
	if r, _ := NewObject().Render(); r != nil {
		t.Errorf("an empty object renders %q; want nil (remove the file)", r)
	}
}

func TestIsHookOf(t *testing.T) {
	for cmd, want := range map[string]bool{
		`'/x/statewright' hook fake gate --store 'a'`: true,
		`'/x/sw' hook fake stop`:                      true,
		`/x/statewright hook fake gate`:               false,
		`'/x/statewright' hook other gate`:            false,
		`my-linter '/x' hook fake gate`:               false,
	} {
		if got := IsHookOf("fake", cmd); got != want {
			t.Errorf("IsHookOf(%q) = %v", cmd, got)
		}
	}
}

// TestThinClient: with statewright-hook beside the binary, the hook
// commands run it (the same arguments), and init creates the key it and
// the decider prove to each other; without it, they run the binary and
// init says why.
func TestThinClient(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	bin := filepath.Join(dir, "bin", "statewright")
	os.MkdirAll(filepath.Dir(bin), 0o755)
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := Options{Project: dir, Store: filepath.Join(dir, "state.db"), Binary: bin, Deadline: 5 * time.Second, Timeout: 10}
	var out bytes.Buffer
	if err := Run(ctx, "fake", o, testEnv(), plan, &out); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "conf.json"))
	if !strings.Contains(string(b), "'"+bin+"' hook fake gate") || !strings.Contains(out.String(), "statewright-hook is not installed beside") {
		t.Errorf("without the client:\n%s\n%s", out.String(), b)
	}

	client := filepath.Join(dir, "bin", "statewright-hook")
	if err := os.WriteFile(client, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Run(ctx, "fake", o, testEnv(), plan, &out); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "conf.json"))
	if !strings.Contains(string(b), "'"+client+"' hook fake gate --store") || strings.Contains(out.String(), "not installed beside") {
		t.Errorf("with the client:\n%s\n%s", out.String(), b)
	}
	if !IsHookOf("fake", "'"+client+"' hook fake gate --store x") {
		t.Error("the client's command is not recognised as ours (re-init and --uninstall need it)")
	}
	key := filepath.Join(dir, "config", "statewright", "decider", "key")
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the decider key: %v %v", fi, err)
	}
}
