package count

import "testing"

func TestCountVowels(t *testing.T) {
	if got := CountVowels("Apple Orange"); got != 5 {
		t.Fatalf("CountVowels = %d, want 5", got)
	}
}

func TestWords(t *testing.T) {
	if got := Words(" a  b c "); got != 3 {
		t.Fatalf("Words = %d, want 3", got)
	}
}
