//go:build linux && (amd64 || arm64)

package hookwire

import (
	"syscall"
	"unsafe"
)

// randomFill fills b from the kernel's random source (getrandom(2),
// which blocks only until the pool is first initialised). crypto/rand
// would do the same, but its first use also arms a one-minute warning
// timer, and the first timer starts the runtime's network poller: in the
// thin client, an epoll instance, an eventfd and a wake-up of another
// thread for one nonce. Linking crypto/rand also adds its package
// initialisation to every hook.
func randomFill(b []byte) error {
	for len(b) > 0 {
		n, _, e := syscall.Syscall(sysGetrandom, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return wrap("getrandom", e)
		}
		b = b[n:]
	}
	return nil
}
