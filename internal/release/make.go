package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// Options configure Make.
type Options struct {
	// Dir is the module root.
	Dir string
	// Out is the release directory. It must be absent, empty, or an older
	// release (a directory holding SHA256SUMS), which is replaced.
	Out string
	// Stamp is the version the release carries.
	Stamp Stamp
	// Targets to build (default Targets).
	Targets []Target
	// GoCache is the build cache every target shares (default the go
	// command's own).
	GoCache string
	// Log receives progress lines (nil: discard).
	Log io.Writer
}

// Make builds a release into opts.Out: the binaries of every target, an
// image for each linux target, the SBOM, then SHA256SUMS over all of them.
func Make(ctx context.Context, opts Options) error {
	if len(opts.Targets) == 0 {
		opts.Targets = Targets
	}
	if err := prepareOut(opts.Out); err != nil {
		return err
	}
	arts, err := Build(ctx, BuildOptions{Dir: opts.Dir, Out: opts.Out, Stamp: opts.Stamp, Targets: opts.Targets, GoCache: opts.GoCache, Log: opts.Log})
	if err != nil {
		return err
	}
	var files []string
	images := map[string]map[string]string{} // arch → name → path
	for _, a := range arts {
		files = append(files, filepath.Base(a.Path))
		if a.Target.OS == "linux" && a.Binary.InImage {
			if images[a.Target.Arch] == nil {
				images[a.Target.Arch] = map[string]string{}
			}
			images[a.Target.Arch][a.Binary.Name] = a.Path
		}
	}
	for _, t := range opts.Targets {
		if t.OS != "linux" || images[t.Arch] == nil {
			continue
		}
		name := ImageFileName(t.Arch)
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "image %s\n", name)
		}
		if err := WriteImageFile(filepath.Join(opts.Out, name), ImageSpec{Arch: t.Arch, Stamp: opts.Stamp, Binaries: images[t.Arch]}); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		files = append(files, name)
	}
	slices.Sort(files)
	if opts.Log != nil {
		fmt.Fprintf(opts.Log, "sbom %s\n", SBOMFile)
	}
	if err := WriteSBOM(opts.Out, opts.Stamp, files); err != nil {
		return fmt.Errorf("sbom: %w", err)
	}
	return WriteSums(opts.Out)
}

// prepareOut makes out an empty directory, replacing an older release.
func prepareOut(out string) error {
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case len(entries) == 0:
	default:
		if _, err := os.Stat(filepath.Join(out, SumsFile)); err != nil {
			return fmt.Errorf("%s is not empty and holds no release (%s): refusing to replace it", out, SumsFile)
		}
		if err := os.RemoveAll(out); err != nil {
			return err
		}
	}
	return os.MkdirAll(out, 0o755)
}

// ReproOptions configure Repro.
type ReproOptions struct {
	// Dir is the module root the release was built from.
	Dir string
	// Out is the release directory holding the binaries to compare.
	Out string
	// Stamp is the release's stamp.
	Stamp Stamp
	// Target is the one target rebuilt.
	Target Target
	// Log receives progress lines (nil: discard).
	Log io.Writer
}

// ReproResult is what Repro compared.
type ReproResult struct {
	File          string
	First, Second string // hex SHA-256
}

// Repro rebuilds opts.Target's binaries from a copy of the source tree at
// another path, with an empty build cache (so nothing is reused from the
// first build), and compares them with the release's. A difference is an
// error naming both digests.
func Repro(ctx context.Context, opts ReproOptions) ([]ReproResult, error) {
	tmp, err := os.MkdirTemp("", "statewright-repro-")
	if err != nil {
		return nil, err
	}
	defer func() {
		// The build cache's files are read-only.
		_ = filepath.WalkDir(tmp, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(tmp)
	}()
	src := filepath.Join(tmp, "elsewhere", "src")
	if err := copyTree(ctx, opts.Dir, src); err != nil {
		return nil, fmt.Errorf("copy the source: %w", err)
	}
	out := filepath.Join(tmp, "out")
	if opts.Log != nil {
		fmt.Fprintf(opts.Log, "repro: rebuild %s in %s with an empty build cache\n", opts.Target, src)
	}
	arts, err := Build(ctx, BuildOptions{Dir: src, Out: out, Stamp: opts.Stamp, Targets: []Target{opts.Target}, GoCache: filepath.Join(tmp, "gocache")})
	if err != nil {
		return nil, err
	}
	var res []ReproResult
	for _, a := range arts {
		name := filepath.Base(a.Path)
		first, err := FileSHA256(filepath.Join(opts.Out, name))
		if err != nil {
			return nil, err
		}
		second, err := FileSHA256(a.Path)
		if err != nil {
			return nil, err
		}
		res = append(res, ReproResult{File: name, First: first, Second: second})
		if first != second {
			return res, fmt.Errorf("%s is not reproducible: SHA-256 %s in the release, %s rebuilt elsewhere", name, first, second)
		}
	}
	return res, nil
}

// copyTree copies the files git would build from (tracked, and untracked
// but not ignored) from dir to dst.
func copyTree(ctx context.Context, dir, dst string) error {
	cmd := exec.CommandContext(ctx, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = dir
	list, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, name := range bytes.Split(bytes.TrimSuffix(list, []byte{0}), []byte{0}) {
		rel := string(name)
		src := filepath.Join(dir, rel)
		fi, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(src)
			if err != nil {
				return err
			}
			if err := os.WriteFile(to, data, fi.Mode().Perm()); err != nil {
				return err
			}
		}
	}
	return nil
}
