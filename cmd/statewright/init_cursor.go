package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/harness/cursor"
	"github.com/statewright-go/statewright/store"
)

func init() { registerInit(newInitCursorCmd) }

// ourCursorHook recognises a hook command `init cursor` wrote.
var ourCursorHook = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^'[^']*' hook cursor [a-z-]+( |$)`)
})

type cursorInitOptions struct {
	initOptions
	user bool
}

func newInitCursorCmd() *cobra.Command {
	var o cursorInitOptions
	cmd := &cobra.Command{
		Use:   "cursor",
		Short: "Write statewright's hooks into Cursor's hooks.json (unverified against the real client)",
		Long: `init cursor registers statewright's hooks in the project's .cursor/hooks.json (or
~/.cursor/hooks.json with --user): preToolUse, beforeShellExecution, beforeMCPExecution
and beforeReadFile with "failClosed": true, afterFileEdit and stop. It merges: other hooks
and keys are kept; running it again updates statewright's entries; --uninstall removes
exactly them. The hook commands name this binary and the store by absolute path and the
store's id. No MCP server is registered: Cursor gives MCP servers no session, so the agent's
control calls could not be tied to its conversation (a person moves the run on with the CLI).

Cursor has no offline client to test against: this contract is written from Cursor's
documentation and is not verified against the real client (see docs/cursor.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInitCursor(cmd.Context(), &o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.project, "project", "", "the project directory (default: the working directory)")
	f.BoolVar(&o.user, "user", false, "write ~/.cursor/hooks.json instead of the project's .cursor/hooks.json")
	f.StringVar(&o.storePath, "store", "", "the store file, created when missing (default $"+store.EnvStore+", else the XDG state directory)")
	f.StringVar(&o.binary, "binary", "", "the statewright binary the hooks run (default: this one)")
	f.BoolVar(&o.requireWorkflow, "require-workflow", false, "deny every ordinary tool call while a conversation has no run")
	f.StringVar(&o.defaultWorkflow, "default-workflow", "", "start this workflow (template name or file) at a conversation's first gated call")
	f.BoolVar(&o.auditOnly, "audit-only", false, "record what would be denied, without denying (rollout)")
	f.DurationVar(&o.deadline, "deadline", defaultHookDeadline, "the hook's own deadline; must be under --timeout")
	f.IntVar(&o.timeout, "timeout", defaultHookTimeout, "the hook timeout written into hooks.json, in seconds")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the changes instead of writing them")
	f.BoolVar(&o.uninstall, "uninstall", false, "remove what init added")
	return cmd
}

func runInitCursor(ctx context.Context, o *cursorInitOptions, out io.Writer) error {
	project := o.project
	if project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("init: %w", err)
		}
		project = wd
	}
	project, err := filepath.Abs(project)
	if err != nil {
		return usageError{fmt.Errorf("init: project: %w", err)}
	}
	if fi, err := os.Stat(project); err != nil || !fi.IsDir() {
		return usagef("init: project %s is not a directory", project)
	}
	path := filepath.Join(project, ".cursor", "hooks.json")
	if o.user {
		home, err := os.UserHomeDir()
		if err != nil {
			return usagef("init: no home directory")
		}
		path = filepath.Join(home, ".cursor", "hooks.json")
	}
	ch, err := readChange(path)
	if err != nil {
		return err
	}
	doc, err := parseJSONObject(ch.old)
	if err != nil {
		return failure{fmt.Sprintf("init: %s is not a JSON object (%v); fix it first, init never overwrites it", path, err)}
	}
	if raw, ok := doc.get("version"); ok && string(bytes.TrimSpace(raw)) != "1" {
		return failure{fmt.Sprintf("init: %s has \"version\": %s; statewright writes version 1 hooks", path, raw)}
	}
	hooks := newJSONObject()
	if raw, ok := doc.get("hooks"); ok {
		if hooks, err = parseJSONObject(raw); err != nil {
			return failure{fmt.Sprintf("init: %s: \"hooks\": %v", path, err)}
		}
	}
	removed, err := removeCursorHooks(hooks)
	if err != nil {
		return failure{fmt.Sprintf("init: %s: %v", path, err)}
	}
	var summary []string
	if o.uninstall {
		summary = append(summary, fmt.Sprintf("removed %d statewright hook(s)", removed))
	} else {
		if o.timeout <= 0 || o.deadline <= 0 || o.deadline >= time.Duration(o.timeout)*time.Second {
			return usagef("init: --deadline (%v) must be positive and under --timeout (%ds)", o.deadline, o.timeout)
		}
		bin, err := hookBinary(o.binary)
		if err != nil {
			return err
		}
		storePath, err := store.ResolvePath(o.storePath, nil)
		if err != nil {
			return usageError{err}
		}
		if o.defaultWorkflow != "" {
			if _, _, err := loadWorkflow(o.defaultWorkflow, false); err != nil {
				return usagef("init: --default-workflow %s: %v", o.defaultWorkflow, err)
			}
			if !looksLikeTemplateName(o.defaultWorkflow) {
				if o.defaultWorkflow, err = filepath.Abs(o.defaultWorkflow); err != nil {
					return usageError{err}
				}
			}
		}
		storeID, created, err := ensureStore(ctx, storePath, o.dryRun)
		if err != nil {
			return err
		}
		if created {
			summary = append(summary, "created the store "+storePath)
		}
		if err := addCursorHooks(hooks, bin, storePath, storeID, &o.initOptions); err != nil {
			return failure{fmt.Sprintf("init: %s: %v", path, err)}
		}
		summary = append(summary, fmt.Sprintf("hooks: %d events, binary %s, store %s (id %s); Cursor support is unverified against the real client",
			len(cursor.Events), bin, storePath, storeID))
	}
	if hooks.empty() {
		doc.del("hooks")
	} else {
		b, err := marshalNoEscape(hooks)
		if err != nil {
			return err
		}
		doc.set("hooks", b)
	}
	if raw, ok := doc.get("version"); ok && len(doc.keys) == 1 && string(bytes.TrimSpace(raw)) == "1" && o.uninstall {
		doc.del("version") // nothing but our version key is left
	} else if !doc.empty() {
		if _, ok := doc.get("version"); !ok {
			doc.set("version", json.RawMessage("1"))
			// Cursor documents "version" first.
			doc.keys = append([]string{"version"}, doc.keys[:len(doc.keys)-1]...)
		}
	}
	if ch.new, err = renderOrRemove(doc); err != nil {
		return err
	}
	shown := path
	if rel, err := filepath.Rel(project, path); err == nil && !strings.HasPrefix(rel, "..") {
		shown = rel
	}
	switch {
	case bytes.Equal(ch.old, ch.new) && ch.exists == (ch.new != nil):
		fmt.Fprintf(out, "unchanged %s\n", shown)
	case o.dryRun:
		fmt.Fprintf(out, "--- %s (would %s)\n%s", shown, verb(ch), lineDiff(string(ch.old), string(ch.new)))
	default:
		if err := applyChange(ch); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s %s\n", pastVerb(ch), shown)
	}
	for _, s := range summary {
		if o.dryRun {
			s = "would: " + s
		}
		fmt.Fprintln(out, s)
	}
	return nil
}

// cursorHook is one entry of a Cursor hooks.json event list.
type cursorHook struct {
	Command    string `json:"command"`
	Timeout    int    `json:"timeout,omitempty"`
	FailClosed bool   `json:"failClosed,omitempty"`
}

// removeCursorHooks drops statewright's entries from every event list, and
// the lists they leave empty; it returns how many it removed.
func removeCursorHooks(hooks *jsonObject) (int, error) {
	n := 0
	for _, ev := range append([]string(nil), hooks.keys...) {
		raw, _ := hooks.get(ev)
		var entries []json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil {
			return 0, fmt.Errorf("hooks.%s is not a list: %w", ev, err)
		}
		kept := entries[:0]
		for _, e := range entries {
			var h cursorHook
			if json.Unmarshal(e, &h) == nil && ourCursorHook().MatchString(h.Command) {
				n++
				continue
			}
			kept = append(kept, e)
		}
		if len(kept) == len(entries) {
			continue
		}
		if len(kept) == 0 {
			hooks.del(ev)
			continue
		}
		b, err := marshalNoEscape(kept)
		if err != nil {
			return 0, err
		}
		hooks.set(ev, b)
	}
	return n, nil
}

// addCursorHooks appends statewright's entry to each event's list. The
// gates fail closed twice over: "failClosed": true, and a command wrapper
// that turns a missing binary, a crash or a signal into exit 2.
func addCursorHooks(hooks *jsonObject, bin, storePath, storeID string, o *initOptions) error {
	flags := hookFlagsLine(storePath, storeID, o)
	for _, ev := range cursor.Events {
		h := cursorHook{Command: shq(bin) + " hook cursor " + ev.Arg() + flags, Timeout: o.timeout}
		if ev.Gate() {
			h.Command += failClosedWrapper(string(ev))
			h.FailClosed = true
		}
		var entries []json.RawMessage
		if raw, ok := hooks.get(string(ev)); ok {
			if err := json.Unmarshal(raw, &entries); err != nil {
				return fmt.Errorf("hooks.%s is not a list: %w", ev, err)
			}
		}
		b, err := marshalNoEscape(h)
		if err != nil {
			return err
		}
		entries = append(entries, b)
		lb, err := marshalNoEscape(entries)
		if err != nil {
			return err
		}
		hooks.set(string(ev), lb)
	}
	return nil
}
