package cursor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/statewright-go/statewright/harness/install"
)

const installLong = `init cursor registers statewright's hooks in the project's .cursor/hooks.json (or
~/.cursor/hooks.json with --user): preToolUse, beforeShellExecution, beforeMCPExecution
and beforeReadFile with "failClosed": true, afterFileEdit and stop. It merges: other hooks
and keys are kept; running it again updates statewright's entries; --uninstall removes
exactly them. The hook commands name this binary and the store by absolute path and the
store's id. No MCP server is registered: Cursor gives MCP servers no session, so the agent's
control calls could not be tied to its conversation (a person moves the run on with the CLI).

Cursor has no offline client to test against: this contract is written from Cursor's
documentation and is not verified against the real client (see docs/cursor.md).`

func installFlags(f *pflag.FlagSet, o *install.Options) {
	f.BoolVar(&o.User, "user", false, "write ~/.cursor/hooks.json instead of the project's .cursor/hooks.json")
}

// hook is one entry of a Cursor hooks.json event list.
type hook struct {
	Command    string `json:"command"`
	Timeout    int    `json:"timeout,omitempty"`
	FailClosed bool   `json:"failClosed,omitempty"`
}

// Install implements harness.Adapter: statewright's entry in each event's
// list of .cursor/hooks.json (version 1). The gates fail closed twice
// over: "failClosed": true, and a command wrapper that turns a missing
// binary, a crash or a signal into exit 2.
func (adapter) Install(p *install.Plan) error {
	path := filepath.Join(".cursor", "hooks.json")
	if p.User {
		home, err := os.UserHomeDir()
		if err != nil {
			return install.Usage(errors.New("init: no home directory"))
		}
		path = filepath.Join(home, ".cursor", "hooks.json")
	}
	err := p.EditObject(path, func(doc *install.Object) error {
		if raw, ok := doc.Get("version"); ok && string(bytes.TrimSpace(raw)) != "1" {
			return fmt.Errorf("\"version\": %s; statewright writes version 1 hooks", raw)
		}
		hooks, err := doc.Object("hooks")
		if err != nil {
			return err
		}
		removed, err := removeHooks(p, hooks)
		if err != nil {
			return err
		}
		if p.Uninstall {
			p.Note("removed %d statewright hook(s)", removed)
		} else {
			if err := addHooks(p, hooks); err != nil {
				return err
			}
			p.Note("hooks: %d events, binary %s, store %s (id %s); Cursor support is unverified against the real client",
				len(Events), p.Binary, p.Store, p.StoreID)
			if p.Sandbox && !p.RequireSandbox {
				p.Note("--sandbox changes nothing for Cursor: its hooks cannot rewrite a command, so shell commands run unsandboxed " +
					"under the static law alone; --require-sandbox denies them instead (docs/sandbox.md)")
			}
		}
		if err := doc.PutObject("hooks", hooks); err != nil {
			return err
		}
		if keys := doc.Keys(); p.Uninstall && len(keys) == 1 && keys[0] == "version" {
			doc.Del("version") // nothing but our version key is left
		} else if _, ok := doc.Get("version"); !ok && !doc.Empty() {
			doc.SetFirst("version", json.RawMessage("1")) // Cursor documents "version" first
		}
		return nil
	})
	if err != nil {
		return err
	}
	// A store inside the project (.statewright/) must not reach a commit.
	// hooks.json itself is left alone: it may hold the team's own hooks
	// (docs/cursor.md).
	return p.IgnoreMachineLocal()
}

// removeHooks drops statewright's entries from every event list, and the
// lists they leave empty; it returns how many it removed.
func removeHooks(p *install.Plan, hooks *install.Object) (int, error) {
	n := 0
	for _, ev := range hooks.Keys() {
		raw, _ := hooks.Get(ev)
		var entries []json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil {
			return 0, fmt.Errorf("hooks.%s is not a list: %w", ev, err)
		}
		kept := entries[:0]
		for _, e := range entries {
			var h hook
			if json.Unmarshal(e, &h) == nil && p.IsOurHook(h.Command) {
				n++
				continue
			}
			kept = append(kept, e)
		}
		switch {
		case len(kept) == len(entries):
		case len(kept) == 0:
			hooks.Del(ev)
		default:
			if err := hooks.Put(ev, kept); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// addHooks appends statewright's entry to each event's list.
func addHooks(p *install.Plan, hooks *install.Object) error {
	for _, ev := range Events {
		h := hook{Command: p.HookCommand(ev.Arg(), ev.Gate(), string(ev)), Timeout: p.Timeout, FailClosed: ev.Gate()}
		var entries []json.RawMessage
		if raw, ok := hooks.Get(string(ev)); ok {
			if err := json.Unmarshal(raw, &entries); err != nil {
				return fmt.Errorf("hooks.%s is not a list: %w", ev, err)
			}
		}
		b, err := install.Marshal(h)
		if err != nil {
			return err
		}
		if err := hooks.Put(string(ev), append(entries, b)); err != nil {
			return err
		}
	}
	return nil
}
