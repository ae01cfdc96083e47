package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/gateway/tokens"
	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store/sqlite"
)

// hookServer is a server with the hook endpoint over a real store whose
// session "s1" of every harness is in a phase that allows only Read.
func hookServer(t *testing.T) (s *Server, tokensPath string, tok map[tokens.Role]string, dir string) {
	t.Helper()
	ctx := context.Background()
	dir = t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	wf := filepath.Join(dir, "wf.json")
	if err := os.WriteFile(wf, []byte(`{"id":"w","initial":"plan","states":{"plan":{"allowed_tools":["Read"],"on":{"GO":"done"}},"done":{"type":"final"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := runtime.New(st, runtime.Options{ProjectDir: dir})
	for _, h := range adapters.Names() {
		if _, err := svc.Start(ctx, h+":s1", wf, runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	tokensPath = filepath.Join(dir, "cfg", "tokens.json")
	f := tokens.Open(tokensPath)
	tok = map[tokens.Role]string{}
	for _, r := range []tokens.Role{tokens.Agent, tokens.Operator, tokens.Hook} {
		if tok[r], _, err = f.Create(r, "", "", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if s, err = New(Options{Tokens: f, Addr: "127.0.0.1:8377"}); err != nil {
		t.Fatal(err)
	}
	s.MountHooks(HookOptions{Adapters: adapters.All, Runtime: svc})
	return s, tokensPath, tok, dir
}

// writeInputs are a Write of x.txt, in each harness's hook input, which
// the phase denies.
func writeInputs(dir string) map[string][2]string {
	file := filepath.Join(dir, "x.txt")
	return map[string][2]string{
		"claude-code": {"pre-tool-use", `{"session_id":"s1","cwd":"` + dir + `","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"` + file + `","content":"x"},"tool_use_id":"t1"}`},
		"codex":       {"pre-tool-use", `{"session_id":"s1","cwd":"` + dir + `","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: ` + file + `\n+x\n*** End Patch\n"},"tool_use_id":"t1"}`},
		"cursor":      {"pre-tool-use", `{"conversation_id":"s1","workspace_roots":["` + dir + `"],"cwd":"` + dir + `","tool_name":"Write","tool_input":{"file_path":"` + file + `"},"tool_use_id":"t1"}`},
		"opencode":    {"tool-before", `{"session":"s1","cwd":"` + dir + `","tool":"write","call_id":"t1","args":{"filePath":"` + file + `","content":"x"}}`},
		"pi":          {"tool-before", `{"session":"s1","cwd":"` + dir + `","tool":"write","call_id":"t1","args":{"path":"` + file + `","content":"x"}}`},
	}
}

// isDeny reports whether body is a deny in the harness's own JSON.
func isDeny(harness, body string) bool {
	var v map[string]any
	if json.Unmarshal([]byte(body), &v) != nil {
		return false
	}
	switch harness {
	case "claude-code", "codex":
		hso, _ := v["hookSpecificOutput"].(map[string]any)
		return hso != nil && hso["permissionDecision"] == "deny" && hso["hookEventName"] == "PreToolUse"
	case "cursor":
		return v["permission"] == "deny"
	}
	return v["decision"] == "deny"
}

// TestHookEndpointFailsClosed: every refusal of a hook, authentication
// included, is a 200 whose body is a deny in the harness's convention;
// only a hook credential gets the call decided.
func TestHookEndpointFailsClosed(t *testing.T) {
	s, tokensPath, tok, dir := hookServer(t)
	post := func(harness, event, body, token, host string) (int, string) {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8377/hook/"+harness+"/"+event, strings.NewReader(body))
		if host != "" {
			r.Host = host
		}
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	for harness, in := range writeInputs(dir) {
		for _, c := range []struct{ name, token, host, want string }{
			{"no token", "", "", "bearer token"},
			{"a wrong token", tok[tokens.Hook] + "0", "", "bearer token"},
			{"an agent token", tok[tokens.Agent], "", "hook credential"},
			{"an operator token", tok[tokens.Operator], "", "hook credential"},
			{"a foreign Host", tok[tokens.Hook], "evil.example", "DNS rebinding"},
			{"a hook credential", tok[tokens.Hook], "", "not allowed"},
		} {
			code, body := post(harness, in[0], in[1], c.token, c.host)
			if code != 200 || !isDeny(harness, body) || !strings.Contains(body, c.want) {
				t.Errorf("%s with %s: %d %s; want 200 and a deny saying %q", harness, c.name, code, body, c.want)
			}
		}
	}
	// A read the phase allows is allowed with the hook credential.
	read := `{"session_id":"s1","cwd":"` + dir + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` + filepath.Join(dir, "wf.json") + `"},"tool_use_id":"t2"}`
	if code, body := post("claude-code", "pre-tool-use", read, tok[tokens.Hook], ""); code != 200 || strings.Contains(body, "deny") {
		t.Errorf("allowed read: %d %s", code, body)
	}
	// An unknown harness or event still answers 200 with a block.
	if code, body := post("nonesuch", "pre-tool-use", read, tok[tokens.Hook], ""); code != 200 || !strings.Contains(body, `"decision":"block"`) {
		t.Errorf("unknown harness: %d %s", code, body)
	}
	if code, body := post("claude-code", "pre-tool-usage", read, tok[tokens.Hook], ""); code != 200 || !isDeny("claude-code", body) {
		t.Errorf("unknown event: %d %s", code, body)
	}
	// An unreadable token file denies.
	if err := os.WriteFile(tokensPath, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	in := writeInputs(dir)["cursor"]
	if code, body := post("cursor", in[0], in[1], tok[tokens.Hook], ""); code != 200 || !isDeny("cursor", body) || !strings.Contains(body, "token file") {
		t.Errorf("unreadable token file: %d %s", code, body)
	}
}

// TestHookCredentialReachesNothingElse: a hook credential is refused by
// the MCP endpoint and the operator API.
func TestHookCredentialReachesNothingElse(t *testing.T) {
	s, _, tok, _ := hookServer(t)
	s.Handle("POST /any", AnyToken, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("hit")) }))
	s.Handle("POST /op", OperatorOnly, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("hit")) }))
	for _, path := range []string{"/any", "/op"} {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8377"+path, nil)
		r.Header.Set("Authorization", "Bearer "+tok[tokens.Hook])
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		if w.Code != http.StatusForbidden {
			t.Errorf("%s with a hook credential: %d %s", path, w.Code, w.Body)
		}
	}
}
