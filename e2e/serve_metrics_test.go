//go:build e2e

package e2e

import (
	"net/http"
	"path/filepath"
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

	scrape := func(token string) (int, string) { return getWithToken(t, base+"/metrics", token) }
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

	sums, mine := decisionSums(t, text, "claude-code", "planning")
	if sums["deny"] != 2 || sums["allow"] != 1 || sums["ask"] != 0 {
		t.Errorf("decisions in planning: deny %v, allow %v, ask %v; want 2, 1, 0\n%s", sums["deny"], sums["allow"], sums["ask"], mine)
	}
	for _, leak := range []string{`"gw"`, p.dir, "metrics-probe", "main.txt"} {
		if strings.Contains(mine, leak) {
			t.Errorf("a metric carries %q:\n%s", leak, mine)
		}
	}
}
