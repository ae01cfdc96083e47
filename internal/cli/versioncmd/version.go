// Package versioncmd is `statewright version`.
package versioncmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/internal/cli/cmdutil"
)

// NewCmdVersion returns `statewright version`.
func NewCmdVersion(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the statewright version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "statewright %s\n", f.Version())
			return nil
		},
	}
}
