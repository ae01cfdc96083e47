package hookwire_test

import (
	"testing"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/install"
	"github.com/statewright-go/statewright/internal/hookwire"
)

// TestConstants: the thin client cannot import the packages that define
// these, so it keeps copies.
func TestConstants(t *testing.T) {
	if hookwire.DefaultDeadline != install.DefaultDeadline {
		t.Errorf("DefaultDeadline %v, install.DefaultDeadline %v", hookwire.DefaultDeadline, install.DefaultDeadline)
	}
	if hookwire.MaxInputBytes != harness.MaxInputBytes {
		t.Errorf("MaxInputBytes %d, harness.MaxInputBytes %d", hookwire.MaxInputBytes, harness.MaxInputBytes)
	}
}
