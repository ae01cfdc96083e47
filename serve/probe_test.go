package serve

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/gateway/tokens"
)

func TestProbeAddr(t *testing.T) {
	for _, tc := range []struct{ listen, want, err string }{
		{"127.0.0.1:8377", "127.0.0.1:8377", ""},
		{"0.0.0.0:8377", "127.0.0.1:8377", ""},
		{":9000", "127.0.0.1:9000", ""},
		{"[::]:8377", "[::1]:8377", ""},
		{"[::1]:8377", "[::1]:8377", ""},
		{"localhost:1", "localhost:1", ""},
		{"8377", "", "want HOST:PORT"},
	} {
		got, err := ProbeAddr(tc.listen)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ProbeAddr(%q) error = %v, want %q", tc.listen, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ProbeAddr(%q) = %q, %v; want %q", tc.listen, got, err, tc.want)
		}
	}
}

// TestProbe runs the real server's handler: the probe passes the Host check
// and reads /healthz; anything else fails.
func TestProbe(t *testing.T) {
	srv, err := New(Options{Tokens: tokens.Open(filepath.Join(t.TempDir(), "tokens.json"))})
	if err != nil {
		t.Fatal(err)
	}
	ok := httptest.NewServer(srv.Handler())
	defer ok.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Probe(ctx, strings.TrimPrefix(ok.URL, "http://")); err != nil {
		t.Fatalf("probe of a healthy server: %v", err)
	}

	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer bad.Close()
	if err := Probe(ctx, strings.TrimPrefix(bad.URL, "http://")); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("probe of a failing server = %v, want a 503 error", err)
	}

	// Nothing listens on a port we just closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if err := Probe(ctx, addr); err == nil {
		t.Errorf("probe of a closed port succeeded")
	}
}
