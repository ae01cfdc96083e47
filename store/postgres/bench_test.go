package postgres

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/statewright-go/statewright/store/storetest"
)

// BenchmarkDecide is the transaction a PreToolUse decision runs on an open
// PostgreSQL store: session lock and run read, call record lookup, CAS
// write with NOTIFY, one chained event, the call record, COMMIT.
func BenchmarkDecide(b *testing.B) {
	s, _ := openTemp(b, Options{})
	storetest.Create(b, s, "cc:bench")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := storetest.Decide(bg, s, "cc:bench", fmt.Sprintf("toolu_%d", i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecideReplay is a retried decision: the call is recorded already.
func BenchmarkDecideReplay(b *testing.B) {
	s, _ := openTemp(b, Options{})
	storetest.Create(b, s, "cc:bench")
	if _, _, err := storetest.Decide(bg, s, "cc:bench", "toolu_1"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, rep, err := storetest.Decide(bg, s, "cc:bench", "toolu_1"); err != nil || !rep {
			b.Fatal(err, rep)
		}
	}
}

// BenchmarkDecideParallel decides on many sessions at once (GOMAXPROCS×4
// goroutines, one session each): the chain head serialises the commits.
func BenchmarkDecideParallel(b *testing.B) {
	s, _ := openTemp(b, Options{})
	var n atomic.Int64
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		key := fmt.Sprintf("cc:p%d", n.Add(1))
		storetest.Create(b, s, key)
		i := 0
		for pb.Next() {
			i++
			if _, _, err := storetest.Decide(bg, s, key, fmt.Sprintf("toolu_%d", i)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkOpen opens an existing, current store the way a hook does
// (MustExist, ExpectID: a new pool, one connection, one query) and closes it.
func BenchmarkOpen(b *testing.B) {
	s, u := openTemp(b, Options{})
	id := s.StoreID()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(bg, u, Options{MustExist: true, ExpectID: id})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
