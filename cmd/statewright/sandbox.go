package main

import "github.com/statewright-go/statewright/internal/cli/sandboxcmd"

func init() { register(sandboxcmd.NewCmdSandbox) }
