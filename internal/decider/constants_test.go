package decider_test

import (
	"testing"

	"github.com/statewright-go/statewright/harness"
	hinstall "github.com/statewright-go/statewright/harness/install"
	"github.com/statewright-go/statewright/internal/hookwire"
)

// TestConstants: the thin client cannot import the packages that define
// these, so it keeps copies.
func TestConstants(t *testing.T) {
	if hookwire.DefaultDeadline != hinstall.DefaultDeadline {
		t.Errorf("DefaultDeadline %v, hinstall.DefaultDeadline %v", hookwire.DefaultDeadline, hinstall.DefaultDeadline)
	}
	if hookwire.MaxInputBytes != harness.MaxInputBytes {
		t.Errorf("MaxInputBytes %d, harness.MaxInputBytes %d", hookwire.MaxInputBytes, harness.MaxInputBytes)
	}
}
