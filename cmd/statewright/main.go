// Command statewright puts AI coding agents under a state machine: it parses
// and validates workflows, steps the engine, and decides tool calls. The
// commands live in internal/cli (see docs/architecture.md); main only
// answers the hot paths before building the command tree.
package main

import (
	"os"

	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/internal/buildinfo"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/internal/cli/hookcmd"
	"github.com/statewright-go/statewright/internal/cli/root"
	"github.com/statewright-go/statewright/internal/cli/sandboxcmd"
	"github.com/statewright-go/statewright/internal/cli/testruncmd"
	"github.com/statewright-go/statewright/sandbox"
)

func main() {
	a, f := os.Args, cmdutil.New(buildinfo.Version())
	// A harness runs a hook on every tool call: answer it without building
	// the command tree (the hook latency budget). Help goes through cobra.
	if len(a) > 3 && a[1] == "hook" && a[3] != "-h" && a[3] != "--help" {
		if ad := adapters.Find(a[2]); ad != nil {
			os.Exit(hookcmd.Run(f, ad, a[3:], os.Stdin, os.Stdout, os.Stderr))
		}
	}
	// testrun runs a hook's rewritten test command: no command tree either.
	if len(a) > 2 && a[1] == "testrun" && a[2] != "-h" && a[2] != "--help" {
		os.Exit(testruncmd.Run(a[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	// The sandbox launcher runs every sandboxed shell call: no command tree.
	if len(a) > 3 && a[1] == "sandbox" && a[2] == "exec" && a[3] != "-h" && a[3] != "--help" {
		os.Exit(sandboxcmd.RunExec(a[3:], os.Stdin, os.Stdout, os.Stderr))
	}
	// The phase's sandbox server, inside its bubblewrap (started by the
	// launcher: sandbox/server_linux.go).
	if len(a) > 2 && a[1] == "sandbox" && a[2] == "serve" {
		os.Exit(sandbox.Serve(a[3:], os.Stderr))
	}
	if len(a) > 2 && a[1] == "sandbox" && a[2] == "keep" {
		os.Exit(sandbox.Keep(a[3:], os.Stderr))
	}
	// Beside a phase's sandbox server, outside it: stops it when the run
	// leaves the phase (started by its keeper).
	if len(a) > 2 && a[1] == "sandbox" && a[2] == "watch" {
		os.Exit(sandboxcmd.RunWatch(a[3:], os.Stderr))
	}
	// The network forwarder runs first inside a sandbox whose network goes
	// through statewright's proxy (package sandbox, netproxy.go).
	if len(a) > 2 && a[1] == "sandbox" && a[2] == "netinit" {
		os.Exit(sandbox.NetInit(a[3:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(root.Run(f, a[1:], os.Stdin, os.Stdout, os.Stderr))
}
