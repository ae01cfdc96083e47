// Package retentioncmd is `statewright retention`: the event log's retention
// setting and pruning (people only).
package retentioncmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/store"
)

// newRetentionCmd shows or sets how long the event log is kept, and prunes
// it. Pruning removes a prefix of the log and anchors the hash chain at the
// last removed event, so the rest still verifies. Changing the setting or
// pruning is for people only: it removes audit history.
func NewCmdRetention(f *cmdutil.Factory) *cobra.Command {
	var (
		maxAge time.Duration
		keep   int64
		prune  bool
	)
	cmd := &cobra.Command{
		Use:     "retention [--max-age DURATION] [--keep N] [--prune]",
		Example: "  statewright retention\n  statewright retention --max-age 720h --prune",
		Short:   "Show or set the event log's retention, and prune it (changing it: people only)",
		Long: `retention without flags prints the store's retention setting. --max-age and --keep set it
(an event is pruned when it is older than --max-age, or not among the newest --keep events;
0 means no bound); --prune removes the events the setting no longer keeps, anchoring the hash
chain at the last removed event so that the rest still verifies. Setting or pruning needs a
person (a terminal confirmation or the operator token), like approve.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if maxAge < 0 || keep < 0 {
				return cmdutil.Usagef("--max-age and --keep must not be negative")
			}
			ctx := cmd.Context()
			st, err := f.OpenStore(ctx, cmd, store.Options{MustExist: true})
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			defer st.Close()
			cur, err := st.Retention(ctx)
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			set := cmd.Flags().Changed("max-age") || cmd.Flags().Changed("keep")
			if !set && !prune {
				fmt.Fprintln(cmd.OutOrStdout(), describeRetention(cur))
				return nil
			}
			next := cur
			if cmd.Flags().Changed("max-age") {
				next.MaxAge = maxAge
			}
			if cmd.Flags().Changed("keep") {
				next.Keep = keep
			}
			what := "Set retention to " + describeRetention(next)
			if prune {
				what += " and prune the event log now"
			}
			if _, err := cmdutil.ProveHuman(cmd, what+"?", "yes"); err != nil {
				return err
			}
			if set {
				if err := st.SetRetention(ctx, next); err != nil {
					return cmdutil.Failure(err.Error())
				}
				fmt.Fprintln(cmd.OutOrStdout(), "retention:", describeRetention(next))
			}
			if prune {
				p, err := st.Prune(ctx, next)
				if err != nil {
					return cmdutil.Failure(err.Error())
				}
				fmt.Fprintf(cmd.OutOrStdout(), "pruned %d events and %d settled call records; the chain is anchored at event %d\n", p.Events, p.Calls, p.AnchorSeq)
				// A prune moves the chains' anchors: sign it at once, or
				// verify cannot tell it from a faked one.
				if key, err := cmdutil.SigningKey(); err == nil && p.Events > 0 {
					c, err := st.Checkpoint(ctx, store.CheckpointOptions{Key: key, AfterPrune: true})
					if err != nil {
						return cmdutil.Failure("checkpoint after the prune: " + err.Error())
					}
					fmt.Fprintf(cmd.OutOrStdout(), "checkpoint %d signs the pruned log\n", c.Seq)
				} else if p.Events > 0 {
					fmt.Fprintln(cmd.OutOrStdout(), "no signing key: until a checkpoint signs the pruned log (`statewright checkpoint`), verify cannot tell this prune from a faked one")
				}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&maxAge, "max-age", 0, "prune events older than this (e.g. 720h; 0: no age bound)")
	cmd.Flags().Int64Var(&keep, "keep", 0, "keep only the newest N events (0: no count bound)")
	cmd.Flags().BoolVar(&prune, "prune", false, "remove the events the retention setting no longer keeps")
	cmdutil.AddTokenFlag(cmd)
	cmdutil.AddStoreFlag(cmd)
	return cmd
}

// describeRetention renders a retention setting for people.
func describeRetention(r store.Retention) string {
	if r.MaxAge <= 0 && r.Keep <= 0 {
		return "keep every event"
	}
	s := ""
	if r.MaxAge > 0 {
		s = "events younger than " + r.MaxAge.String()
	}
	if r.Keep > 0 {
		if s != "" {
			s += ", and "
		}
		s += fmt.Sprintf("the newest %d events", r.Keep)
	}
	return "keep " + s
}
