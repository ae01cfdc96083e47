//go:build e2e

package e2e

import (
	"bufio"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestServeMetrics runs the real `statewright serve` binary, sends it known
// Claude Code hook events through its hook endpoint (two denied Writes and
// one allowed Read in the planning phase), then scrapes /metrics: the
// decision counters say exactly that, /metrics refuses no token, an agent
// token and a hook credential, and no series carries the session, a path or
// an input.
func TestServeMetrics(t *testing.T) {
	p := newGWProject(t)
	hookCred := strings.TrimSpace(p.cli(t, "tokens", "create", "--role", "hook"))
	agent := strings.TrimSpace(p.cli(t, "tokens", "create", "--role", "agent"))
	scraper := strings.TrimSpace(p.cli(t, "tokens", "create", "--role", "metrics"))
	base := p.startServe(t)

	event := func(id, tool, path string) string {
		return `{"session_id":"gw","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":{"file_path":"` +
			path + `","content":"x"},"tool_use_id":"` + id + `","cwd":"` + p.dir + `","transcript_path":"/dev/null"}`
	}
	target := filepath.Join(p.dir, "src", "metrics-probe.txt")
	for _, c := range []struct {
		id, tool, path, want string
	}{
		{"toolu_m1", "Write", target, `"permissionDecision":"deny"`},
		{"toolu_m2", "Write", target, `"permissionDecision":"deny"`},
		{"toolu_m3", "Read", filepath.Join(p.dir, "src", "main.txt"), ""},
	} {
		code, body := post(t, base+"/hook/claude-code/pre-tool-use", hookCred, event(c.id, c.tool, c.path))
		if code != 200 || (c.want != "" && !strings.Contains(body, c.want)) || (c.want == "" && strings.Contains(body, `"deny"`)) {
			t.Fatalf("%s %s: %d %s", c.id, c.tool, code, body)
		}
	}

	scrape := func(token string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("GET", base+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"an agent token", agent, http.StatusForbidden},
		{"a hook credential", hookCred, http.StatusForbidden},
	} {
		if code, _ := scrape(c.token); code != c.want {
			t.Errorf("/metrics with %s: %d, want %d", c.name, code, c.want)
		}
	}
	code, text := scrape(scraper)
	if code != 200 {
		t.Fatalf("/metrics with a metrics token: %d %s", code, text)
	}

	// Sum the decision counter by decision for Claude Code in planning.
	sums := map[string]float64{}
	var mine strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "statewright_") {
			continue
		}
		mine.WriteString(l + "\n")
		if !strings.HasPrefix(l, "statewright_decisions_total{") || !strings.Contains(l, `harness="claude-code"`) || !strings.Contains(l, `state="planning"`) {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		v, err := strconv.ParseFloat(l[i+1:], 64)
		if err != nil {
			t.Fatalf("series %q: %v", l, err)
		}
		for _, d := range []string{"allow", "deny", "ask"} {
			if strings.Contains(l, `decision="`+d+`"`) {
				sums[d] += v
			}
		}
	}
	if sums["deny"] != 2 || sums["allow"] != 1 || sums["ask"] != 0 {
		t.Errorf("decisions in planning: deny %v, allow %v, ask %v; want 2, 1, 0\n%s", sums["deny"], sums["allow"], sums["ask"], mine.String())
	}
	for _, leak := range []string{`"gw"`, p.dir, "metrics-probe", "main.txt"} {
		if strings.Contains(mine.String(), leak) {
			t.Errorf("a metric carries %q:\n%s", leak, mine.String())
		}
	}
}
