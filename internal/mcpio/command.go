package mcpio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultTerminateDuration is how long Close waits for the command to exit
// after its stdin closed, and again after SIGTERM, as the SDK's.
const defaultTerminateDuration = 5 * time.Second

// CommandTransport runs Command and speaks to it over its stdin and
// stdout, as mcp.CommandTransport does (for a client of a stdio MCP
// server), reading its messages as Transport does. Closing the connection
// closes the command's stdin, then waits TerminateDuration for it to exit,
// then sends SIGTERM and waits again, then kills it.
type CommandTransport struct {
	Command *exec.Cmd
	// TerminateDuration is each wait of Close (0: 5 seconds).
	TerminateDuration time.Duration
}

// Connect implements mcp.Transport: it starts the command.
func (t *CommandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.Command.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.Command.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.Command.Start(); err != nil {
		return nil, err
	}
	td := t.TerminateDuration
	if td <= 0 {
		td = defaultTerminateDuration
	}
	// The connection is closed by closing stdin, never stdout (a Read
	// under way would race the command's exit).
	return (&Transport{Reader: io.NopCloser(stdout), Writer: &commandStdin{cmd: t.Command, stdin: stdin, wait: td}}).Connect(ctx)
}

// commandStdin is the command's stdin; closing it ends the command.
type commandStdin struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	wait  time.Duration
}

func (c *commandStdin) Write(p []byte) (int, error) { return c.stdin.Write(p) }

// Close closes stdin and waits for the command, terminating it if it does
// not exit.
func (c *commandStdin) Close() error {
	if err := c.stdin.Close(); err != nil {
		return fmt.Errorf("closing stdin: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-done:
			return err, true
		case <-time.After(c.wait):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if c.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := c.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("mcpio: the command does not exit")
}
