package release

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMakeAndCheckNative builds a release of this machine's target from
// this tree exactly as scripts/release.sh does (CI's release step has
// filled the build cache by then), checks it — the binary's --version, the
// image run as a container when bubblewrap can — and then shows the check
// has teeth: a changed binary fails the checksums, and checksums rewritten
// to match it fail against the SBOM.
func TestMakeAndCheckNative(t *testing.T) {
	native := Target{runtime.GOOS, runtime.GOARCH}
	if _, err := ParseTarget(native.String()); err != nil {
		t.Fatalf("this machine is no release target: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "dist")
	stamp := Stamp{Version: "v9.8.7-test.1", Commit: strings.Repeat("5e", 20), Date: "2026-01-02T03:04:05Z"}
	var log bytes.Buffer
	if err := Make(ctx, Options{Dir: root, Out: out, Stamp: stamp, Targets: []Target{native}, Log: &log}); err != nil {
		t.Fatalf("make: %v\n%s", err, log.String())
	}
	require := os.Getenv("STATEWRIGHT_REQUIRE_SANDBOX") == "1"
	if err := Check(ctx, CheckOptions{Dir: out, Targets: []Target{native}, RequireContainer: require, Log: &log}); err != nil {
		t.Fatalf("check: %v\n%s", err, log.String())
	}
	t.Logf("%s", log.String())
	if native.OS == "linux" && !strings.Contains(log.String(), "--version prints v9.8.7-test.1") {
		t.Errorf("the check did not run the image's binary:\n%s", log.String())
	}

	bin := filepath.Join(out, FileName(Binaries[0], native))
	checkServeFlags(t, bin)

	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	err = Check(ctx, CheckOptions{Dir: out, Targets: []Target{native}})
	if err == nil || !strings.Contains(err.Error(), FileName(Binaries[0], native)+": SHA-256") {
		t.Errorf("check of a changed binary = %v, want a checksum error", err)
	}
	if err := WriteSums(out); err != nil {
		t.Fatal(err)
	}
	err = Check(ctx, CheckOptions{Dir: out, Targets: []Target{native}})
	if err == nil || !strings.Contains(err.Error(), "the SBOM records") {
		t.Errorf("check with checksums rewritten to a changed binary = %v, want an SBOM mismatch", err)
	}
	// A release missing a binary fails.
	os.Remove(bin)
	if err := WriteSums(out); err != nil {
		t.Fatal(err)
	}
	if err := Check(ctx, CheckOptions{Dir: out, Targets: []Target{native}}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("check of a release without its binary = %v", err)
	}
}

func TestPrepareOutRefusesForeignDirectories(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "precious"), "x")
	if err := prepareOut(dir); err == nil {
		t.Fatal("prepareOut replaced a directory that holds no release")
	}
	if _, err := os.Stat(filepath.Join(dir, "precious")); err != nil {
		t.Fatal("the file is gone")
	}
	write(t, filepath.Join(dir, SumsFile), "")
	if err := prepareOut(dir); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("an older release was not replaced: %v", entries)
	}
}
