package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Target
		err  bool
	}{
		{"linux/amd64", Target{"linux", "amd64"}, false},
		{"windows/arm64", Target{"windows", "arm64"}, false},
		{"darwin/arm64", Target{"darwin", "arm64"}, false},
		{"linux/386", Target{}, true},
		{"plan9/amd64", Target{}, true},
		{"linux", Target{}, true},
	} {
		got, err := ParseTarget(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseTarget(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
	if len(Targets) != 6 {
		t.Errorf("%d targets, want linux, darwin, windows × amd64, arm64", len(Targets))
	}
}

func TestFileName(t *testing.T) {
	b := Binary{Name: "statewright"}
	if got := FileName(b, Target{"windows", "arm64"}); got != "statewright-windows-arm64.exe" {
		t.Errorf("windows: %q", got)
	}
	if got := FileName(b, Target{"darwin", "amd64"}); got != "statewright-darwin-amd64" {
		t.Errorf("darwin: %q", got)
	}
}

func TestDeriveVersion(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const commit = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct{ exact, base, want string }{
		{"v1.2.3", "v1.2.3", "v1.2.3"},
		{"", "", "v0.0.0-20260102030405-0123456789ab"},
		{"", "v1.2.3", "v1.2.4-0.20260102030405-0123456789ab"},
		{"", "v2.0.0-rc.1", "v2.0.0-rc.1.0.20260102030405-0123456789ab"},
		{"not-a-version", "", "v0.0.0-20260102030405-0123456789ab"},
	} {
		if got := deriveVersion(tc.exact, tc.base, at, commit); got != tc.want {
			t.Errorf("deriveVersion(%q, %q) = %q, want %q", tc.exact, tc.base, got, tc.want)
		}
	}
}

func TestDockerTag(t *testing.T) {
	for in, want := range map[string]string{
		"v1.2.3":                            "v1.2.3",
		"v0.0.0-20260102030405-abc+dirty":   "v0.0.0-20260102030405-abc-dirty",
		strings.Repeat("x", 200):            strings.Repeat("x", 128),
		"v1.0.0-rc.1.0.20260102030405-abcd": "v1.0.0-rc.1.0.20260102030405-abcd",
	} {
		if got := DockerTag(in); got != want {
			t.Errorf("DockerTag(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBuildEnvFixesWhatChangesTheOutput(t *testing.T) {
	env := BuildEnv([]string{"HOME=/h", "CGO_ENABLED=1", "GOFLAGS=-race", "GOAMD64=v3", "GOEXPERIMENT=x"}, Target{"darwin", "arm64"}, "/c")
	for _, want := range []string{"HOME=/h", "CGO_ENABLED=0", "GOOS=darwin", "GOARCH=arm64", "GOFLAGS=", "GOAMD64=v1", "GOEXPERIMENT=", "GOWORK=off", "GOTOOLCHAIN=local", "GOCACHE=/c"} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %s: %v", want, env)
		}
	}
	for _, bad := range []string{"CGO_ENABLED=1", "GOFLAGS=-race", "GOAMD64=v3", "GOEXPERIMENT=x"} {
		if slices.Contains(env, bad) {
			t.Errorf("env keeps %s", bad)
		}
	}
	args := BuildArgs(Binaries[0], Stamp{Version: "v1.2.3", Commit: "c", Date: "d"}, "/o")
	for _, want := range []string{"-trimpath", "-buildvcs=false", "-mod=readonly"} {
		if !slices.Contains(args, want) {
			t.Errorf("build args lack %s: %v", want, args)
		}
	}
	if l := LDFlags(Stamp{Version: "v1.2.3", Commit: "c", Date: "d"}); !strings.Contains(l, "-buildid=") || !strings.Contains(l, stampPkg+".version=v1.2.3") {
		t.Errorf("ldflags %q", l)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSums(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "b"), "bee\n")
	write(t, filepath.Join(dir, "a"), "ay\n")
	if err := WriteSums(dir); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, SumsFile))
	// sha256sum's own format ("HEX  NAME") and order.
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "  a") || !strings.HasSuffix(lines[1], "  b") {
		t.Fatalf("SHA256SUMS = %q", data)
	}
	if names, err := VerifySums(dir); err != nil || !slices.Equal(names, []string{"a", "b"}) {
		t.Fatalf("VerifySums = %v, %v", names, err)
	}

	write(t, filepath.Join(dir, "a"), "AY\n")
	if _, err := VerifySums(dir); err == nil || !strings.Contains(err.Error(), "a: SHA-256") {
		t.Errorf("a changed file: %v", err)
	}
	write(t, filepath.Join(dir, "a"), "ay\n")
	write(t, filepath.Join(dir, "extra"), "x")
	if _, err := VerifySums(dir); err == nil || !strings.Contains(err.Error(), "extra is not listed") {
		t.Errorf("an unlisted file: %v", err)
	}
	os.Remove(filepath.Join(dir, "extra"))
	os.Remove(filepath.Join(dir, "b"))
	if _, err := VerifySums(dir); err == nil {
		t.Errorf("a missing file verified")
	}
	for _, bad := range []string{"nothex  a\n", strings.Repeat("0", 64) + "  ../a\n", strings.Repeat("0", 64) + " a\n"} {
		write(t, filepath.Join(dir, SumsFile), bad)
		if _, err := ReadSums(dir); err == nil {
			t.Errorf("ReadSums accepted %q", bad)
		}
	}
}

