//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// startServer runs the statewright binary with args (a server on
// 127.0.0.1:0) and returns the first http://127.0.0.1:PORT it prints on
// stdout or stderr; the process group is stopped at cleanup.
func startServer(t *testing.T, bin, config string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config)
	setProcessGroup(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		signalGroup(cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			killProcessGroup(cmd)
		}
	})
	found := make(chan string, 2)
	re := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)
	for _, r := range []io.Reader{stdout, stderr} {
		go func() {
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				t.Log(args[0] + ": " + sc.Text())
				if m := re.FindString(sc.Text()); m != "" {
					found <- m
				}
			}
		}()
	}
	select {
	case u := <-found:
		return u
	case <-time.After(30 * time.Second):
		t.Fatalf("statewright %s did not start listening within 30s", args[0])
	}
	return ""
}

// newToken runs a token-creating command and returns the token it prints.
func newToken(t *testing.T, bin, config string, args ...string) string {
	t.Helper()
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config)
	out, err := c.Output()
	if err != nil {
		t.Fatalf("statewright %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// runBrowser runs e2e/browser/dashboard.mjs against the dashboard at url
// signed in with token, then asserts the store: the click moved the run
// on, as a person through the web.
func runBrowser(t *testing.T, s *surfaceStore, config, url, token, shotPrefix string) {
	t.Helper()
	playwright, chromium := browserTools(t)
	artifacts := os.Getenv("STATEWRIGHT_ARTIFACTS")
	if artifacts == "" {
		var err error
		if artifacts, err = os.MkdirTemp("", "statewright-dashboard-"); err != nil {
			t.Fatal(err)
		}
	}
	artifacts = filepath.Join(artifacts, shotPrefix)
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
	r, evs := s.run(t)
	if r.State != "done" || r.Status != store.StatusCompleted {
		t.Fatalf("after approving in the browser the store says %s / %s", r.State, r.Status)
	}
	if by := approvalGrantedBy(evs); by != "human/web" {
		t.Fatalf("approval granted by %q, want human/web", by)
	}
}

func surfaceDecisions(t *testing.T, s *surfaceStore) {
	s.decide(t, [2]string{"Edit", `{"file_path":"main.go","old_string":"a","new_string":"b"}`},
		[2]string{"Read", `{"file_path":"main.go"}`}, [2]string{"Grep", `{"pattern":"TODO"}`})
}

// TestDashboardInChromium drives the dashboard mounted in `statewright
// serve` (tokens from `statewright tokens`) and the standalone
// `statewright dashboard` (the operator token of `statewright token create`).
func TestDashboardInChromium(t *testing.T) {
	t.Run("serve", func(t *testing.T) {
		s := newSurfaceStore(t)
		surfaceDecisions(t, s)
		config := filepath.Join(s.dir, "config")
		operator := newToken(t, s.bin, config, "tokens", "create", "--role", "operator", "--name", "e2e operator")
		agent := newToken(t, s.bin, config, "tokens", "create", "--role", "agent")
		base := startServer(t, s.bin, config, "serve", "--listen", "127.0.0.1:0", "--store", s.db, "--project-dir", s.dir)
		url := base + "/dashboard/"

		// Over plain HTTP first: the API is closed without a token, and an
		// agent token signs in but cannot approve, even with its CSRF token.
		if code, _ := httpDo(t, nil, "GET", url+"api/runs", "", nil); code != http.StatusUnauthorized {
			t.Fatalf("GET api/runs without a token: %d, want 401", code)
		}
		jar, _ := cookiejar.New(nil)
		hc := &http.Client{Jar: jar}
		code, body := httpDo(t, hc, "POST", url+"api/login", `{"token":"`+agent+`"}`, map[string]string{"Origin": base})
		var login struct{ Role, CSRF string }
		json.Unmarshal([]byte(body), &login)
		if code != http.StatusOK || login.Role != "agent" || login.CSRF == "" {
			t.Fatalf("agent login: %d %s", code, body)
		}
		r, _ := s.run(t)
		code, body = httpDo(t, hc, "POST", url+"api/runs/"+r.ID+"/approve", `{"approval_id":"apr_x"}`,
			map[string]string{"Origin": base, "X-CSRF-Token": login.CSRF})
		if code != http.StatusForbidden {
			t.Fatalf("agent approve: %d %s, want 403", code, body)
		}
		if code, _ := httpDo(t, hc, "GET", base+"/dashboard", "", nil); code != http.StatusOK {
			t.Fatalf("GET /dashboard (redirect to /dashboard/): %d", code)
		}

		runBrowser(t, s, config, url, operator, "serve")
	})
	t.Run("standalone", func(t *testing.T) {
		s := newSurfaceStore(t)
		surfaceDecisions(t, s)
		config := filepath.Join(s.dir, "config")
		token := newToken(t, s.bin, config, "token", "create")
		url := startServer(t, s.bin, config, "dashboard", "--listen", "127.0.0.1:0", "--store", s.db) + "/"
		runBrowser(t, s, config, url, token, "standalone")
	})
}

// httpDo sends one request (hc nil: a fresh client) and returns the status and body.
func httpDo(t *testing.T, hc *http.Client, method, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	if hc == nil {
		hc = &http.Client{}
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func lastLine(b []byte) []byte {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return []byte(lines[len(lines)-1])
}
