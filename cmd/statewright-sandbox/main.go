// Command statewright-sandbox is the sandbox launcher alone: the same
// `sandbox exec --call DIR (-c SCRIPT | -- ARGV...)` as `statewright sandbox
// exec`, in a binary that links only package sandbox and the test observer
// (testreport/testrun), so that the launcher every sandboxed shell call
// starts, test commands included, costs a small Go binary's start-up, not
// statewright's (bench/sandbox.txt). Hooks use it when it sits next to the
// statewright binary they run; it is built and released with it.
package main

import (
	"fmt"
	"os"

	"github.com/statewright-go/statewright/internal/buildinfo"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/testreport/testrun"
)

func main() {
	a := os.Args[1:]
	if len(a) == 1 && (a[0] == "--version" || a[0] == "version") {
		fmt.Println(buildinfo.Get()) // the release's stamp, as statewright --version prints it
		return
	}
	if len(a) > 0 && a[0] == "sandbox" {
		a = a[1:]
	}
	if len(a) > 0 && a[0] == "netinit" {
		// The network forwarder inside a sandbox whose network goes through
		// the proxy (sandbox/netproxy.go).
		os.Exit(sandbox.NetInit(a[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if len(a) > 0 && a[0] == "serve" {
		// The phase's sandbox server, inside its bubblewrap (started by the
		// launcher: sandbox/server_linux.go).
		os.Exit(sandbox.Serve(a[1:], os.Stderr))
	}
	if len(a) > 0 && a[0] == "keep" {
		// The keeper of a sandbox server, outside it.
		os.Exit(sandbox.Keep(a[1:], os.Stderr))
	}
	if len(a) == 0 || a[0] != "exec" {
		fmt.Fprintln(os.Stderr, "usage: statewright-sandbox exec --call DIR (-c SCRIPT | -- ARGV...)")
		os.Exit(2)
	}
	os.Exit(sandbox.Main(a[1:], os.Stdin, os.Stdout, os.Stderr, testrun.Observe))
}
