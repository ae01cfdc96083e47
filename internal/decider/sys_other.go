//go:build !unix

package decider

import (
	"context"
	"errors"
	"net"
	"os"

	"github.com/statewright-go/statewright/internal/hookwire"
)

func setUmask(int) int { return 0 }

func ownedByMe(os.FileInfo) bool { return true }

type peer struct {
	pid         int
	otherMounts bool
}

func peerOf(*net.UnixConn) (peer, error) {
	return peer{}, errors.New("no local decider on this system")
}

func (d *Decider) lock(ctx context.Context) (*os.File, error) {
	return nil, errors.New("no local decider on this system")
}

// Ask reports that this system runs no local decider.
func Ask(dir, bin string, op byte) (*hookwire.Answer, hookwire.Hello, error) {
	return nil, hookwire.Hello{}, errors.New("no local decider on this system")
}

// StatusOf reports that this system runs no local decider.
func StatusOf(dir, bin string) (*Status, error) {
	return nil, errors.New("no local decider on this system")
}
