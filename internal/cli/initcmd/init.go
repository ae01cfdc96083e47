// Package initcmd is `statewright init HARNESS`: installs statewright into a
// harness through the installer driver (harness/install), one subcommand per
// harness of harness/adapters.
package initcmd

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/harness/install"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/workflow"
)

// NewCmdInit returns `statewright init`.
func NewCmdInit(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Install statewright into a coding harness's project settings",
	}
	for _, a := range adapters.All {
		cmd.AddCommand(newInitHarnessCmd(f, a))
	}
	return cmd
}

// newInitHarnessCmd is `statewright init NAME`.
func newInitHarnessCmd(f *cmdutil.Factory, a harness.Adapter) *cobra.Command {
	info := a.Info()
	var o install.Options
	cmd := &cobra.Command{
		Use:     info.Name,
		Short:   info.InstallShort,
		Example: "  statewright init " + info.Name + " --dry-run\n  statewright init " + info.Name + "\n  statewright init " + info.Name + " --uninstall",
		Long:    info.InstallLong,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return install.Run(cmd.Context(), info.Name, o, installEnv(f, cmd.ErrOrStderr()), a.Install, cmd.OutOrStdout())
		},
	}
	install.AddFlags(cmd.Flags(), &o)
	if info.InstallFlags != nil {
		info.InstallFlags(cmd.Flags(), &o)
	}
	return cmd
}

// installEnv is what init opens the store and checks workflows with. A
// --default-workflow's warnings (a tool name no harness knows, with a
// did-you-mean) go to stderr; its errors refuse the install.
func installEnv(f *cmdutil.Factory, stderr io.Writer) install.Env {
	return install.Env{
		OpenStore: func(ctx context.Context, loc string, create bool) (store.Store, error) {
			return f.OpenStoreAt(ctx, loc, store.Options{MustExist: !create})
		},
		Workflow: func(name string) (string, error) {
			_, diags, err := cmdutil.LoadWorkflow(name, false)
			if err != nil {
				// Name the first error (an unknown key, with its position).
				for _, d := range diags {
					if d.Severity == workflow.SeverityError {
						return "", fmt.Errorf("%w: %s", err, d.String())
					}
				}
				return "", err
			}
			for _, d := range diags {
				if d.Severity == workflow.SeverityWarning && !strings.HasPrefix(d.Code, "compat-") {
					fmt.Fprintln(stderr, d.String())
				}
			}
			if cmdutil.LooksLikeTemplateName(name) {
				return name, nil
			}
			return filepath.Abs(name)
		},
	}
}
