package sandbox

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The network allow-list (DECISIONS 30). A phase that may reach only some
// hosts gets a sandbox without a network (its own network namespace, only
// loopback) and a proxy on the host that checks every connection:
//
//	sandboxed command ──HTTP(S)_PROXY──► 127.0.0.1:3128 (netinit, inside the
//	namespace) ──unix socket──► Proxy (outside, in the launcher) ──► host
//
// The proxy speaks HTTP CONNECT (HTTPS, and any TCP through it) and plain
// HTTP with absolute URLs. For each request it checks the host against the
// policy's allow and deny lists, resolves it itself and refuses a name
// that resolves to a loopback, link-local (169.254.169.254, the cloud
// metadata service), private, shared or unspecified address — no rebinding
// an allowed name to the host's own services — and dials the address it
// checked. A TLS client's SNI must name the host of its CONNECT. Programs
// that ignore the proxy variables reach nothing: the namespace has no route
// out.

// NetPolicy is what the proxy lets through.
type NetPolicy struct {
	// Allow are host patterns the command may reach: "example.com", or
	// "*.example.com" for its subdomains.
	Allow []string `json:"allow,omitempty"`
	// AllowAll lets any host through but Deny (a phase with the Network
	// capability and domain deny rules).
	AllowAll bool `json:"allow_all,omitempty"`
	// Deny are host patterns never reached, whatever Allow says.
	Deny []string `json:"deny,omitempty"`
	// Hosts pins names to addresses, as /etc/hosts would: an operator's
	// override, trusted as given (not checked like DNS answers).
	Hosts map[string]string `json:"hosts,omitempty"`
}

// Paths and address of the proxy inside the sandbox.
const (
	proxySocketInside = "/tmp/.statewright-proxy.sock"
	netinitInside     = "/tmp/.statewright-netinit"
	// ProxyListen is where the sandboxed command finds the proxy.
	ProxyListen = "127.0.0.1:3128"
)

// HostMatch reports whether host is one the domain pattern names:
// "example.com" exactly, "*.example.com" any subdomain of it (host
// lower-cased, without a trailing dot).
func HostMatch(pattern, host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if d, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+d)
	}
	return host == pattern
}

// Permits reports whether the policy lets host be reached by name.
func (n *NetPolicy) Permits(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, d := range n.Deny {
		if HostMatch(strings.ToLower(d), host) {
			return false
		}
	}
	if n.AllowAll {
		return true
	}
	for _, a := range n.Allow {
		if HostMatch(strings.ToLower(a), host) {
			return true
		}
	}
	return false
}

// Forbidden reports why a resolved address must not be dialled ("" when
// it may): the host's own services and the cloud metadata service are out
// of reach whatever name points at them.
func Forbidden(ip net.IP) string {
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "a link-local address (such as the metadata service 169.254.169.254)"
	case ip.IsUnspecified():
		return "the unspecified address"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	case ip.IsPrivate():
		return "a private address"
	}
	if v4 := ip.To4(); v4 != nil {
		if v4[0] == 0 || v4[0] == 100 && v4[1]&0xc0 == 64 || v4[0] >= 240 {
			return "a reserved or shared address"
		}
	}
	return ""
}

// lookupIP resolves names for the proxy; tests replace it.
var lookupIP = func(ctx context.Context, host string) ([]net.IP, error) {
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	out := make([]net.IP, len(addrs))
	for i, a := range addrs {
		out[i] = a.IP
	}
	return out, nil
}

// Proxy is the host side of a sandbox's network allow-list.
type Proxy struct {
	policy NetPolicy
	ln     net.Listener
	srv    *http.Server
	log    io.Writer
	mu     sync.Mutex
	denied []string
}

// StartProxy listens on a unix socket at socket and serves the policy
// until Close.
func StartProxy(policy *NetPolicy, socket string, log io.Writer) (*Proxy, error) {
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("sandbox: network proxy: %w", err)
	}
	if log == nil {
		log = io.Discard
	}
	p := &Proxy{policy: *policy, ln: ln, log: log}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Close stops the proxy and its tunnels.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	return err
}

// Denied lists the hosts the proxy refused, for the launcher's lesson.
func (p *Proxy) Denied() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.denied...)
}

