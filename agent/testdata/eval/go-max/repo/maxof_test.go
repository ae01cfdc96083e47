package maxof

import "testing"

func TestMax(t *testing.T) {
	if got := Max([]int{3, 9, 4}); got != 9 {
		t.Fatalf("Max = %d, want 9", got)
	}
}

func TestSum(t *testing.T) {
	if got := Sum([]int{3, 9, 4}); got != 16 {
		t.Fatalf("Sum = %d, want 16", got)
	}
}
