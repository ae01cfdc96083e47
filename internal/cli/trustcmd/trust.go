// Package trustcmd is `statewright trust`: consent to start the upstream MCP
// servers a gateway configuration names.
package trustcmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/gateway"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/policy"
)

// NewCmdTrust returns `statewright trust`.
func NewCmdTrust(f *cmdutil.Factory) *cobra.Command {
	var trustPath string
	var revoke, list, yes bool
	cmd := &cobra.Command{
		Use:     "trust [CONFIG | PROJECT_DIR] [--revoke] [--list]",
		Example: "  statewright trust .statewright/gateway.yaml\n  statewright trust --list",
		Short:   "Consent to start the upstream MCP servers a gateway.yaml names (its exact bytes)",
		Long: "trust records that you reviewed a gateway configuration (default ./.statewright/gateway.yaml; a directory means " +
			"its .statewright/gateway.yaml) and consent to statewright starting the upstream MCP servers it names. The record " +
			"holds the file's sha256: any change to the file needs a new `statewright trust`. `statewright mcp` and `statewright " +
			"serve` refuse to start the upstreams of an untrusted configuration. It prints the upstreams first; on a terminal it " +
			"asks for confirmation (--yes skips that). The records live in $XDG_CONFIG_HOME/statewright/trusted-gateways.json.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tf, err := cmdutil.TrustFile(trustPath)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if list {
				rs, err := tf.List()
				if err != nil {
					return cmdutil.Failure(err.Error())
				}
				if len(rs) == 0 {
					fmt.Fprintln(out, "no trusted gateway configurations")
					return nil
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "CONFIG\tSHA256\tTRUSTED")
				for _, r := range rs {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Config, r.Hash[:min(16, len(r.Hash))], r.TrustedAt.Format(time.RFC3339))
				}
				return tw.Flush()
			}
			path := gateway.ConfigFile
			if len(args) == 1 {
				path = args[0]
				if fi, err := os.Stat(path); err == nil && fi.IsDir() {
					path = filepath.Join(path, gateway.ConfigFile)
				}
			}
			if revoke {
				ok, err := tf.Revoke(path)
				if err != nil {
					return cmdutil.Failure(err.Error())
				}
				if !ok {
					return cmdutil.Failure(path + " was not trusted")
				}
				fmt.Fprintf(out, "no longer trusted: %s\n", path)
				return nil
			}
			cfg, hash, err := gateway.LoadConfigFile(path)
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			fmt.Fprintf(out, "%s (sha256 %s) starts %d upstream MCP server(s):\n", path, hash, len(cfg.Upstreams))
			for _, u := range cfg.Upstreams {
				what := u.URL
				if u.Command != "" {
					what = strings.TrimSpace(u.Command + " " + strings.Join(u.Args, " "))
				}
				fmt.Fprintf(out, "  %s: %s\n", u.Name, what)
			}
			if !yes {
				if _, err := cmdutil.ProveHuman(cmd, "Trust these upstream servers (they run as you)?", "yes"); err != nil {
					return err
				}
			}
			// Snapshot the tools' annotations now (DECISIONS 31): the law
			// reads these, never what a server says later.
			hints, err := snapshotHints(cmd.Context(), cfg, path)
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "statewright trust: the upstreams' tools could not be listed, so no MCP annotations are recorded (phases decide those tools by name only): %v\n", err)
			}
			rec, err := tf.TrustTools(path, hash, os.Getenv("USER"), time.Now(), hints)
			if err != nil {
				return cmdutil.Failure(err.Error())
			}
			fmt.Fprintf(out, "trusted %s\n", rec.Config)
			if len(hints) > 0 {
				fmt.Fprintf(out, "recorded the annotations of %d tool(s) (readOnlyHint, destructiveHint, openWorldHint)\n", len(hints))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&trustPath, "trust-file", "", "the trust records (default $XDG_CONFIG_HOME/statewright/trusted-gateways.json)")
	cmd.Flags().BoolVar(&revoke, "revoke", false, "forget the configuration")
	cmd.Flags().BoolVar(&list, "list", false, "list trusted configurations")
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation (you reviewed the file)")
	cmdutil.AddTokenFlag(cmd)
	return cmd
}

// snapshotHints starts cfg's upstreams (the person just consented to
// that), lists their tools and stops them, and returns the tools'
// annotations by namespaced name.
func snapshotHints(ctx context.Context, cfg *gateway.Config, path string) (map[string]policy.ToolHints, error) {
	if len(cfg.Upstreams) == 0 {
		return nil, nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	dir := filepath.Dir(filepath.Dir(path)) // the project of .statewright/gateway.yaml
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	m := gateway.NewManager(cfg, dir, nil)
	if err := m.Start(ctx); err != nil {
		return nil, err
	}
	defer m.Close()
	return gateway.HintsOf(m.Tools()), nil
}