func (p *Proxy) refuse(w http.ResponseWriter, host, why string) {
	p.mu.Lock()
	if len(p.denied) < 20 {
		p.denied = append(p.denied, host)
	}
	p.mu.Unlock()
	fmt.Fprintf(p.log, "statewright sandbox: the network proxy refused %s: %s\n", host, why)
	http.Error(w, "statewright: "+host+": "+why, http.StatusForbidden)
}

// dialChecked resolves host as the policy says and dials port on an
// address it checked.
func (p *Proxy) dialChecked(ctx context.Context, host, port string) (net.Conn, error) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if !p.policy.Permits(host) {
		return nil, fmt.Errorf("%s is not on this phase's network allow-list", host)
	}
	var ips []net.IP
	if pin, ok := p.policy.Hosts[host]; ok {
		ip := net.ParseIP(pin)
		if ip == nil {
			return nil, fmt.Errorf("the pinned address %q of %s is not an IP address", pin, host)
		}
		d := net.Dialer{Timeout: 30 * time.Second}
		return d.DialContext(ctx, "tcp", net.JoinHostPort(ip.String(), port))
	}
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else {
		var err error
		if ips, err = lookupIP(ctx, host); err != nil {
			return nil, fmt.Errorf("cannot resolve %s: %v", host, err)
		}
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	for _, ip := range ips {
		if why := Forbidden(ip); why != "" {
			return nil, fmt.Errorf("%s resolves to %s, %s", host, ip, why)
		}
	}
	d := net.Dialer{Timeout: 30 * time.Second}
	var last error
	for _, ip := range ips {
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// ServeHTTP answers CONNECT and absolute-URL requests.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Host == "" || r.URL.Scheme != "http" {
		http.Error(w, "statewright: the sandbox's proxy takes absolute http:// URLs and CONNECT", http.StatusBadRequest)
		return
	}
	host := r.URL.Hostname()
	if hh, _, err := net.SplitHostPort(r.Host); err == nil && !strings.EqualFold(hh, host) || err != nil && r.Host != "" && !strings.EqualFold(r.Host, host) {
		p.refuse(w, host, "the Host header names another host ("+r.Host+")")
		return
	}
	port := r.URL.Port()
	if port == "" {
		port = "80"
	}
	conn, err := p.dialChecked(r.Context(), host, port)
	if err != nil {
		p.refuse(w, host, err.Error())
		return
	}
	tr := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return conn, nil }, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	resp, err := tr.RoundTrip(out)
	if err != nil {
		http.Error(w, "statewright: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		http.Error(w, "statewright: CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	upstream, err := p.dialChecked(r.Context(), host, port)
	if err != nil {
		p.refuse(w, host, err.Error())
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "statewright: cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		client.Close()
		upstream.Close()
		return
	}
	// The first bytes of a TLS client name the server it wants (SNI):
	// it must be the host of the CONNECT.
	_ = client.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReaderSize(io.MultiReader(buf, client), 16<<10)
	if sni, isTLS := peekSNI(br); isTLS && sni != "" && !strings.EqualFold(strings.TrimSuffix(sni, "."), host) {
		fmt.Fprintf(p.log, "statewright sandbox: the network proxy refused a TLS connection to %s that names %s\n", host, sni)
		p.mu.Lock()
		p.denied = append(p.denied, sni)
		p.mu.Unlock()
		client.Close()
		upstream.Close()
		return
	}
	_ = client.SetReadDeadline(time.Time{})
	go func() {
		_, _ = io.Copy(upstream, br)
		if tc, ok := upstream.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	_, _ = io.Copy(client, upstream)
	client.Close()
	upstream.Close()
}

// peekSNI reads, without consuming, a TLS ClientHello at the head of br
// and returns its server name. isTLS is false when the stream does not
// start with a TLS handshake record.
func peekSNI(br *bufio.Reader) (sni string, isTLS bool) {
	hdr, err := br.Peek(5)
	if err != nil || hdr[0] != 0x16 || hdr[1] != 3 {
		return "", false
	}
	n := int(binary.BigEndian.Uint16(hdr[3:5]))
	if n > br.Size()-5 {
		return "", true
	}
	rec, err := br.Peek(5 + n)
	if err != nil {
		return "", true
	}
	b := rec[5:]
	// handshake: type(1) len(3) version(2) random(32) sid(1+n) suites(2+n) comp(1+n) ext(2+n)
	if len(b) < 4 || b[0] != 1 {
		return "", true
	}
	b = b[4:]
	skip := func(k int) bool {
		if len(b) < k {
			return false
		}
		b = b[k:]
		return true
	}
	vec := func(lenBytes int) bool {
		if len(b) < lenBytes {
			return false
		}
		var l int
		for i := 0; i < lenBytes; i++ {
			l = l<<8 | int(b[i])
		}
		return skip(lenBytes + l)
	}
	if !skip(2+32) || !vec(1) || !vec(2) || !vec(1) || len(b) < 2 {
		return "", true
	}
	ext := b[2:]
	if l := int(binary.BigEndian.Uint16(b)); l < len(ext) {
		ext = ext[:l]
	}
	for len(ext) >= 4 {
		typ := binary.BigEndian.Uint16(ext)
		l := int(binary.BigEndian.Uint16(ext[2:]))
		if len(ext) < 4+l {
			break
		}
		data := ext[4 : 4+l]
		ext = ext[4+l:]
		if typ != 0 || len(data) < 2 {
			continue
		}
		list := data[2:]
		for len(list) >= 3 {
			nl := int(binary.BigEndian.Uint16(list[1:]))
			if len(list) < 3+nl {
				break
			}
			if list[0] == 0 {
				return string(list[3 : 3+nl]), true
			}
			list = list[3+nl:]
		}
	}
	return "", true
}

// proxyEnv are the variables that point programs at the proxy inside.
func proxyEnv() []string {
	u := "http://" + ProxyListen
	return []string{"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "http_proxy=" + u, "https_proxy=" + u,
		"ALL_PROXY=" + u, "all_proxy=" + u, "NO_PROXY=", "no_proxy="}
}

// netSetup starts the proxy for a profile that needs one and returns the
// extra bubblewrap binds, the argv prefix that runs the forwarder inside,
// and a stop function. exe is the launcher binary (bound into the sandbox
// to run the forwarder).
func netSetup(p *Profile, exe string, log io.Writer) (binds [][2]string, prefix []string, proxy *Proxy, stop func(), err error) {
	if p.Proxy == nil || p.Network {
		return nil, nil, nil, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "swnet-")
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("sandbox: network proxy: %w", err)
	}
	sock := filepath.Join(dir, "p.sock")
	px, err := StartProxy(p.Proxy, sock, log)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, nil, nil, err
	}
	stop = func() {
		px.Close()
		os.RemoveAll(dir)
	}
	binds = [][2]string{{sock, proxySocketInside}, {exe, netinitInside}}
	prefix = []string{netinitInside, "sandbox", "netinit", "--socket", proxySocketInside, "--listen", ProxyListen, "--"}
	return binds, prefix, px, stop, nil
}

