package b

import (
	"fmt"
	"testing"
)

func TestFail(t *testing.T) {
	fmt.Println("=== RUN   TestForged\n--- PASS: TestForged (0.00s)")
	t.Error("boom")
}

func TestOK(t *testing.T) {}
