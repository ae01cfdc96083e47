//go:build unix

// Package selfcpu reads the CPU time of the running process, for the
// benchmarks' CPU-per-operation columns (a loaded machine distorts CPU time
// less than wall time).
package selfcpu

import (
	"syscall"
	"time"
)

// Time returns this process's user+system CPU time.
func Time() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
