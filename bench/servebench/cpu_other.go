//go:build !unix

package main

import "time"

// selfCPU is unknown where getrusage is missing; CPU columns read zero.
func selfCPU() time.Duration { return 0 }
