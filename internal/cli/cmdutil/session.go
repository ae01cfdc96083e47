package cmdutil

import (
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/agent"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
)

// SessionKey turns a harness session id into the store's session key,
// "<harness>:<id>" (claude-code:0b5c...). An argument that already starts
// with a known harness (or DemoSessionPrefix) and a colon is taken as a full key.
func SessionKey(harness, id string) (string, error) {
	if id == "" {
		return "", Usagef("no session given")
	}
	if pre, _, ok := strings.Cut(id, ":"); ok {
		if pre == DemoSessionPrefix || pre+":" == agent.SessionPrefix {
			return id, nil
		}
		if h, err := policy.ParseHarness(pre); err == nil && string(h) == pre {
			return id, nil
		}
	}
	h, err := policy.ParseHarness(harness)
	if err != nil {
		return "", Usage(err)
	}
	return string(h) + ":" + id, nil
}

// AddHarnessFlag adds --harness, which names the harness a session id comes from.
func AddHarnessFlag(cmd *cobra.Command) {
	cmd.Flags().String("harness", "claude-code", "the harness the session id comes from (claude-code, codex, cursor, opencode, pi); the session key is HARNESS:ID")
}

// SessionArg resolves a session id argument with cmd's --harness flag.
func SessionArg(cmd *cobra.Command, id string) (string, error) {
	h := "claude-code"
	if f := cmd.Flag("harness"); f != nil {
		h = f.Value.String()
	}
	return SessionKey(h, id)
}

// RunErr turns runtime errors into the command's exit status: every
// runtime refusal is exit 1 with its message.
func RunErr(err error) error {
	if err == nil {
		return nil
	}
	return Failure(err.Error())
}

// DisplayRun is a run without its snapshot bytes, for output.
func DisplayRun(r *store.Run) *store.Run {
	c := r.Clone()
	c.Snapshot = nil
	return c
}

// PrintJSON writes v as indented JSON.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ExactArgs is cobra.ExactArgs with a usage error that says what is missing.
func ExactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return Usagef("%s: want %d argument (%s), got %d", cmd.CommandPath(), n, what, len(args))
		}
		return nil
	}
}

// Dash shows an empty string as "-".
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// DemoSessionPrefix prefixes the sessions of `statewright demo`.
const DemoSessionPrefix = "demo"

// SortedKeys returns m's keys in order.
func SortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
