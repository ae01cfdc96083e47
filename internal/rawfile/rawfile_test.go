package rawfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name        string
		data        []byte
		limit, hint int
	}{
		{"empty", nil, 0, 128},
		{"line", []byte("/home/u/proj\n"), 1 << 10, 128},
		{"exactly the hint", bytes.Repeat([]byte("x"), 128), 1 << 10, 128},
		{"pages", bytes.Repeat([]byte("declare -x A=\"b\"\n"), 1000), 4 << 20, 4096},
		{"no limit", bytes.Repeat([]byte("0 "), 5000), 0, 1024},
		{"no hint", []byte("k"), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if err := os.WriteFile(p, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := Read(p, tc.limit, tc.hint)
			if err != nil || !bytes.Equal(got, tc.data) {
				t.Fatalf("Read: %d bytes, %v; want %d bytes", len(got), err, len(tc.data))
			}
		})
	}
	if _, err := Read(filepath.Join(dir, "missing"), 0, 128); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read of a missing file: %v, want ErrNotExist", err)
	}
	if runtime.GOOS != "windows" {
		big := filepath.Join(dir, "big")
		if err := os.WriteFile(big, bytes.Repeat([]byte("x"), 4096), 0o600); err != nil {
			t.Fatal(err)
		}
		if b, err := Read(big, 1<<10, 128); err == nil {
			t.Fatalf("Read of 4 KiB with a 1 KiB limit: %d bytes, no error", len(b))
		}
	}
}
