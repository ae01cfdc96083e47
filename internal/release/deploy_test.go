package release

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const (
	dockerfilePath = "../../contrib/deploy/Dockerfile"
	unitPath       = "../../contrib/deploy/statewright.service"
)

// dockerfile reads the users' Dockerfile into instruction → arguments
// (continuation lines joined; the last of a repeated instruction wins, as
// in Docker).
func dockerfile(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(dockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ins := map[string]string{}
	var line string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			line += s + " "
			continue
		}
		line += l
		k, v, _ := strings.Cut(line, " ")
		ins[k] += strings.Join(strings.Fields(v), " ")
		if k != "COPY" {
			ins[k] = strings.Join(strings.Fields(v), " ")
		}
		line = ""
	}
	return ins
}

func jsonArgs(t *testing.T, s string) []string {
	t.Helper()
	var a []string
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return a
}

// TestDockerfileDescribesTheImage keeps the users' Dockerfile and the image
// the release writes the same container: entrypoint, command, health
// check, user, environment, volume, port, stop signal, binary name.
func TestDockerfileDescribesTheImage(t *testing.T) {
	d := dockerfile(t)
	cfg := imageConfig(ImageSpec{Arch: "amd64", Stamp: Stamp{Version: "v1.2.3"}}, "sha256:x").Config
	if got := jsonArgs(t, d["ENTRYPOINT"]); !slices.Equal(got, cfg.Entrypoint) {
		t.Errorf("ENTRYPOINT %v, image %v", got, cfg.Entrypoint)
	}
	if got := jsonArgs(t, d["CMD"]); !slices.Equal(got, cfg.Cmd) {
		t.Errorf("CMD %v, image %v", got, cfg.Cmd)
	}
	_, hc, _ := strings.Cut(d["HEALTHCHECK"], " CMD ")
	if got := jsonArgs(t, hc); !slices.Equal(got, cfg.Healthcheck.Test[1:]) {
		t.Errorf("HEALTHCHECK %v, image %v", got, cfg.Healthcheck.Test)
	}
	for _, opt := range []string{"--interval=30s", "--timeout=5s", "--start-period=5s", "--retries=3"} {
		if !strings.Contains(d["HEALTHCHECK"], opt) {
			t.Errorf("HEALTHCHECK lacks %s (the image's timing)", opt)
		}
	}
	if d["USER"] != cfg.User || d["WORKDIR"] != cfg.WorkingDir || d["VOLUME"] != ImageDataDir || d["EXPOSE"] != "8377" || d["STOPSIGNAL"] != cfg.StopSignal {
		t.Errorf("USER %q WORKDIR %q VOLUME %q EXPOSE %q STOPSIGNAL %q; image %q %q %q 8377 %q",
			d["USER"], d["WORKDIR"], d["VOLUME"], d["EXPOSE"], d["STOPSIGNAL"], cfg.User, cfg.WorkingDir, ImageDataDir, cfg.StopSignal)
	}
	for _, kv := range cfg.Env {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "TMPDIR=") {
			continue // distroless sets both
		}
		if !strings.Contains(" "+d["ENV"]+" ", " "+kv+" ") {
			t.Errorf("ENV lacks %s", kv)
		}
	}
	if !strings.Contains(d["COPY"], FileName(Binaries[0], Target{"linux", "${TARGETARCH}"})+" "+cfg.Entrypoint[0]) {
		t.Errorf("COPY %q does not install the release's binary at %s", d["COPY"], cfg.Entrypoint[0])
	}
}

// TestSystemdUnitVerifies runs systemd's own checker on the example unit
// (with ExecStart pointed at an executable that exists here).
// TestMakeAndCheckNative checks the flags it passes against a built serve.
func TestSystemdUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian: systemd)")
	}
	unit, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(unit), "ExecStart=/usr/local/bin/statewright ", "ExecStart="+exe+" ")
	if text == string(unit) {
		t.Fatal("no ExecStart=/usr/local/bin/statewright in the unit")
	}
	path := filepath.Join(t.TempDir(), "statewright.service")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) != 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

func execStart(unit string) string {
	_, rest, _ := strings.Cut(unit, "\nExecStart=")
	var b strings.Builder
	for _, l := range strings.Split(rest, "\n") {
		s, more := strings.CutSuffix(strings.TrimSpace(l), "\\")
		b.WriteString(s + " ")
		if !more {
			break
		}
	}
	return b.String()
}

// checkServeFlags checks that every flag the unit's ExecStart passes is
// one `serve --help` of the binary bin lists.
func checkServeFlags(t *testing.T, bin string) {
	t.Helper()
	help, err := exec.Command(bin, "serve", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("serve --help: %v\n%s", err, help)
	}
	unit, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	flags := regexp.MustCompile(`--([a-z-]+)`).FindAllStringSubmatch(execStart(string(unit)), -1)
	if len(flags) == 0 {
		t.Fatal("no flags in the unit's ExecStart")
	}
	for _, m := range flags {
		if !regexp.MustCompile(`(?m)^\s+(-\w, )?--` + m[1] + `\b`).Match(help) {
			t.Errorf("the systemd unit passes --%s, which serve does not list", m[1])
		}
	}
}
