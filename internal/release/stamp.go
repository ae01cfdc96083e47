package release

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Stamp is the version a release's binaries carry.
type Stamp struct {
	// Version is a semantic version: the release tag (v1.2.3), or a Go
	// pseudo-version of the commit; "+dirty" marks a tree with
	// uncommitted changes.
	Version string
	// Commit is the full commit hash.
	Commit string
	// Date is the commit's time (or $SOURCE_DATE_EPOCH), RFC 3339 in UTC:
	// never the build's time, so two builds of one commit are identical.
	Date string
	// Dirty is true when the tree had uncommitted changes.
	Dirty bool
}

// Time is the stamp's date as a time (the zero time when it has none).
func (s Stamp) Time() time.Time {
	t, _ := time.Parse(time.RFC3339, s.Date)
	return t
}

var semverTag = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$`)

// StampFromGit derives the stamp of the tree at dir. version, when not
// empty, is used as it is (it must be a semantic version: v1.2.3).
func StampFromGit(ctx context.Context, dir, version string) (Stamp, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(ee.Stderr)))
			}
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	var s Stamp
	var err error
	if s.Commit, err = git("rev-parse", "HEAD"); err != nil {
		return Stamp{}, err
	}
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		if epoch, err = git("log", "-1", "--format=%ct", "HEAD"); err != nil {
			return Stamp{}, err
		}
	}
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return Stamp{}, fmt.Errorf("commit time %q: %w", epoch, err)
	}
	s.Date = time.Unix(sec, 0).UTC().Format(time.RFC3339)
	// Ignored files (dist/, bin/) do not count; untracked ones do, since a
	// stray .go file changes the build.
	status, err := git("status", "--porcelain")
	if err != nil {
		return Stamp{}, err
	}
	s.Dirty = status != ""
	if version != "" {
		if !semverTag.MatchString(strings.SplitN(version, "+", 2)[0]) {
			return Stamp{}, fmt.Errorf("version %q is not a semantic version (v1.2.3)", version)
		}
		s.Version = version
		return s, nil
	}
	exact, _ := git("describe", "--tags", "--exact-match", "--match", "v[0-9]*", "HEAD")
	base, _ := git("describe", "--tags", "--abbrev=0", "--match", "v[0-9]*", "HEAD")
	s.Version = deriveVersion(exact, base, s.Time(), s.Commit)
	if s.Dirty {
		s.Version += "+dirty"
	}
	return s, nil
}

// deriveVersion is the release version of a commit: its tag when it has
// one (exact), else a Go pseudo-version after the latest tag (base, "" when
// none), as `go list -m` would name the commit.
func deriveVersion(exact, base string, t time.Time, commit string) string {
	if semverTag.MatchString(exact) {
		return exact
	}
	short := commit
	if len(short) > 12 {
		short = short[:12]
	}
	ts := t.UTC().Format("20060102150405")
	m := semverTag.FindStringSubmatch(base)
	switch {
	case m == nil:
		return "v0.0.0-" + ts + "-" + short
	case m[4] != "": // v1.2.3-pre → v1.2.3-pre.0.TS-HASH
		return base + ".0." + ts + "-" + short
	default: // v1.2.3 → v1.2.4-0.TS-HASH
		patch, _ := strconv.Atoi(m[3])
		return fmt.Sprintf("v%s.%s.%d-0.%s-%s", m[1], m[2], patch+1, ts, short)
	}
}

// DockerTag is version as an image tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}):
// "+" becomes "-".
func DockerTag(version string) string {
	t := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		}
		return '-'
	}, version)
	if len(t) > 128 {
		t = t[:128]
	}
	return t
}
