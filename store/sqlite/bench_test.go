package sqlite

import (
	"fmt"
	"os"
	"os/exec"
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

// hookWorker is one hook process of BenchmarkHookProcess and
// TestProcessExitWithoutClose: open the store (MustExist, ExpectID), decide
// one call, and close the store or exit without closing it (as a killed
// process would).
func hookWorker() error {
	s, err := Open(bg, os.Getenv("SW_PATH"), Options{MustExist: true, ExpectID: os.Getenv("SW_ID"), OneShot: os.Getenv("SW_ONESHOT") == "1"})
	if err != nil {
		return err
	}
	if _, _, err := storetest.Decide(bg, s, "cc:bench", os.Getenv("SW_TOOL_USE")); err != nil {
		return err
	}
	if os.Getenv("SW_CLOSE") == "1" {
		return s.Close()
	}
	return nil // exit with the connections open: no checkpoint
}

// BenchmarkHookProcess measures whole processes (this test binary
// re-executed): a no-op baseline, and a hook that opens the store, decides
// one call and closes the store. Compare with noop for the store's share.
func BenchmarkHookProcess(b *testing.B) {
	s, path := openTemp(b, Options{})
	storetest.Create(b, s, "cc:bench")
	id := s.StoreID()
	s.Close()
	for _, mode := range []string{"noop", "close"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				helper := "hook"
				if mode == "noop" {
					helper = "noop"
				}
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), helperEnv+"="+helper, "SW_PATH="+path, "SW_ID="+id,
					"SW_TOOL_USE="+fmt.Sprintf("toolu_%s_%d", mode, i), "SW_CLOSE="+map[bool]string{true: "1"}[mode == "close"])
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
		})
	}
}
