package decider

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
)

// ownMounts is the decider's own mount namespace, read once (a process
// cannot be moved to another one from outside, and the decider never
// unshares or calls setns).
var ownMounts = sync.OnceValues(func() (string, error) { return os.Readlink("/proc/self/ns/mnt") })

// peer is the process at the other end of a connection.
type peer struct {
	pid int
	// otherMounts is set when the peer sees another file system (another
	// mount namespace, or a PID namespace that hides it): its paths do not
	// resolve here.
	otherMounts bool
}

// peerOf reads the peer's credentials. A peer of another user is refused
// (the key is the real proof: the agent runs as the same user).
func peerOf(c *net.UnixConn) (peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return peer{}, err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return peer{}, err
	}
	if cerr != nil {
		return peer{}, cerr
	}
	if int(cred.Uid) != os.Getuid() {
		return peer{}, fmt.Errorf("peer pid %d runs as uid %d", cred.Pid, cred.Uid)
	}
	p := peer{pid: int(cred.Pid)}
	mine, err1 := ownMounts()
	theirs, err2 := os.Readlink("/proc/" + strconv.Itoa(p.pid) + "/ns/mnt")
	if p.pid <= 0 || err1 != nil || err2 != nil || mine != theirs {
		p.otherMounts = true
	}
	return p, nil
}
