// Package root is statewright's command tree, wired explicitly: one
// package per command group under internal/cli, each contributing its
// commands through NewCmdX(f). cmd/statewright/main.go only calls Run.
package root

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/internal/buildinfo"
	"github.com/statewright-go/statewright/internal/cli/agentcmd"
	"github.com/statewright-go/statewright/internal/cli/auditcmd"
	"github.com/statewright-go/statewright/internal/cli/checkcmd"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/internal/cli/dashboardcmd"
	"github.com/statewright-go/statewright/internal/cli/decidercmd"
	"github.com/statewright-go/statewright/internal/cli/democmd"
	"github.com/statewright-go/statewright/internal/cli/doctorcmd"
	"github.com/statewright-go/statewright/internal/cli/enginecmd"
	"github.com/statewright-go/statewright/internal/cli/explaincmd"
	"github.com/statewright-go/statewright/internal/cli/hookcmd"
	"github.com/statewright-go/statewright/internal/cli/initcmd"
	"github.com/statewright-go/statewright/internal/cli/mcpcmd"
	"github.com/statewright-go/statewright/internal/cli/retentioncmd"
	"github.com/statewright-go/statewright/internal/cli/runscmd"
	"github.com/statewright-go/statewright/internal/cli/sandboxcmd"
	"github.com/statewright-go/statewright/internal/cli/servecmd"
	"github.com/statewright-go/statewright/internal/cli/storecmd"
	"github.com/statewright-go/statewright/internal/cli/testruncmd"
	"github.com/statewright-go/statewright/internal/cli/tokenscmd"
	"github.com/statewright-go/statewright/internal/cli/trustcmd"
	"github.com/statewright-go/statewright/internal/cli/tuicmd"
	"github.com/statewright-go/statewright/internal/cli/versioncmd"
	"github.com/statewright-go/statewright/internal/cli/workflowscmd"
)

// NewCmdRoot returns the statewright command with every subcommand.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "statewright",
		Short:         "Put AI coding agents under a state machine",
		Long:          "statewright decides every tool call an AI coding agent makes against a workflow: a state machine of phases, what each phase may do, and how phases lead on.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Get().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n") // the same line as `statewright version`
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.Usage(err) })

	// Workflows and decisions without a harness.
	root.AddCommand(workflowscmd.NewCmdWorkflows(f))
	root.AddCommand(checkcmd.NewCmdCheck(f, nil))
	root.AddCommand(checkcmd.NewCmdTest(f))
	root.AddCommand(explaincmd.NewCmdExplain(f))
	root.AddCommand(enginecmd.NewCmdEngine(f))
	root.AddCommand(democmd.NewCmdDemo(f))

	// Harnesses: install, hooks, health.
	root.AddCommand(initcmd.NewCmdInit(f))
	root.AddCommand(hookcmd.NewCmdHook(f))
	root.AddCommand(decidercmd.NewCmdDecider(f))
	root.AddCommand(doctorcmd.NewCmdDoctor(f))
	root.AddCommand(sandboxcmd.NewCmdSandbox())
	root.AddCommand(testruncmd.NewCmdTestrun())

	// Runs: the agent's lifecycle and the human-only operations.
	root.AddCommand(runscmd.NewCmdStart(f))
	root.AddCommand(runscmd.NewCmdTransition(f))
	root.AddCommand(runscmd.NewCmdStatus(f))
	root.AddCommand(runscmd.NewCmdRuns(f))
	root.AddCommand(runscmd.NewCmdHistory(f))
	root.AddCommand(runscmd.NewCmdApprove(f))
	root.AddCommand(runscmd.NewCmdReject(f))
	root.AddCommand(runscmd.NewCmdPause(f))
	root.AddCommand(runscmd.NewCmdResume(f))
	root.AddCommand(runscmd.NewCmdDeactivate(f))
	root.AddCommand(runscmd.NewCmdOff(f))
	root.AddCommand(runscmd.NewCmdToken(f))
	root.AddCommand(retentioncmd.NewCmdRetention(f))
	root.AddCommand(auditcmd.NewCmdVerify(f))
	root.AddCommand(auditcmd.NewCmdCheckpoint(f))
	root.AddCommand(storecmd.NewCmdStore(f))

	// Servers and human surfaces.
	root.AddCommand(mcpcmd.NewCmdMCP(f))
	root.AddCommand(servecmd.NewCmdServe(f))
	root.AddCommand(servecmd.NewCmdHealthcheck(f))
	root.AddCommand(tokenscmd.NewCmdTokens(f))
	root.AddCommand(trustcmd.NewCmdTrust(f))
	root.AddCommand(tuicmd.NewCmdTUI(f))
	root.AddCommand(dashboardcmd.NewCmdDashboard(f))

	// The direct-to-model agent.
	root.AddCommand(agentcmd.NewCmdAgent(f, nil))
	root.AddCommand(agentcmd.NewCmdEval(f))
	root.AddCommand(agentcmd.NewCmdGenerate(f))

	root.AddCommand(versioncmd.NewCmdVersion(f))
	return root
}

// Run executes the command line args and returns the process exit code.
func Run(f *cmdutil.Factory, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := NewCmdRoot(f)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	code := cmdutil.ExitCode(err, stderr)
	if code == cmdutil.ExitUsage && cmd != nil && cmd.Runnable() {
		// A usage error shows how the command is called.
		fmt.Fprintf(stderr, "usage: %s\n", cmd.UseLine())
		if cmd.Example != "" {
			fmt.Fprintf(stderr, "examples:\n%s\n", cmd.Example)
		}
	}
	return code
}
