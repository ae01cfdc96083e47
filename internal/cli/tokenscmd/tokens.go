// Package tokenscmd is `statewright tokens`: the bearer tokens serve accepts
// (agent, hook and operator).
package tokenscmd

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/gateway/tokens"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
)

// NewCmdTokens returns `statewright tokens`.
func NewCmdTokens(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "tokens",
		Short: "Manage the bearer tokens `statewright serve` accepts (agent, hook and operator tokens, stored hashed)",
		Long: "tokens manages the bearer tokens of `statewright serve`. Agent tokens reach the MCP endpoint as the governed " +
			"agent; hook credentials post hook events to /hook/HARNESS/EVENT and reach nothing else (an agent token cannot " +
			"forge a hook event); operator tokens prove a person: only they approve transitions or weaken enforcement, over HTTP " +
			"and with the CLI's --token / $" + cmdutil.EnvOperatorToken + ". Tokens are printed once at creation; the file keeps only their " +
			"sha256. Revocation takes effect at a running server's next request.",
	}
	var file, role, name, session string
	create := &cobra.Command{
		Use:     "create --role agent|hook|operator|metrics [--name NAME] [--session KEY]",
		Example: "  statewright tokens create --role operator --name me\n  statewright tokens create --role agent --session claude-code:abc",
		Short:   "Create a token and print it once",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := tokens.ParseRole(role)
			if err != nil {
				return cmdutil.Usagef("--role: %v", err)
			}
			f, err := cmdutil.OpenTokens(file)
			if err != nil {
				return err
			}
			secret, t, err := f.Create(r, name, session, time.Now())
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			fmt.Fprintln(cmd.OutOrStdout(), secret)
			fmt.Fprintf(cmd.ErrOrStderr(), "%s token %s created in %s (shown once; keep it out of the agent's environment)\n", t.Role, t.ID, f.Path())
			return nil
		},
	}
	create.Flags().StringVar(&role, "role", "", "agent, hook, operator or metrics (a metrics token only scrapes /metrics) (required)")
	create.Flags().StringVar(&name, "name", "", "a label for list")
	create.Flags().StringVar(&session, "session", "", "bind an agent token to one session key (HARNESS:ID): the server serves only that session to it")
	cmdutil.AddTokensFileFlag(create, &file)

	var asJSON bool
	list := &cobra.Command{
		Use:     "list [--json]",
		Example: "  statewright tokens list",
		Short:   "List tokens (ids, roles, names; never the tokens)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := cmdutil.OpenTokens(file)
			if err != nil {
				return err
			}
			ts, err := f.List()
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			if asJSON {
				if ts == nil {
					ts = []tokens.Token{}
				}
				return cmdutil.PrintJSON(cmd.OutOrStdout(), ts)
			}
			if len(ts) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no tokens (create one with `statewright tokens create --role agent`)")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tROLE\tNAME\tSESSION\tCREATED\tSTATUS")
			for _, t := range ts {
				status := "valid"
				if t.Revoked() {
					status = "revoked " + t.RevokedAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Role, cmdutil.Dash(t.Name), cmdutil.Dash(t.Session), t.CreatedAt.Format(time.RFC3339), status)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmdutil.AddTokensFileFlag(list, &file)

	revoke := &cobra.Command{
		Use:     "revoke ID",
		Example: "  statewright tokens revoke tok_1a2b3c",
		Short:   "Revoke a token (it stops working at a running server's next request)",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := cmdutil.OpenTokens(file)
			if err != nil {
				return err
			}
			t, err := f.Revoke(args[0], time.Now())
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s (%s)\n", t.ID, t.Role)
			return nil
		},
	}
	cmdutil.AddTokensFileFlag(revoke, &file)
	root.AddCommand(create, list, revoke)
	return root
}
