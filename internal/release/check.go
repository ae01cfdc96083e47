package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Image is an image archive read back and verified against its own
// digests.
type Image struct {
	Index    Index
	Manifest Manifest
	Config   ImageConfig
	// Layer is the one layer, compressed as stored.
	Layer []byte
}

// ReadImage reads the image archive at path and checks it as an engine
// would before running it: the layout version, one manifest for one
// linux platform, every blob's digest and size, the layer's uncompressed
// digest against the config's diff_id, and docker's manifest.json naming
// the same blobs.
func ReadImage(path string) (*Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Typeflag == tar.TypeDir {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("%s: %s: not a regular file", path, h.Name)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, h.Name, err)
		}
		files[h.Name] = b
	}
	var layout struct {
		Version string `json:"imageLayoutVersion"`
	}
	if err := json.Unmarshal(files["oci-layout"], &layout); err != nil || layout.Version != "1.0.0" {
		return nil, fmt.Errorf("%s: no oci-layout 1.0.0", path)
	}
	blob := func(d Descriptor, mediaType string) ([]byte, error) {
		if d.MediaType != mediaType {
			return nil, fmt.Errorf("%s: %s has media type %q, want %q", path, d.Digest, d.MediaType, mediaType)
		}
		hex, ok := strings.CutPrefix(d.Digest, "sha256:")
		if !ok || len(hex) != 64 {
			return nil, fmt.Errorf("%s: digest %q is not sha256", path, d.Digest)
		}
		b, ok := files["blobs/sha256/"+hex]
		if !ok {
			return nil, fmt.Errorf("%s: blob %s is missing", path, d.Digest)
		}
		if got := digestOf(b); got != d.Digest || int64(len(b)) != d.Size {
			return nil, fmt.Errorf("%s: blob %s has digest %s and size %d, want size %d", path, d.Digest, got, len(b), d.Size)
		}
		return b, nil
	}
	im := &Image{}
	if err := json.Unmarshal(files["index.json"], &im.Index); err != nil {
		return nil, fmt.Errorf("%s: index.json: %w", path, err)
	}
	if im.Index.SchemaVersion != 2 || len(im.Index.Manifests) != 1 {
		return nil, fmt.Errorf("%s: index.json: want schema 2 with one manifest", path)
	}
	md := im.Index.Manifests[0]
	mb, err := blob(md, mediaTypeManifest)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(mb, &im.Manifest); err != nil {
		return nil, fmt.Errorf("%s: manifest: %w", path, err)
	}
	if len(im.Manifest.Layers) != 1 {
		return nil, fmt.Errorf("%s: manifest: want one layer, got %d", path, len(im.Manifest.Layers))
	}
	cb, err := blob(im.Manifest.Config, mediaTypeConfig)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(cb, &im.Config); err != nil {
		return nil, fmt.Errorf("%s: config: %w", path, err)
	}
	if md.Platform == nil || md.Platform.OS != "linux" || im.Config.OS != "linux" || md.Platform.Architecture != im.Config.Architecture {
		return nil, fmt.Errorf("%s: the index's platform %+v does not match the config's %s/%s", path, md.Platform, im.Config.OS, im.Config.Architecture)
	}
	if im.Layer, err = blob(im.Manifest.Layers[0], mediaTypeLayer); err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(im.Layer))
	if err != nil {
		return nil, fmt.Errorf("%s: layer: %w", path, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: layer: %w", path, err)
	}
	if len(im.Config.RootFS.DiffIDs) != 1 || im.Config.RootFS.DiffIDs[0] != digestOf(raw) {
		return nil, fmt.Errorf("%s: the layer's uncompressed digest %s is not the config's diff_id %v", path, digestOf(raw), im.Config.RootFS.DiffIDs)
	}
	var dm []dockerManifest
	if err := json.Unmarshal(files["manifest.json"], &dm); err != nil || len(dm) != 1 ||
		dm[0].Config != "blobs/sha256/"+strings.TrimPrefix(im.Manifest.Config.Digest, "sha256:") ||
		!slices.Equal(dm[0].Layers, []string{"blobs/sha256/" + strings.TrimPrefix(im.Manifest.Layers[0].Digest, "sha256:")}) ||
		!slices.Equal(dm[0].RepoTags, []string{"statewright:" + md.Annotations["org.opencontainers.image.ref.name"]}) {
		return nil, fmt.Errorf("%s: manifest.json does not name the manifest's config, layer and tag", path)
	}
	return im, nil
}

