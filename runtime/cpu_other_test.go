//go:build !unix

package runtime

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
