//go:build linux

package sandbox

import (
	"bufio"
	"context"
	tlspkg "crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"testing"
)

// TestNetworkProxy is the outcome test of the network allow-list
// (DECISIONS 30), with real bubblewrap and curl: inside the sandbox, a host
// on the list is reached (a local test server, given a name through the
// proxy's pinned hosts), another host is not, a name on the list that
// resolves to the loopback or the metadata address is refused, a TLS client
// whose SNI names another host than its CONNECT is cut off, and nothing
// reaches the host's network directly.
func TestNetworkProxy(t *testing.T) {
	a := need(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from "+r.Host) })
	srv := httptest.NewServer(hello)
	defer srv.Close()
	tls := httptest.NewTLSServer(hello)
	defer tls.Close()
	port := func(s *httptest.Server) string { u, _ := url.Parse(s.URL); return u.Port() }
	p, tp := port(srv), port(tls)

	old := lookupIP
	lookupIP = func(ctx context.Context, host string) ([]net.IP, error) {
		switch host {
		case "rebind.test":
			return []net.IP{net.ParseIP("127.0.0.1")}, nil
		case "meta.test":
			return []net.IP{net.ParseIP("93.184.216.34"), net.ParseIP("169.254.169.254")}, nil
		}
		return old(ctx, host)
	}
	defer func() { lookupIP = old }()

	dir := t.TempDir()
	prof := &Profile{Visible: []string{dir}, Proxy: &NetPolicy{
		Allow: []string{"allowed.test", "rebind.test", "meta.test", "localhost", "*.allowed.test"},
		Deny:  []string{"blocked.allowed.test"},
		Hosts: map[string]string{"allowed.test": "127.0.0.1", "blocked.allowed.test": "127.0.0.1"},
	}}
	script := strings.Join([]string{
		`c() { curl -s -m 10 -o /dev/null -w '%{http_code}/%{http_connect}' "$@"; echo " rc=$?"; }`,
		`echo "allowed: $(curl -s -m 10 http://allowed.test:` + p + `/)"`,
		`echo "allowed-tls: $(curl -sk -m 10 https://allowed.test:` + tp + `/)"`,
		`echo "other: $(c http://other.test:` + p + `/)"`,
		`echo "other-tls: $(c -k https://other.test:` + tp + `/)"`,
		`echo "denied-sub: $(c http://blocked.allowed.test:` + p + `/)"`,
		`echo "rebind: $(c http://rebind.test:` + p + `/)"`,
		`echo "localhost: $(c http://localhost:` + p + `/)"`,
		`echo "metadata: $(c http://meta.test/latest/meta-data/)"`,
		`echo "ip-literal: $(c http://127.0.0.1:` + p + `/)"`,
		`echo "direct: $(c --noproxy '*' http://127.0.0.1:` + p + `/)"`,
		`echo "sni: $(c -k --connect-to sni.test:` + tp + `:allowed.test:` + tp + ` https://sni.test:` + tp + `/)"`,
	}, "\n")
	out, code := run(t, a, prof, dir, script, "PATH=/usr/bin:/bin")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	want := map[string]func(string) bool{
		"allowed":     func(s string) bool { return s == "hello from allowed.test:"+p },
		"allowed-tls": func(s string) bool { return s == "hello from allowed.test:"+tp },
		"other":       func(s string) bool { return strings.HasPrefix(s, "403/") },
		"other-tls":   func(s string) bool { return strings.Contains(s, "/403") },
		"denied-sub":  func(s string) bool { return strings.HasPrefix(s, "403/") },
		"rebind":      func(s string) bool { return strings.HasPrefix(s, "403/") },
		"localhost":   func(s string) bool { return strings.HasPrefix(s, "403/") },
		"metadata":    func(s string) bool { return strings.HasPrefix(s, "403/") },
		"ip-literal":  func(s string) bool { return strings.HasPrefix(s, "403/") },
		"direct":      func(s string) bool { return strings.HasPrefix(s, "000/") && !strings.HasSuffix(s, "rc=0") },
		"sni":         func(s string) bool { return strings.HasPrefix(s, "000/") && !strings.HasSuffix(s, "rc=0") },
	}
	got := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ": "); ok {
			got[k] = v
		}
	}
	for k, ok := range want {
		if !ok(got[k]) {
			t.Errorf("%s: %q\n%s", k, got[k], out)
		}
	}
}

func TestForbidden(t *testing.T) {
	for ip, bad := range map[string]bool{
		"127.0.0.1": true, "::1": true, "169.254.169.254": true, "fe80::1": true, "10.1.2.3": true, "192.168.1.1": true,
		"172.16.0.1": true, "100.64.0.1": true, "0.0.0.0": true, "::": true, "fd00:ec2::254": true, "::ffff:127.0.0.1": true,
		"224.0.0.1": true, "93.184.216.34": false, "2606:2800:220:1::": false, "8.8.8.8": false,
	} {
		if got := Forbidden(net.ParseIP(ip)) != ""; got != bad {
			t.Errorf("Forbidden(%s) = %v, want %v", ip, got, bad)
		}
	}
}

func TestPeekSNI(t *testing.T) {
	// A real ClientHello, from crypto/tls, through a pipe.
	c1, c2 := net.Pipe()
	defer c1.Close()
	go func() {
		tc := tlsClient(c2, "api.example.com")
		_ = tc.Handshake()
	}()
	br := bufio.NewReaderSize(c1, 16<<10)
	sni, isTLS := peekSNI(br)
	if !isTLS || sni != "api.example.com" {
		t.Errorf("peekSNI = %q, %v", sni, isTLS)
	}
	// Nothing was consumed.
	if b, _ := br.Peek(1); len(b) != 1 || b[0] != 0x16 {
		t.Errorf("peekSNI consumed the record")
	}
	// Not TLS.
	sni, isTLS = peekSNI(bufio.NewReader(strings.NewReader("SSH-2.0-OpenSSH\r\n")))
	if isTLS || sni != "" {
		t.Errorf("SSH banner: %q, %v", sni, isTLS)
	}
	_ = io.Discard
}

func tlsClient(c net.Conn, name string) *tlspkg.Conn {
	return tlspkg.Client(c, &tlspkg.Config{ServerName: name, InsecureSkipVerify: true})
}