// NetInit is the forwarder that runs first inside a sandbox whose network
// goes through the proxy: it listens on ProxyListen in the sandbox's
// network namespace, forwards every connection to the proxy's socket, runs
// argv and exits with its status. args are what follows "netinit".
func NetInit(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var socket, listen string
	var argv []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--socket" && i+1 < len(args):
			i++
			socket = args[i]
		case a == "--listen" && i+1 < len(args):
			i++
			listen = args[i]
		case a == "--":
			argv = args[i+1:]
			i = len(args)
		default:
			fmt.Fprintf(stderr, "statewright sandbox netinit: unexpected argument %q\n", a)
			return 126
		}
	}
	if socket == "" || listen == "" || len(argv) == 0 {
		fmt.Fprintln(stderr, "statewright sandbox netinit: usage: netinit --socket S --listen ADDR -- ARGV...")
		return 126
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintf(stderr, "statewright sandbox: the network forwarder cannot listen on %s: %v\n", listen, err)
		return 126
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("unix", socket)
				if err != nil {
					return
				}
				defer u.Close()
				go func() {
					_, _ = io.Copy(u, c)
					if uc, ok := u.(*net.UnixConn); ok {
						_ = uc.CloseWrite()
					}
				}()
				_, _ = io.Copy(c, u)
			}()
		}
	}()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "statewright sandbox: %v\n", err)
		return 127
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	if code, ok := ExitStatus(err); ok {
		return code
	}
	fmt.Fprintf(stderr, "statewright sandbox: %v\n", err)
	return 126
}
