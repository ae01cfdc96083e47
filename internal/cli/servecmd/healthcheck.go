package servecmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/serve"
)

// NewCmdHealthcheck returns `statewright healthcheck`: the container
// image's health check, which has no curl.
func NewCmdHealthcheck(_ *cmdutil.Factory) *cobra.Command {
	var (
		listen  string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:     "healthcheck [--listen HOST:PORT]",
		Example: "  statewright healthcheck --listen 127.0.0.1:8377",
		Short:   "Exit 0 when the serve listening at --listen answers /healthz",
		Long: `healthcheck asks a running "statewright serve" for /healthz and exits 0
when it answers "ok", 1 otherwise: the health check of the container image,
which has no curl. --listen takes serve's own --listen value; an unspecified
host (0.0.0.0, ::) is probed on loopback. No token is needed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			addr, err := serve.ProbeAddr(listen)
			if err != nil {
				return cmdutil.Usagef("--listen: %v", err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			if err := serve.Probe(ctx, addr); err != nil {
				return cmdutil.Failure("healthcheck: " + err.Error())
			}
			fmt.Fprintln(cmd.OutOrStdout(), "ok")
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", DefaultListen, "serve's listen address")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	return cmd
}
