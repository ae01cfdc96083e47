// Package storecmd is `statewright store`: which store a command uses
// (path), and the way back from a corrupt SQLite store (recover).
package storecmd

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// NewCmdStore returns `statewright store`.
func NewCmdStore(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "store",
		Short:   "Which store commands use, and recovering a corrupt one",
		Example: "  statewright store path\n  statewright store recover --store .statewright/state.db",
	}
	cmd.AddCommand(newCmdPath(), newCmdRecover(f))
	return cmd
}

func newCmdPath() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "path [--store LOC]",
		Short: "Print the store this directory's commands use, and why that one",
		Long: "path prints the store location commands run here would use (on stdout) and where it comes from (on stderr): " +
			"--store, $" + store.EnvStore + ", the install of the project around the working directory, or the default location.",
		Example: "  statewright store path",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			loc, err := cmdutil.StoreLocation(cmd)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), loc)
			return nil
		},
	}
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

// Recovered is what `store recover --json` prints.
type Recovered struct {
	Store string `json:"store"`
	// Log is the file holding the readable events, one JSON event a line
	// (`statewright verify --export` reads it); Moved where the corrupt
	// file went.
	Log   string `json:"log"`
	Moved string `json:"moved"`
	// Events, First and Last: what was read; Skipped the unreadable
	// sequence ranges between readable events; Stopped why reading ended
	// early ("" when it reached the end).
	Events  int64      `json:"events"`
	First   int64      `json:"first_seq,omitempty"`
	Last    int64      `json:"last_seq,omitempty"`
	Skipped [][2]int64 `json:"skipped,omitempty"`
	Stopped string     `json:"stopped,omitempty"`
	// Verified says whether every chain in the kept log verifies; Verdict
	// is the verification's summary or the first break it found.
	Verified bool               `json:"verified"`
	Verdict  string             `json:"verdict"`
	Chains   *store.ChainStatus `json:"chains,omitempty"`
}

func newCmdRecover(f *cmdutil.Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "recover [--store FILE] [--json]",
		Short: "Keep a corrupt SQLite store's readable log and move the file aside, so a fresh store can be made",
		Long: `recover is for an SQLite store that statewright can no longer open because the file is damaged
(hooks deny every call, init refuses). It reads every event it still can from the file, without
writing to it, into FILE.recovered-TIME.jsonl (one JSON event per line, as 'statewright history
--export jsonl' writes), verifies the hash chains of what it kept and says what it found, then
moves the file and its side files to FILE.corrupt-TIME. Nothing is deleted.

Afterwards run 'statewright init HARNESS' again: it creates a fresh store and points the hooks at
it (their store id changes). 'statewright verify --export FILE.recovered-TIME.jsonl' re-checks the
kept log at any time.

A store that opens is not touched; a store written by a newer statewright is not corrupt (upgrade
instead); a PostgreSQL store is recovered from its database's backups.`,
		Example: "  statewright store recover\n  statewright store recover --store ~/.local/state/statewright/state.db --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			loc, err := cmdutil.StoreLocation(cmd)
			if err != nil {
				return err
			}
			if store.IsPostgresURL(loc) {
				return cmdutil.Usagef("store recover: %s is a PostgreSQL store; recover it from the database's backups", store.Display(loc))
			}
			ctx := cmd.Context()
			st, err := f.OpenStoreAt(ctx, loc, store.Options{MustExist: true})
			if err == nil {
				st.Close()
				fmt.Fprintf(cmd.OutOrStdout(), "the store %s opens: nothing to recover (`statewright verify` checks its log)\n", loc)
				return nil
			}
			if !errors.Is(err, store.ErrCorrupt) {
				return cmdutil.Failure("store recover: " + err.Error())
			}
			if fi, serr := os.Stat(loc); serr == nil && fi.IsDir() {
				return cmdutil.Failure("store recover: " + loc + " is a directory, not a store file")
			}
			if v, verr := sqlite.FileSchemaVersion(ctx, loc); verr == nil && v > sqlite.SchemaVersion() {
				return cmdutil.Failure(fmt.Sprintf("store recover: %s was written by a newer statewright (schema %d, this binary's %d): "+
					"it is not corrupt; upgrade statewright", loc, v, sqlite.SchemaVersion()))
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "statewright: the store does not open: %v\n", err)

			stamp := time.Now().UTC().Format("20060102T150405Z")
			r := Recovered{Store: loc, Log: loc + ".recovered-" + stamp + ".jsonl", Moved: loc + ".corrupt-" + stamp}
			var log bytes.Buffer
			sv, err := sqlite.Salvage(ctx, loc, &log)
			if err != nil {
				r.Stopped = err.Error()
			}
			r.Events, r.First, r.Last, r.Skipped = sv.Events, sv.First, sv.Last, sv.Skipped
			if sv.Stopped != "" {
				r.Stopped = sv.Stopped
			}
			if err := os.WriteFile(r.Log, log.Bytes(), 0o600); err != nil {
				return cmdutil.Failure("store recover: keep the readable log: " + err.Error())
			}
			cs, verr := store.VerifyJSONL(bytes.NewReader(log.Bytes()))
			r.Verified = verr == nil
			if verr != nil {
				r.Verdict = "the kept log does NOT verify: " + strings.TrimPrefix(verr.Error(), "store: verify export: ")
			} else {
				r.Chains = &cs
				r.Verdict = fmt.Sprintf("every chain of the kept log verifies (%d events, %d chains)", cs.Events, cs.Chains)
			}
			if err := moveAside(loc, r.Moved); err != nil {
				return cmdutil.Failure("store recover: " + err.Error() + " (the readable log is kept in " + r.Log + ")")
			}
			if asJSON {
				return cmdutil.PrintJSON(cmd.OutOrStdout(), r)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "kept %d readable events", r.Events)
			if r.Events > 0 {
				fmt.Fprintf(out, " (seq %d to %d)", r.First, r.Last)
			}
			fmt.Fprintf(out, " in %s\n", r.Log)
			for _, s := range r.Skipped {
				fmt.Fprintf(out, "unreadable: seq %d to %d\n", s[0], s[1])
			}
			if r.Stopped != "" {
				fmt.Fprintf(out, "reading stopped: %s\n", r.Stopped)
			}
			fmt.Fprintf(out, "chain verdict: %s\n", r.Verdict)
			fmt.Fprintf(out, "moved the corrupt store to %s\n", r.Moved)
			fmt.Fprintln(out, "next: run `statewright init HARNESS` again to create a fresh store and point the hooks at it")
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was recovered as JSON")
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

// moveAside renames the store file at loc, and each side file it has, to
// to (plus the side file's suffix).
func moveAside(loc, to string) error {
	for _, p := range sqlite.Files(loc) {
		dst := to + strings.TrimPrefix(p, loc)
		if err := os.Rename(p, dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("move %s aside: %w", p, err)
		}
	}
	return nil
}
