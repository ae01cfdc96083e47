//go:build e2e

package e2e

import (
	"bufio"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// addrWriter logs a process's stderr and catches the first "http://ADDR/metrics".
type addrWriter struct {
	log  *testLog
	mu   sync.Mutex
	addr string
}

var metricsAddrRE = regexp.MustCompile(`http://([^ /]+)/metrics`)

func (w *addrWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	if w.addr == "" {
		if m := metricsAddrRE.FindSubmatch(b); m != nil {
			w.addr = string(m[1])
		}
	}
	w.mu.Unlock()
	return w.log.Write(b)
}

func (w *addrWriter) get() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.addr
}

// TestMCPMetrics runs the real `statewright mcp --metrics 127.0.0.1:0` with
// the everything server upstream, has the go-sdk client make one upstream
// call the planning phase denies, then scrapes the printed address: a
// metrics token sees that one deny in planning; no token gets 401 and an
// agent token 403.
func TestMCPMetrics(t *testing.T) {
	p := newGWProject(t)
	agent := strings.TrimSpace(p.cli(t, "tokens", "create", "--role", "agent"))
	scraper := strings.TrimSpace(p.cli(t, "tokens", "create", "--role", "metrics"))
	ev := MCPServerBinary(t, "mcp-server-everything")
	aw := &addrWriter{log: &testLog{t: t, prefix: "mcp: "}}
	gc := p.connectWith(t, aw, []string{"--metrics", "127.0.0.1:0"}, "everything="+ev)

	res := gc.call(t, "everything__echo", map[string]any{"message": "hi"})
	if !res.IsError || !strings.Contains(resultText(res), "denied") {
		t.Fatalf("everything__echo in planning: want a deny, got %v %q", res.IsError, resultText(res))
	}

	// The address is printed before the server answers initialize.
	addr := aw.get()
	if addr == "" {
		t.Fatal("statewright mcp printed no metrics address on stderr")
	}
	get := func(path, token string) (int, string) {
		t.Helper()
		return getWithToken(t, "http://"+addr+path, token)
	}
	for _, c := range []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"an agent token", agent, http.StatusForbidden},
	} {
		if code, _ := get("/metrics", c.token); code != c.want {
			t.Errorf("/metrics with %s: %d, want %d", c.name, code, c.want)
		}
	}
	code, text := get("/metrics", scraper)
	if code != http.StatusOK {
		t.Fatalf("/metrics with a metrics token: %d %s", code, text)
	}
	sums, mine := decisionSums(t, text, "claude-code", "planning")
	if sums["deny"] != 1 || sums["allow"] != 0 || sums["ask"] != 0 {
		t.Errorf("decisions in planning: deny %v, allow %v, ask %v; want 1, 0, 0\n%s", sums["deny"], sums["allow"], sums["ask"], mine)
	}
	// Only /metrics is served.
	if code, _ := get("/healthz", ""); code != http.StatusNotFound {
		t.Errorf("/healthz on the metrics listener: %d, want 404", code)
	}
}

// getWithToken GETs url with "Authorization: Bearer token" (none when
// token is empty) and returns the status and body.
func getWithToken(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// decisionSums sums statewright_decisions_total of harness in state by
// decision (allow, deny, ask) in a Prometheus text scrape, and returns the
// statewright_* series too.
func decisionSums(t *testing.T, text, harness, state string) (map[string]float64, string) {
	t.Helper()
	sums := map[string]float64{}
	var mine strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "statewright_") {
			continue
		}
		mine.WriteString(l + "\n")
		if !strings.HasPrefix(l, "statewright_decisions_total{") || !strings.Contains(l, `harness="`+harness+`"`) || !strings.Contains(l, `state="`+state+`"`) {
			continue
		}
		v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("series %q: %v", l, err)
		}
		for _, d := range []string{"allow", "deny", "ask"} {
			if strings.Contains(l, `decision="`+d+`"`) {
				sums[d] += v
			}
		}
	}
	return sums, mine.String()
}
