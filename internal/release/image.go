package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"time"
)

// The container image (docs/release.md): `FROM scratch` with the release's
// linux binaries, written by this file as an OCI image layout in a tar
// archive (the layout `docker save` also writes, plus its manifest.json),
// so no container engine or base-image registry is needed to build it.
// Loading: `docker load -i`, `podman load -i`, `skopeo copy
// oci-archive:FILE …`. docs/release.md has the details.

// Media types of the OCI image specification (v1.1).
const (
	mediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	mediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	mediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// Image facts users rely on (docs/release.md, contrib/deploy).
const (
	// ImageBinDir holds the image's binaries.
	ImageBinDir = "/usr/local/bin"
	// ImageUser is the unprivileged user and group the image runs as.
	ImageUser = "65532:65532"
	// ImageDataDir is the volume for the store and the token file.
	ImageDataDir = "/data"
	// ImageListen is the address serve listens on in the image.
	ImageListen = "0.0.0.0:8377"
)

// ImageFileName is the image archive of arch: statewright-image-linux-amd64.tar.
func ImageFileName(arch string) string { return "statewright-image-linux-" + arch + ".tar" }

// Descriptor points at a blob (OCI image spec, descriptor).
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *Platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Platform is a descriptor's platform.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// Index is an OCI image index (index.json).
type Index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

// Manifest is an OCI image manifest.
type Manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Config        Descriptor        `json:"config"`
	Layers        []Descriptor      `json:"layers"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// ImageConfig is an OCI image configuration.
type ImageConfig struct {
	Created      string          `json:"created"`
	Architecture string          `json:"architecture"`
	OS           string          `json:"os"`
	Config       ContainerConfig `json:"config"`
	RootFS       RootFS          `json:"rootfs"`
	History      []History       `json:"history"`
}

// ContainerConfig is how a container of the image runs. Healthcheck is
// Docker's field (the OCI specification has none; engines that do not
// know it ignore it).
type ContainerConfig struct {
	User         string              `json:"User"`
	Env          []string            `json:"Env"`
	Entrypoint   []string            `json:"Entrypoint"`
	Cmd          []string            `json:"Cmd"`
	WorkingDir   string              `json:"WorkingDir"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts"`
	Volumes      map[string]struct{} `json:"Volumes"`
	Labels       map[string]string   `json:"Labels"`
	StopSignal   string              `json:"StopSignal"`
	Healthcheck  *Healthcheck        `json:"Healthcheck,omitempty"`
}

// Healthcheck is Docker's image health check (durations in nanoseconds).
type Healthcheck struct {
	Test        []string      `json:"Test"`
	Interval    time.Duration `json:"Interval"`
	Timeout     time.Duration `json:"Timeout"`
	StartPeriod time.Duration `json:"StartPeriod"`
	Retries     int           `json:"Retries"`
}

// RootFS lists the layers' uncompressed digests.
type RootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

// History records how the image was made.
type History struct {
	Created   string `json:"created"`
	CreatedBy string `json:"created_by"`
}

// dockerManifest is one entry of the manifest.json `docker load` reads.
type dockerManifest struct {
	Config   string   `json:"Config"`
	RepoTags []string `json:"RepoTags"`
	Layers   []string `json:"Layers"`
}

