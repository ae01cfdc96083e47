package tokens

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkVerifyParallel is serve's authentication of every request: 50
// callers at once verify a hook credential against a token file that has
// not changed.
func BenchmarkVerifyParallel(b *testing.B) {
	f := Open(filepath.Join(b.TempDir(), "tokens.json"))
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var tok string
	for _, r := range []Role{Operator, Agent, Hook} {
		t, _, err := f.Create(r, string(r), "", now)
		if err != nil {
			b.Fatal(err)
		}
		tok = t
	}
	b.SetParallelism(25) // 50 goroutines on 2 cores
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := f.Verify(tok); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