// Unpack extracts the image's layer into dir, as a container engine lays
// out a root filesystem: directories and regular files only, no path
// outside dir, modes kept (owners are left to the caller's uid).
func (im *Image) Unpack(dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(im.Layer))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("layer entry %q leaves the root", h.Name)
		}
		p := filepath.Join(dir, name)
		mode := os.FileMode(h.Mode).Perm()
		if h.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			if err := os.Chmod(p, mode); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("layer entry %q: type %c is not expected in this image", h.Name, h.Typeflag)
		}
	}
}

// CheckOptions configure Check.
type CheckOptions struct {
	// Dir is the release directory.
	Dir string
	// Targets the release was built for (default Targets).
	Targets []Target
	// RequireContainer fails the check when the image cannot be run as a
	// container here (bubblewrap missing or refused); otherwise that part
	// is reported and skipped.
	RequireContainer bool
	// Log receives one line per check (nil: discard).
	Log io.Writer
}

// VersionLine is the start and end of the line `statewright --version`
// prints for stamp s on platform t (the Go version is between them).
func VersionLine(s Stamp, t Target) (prefix, suffix string) {
	c := s.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	return fmt.Sprintf("statewright %s (commit %s, %s, go", s.Version, c, s.Date), " " + t.String() + ")"
}

func checkVersionOutput(out string, s Stamp, t Target) error {
	line := strings.TrimSpace(out)
	prefix, suffix := VersionLine(s, t)
	if !strings.HasPrefix(line, prefix) || !strings.HasSuffix(line, suffix) || strings.Contains(line, "\n") {
		return fmt.Errorf("printed %q, want %q…%q", line, prefix, suffix)
	}
	return nil
}

// Check checks the release in opts.Dir: SHA256SUMS verifies and lists
// every file; the SBOM names every file with the same digest; every
// binary and image is there; the binaries that can run here print the
// stamped version with --version and `version`; each image that can run
// here passes ReadImage, unpacks, and runs as a container would (see
// runImage).
func Check(ctx context.Context, opts CheckOptions) error {
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	targets := opts.Targets
	if len(targets) == 0 {
		targets = Targets
	}
	names, err := VerifySums(opts.Dir)
	if err != nil {
		return err
	}
	logf("ok   %s verifies (%d files)", SumsFile, len(names))
	sums, err := ReadSums(opts.Dir)
	if err != nil {
		return err
	}
	bom, err := ReadSBOM(opts.Dir)
	if err != nil {
		return err
	}
	inBOM := map[string]string{}
	for _, c := range bom.Components {
		if name, ok := strings.CutPrefix(c.BOMRef, "file:"); ok && len(c.Hashes) == 1 {
			inBOM[name] = c.Hashes[0].Content
		}
	}
	for _, n := range names {
		if n != SBOMFile && inBOM[n] != sums[n] {
			return fmt.Errorf("%s: the SBOM records SHA-256 %q, %s says %s", n, inBOM[n], SumsFile, sums[n])
		}
	}
	stamp := bom.StampOf()
	logf("ok   %s describes every file of %s", SBOMFile, stamp.Version)
	for _, t := range targets {
		for _, b := range Binaries {
			name := FileName(b, t)
			if _, ok := sums[name]; !ok {
				return fmt.Errorf("%s is missing from the release", name)
			}
			if !t.Native() {
				continue
			}
			for _, args := range [][]string{{"--version"}, {"version"}} {
				out, err := exec.CommandContext(ctx, filepath.Join(opts.Dir, name), args...).Output()
				if err != nil {
					return fmt.Errorf("%s %s: %w", name, args[0], err)
				}
				if err := checkVersionOutput(string(out), stamp, t); err != nil {
					return fmt.Errorf("%s %s %w", name, args[0], err)
				}
			}
			logf("ok   %s --version and version print %s", name, stamp.Version)
		}
		if t.OS != "linux" {
			continue
		}
		img := ImageFileName(t.Arch)
		if _, ok := sums[img]; !ok {
			return fmt.Errorf("%s is missing from the release", img)
		}
		im, err := ReadImage(filepath.Join(opts.Dir, img))
		if err != nil {
			return err
		}
		logf("ok   %s is an OCI image layout whose digests verify", img)
		if !t.Native() {
			continue
		}
		if err := runImage(ctx, im, stamp, t, opts.RequireContainer, logf); err != nil {
			return fmt.Errorf("%s: %w", img, err)
		}
	}
	return nil
}

