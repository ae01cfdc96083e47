// Command statewright puts AI coding agents under a state machine: it parses
// and validates workflows, steps the engine, and decides tool calls.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/internal/cli/sandboxcmd"
)

// commandConstructors collects the subcommands. Each file of this package
// registers its own constructors with register, so areas stay separate.
var commandConstructors []func() *cobra.Command

// register adds subcommand constructors to the root command.
func register(fns ...func() *cobra.Command) {
	commandConstructors = append(commandConstructors, fns...)
}

// Exit codes shared by every subcommand.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and found a problem (invalid workflow, failing test)
	exitUsage   = 2 // bad flags or arguments, unreadable input
)

// usageError marks an error as a usage error (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usage error.
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// failure marks a command that ran but must exit 1 (the message was printed already if empty).
type failure struct{ msg string }

func (e failure) Error() string { return e.msg }

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "statewright",
		Short:         "Put AI coding agents under a state machine",
		Long:          "statewright decides every tool call an AI coding agent makes against a workflow: a state machine of phases, what each phase may do, and how phases lead on.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	for _, fn := range commandConstructors {
		root.AddCommand(fn())
	}
	return root
}

// run executes the CLI and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ec exitCode
	if errors.As(err, &ec) {
		return ec.code
	}
	var f failure
	if errors.As(err, &f) {
		if f.msg != "" {
			fmt.Fprintln(stderr, "statewright:", f.msg)
		}
		return exitFailure
	}
	fmt.Fprintln(stderr, "statewright:", err)
	var u usageError
	var uf interface{ Usage() bool }
	if errors.As(err, &u) || errors.As(err, &uf) && uf.Usage() || isCobraUsageError(err) {
		return exitUsage
	}
	return exitFailure
}

// isCobraUsageError recognises cobra's own argument errors, which it does not type.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument"} {
		if len(msg) >= len(prefix) && msg[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}

func main() {
	// A harness runs a hook on every tool call: answer it without building
	// the command tree (the hook latency budget, docs/architecture.md).
	// Help still goes through cobra.
	if a := os.Args; len(a) > 3 && a[1] == "hook" && a[3] != "-h" && a[3] != "--help" {
		if ad := adapters.Find(a[2]); ad != nil {
			os.Exit(runHook(ad, a[3:], os.Stdin, os.Stdout, os.Stderr))
		}
	}
	// The sandbox launcher runs every sandboxed shell call: no command tree.
	if a := os.Args; len(a) > 3 && a[1] == "sandbox" && a[2] == "exec" && a[3] != "-h" && a[3] != "--help" {
		os.Exit(sandboxcmd.RunExec(a[3:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
