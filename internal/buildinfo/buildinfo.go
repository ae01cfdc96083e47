// Package buildinfo says which build of statewright is running: the
// version, commit and date a release build stamps into every binary with
// -ldflags -X (scripts/release.sh), else what the Go toolchain recorded (a
// `go install` of a tagged module, or a checkout built with VCS stamping).
//
// It imports nothing but the standard library and does no work at init, so
// every binary of the product (the main one, a thin hook client) can link
// it for free.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by the release build:
//
//	-X github.com/statewright-go/statewright/internal/buildinfo.version=v1.2.3
//	-X github.com/statewright-go/statewright/internal/buildinfo.commit=<40 hex>
//	-X github.com/statewright-go/statewright/internal/buildinfo.date=2026-01-02T15:04:05Z
var version, commit, date string

// Info describes a build.
type Info struct {
	// Version is the release version (v1.2.3), the module version of a
	// `go install`, or "devel".
	Version string `json:"version"`
	// Commit is the source commit ("" when unknown).
	Commit string `json:"commit,omitempty"`
	// Date is the commit's time in RFC 3339, UTC ("" when unknown): a
	// release is stamped with its commit's time, never the build's, so
	// that two builds of one commit are identical.
	Date string `json:"date,omitempty"`
	// Modified is true when the build's tree had uncommitted changes
	// (known only from Go's VCS stamping).
	Modified bool `json:"modified,omitempty"`
	// Go is the toolchain that built the binary.
	Go string `json:"go"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// Get returns the running binary's build information.
func Get() Info {
	i := Info{Version: version, Commit: commit, Date: date, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if i.Version == "" {
			i.Version = "devel"
		}
		return i
	}
	if i.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		i.Version = bi.Main.Version
	}
	if i.Version == "" {
		i.Version = "devel"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if i.Commit == "" {
				i.Commit = s.Value
			}
		case "vcs.time":
			if i.Date == "" {
				i.Date = s.Value
			}
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
	return i
}

// Version is the running binary's version (Get().Version).
func Version() string { return Get().Version }

// String is the one-line form `statewright version` and `--version` print:
//
//	statewright v1.2.3 (commit 0123456789ab, 2026-01-02T15:04:05Z, go1.26.8 linux/amd64)
func (i Info) String() string {
	s := "statewright " + i.Version + " ("
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += "commit " + c
		if i.Modified {
			s += "+modified"
		}
		s += ", "
	}
	if i.Date != "" {
		s += i.Date + ", "
	}
	return s + fmt.Sprintf("%s %s)", i.Go, i.Platform)
}
