package strs

import "testing"

func TestReverse(t *testing.T) {
	for in, want := range map[string]string{"abcd": "dcba", "abcdef": "fedcba", "x": "x"} {
		if got := Reverse(in); got != want {
			t.Errorf("Reverse(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShout(t *testing.T) {
	if got := Shout("hi"); got != "HI!" {
		t.Fatalf("Shout = %q", got)
	}
}