// ImageSpec is what goes into an image.
type ImageSpec struct {
	Arch  string
	Stamp Stamp
	// Binaries maps a program's name to its linux/Arch binary.
	Binaries map[string]string
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// imageLayer is the image's one layer as an uncompressed tar: the
// directories serve needs (a writable /data for the store and tokens, a
// /tmp), passwd and group entries for the unprivileged user, and the
// binaries. Every entry has the commit's time and fixed owners, so the
// layer depends only on the binaries and the stamp.
func imageLayer(spec ImageSpec, names []string) ([]byte, error) {
	mtime := spec.Stamp.Time()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, uid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: uid, Gid: uid, ModTime: mtime, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, d := range []struct {
		name string
		mode int64
		uid  int
	}{
		{"data", 0o700, 65532}, {"etc", 0o755, 0}, {"tmp", 0o1777, 0},
		{"usr", 0o755, 0}, {"usr/local", 0o755, 0}, {"usr/local/bin", 0o755, 0},
	} {
		if err := dir(d.name, d.mode, d.uid); err != nil {
			return nil, err
		}
	}
	if err := file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/data:/sbin/nologin\n")); err != nil {
		return nil, err
	}
	if err := file("etc/group", 0o644, []byte("root:x:0:\nnonroot:x:65532:\n")); err != nil {
		return nil, err
	}
	for _, name := range names {
		data, err := os.ReadFile(spec.Binaries[name])
		if err != nil {
			return nil, err
		}
		if err := file(path.Join(ImageBinDir[1:], name), 0o755, data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// imageConfig is the image's configuration.
func imageConfig(spec ImageSpec, diffID string) ImageConfig {
	bin := ImageBinDir + "/statewright"
	return ImageConfig{
		Created: spec.Stamp.Date, Architecture: spec.Arch, OS: "linux",
		Config: ContainerConfig{
			User: ImageUser,
			Env: []string{
				"PATH=" + ImageBinDir,
				"HOME=" + ImageDataDir,
				"XDG_STATE_HOME=" + ImageDataDir + "/state",
				"XDG_CONFIG_HOME=" + ImageDataDir + "/config",
				"XDG_CACHE_HOME=" + ImageDataDir + "/cache",
				"TMPDIR=/tmp",
			},
			Entrypoint:   []string{bin},
			Cmd:          []string{"serve", "--listen", ImageListen},
			WorkingDir:   ImageDataDir,
			ExposedPorts: map[string]struct{}{"8377/tcp": {}},
			Volumes:      map[string]struct{}{ImageDataDir: {}},
			Labels:       imageAnnotations(spec.Stamp),
			StopSignal:   "SIGTERM",
			Healthcheck: &Healthcheck{
				Test:     []string{"CMD", bin, "healthcheck", "--listen", ImageListen},
				Interval: 30 * time.Second, Timeout: 5 * time.Second, StartPeriod: 5 * time.Second, Retries: 3,
			},
		},
		RootFS:  RootFS{Type: "layers", DiffIDs: []string{diffID}},
		History: []History{{Created: spec.Stamp.Date, CreatedBy: "statewright release: FROM scratch, the linux/" + spec.Arch + " binaries (internal/release)"}},
	}
}

func imageAnnotations(s Stamp) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "statewright",
		"org.opencontainers.image.description": "statewright serve: agent tool calls decided by a state machine",
		"org.opencontainers.image.source":      "https://" + Module,
		"org.opencontainers.image.version":     s.Version,
		"org.opencontainers.image.revision":    s.Commit,
		"org.opencontainers.image.created":     s.Date,
	}
}

// WriteImage writes the image of spec as an OCI image layout in a tar
// archive to w. The same spec gives the same bytes.
func WriteImage(w io.Writer, spec ImageSpec) error {
	var names []string
	for _, b := range Binaries {
		if b.InImage {
			if _, ok := spec.Binaries[b.Name]; !ok {
				return fmt.Errorf("image: no linux/%s binary of %s", spec.Arch, b.Name)
			}
			names = append(names, b.Name)
		}
	}
	layerTar, err := imageLayer(spec, names)
	if err != nil {
		return fmt.Errorf("image layer: %w", err)
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression) // no name, zero mtime: deterministic
	if err != nil {
		return err
	}
	if _, err := zw.Write(layerTar); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	layer := gz.Bytes()
	config, err := json.Marshal(imageConfig(spec, digestOf(layerTar)))
	if err != nil {
		return err
	}
	manifest, err := json.Marshal(Manifest{
		SchemaVersion: 2, MediaType: mediaTypeManifest,
		Config:      Descriptor{MediaType: mediaTypeConfig, Digest: digestOf(config), Size: int64(len(config))},
		Layers:      []Descriptor{{MediaType: mediaTypeLayer, Digest: digestOf(layer), Size: int64(len(layer))}},
		Annotations: imageAnnotations(spec.Stamp),
	})
	if err != nil {
		return err
	}
	tag := DockerTag(spec.Stamp.Version)
	index, err := json.Marshal(Index{SchemaVersion: 2, MediaType: mediaTypeIndex, Manifests: []Descriptor{{
		MediaType: mediaTypeManifest, Digest: digestOf(manifest), Size: int64(len(manifest)),
		Platform: &Platform{Architecture: spec.Arch, OS: "linux"},
		Annotations: map[string]string{
			"org.opencontainers.image.ref.name": tag,
			"io.containerd.image.name":          "statewright:" + tag,
		},
	}}})
	if err != nil {
		return err
	}
	blob := func(b []byte) string { return "blobs/sha256/" + digestOf(b)[len("sha256:"):] }
	docker, err := json.Marshal([]dockerManifest{{Config: blob(config), RepoTags: []string{"statewright:" + tag}, Layers: []string{blob(layer)}}})
	if err != nil {
		return err
	}
	mtime := spec.Stamp.Time()
	tw := tar.NewWriter(w)
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{"manifest.json", docker},
		{blob(config), config},
		{blob(layer), layer},
		{blob(manifest), manifest},
	} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// WriteImageFile writes the image of spec to the file at path.
func WriteImageFile(path string, spec ImageSpec) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteImage(f, spec); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
