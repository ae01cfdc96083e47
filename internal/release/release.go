// Package release builds statewright's release with nothing but the Go
// toolchain and git: reproducible binaries for every target, a CycloneDX
// SBOM, container images for `serve` written as OCI image layouts (no
// container engine needed), and SHA256SUMS; and it checks a built release
// (checksums, the native binaries' --version, the image run from its
// layer). scripts/release.sh drives it; docs/release.md describes the
// result.
//
// Binaries is the one list of the programs a release holds: a program the
// product gains (a thin hook client, a sandbox launcher) is added there and
// every step picks it up.
package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Module is the module path the release is built from.
const Module = "github.com/statewright-go/statewright"

// stampPkg is the package whose variables -ldflags -X sets.
const stampPkg = Module + "/internal/buildinfo"

// Target is one platform a release is built for.
type Target struct{ OS, Arch string }

func (t Target) String() string { return t.OS + "/" + t.Arch }

// Native reports whether t is the platform this process runs on (its
// binaries can be run here).
func (t Target) Native() bool { return t.OS == runtime.GOOS && t.Arch == runtime.GOARCH }

// Targets are the platforms of a release (docs/release.md). Windows binaries
// are built and their hook contract is tested; running on Windows is not
// claimed.
var Targets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// ParseTarget parses "os/arch" into one of Targets.
func ParseTarget(s string) (Target, error) {
	for _, t := range Targets {
		if t.String() == s {
			return t, nil
		}
	}
	names := make([]string, len(Targets))
	for i, t := range Targets {
		names[i] = t.String()
	}
	return Target{}, fmt.Errorf("unknown target %q (want one of %s)", s, strings.Join(names, ", "))
}

// Binary is one program of the product.
type Binary struct {
	// Name is the program's name (the file is Name-os-arch[.exe]).
	Name string
	// Package is the main package, relative to the module root.
	Package string
	// InImage puts the program into the container image, at
	// /usr/local/bin/Name.
	InImage bool
}

// Binaries are the programs every release holds, for every target.
var Binaries = []Binary{
	{Name: "statewright", Package: "./cmd/statewright", InImage: true},
	// The sandbox launcher: hooks use it when it sits next to statewright
	// (docs/sandbox.md). serve's image has no bubblewrap, so not there.
	{Name: "statewright-sandbox", Package: "./cmd/statewright-sandbox"},
	// The thin hook client: init writes it into the hooks when it sits
	// next to statewright (docs/hooks.md). serve takes HTTP hooks.
	{Name: "statewright-hook", Package: "./cmd/statewright-hook"},
}

// FileName is the release file of b for t: statewright-linux-amd64,
// statewright-windows-arm64.exe.
func FileName(b Binary, t Target) string {
	n := b.Name + "-" + t.OS + "-" + t.Arch
	if t.OS == "windows" {
		n += ".exe"
	}
	return n
}

// Artifact is one built binary.
type Artifact struct {
	Binary Binary
	Target Target
	// Path is the file's path.
	Path string
}

// BuildOptions configure Build.
type BuildOptions struct {
	// Dir is the module root (the source tree).
	Dir string
	// Out is the directory the binaries are written to.
	Out string
	// Stamp is the version every binary carries.
	Stamp Stamp
	// Targets to build (default Targets).
	Targets []Target
	// GoCache is the build cache (default the go command's own). Every
	// target shares it.
	GoCache string
	// Log receives one line per binary (nil: discard).
	Log io.Writer
}

// LDFlags are the linker flags of a release build: no symbol table or
// DWARF, an empty build id, and the version stamp.
func LDFlags(s Stamp) string {
	return strings.Join([]string{
		"-s", "-w", "-buildid=",
		"-X", stampPkg + ".version=" + s.Version,
		"-X", stampPkg + ".commit=" + s.Commit,
		"-X", stampPkg + ".date=" + s.Date,
	}, " ")
}

// BuildArgs are the go build arguments of b for a release with stamp s,
// writing to out.
func BuildArgs(b Binary, s Stamp, out string) []string {
	return []string{"build", "-trimpath", "-buildvcs=false", "-mod=readonly", "-ldflags=" + LDFlags(s), "-o", out, b.Package}
}

// BuildEnv is the environment of a release build for t: the caller's,
// with every variable that changes the output set to a fixed value (no
// cgo, baseline instruction sets, no experiments, no workspace, the local
// toolchain only).
func BuildEnv(base []string, t Target, gocache string) []string {
	set := map[string]string{
		"CGO_ENABLED": "0", "GOOS": t.OS, "GOARCH": t.Arch,
		"GOAMD64": "v1", "GOARM64": "v8.0", "GOEXPERIMENT": "", "GOFLAGS": "",
		"GOWORK": "off", "GOTOOLCHAIN": "local",
	}
	if gocache != "" {
		set["GOCACHE"] = gocache
	}
	var env []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			env = append(env, kv)
		}
	}
	for _, k := range []string{"CGO_ENABLED", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "GOEXPERIMENT", "GOFLAGS", "GOWORK", "GOTOOLCHAIN", "GOCACHE"} {
		if v, ok := set[k]; ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Build builds every binary for every target into opts.Out.
func Build(ctx context.Context, opts BuildOptions) ([]Artifact, error) {
	if opts.Stamp.Version == "" {
		return nil, errors.New("build: no version")
	}
	targets := opts.Targets
	if len(targets) == 0 {
		targets = Targets
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, err
	}
	var arts []Artifact
	for _, t := range targets {
		for _, b := range Binaries {
			out, err := filepath.Abs(filepath.Join(opts.Out, FileName(b, t)))
			if err != nil {
				return nil, err
			}
			if opts.Log != nil {
				fmt.Fprintf(opts.Log, "build %s %s\n", t, filepath.Base(out))
			}
			cmd := exec.CommandContext(ctx, "go", BuildArgs(b, opts.Stamp, out)...)
			cmd.Dir = opts.Dir
			cmd.Env = BuildEnv(os.Environ(), t, opts.GoCache)
			if msg, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("go build %s for %s: %w\n%s", b.Package, t, err, msg)
			}
			arts = append(arts, Artifact{Binary: b, Target: t, Path: out})
		}
	}
	return arts, nil
}
