// Package versioncmd is `statewright version`.
package versioncmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/internal/buildinfo"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
)

// NewCmdVersion returns `statewright version`: the same line as --version.
func NewCmdVersion(_ *cmdutil.Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "version",
		Example: "  statewright version\n  statewright version --json",
		Short:   "Print the statewright version (the same line as --version)",
		Long: `version prints the version, commit and commit date a release build
stamped into the binary (scripts/release.sh), the Go toolchain and the
platform. A plain go build in a git checkout says the pseudo-version Go
stamps from the commit (+dirty with uncommitted changes); go run, and a
build without git information (-buildvcs=false), say "devel".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			i := buildinfo.Get()
			if !asJSON {
				fmt.Fprintln(cmd.OutOrStdout(), i)
				return nil
			}
			b, err := json.MarshalIndent(i, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build information as JSON")
	return cmd
}
