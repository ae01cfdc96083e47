//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/statewright-go/statewright/store"
)

// browserTools returns playwright-core's directory and the chromium binary,
// as scripts/install-browser.sh installs and reports them. Missing tools
// fail the test (CI installs them; see .ci/run).
func browserTools(t *testing.T) (playwright, chromium string) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", filepath.Join(root, "scripts", "install-browser.sh")).Output()
	if err != nil {
		t.Fatalf("scripts/install-browser.sh failed (needs npm, and Debian's chromium: apt-get install chromium): %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			switch k {
			case "playwright-core":
				playwright = v
			case "chromium":
				chromium = v
			}
		}
	}
	if playwright == "" || chromium == "" {
		t.Fatalf("install-browser.sh printed no paths:\n%s", out)
	}
	return playwright, chromium
}

// startDashboard runs `statewright dashboard --listen 127.0.0.1:0` on the
// store and returns its URL; the process is stopped at cleanup.
func startDashboard(t *testing.T, s *surfaceStore, config string) string {
	t.Helper()
	cmd := exec.Command(s.bin, "dashboard", "--listen", "127.0.0.1:0", "--store", s.db)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case u, ok := <-line:
		if !ok || !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Fatalf("dashboard printed %q; stderr:\n%s", u, stderr.String())
		}
		return u
	case <-time.After(30 * time.Second):
		t.Fatalf("the dashboard did not start; stderr:\n%s", stderr.String())
	}
	return ""
}

func TestDashboardInChromium(t *testing.T) {
	playwright, chromium := browserTools(t)
	s := newSurfaceStore(t)
	s.decide(t, [2]string{"Edit", `{"file_path":"main.go","old_string":"a","new_string":"b"}`},
		[2]string{"Read", `{"file_path":"main.go"}`}, [2]string{"Grep", `{"pattern":"TODO"}`})
	config := filepath.Join(s.dir, "config")
	tc := exec.Command(s.bin, "token", "create")
	tc.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config)
	tokOut, err := tc.Output()
	if err != nil {
		t.Fatalf("statewright token create: %v", err)
	}
	token := strings.TrimSpace(string(tokOut))
	url := startDashboard(t, s, config)

	artifacts := os.Getenv("STATEWRIGHT_ARTIFACTS")
	if artifacts == "" {
		if artifacts, err = os.MkdirTemp("", "statewright-dashboard-"); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	root, _ := RepoRoot()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	node := exec.CommandContext(ctx, "node", filepath.Join(root, "e2e", "browser", "dashboard.mjs"))
	node.Env = append(os.Environ(), "PLAYWRIGHT_CORE="+playwright, "CHROMIUM="+chromium, "SW_URL="+url, "SW_TOKEN="+token,
		"SW_BIN="+s.bin, "SW_STORE="+s.db, "SW_SESSION="+s.session, "SW_CONFIG="+config, "ARTIFACT_DIR="+artifacts)
	var stderr strings.Builder
	node.Stderr = &stderr
	out, err := node.Output()
	t.Logf("browser: %s", out)
	if stderr.Len() > 0 {
		t.Logf("browser stderr:\n%s", stderr.String())
	}
	var res struct {
		OK          bool     `json:"ok"`
		Error       string   `json:"error"`
		Screenshots []string `json:"screenshots"`
	}
	if jerr := json.Unmarshal(lastLine(out), &res); jerr != nil || !res.OK || err != nil {
		t.Fatalf("the browser script failed (%v): %s\nscreenshots in %s", err, res.Error, artifacts)
	}
	t.Logf("screenshots (CI artifacts): %s", strings.Join(res.Screenshots, " "))

	// The click moved the run on, in the store, as a person through the web.
	r, evs := s.run(t)
	if r.State != "done" || r.Status != store.StatusCompleted {
		t.Fatalf("after approving in the browser the store says %s / %s", r.State, r.Status)
	}
	if by := approvalGrantedBy(evs); by != "human/web" {
		t.Fatalf("approval granted by %q, want human/web", by)
	}
}

func lastLine(b []byte) []byte {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return []byte(lines[len(lines)-1])
}
