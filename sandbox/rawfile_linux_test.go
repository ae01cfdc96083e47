package sandbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReadWriteSmall(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"line", []byte("/home/u/proj\n")},
		{"page", bytes.Repeat([]byte("x"), 4096)},
		{"pages", bytes.Repeat([]byte("declare -x A=\"b\"\n"), 1000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if err := writeSmall(p, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			// Truncated when it exists.
			if err := writeSmall(p, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(want, tc.data) {
				t.Fatalf("os.ReadFile after writeSmall: %q, %v; want %d bytes", want, err, len(tc.data))
			}
			got, err := readSmall(p)
			if err != nil || !bytes.Equal(got, tc.data) {
				t.Fatalf("readSmall: %d bytes, %v; want %d bytes", len(got), err, len(tc.data))
			}
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode %v, %v", fi.Mode(), err)
			}
		})
	}
	if _, err := readSmall(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("readSmall of a missing file: %v, want ErrNotExist", err)
	}
	if err := writeSmall(filepath.Join(dir, "no", "such"), nil, 0o600); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("writeSmall into a missing directory: %v, want ErrNotExist", err)
	}
}
