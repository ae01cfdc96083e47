package serve

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/gateway/tokens"
)

func newTestServer(t *testing.T) (*Server, string, string) {
	t.Helper()
	f := tokens.Open(filepath.Join(t.TempDir(), "tokens.json"))
	agent, _, err := f.Create(tokens.Agent, "a", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	op, _, err := f.Create(tokens.Operator, "o", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Tokens: f, Addr: "127.0.0.1:8377", AllowedHosts: []string{"gw.example:8377"}, AllowedOrigins: []string{"https://dash.example"}})
	if err != nil {
		t.Fatal(err)
	}
	hit := func(w http.ResponseWriter, r *http.Request) {
		p, _ := Principal(r.Context())
		w.Write([]byte("hit " + string(p.Role)))
	}
	s.Handle("POST /any", AnyToken, http.HandlerFunc(hit))
	s.Handle("POST /op", OperatorOnly, http.HandlerFunc(hit))
	return s, agent, op
}

func TestAccess(t *testing.T) {
	s, agent, op := newTestServer(t)
	for _, c := range []struct {
		name, method, path, token, host, origin string
		code                                    int
		body                                    string
	}{
		{"healthz needs no token", "GET", "/healthz", "", "", "", 200, "ok"},
		{"no token", "POST", "/any", "", "", "", 401, ""},
		{"wrong token", "POST", "/any", agent + "x", "", "", 401, ""},
		{"agent token", "POST", "/any", agent, "", "", 200, "hit agent"},
		{"operator token on any", "POST", "/any", op, "", "", 200, "hit operator"},
		{"agent token on operator-only", "POST", "/op", agent, "", "", 403, ""},
		{"operator token on operator-only", "POST", "/op", op, "", "", 200, "hit operator"},
		{"rebinding host", "POST", "/any", agent, "evil.example", "", 403, ""},
		{"rebinding host on healthz", "GET", "/healthz", "", "evil.example:8377", "", 403, ""},
		{"localhost host", "POST", "/any", agent, "localhost:8377", "", 200, "hit agent"},
		{"allowed host", "POST", "/any", agent, "gw.example:8377", "", 200, "hit agent"},
		{"foreign origin", "POST", "/any", agent, "", "https://evil.example", 403, ""},
		{"own origin", "POST", "/any", agent, "", "http://127.0.0.1:8377", 200, "hit agent"},
		{"allowed origin", "POST", "/any", agent, "", "https://dash.example", 200, "hit agent"},
		{"null origin", "POST", "/any", agent, "", "null", 403, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, "http://127.0.0.1:8377"+c.path, nil)
			if c.host != "" {
				r.Host = c.host
			}
			if c.token != "" {
				r.Header.Set("Authorization", "Bearer "+c.token)
			}
			if c.origin != "" {
				r.Header.Set("Origin", c.origin)
			}
			w := httptest.NewRecorder()
			s.Handler().ServeHTTP(w, r)
			if w.Code != c.code {
				t.Fatalf("status %d, want %d: %s", w.Code, c.code, w.Body)
			}
			if c.body != "" && !strings.Contains(w.Body.String(), c.body) {
				t.Fatalf("body %q, want %q", w.Body, c.body)
			}
			if c.code == 401 && w.Header().Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}
}

func TestCheckBind(t *testing.T) {
	for _, c := range []struct {
		addr   string
		tokens bool
		ok     bool
	}{
		{"127.0.0.1:8377", false, true},
		{"[::1]:8377", false, true},
		{"localhost:0", false, true},
		{"0.0.0.0:8377", false, false},
		{":8377", false, false},
		{"192.168.1.5:8377", false, false},
		{"0.0.0.0:8377", true, true},
		{"nonsense", true, false},
	} {
		err := CheckBind(c.addr, c.tokens)
		if (err == nil) != c.ok {
			t.Errorf("CheckBind(%q, %v) = %v, want ok=%v", c.addr, c.tokens, err, c.ok)
		}
	}
}
