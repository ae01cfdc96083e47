//go:build linux || darwin

package install

import "syscall"

// writable reports whether this process may create files in dir (a
// read-only file system or missing permission is an error).
func writable(dir string) error { return syscall.Access(dir, 0x2|0x1) } // W_OK|X_OK
