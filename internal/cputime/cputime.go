// Package cputime reads the CPU time a process has used, for benchmarks
// that report CPU per operation beside wall time (a loaded machine skews
// CPU time less than wall time).
package cputime