// TestSBOMFromABinary reads this test binary's own build information, as
// the release reads each binary's.
func TestSBOMFromABinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "statewright-linux-amd64"), string(data))
	write(t, filepath.Join(dir, "statewright-image-linux-amd64.tar"), "not really an image")
	s := Stamp{Version: "v1.2.3", Commit: strings.Repeat("ab", 20), Date: "2026-01-02T03:04:05Z"}
	files := []string{"statewright-image-linux-amd64.tar", "statewright-linux-amd64"}
	if err := WriteSBOM(dir, s, files); err != nil {
		t.Fatal(err)
	}
	bom, err := ReadSBOM(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := bom.StampOf(); got.Version != s.Version || got.Commit != s.Commit || got.Date != s.Date {
		t.Errorf("stamp = %+v, want %+v", got, s)
	}
	byRef := map[string]Component{}
	for _, c := range bom.Components {
		byRef[c.BOMRef] = c
	}
	bin := byRef["file:statewright-linux-amd64"]
	if bin.Type != "application" || len(bin.Hashes) != 1 || len(bin.Hashes[0].Content) != 64 {
		t.Errorf("binary component = %+v", bin)
	}
	if byRef["file:statewright-image-linux-amd64.tar"].Type != "container" {
		t.Errorf("image component = %+v", byRef["file:statewright-image-linux-amd64.tar"])
	}
	// Every binary links std; every module with a go.sum hash gets it as
	// a hex SHA-256.
	var std bool
	for _, c := range bom.Components {
		if c.Name == "std" && strings.HasPrefix(c.PURL, "pkg:golang/std@go") {
			std = true
		}
		if c.Type == "library" && c.Name != "std" && (len(c.Hashes) != 1 || len(c.Hashes[0].Content) != 64) {
			t.Errorf("module %s has no SHA-256 from its go.sum hash: %+v", c.Name, c.Hashes)
		}
	}
	if !std {
		t.Errorf("no std component")
	}
	if !strings.HasPrefix(bom.SerialNumber, "urn:uuid:") || len(bom.SerialNumber) != len("urn:uuid:")+36 {
		t.Errorf("serial number %q", bom.SerialNumber)
	}
	// The same release gives the same document.
	first, _ := os.ReadFile(filepath.Join(dir, SBOMFile))
	if err := WriteSBOM(dir, s, files); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(filepath.Join(dir, SBOMFile))
	if !bytes.Equal(first, second) {
		t.Errorf("two SBOMs of one release differ")
	}
}

func testImageSpec(t *testing.T) ImageSpec {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "statewright")
	write(t, bin, "#!/bin/sh\necho fake\n")
	return ImageSpec{Arch: "amd64", Stamp: Stamp{Version: "v1.2.3+dirty", Commit: "c0ffee", Date: "2026-01-02T03:04:05Z"}, Binaries: map[string]string{"statewright": bin}}
}

