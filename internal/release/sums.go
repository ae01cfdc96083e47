package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SumsFile is the checksum file's name. Its format is sha256sum's
// ("HEX  NAME" per line, sorted by name), so `sha256sum -c SHA256SUMS`
// verifies a release.
const SumsFile = "SHA256SUMS"

// FileSHA256 returns the hex SHA-256 of the file at path.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// WriteSums writes dir/SHA256SUMS over every regular file in dir (but
// itself).
func WriteSums(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	for _, e := range entries { // ReadDir sorts by name
		if e.Name() == SumsFile || !e.Type().IsRegular() {
			continue
		}
		sum, err := FileSHA256(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, e.Name())
	}
	return os.WriteFile(filepath.Join(dir, SumsFile), b.Bytes(), 0o644)
}

// ReadSums parses dir/SHA256SUMS into name → hex digest.
func ReadSums(dir string) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, SumsFile))
	if err != nil {
		return nil, err
	}
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 || strings.ContainsAny(name, "/\\") || name == "" {
			return nil, fmt.Errorf("%s:%d: want \"SHA256  NAME\", got %q", SumsFile, n, sc.Text())
		}
		if _, dup := sums[name]; dup {
			return nil, fmt.Errorf("%s:%d: %s listed twice", SumsFile, n, name)
		}
		sums[name] = sum
	}
	return sums, sc.Err()
}

// VerifySums checks every file SHA256SUMS lists against its digest, and
// that no file in dir is missing from the list. It returns the names it
// verified, sorted.
func VerifySums(dir string) ([]string, error) {
	sums, err := ReadSums(dir)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if _, ok := sums[e.Name()]; !ok && e.Name() != SumsFile {
			return nil, fmt.Errorf("%s is not listed in %s", e.Name(), SumsFile)
		}
	}
	var names []string
	for name, want := range sums {
		got, err := FileSHA256(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if got != want {
			return nil, fmt.Errorf("%s: SHA-256 %s, %s says %s", name, got, SumsFile, want)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}
