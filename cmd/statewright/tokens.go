package main

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/gateway/tokens"
)

func init() { register(newTokensCmd) }

// addTokensFileFlag adds --tokens-file to cmd.
func addTokensFileFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "tokens-file", "", "the token file (default $XDG_CONFIG_HOME/statewright/tokens.json, else ~/.config/statewright/tokens.json)")
}

// openTokens opens the token file path names, or the default one.
func openTokens(path string) (*tokens.File, error) {
	if path == "" {
		p, err := tokens.DefaultPath()
		if err != nil {
			return nil, failure{err.Error()}
		}
		path = p
	}
	return tokens.Open(path), nil
}

// operatorFromTokens reports whether tok is a valid operator token in the
// default token file (the hashed store `statewright tokens` manages).
func operatorFromTokens(tok string) (bool, error) {
	f, err := openTokens("")
	if err != nil {
		return false, err
	}
	t, err := f.Verify(tok)
	switch {
	case errors.Is(err, tokens.ErrBadToken) || errors.Is(err, tokens.ErrNoToken):
		return false, nil
	case err != nil:
		return false, err
	}
	return t.Role == tokens.Operator, nil
}

func newTokensCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "tokens",
		Short: "Manage the bearer tokens `statewright serve` accepts (agent, hook and operator tokens, stored hashed)",
		Long: "tokens manages the bearer tokens of `statewright serve`. Agent tokens reach the MCP endpoint as the governed " +
			"agent; hook credentials post hook events to /hook/HARNESS/EVENT and reach nothing else (an agent token cannot " +
			"forge a hook event); operator tokens prove a person: only they approve transitions or weaken enforcement, over HTTP " +
			"and with the CLI's --token / $" + EnvOperatorToken + ". Tokens are printed once at creation; the file keeps only their " +
			"sha256. Revocation takes effect at a running server's next request.",
	}
	var file, role, name, session string
	create := &cobra.Command{
		Use:   "create --role agent|hook|operator [--name NAME] [--session KEY]",
		Short: "Create a token and print it once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := tokens.ParseRole(role)
			if err != nil {
				return usagef("--role: %v", err)
			}
			f, err := openTokens(file)
			if err != nil {
				return err
			}
			secret, t, err := f.Create(r, name, session, time.Now())
			if err != nil {
				return failure{err.Error()}
			}
			fmt.Fprintln(cmd.OutOrStdout(), secret)
			fmt.Fprintf(cmd.ErrOrStderr(), "%s token %s created in %s (shown once; keep it out of the agent's environment)\n", t.Role, t.ID, f.Path())
			return nil
		},
	}
	create.Flags().StringVar(&role, "role", "", "agent, hook or operator (required)")
	create.Flags().StringVar(&name, "name", "", "a label for list")
	create.Flags().StringVar(&session, "session", "", "bind an agent token to one session key (HARNESS:ID): the server serves only that session to it")
	addTokensFileFlag(create, &file)

	var asJSON bool
	list := &cobra.Command{
		Use:   "list [--json]",
		Short: "List tokens (ids, roles, names; never the tokens)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := openTokens(file)
			if err != nil {
				return err
			}
			ts, err := f.List()
			if err != nil {
				return failure{err.Error()}
			}
			if asJSON {
				if ts == nil {
					ts = []tokens.Token{}
				}
				return printJSON(cmd.OutOrStdout(), ts)
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
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Role, dash(t.Name), dash(t.Session), t.CreatedAt.Format(time.RFC3339), status)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	addTokensFileFlag(list, &file)

	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token (it stops working at a running server's next request)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := openTokens(file)
			if err != nil {
				return err
			}
			t, err := f.Revoke(args[0], time.Now())
			if err != nil {
				return failure{err.Error()}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s (%s)\n", t.ID, t.Role)
			return nil
		},
	}
	addTokensFileFlag(revoke, &file)
	root.AddCommand(create, list, revoke)
	return root
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