func TestImageIsDeterministicAndReadsBack(t *testing.T) {
	spec := testImageSpec(t)
	var a, b bytes.Buffer
	if err := WriteImage(&a, spec); err != nil {
		t.Fatal(err)
	}
	if err := WriteImage(&b, spec); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two images of one spec differ")
	}
	path := filepath.Join(t.TempDir(), "img.tar")
	write(t, path, a.String())
	im, err := ReadImage(path)
	if err != nil {
		t.Fatal(err)
	}
	c := im.Config.Config
	if im.Config.Architecture != "amd64" || c.User != ImageUser || c.Entrypoint[0] != "/usr/local/bin/statewright" ||
		!slices.Equal(c.Cmd, []string{"serve", "--listen", ImageListen}) || c.Healthcheck == nil || c.Healthcheck.Test[2] != "healthcheck" {
		t.Errorf("config = %+v", im.Config)
	}
	if im.Index.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v1.2.3-dirty" {
		t.Errorf("ref name = %v", im.Index.Manifests[0].Annotations)
	}
	root := t.TempDir()
	if err := im.Unpack(root); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "usr/local/bin/statewright"))
	if err != nil || string(got) != "#!/bin/sh\necho fake\n" {
		t.Errorf("binary in the layer = %q, %v", got, err)
	}
	for p, mode := range map[string]os.FileMode{"data": os.ModeDir | 0o700, "tmp": os.ModeDir | os.ModeSticky | 0o777, "usr/local/bin/statewright": 0o755} {
		fi, err := os.Stat(filepath.Join(root, p))
		if err != nil || fi.Mode() != mode {
			t.Errorf("%s: mode %v, %v; want %v", p, fi.Mode(), err, mode)
		}
	}
}

// TestReadImageCatchesTampering changes one byte of each blob in turn:
// every change is refused.
func TestReadImageCatchesTampering(t *testing.T) {
	var img bytes.Buffer
	if err := WriteImage(&img, testImageSpec(t)); err != nil {
		t.Fatal(err)
	}
	var names []string
	tr := tar.NewReader(bytes.NewReader(img.Bytes()))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			names = append(names, h.Name)
		}
	}
	if len(names) != 6 {
		t.Fatalf("image files = %v", names)
	}
	for _, victim := range names {
		t.Run(victim, func(t *testing.T) {
			var out bytes.Buffer
			tw := tar.NewWriter(&out)
			tr := tar.NewReader(bytes.NewReader(img.Bytes()))
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				data, _ := io.ReadAll(tr)
				if h.Name == victim {
					data = bytes.Clone(data)
					data[tamperAt(data)] ^= 0x20
				}
				tw.WriteHeader(h)
				tw.Write(data)
			}
			tw.Close()
			path := filepath.Join(t.TempDir(), "img.tar")
			write(t, path, out.String())
			if _, err := ReadImage(path); err == nil {
				t.Errorf("a changed %s was accepted", victim)
			}
		})
	}
}

// tamperAt picks a byte whose change matters: inside a digest of a JSON
// document, else inside the layout version, else the middle of a blob
// (whose digest then fails). encoding/json matches keys without regard to
// case, so flipping the case of a key changes nothing an engine reads.
func tamperAt(data []byte) int {
	if i := bytes.Index(data, []byte("sha256")); i >= 0 && json.Valid(data) {
		return i + 10
	}
	if i := bytes.Index(data, []byte(`"1.0.0"`)); i >= 0 {
		return i + 1
	}
	return len(data) / 2
}

func TestUnpackRefusesEscapes(t *testing.T) {
	for _, name := range []string{"../evil", "/abs/evil"} {
		var raw bytes.Buffer
		tw := tar.NewWriter(&raw)
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: 1})
		tw.Write([]byte("x"))
		tw.Close()
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(raw.Bytes())
		zw.Close()
		im := &Image{Layer: gz.Bytes()}
		if err := im.Unpack(t.TempDir()); err == nil || !strings.Contains(err.Error(), "leaves the root") {
			t.Errorf("Unpack(%q) = %v", name, err)
		}
	}
}

func TestVersionLine(t *testing.T) {
	s := Stamp{Version: "v1.2.3", Commit: "0123456789abcdef", Date: "2026-01-02T03:04:05Z"}
	lt := Target{"linux", "amd64"}
	if err := checkVersionOutput("statewright v1.2.3 (commit 0123456789ab, 2026-01-02T03:04:05Z, go1.26.8 linux/amd64)\n", s, lt); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{
		"statewright devel (go1.26.8 linux/amd64)",
		"statewright v1.2.4 (commit 0123456789ab, 2026-01-02T03:04:05Z, go1.26.8 linux/amd64)",
		"statewright v1.2.3 (commit 0123456789ab, 2026-01-02T03:04:05Z, go1.26.8 linux/arm64)",
	} {
		if checkVersionOutput(bad, s, lt) == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
