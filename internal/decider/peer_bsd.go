//go:build unix && !linux

package decider

import "net"

type peer struct {
	pid         int
	otherMounts bool
}

// peerOf: the key is the proof; the pid is not known here.
func peerOf(*net.UnixConn) (peer, error) { return peer{}, nil }
