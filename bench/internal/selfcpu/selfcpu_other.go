//go:build !unix

// Package selfcpu reads the CPU time of the running process, for the
// benchmarks' CPU-per-operation columns (a loaded machine distorts CPU time
// less than wall time).
package selfcpu

import "time"

// Time is unknown where getrusage is missing; CPU columns read zero.
func Time() time.Duration { return 0 }
