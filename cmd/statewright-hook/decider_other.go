//go:build !unix

package main

import (
	"time"

	"github.com/statewright-go/statewright/internal/hookwire"
)

// askDecider: no decider on this system; the full binary decides.
func askDecider(string, []string, []byte, time.Time, time.Duration) *hookwire.Answer { return nil }