// runImage unpacks the image's layer and runs it: the binary from the
// layer prints the stamped version; then, under bubblewrap with the layer
// as the root filesystem (nothing of the host's), as the image's user,
// with the image's environment and working directory — what a container
// engine does — it creates a token in the /data volume, starts the
// image's command (serve, moved to a free loopback port) and runs the
// image's health check against it until it passes.
func runImage(ctx context.Context, im *Image, s Stamp, t Target, require bool, logf func(string, ...any)) error {
	root, err := os.MkdirTemp("", "statewright-image-root-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	if err := im.Unpack(root); err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	cfg := im.Config.Config
	if len(cfg.Entrypoint) != 1 || cfg.Healthcheck == nil || len(cfg.Healthcheck.Test) < 2 || cfg.Healthcheck.Test[0] != "CMD" {
		return fmt.Errorf("config: want one entrypoint and a CMD health check, got %+v", cfg)
	}
	bin := filepath.Join(root, cfg.Entrypoint[0])
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version from the unpacked layer: %w", cfg.Entrypoint[0], err)
	}
	if err := checkVersionOutput(string(out), s, t); err != nil {
		return fmt.Errorf("%s --version from the unpacked layer %w", cfg.Entrypoint[0], err)
	}
	logf("ok   the layer unpacks and its %s --version prints %s", cfg.Entrypoint[0], s.Version)

	why := containerUnavailable(ctx)
	if why != "" {
		if require {
			return fmt.Errorf("cannot run the image as a container here: %s", why)
		}
		logf("SKIP running the image as a container: %s", why)
		return nil
	}
	uid, gid, _ := strings.Cut(cfg.User, ":")
	container := func(ctx context.Context, argv ...string) *exec.Cmd {
		args := []string{"--unshare-all", "--unshare-user", "--share-net", "--die-with-parent", "--new-session",
			"--uid", uid, "--gid", gid, "--bind", root, "/", "--proc", "/proc", "--dev", "/dev",
			"--chdir", cfg.WorkingDir, "--"}
		cmd := exec.CommandContext(ctx, "bwrap", append(args, argv...)...)
		cmd.Env = cfg.Env
		return cmd
	}
	if out, err := container(ctx, cfg.Entrypoint[0], "tokens", "create", "--role", "agent", "--name", "release-check").CombinedOutput(); err != nil {
		return fmt.Errorf("container: tokens create: %w\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	listen := "127.0.0.1:" + port
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var serveOut bytes.Buffer
	serve := container(sctx, append(append(slices.Clone(cfg.Entrypoint), cfg.Cmd...), "--listen", listen)...)
	serve.Stdout, serve.Stderr = &serveOut, &serveOut
	if err := serve.Start(); err != nil {
		return fmt.Errorf("container: start serve: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- serve.Wait() }()
	health := append(slices.Clone(cfg.Healthcheck.Test[1:]), "--listen", listen)
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-done:
			return fmt.Errorf("container: serve exited before it was healthy: %v\n%s", err, serveOut.String())
		default:
		}
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		out, err := container(hctx, health...).CombinedOutput()
		cancel()
		if err == nil && strings.TrimSpace(string(out)) == "ok" {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("container: the health check never passed: %v: %s\nserve said: %s", err, out, serveOut.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// An engine sends the stop signal to the container's process itself
	// (bubblewrap does not forward signals): find serve under bwrap.
	if err := terminateDescendant(serve.Process.Pid, cfg.Entrypoint[0]); err != nil {
		return fmt.Errorf("container: stop serve: %w", err)
	}
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("container: serve did not stop cleanly on %s: %v\n%s", cfg.StopSignal, err, serveOut.String())
		}
	case <-time.After(30 * time.Second):
		stop()
		<-done
		return errors.New("container: serve did not stop within 30s of SIGTERM")
	}
	if _, err := os.Stat(filepath.Join(root, "data", "state", "statewright", "state.db")); err != nil {
		return fmt.Errorf("container: serve kept no store in the /data volume: %w", err)
	}
	logf("ok   the image runs as a container (bubblewrap, its layer as /, user %s): tokens create, serve, healthcheck passes, store in /data", cfg.User)
	return nil
}

// containerUnavailable says why bubblewrap cannot run a root filesystem
// with a user namespace here ("" when it can).
func containerUnavailable(ctx context.Context) string {
	if runtime.GOOS != "linux" {
		return "containers need Linux"
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		return "bubblewrap (bwrap) is not installed"
	}
	out, err := exec.CommandContext(ctx, "bwrap", "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "--", "/bin/true").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("bwrap cannot create namespaces: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return ""
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}
