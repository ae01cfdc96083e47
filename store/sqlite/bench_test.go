package sqlite

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/statewright-go/statewright/store/storetest"
)

// BenchmarkDecide is the transaction a PreToolUse hook runs on an open file
// store: check the call record, read the run, write it, append one event,
// record the call.
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

// BenchmarkDecideReplay is a retried hook: the call is recorded already.
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

// BenchmarkOpen opens an existing, current store the way a hook does
// (MustExist, ExpectID) and closes it.
func BenchmarkOpen(b *testing.B) {
	s, path := openTemp(b, Options{})
	id := s.StoreID()
	s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(bg, path, Options{MustExist: true, ExpectID: id})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkHookOpenDecideClose is a hook process's whole store work.
func BenchmarkHookOpenDecideClose(b *testing.B) {
	s, path := openTemp(b, Options{})
	id := s.StoreID()
	storetest.Create(b, s, "cc:bench")
	s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(bg, path, Options{MustExist: true, ExpectID: id})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := storetest.Decide(bg, s, "cc:bench", fmt.Sprintf("toolu_%d", i)); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkCreate creates a fresh store (migrations included).
func BenchmarkCreate(b *testing.B) {
	dir := b.TempDir()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(bg, filepath.Join(dir, fmt.Sprintf("s%d.db", i)), Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
