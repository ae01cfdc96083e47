// Package auditcmd is `statewright verify` and `statewright checkpoint`:
// the tamper evidence of the event log (per-run hash chains and signed
// checkpoints over every chain's head; see docs/store.md).
package auditcmd

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/store"
)

// NewCmdVerify verifies a store, or an exported log, against the signed
// checkpoints.
func NewCmdVerify(f *cmdutil.Factory) *cobra.Command {
	var (
		export, checkpoints string
		trust               []string
	)
	cmd := &cobra.Command{
		Use:     "verify [--store LOC | --export FILE.jsonl] [--checkpoints FILE.jsonl] [--trust PUBKEY]",
		Example: "  statewright verify\n  statewright verify --export log.jsonl --checkpoints ~/checkpoints.jsonl",
		Short:   "Verify the event log: every run's hash chain, and the log against the signed checkpoints",
		Long: `verify checks every chain of the event log (each run's events, a session's events outside any
run, the store's own, and the legacy chain of stores older than per-run chains): each event's hash
and its link to the one before it, and that each chain ends where the store says. Then it checks
the checkpoints' signatures with the trusted keys (the signing key's public keys, kept beside the
operator token, and --trust), and the log against the newest checkpoint: every head it signed must
still be there unchanged, and nothing may have been pruned since without a checkpoint. With
--checkpoints, an export of the checkpoints kept outside the project (statewright checkpoint
--export) must match the store's, so removing checkpoints from the store hides nothing.

Events appended after the newest checkpoint are covered by none: a cut among them cannot be told
from events never written, and verify says how many there are.

--export verifies a file written by 'statewright history --export jsonl' instead of the store
(with --checkpoints, against the newest checkpoint in that file).

Exit status 1 names the first bad run (chain) and event sequence.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			keys, err := cmdutil.TrustedKeys(trust)
			if err != nil {
				return cmdutil.Usage(err)
			}
			var external []store.Checkpoint
			if checkpoints != "" {
				fh, err := os.Open(checkpoints)
				if err != nil {
					return cmdutil.Failure("verify: " + err.Error())
				}
				external, err = cmdutil.ReadCheckpoints(fh)
				fh.Close()
				if err != nil {
					return cmdutil.Failure("verify: " + checkpoints + ": " + err.Error())
				}
			}
			if export != "" {
				return verifyExport(out, export, external, keys)
			}
			ctx := cmd.Context()
			st, err := f.OpenStore(ctx, cmd, store.Options{MustExist: true})
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			defer st.Close()
			v, err := store.Audit(ctx, st, keys, external)
			if err != nil {
				return cmdutil.Failure("verify: the event log does NOT verify: " + err.Error())
			}
			fmt.Fprintln(out, v.String())
			return nil
		},
	}
	cmd.Flags().StringVar(&export, "export", "", "verify this exported log (JSON lines) instead of the store")
	cmd.Flags().StringVar(&checkpoints, "checkpoints", "", "an export of the checkpoints (JSON lines) kept outside the project")
	cmd.Flags().StringArrayVar(&trust, "trust", nil, "a further trusted public key (hex); repeatable")
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

func verifyExport(out io.Writer, path string, external []store.Checkpoint, keys []ed25519.PublicKey) error {
	var newest *store.Checkpoint
	if len(external) > 0 {
		n, err := store.VerifyCheckpoints(external, keys)
		if err != nil {
			return cmdutil.Failure("verify: " + err.Error())
		}
		newest = n
	}
	fh, err := os.Open(path)
	if err != nil {
		return cmdutil.Failure("verify: " + err.Error())
	}
	defer fh.Close()
	st, err := store.VerifyJSONLAgainst(fh, newest)
	if err != nil {
		return cmdutil.Failure("verify: " + path + " does NOT verify: " + err.Error())
	}
	fmt.Fprintln(out, store.Verdict{Chain: st, Checkpoints: len(external), Newest: newest, Keys: len(keys)}.String())
	return nil
}

// NewCmdCheckpoint signs a checkpoint now.
func NewCmdCheckpoint(f *cmdutil.Factory) *cobra.Command {
	var (
		export string
		rotate bool
	)
	cmd := &cobra.Command{
		Use:     "checkpoint [--export FILE.jsonl] [--rotate]",
		Example: "  statewright checkpoint\n  statewright checkpoint --export ~/checkpoints.jsonl",
		Short:   "Sign a checkpoint of the event log now (people only)",
		Long: `checkpoint verifies the event log against the previous checkpoint, then signs, with the
signing key kept beside the operator token (created on first use, mode 0600), where every chain of
the log stands, and appends the checkpoint to the store. 'statewright serve' signs one periodically
(--checkpoint-every). --export appends the checkpoint to a file as well, which should live outside
the project (statewright verify --checkpoints holds the store to it). --rotate makes a new signing
key: the checkpoint is signed with the old key and names the new one, so verify crosses the change.
It needs a person (a terminal confirmation or the operator token), like approve.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			st, err := f.OpenStore(ctx, cmd, store.Options{MustExist: true})
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			defer st.Close()
			what := "Sign a checkpoint of the event log"
			if rotate {
				what += " and rotate the signing key"
			}
			if _, err := cmdutil.ProveHuman(cmd, what+"?", "yes"); err != nil {
				return err
			}
			if export != "" { // fail before signing, not after
				fh, err := os.OpenFile(export, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
				if err != nil {
					return cmdutil.Failure("checkpoint: export: " + err.Error())
				}
				fh.Close()
			}
			key, err := cmdutil.SigningKey()
			if errors.Is(err, fs.ErrNotExist) {
				if key, err = cmdutil.NewSigningKey(); err == nil {
					p, _ := cmdutil.SigningKeyPath()
					fmt.Fprintf(cmd.ErrOrStderr(), "checkpoint: created the signing key %s (key %s)\n", p, store.KeyID(key.Public().(ed25519.PublicKey)))
				}
			}
			if err != nil {
				return cmdutil.Failure("checkpoint: " + err.Error())
			}
			opts := store.CheckpointOptions{Key: key}
			var next ed25519.PrivateKey
			if rotate {
				// The new key is made, and trusted, before the old one
				// signs the checkpoint that names it.
				if next, err = cmdutil.NewSigningKey(); err != nil {
					return cmdutil.Failure("checkpoint: " + err.Error())
				}
				opts.NextKey = next.Public().(ed25519.PublicKey)
			}
			c, err := st.Checkpoint(ctx, opts)
			if err != nil {
				return cmdutil.Failure("checkpoint: " + err.Error())
			}
			if export != "" {
				if err := cmdutil.AppendCheckpoint(export, c); err != nil {
					return cmdutil.Failure("checkpoint: export: " + err.Error())
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "checkpoint %d: %d chains, heads %s, signed by key %s\n", c.Seq, c.Chains, c.HeadsHash, c.KeyID)
			if rotate {
				fmt.Fprintf(cmd.OutOrStdout(), "rotated: checkpoints from now on are signed by key %s\n", c.NextKeyID)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&export, "export", "", "also append the checkpoint to this file (JSON lines), kept outside the project")
	cmd.Flags().BoolVar(&rotate, "rotate", false, "make a new signing key; the old one signs this checkpoint and names the new one")
	cmdutil.AddTokenFlag(cmd)
	cmdutil.AddStoreFlag(cmd)
	return cmd
}
