package serve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// ProbeAddr is the address a health probe dials for a server listening on
// listen: the same port on loopback when listen's host is unspecified
// (0.0.0.0, ::, or none), else listen itself.
func ProbeAddr(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %w (want HOST:PORT)", listen, err)
	}
	switch {
	case host == "" || host == "0.0.0.0":
		host = "127.0.0.1"
	case isUnspecified(host):
		host = "::1"
	}
	return net.JoinHostPort(host, port), nil
}

// Probe asks the server at addr (host:port) for /healthz and returns nil
// when it answers 200 "ok": the health check of a container image that has
// no curl (statewright healthcheck).
func Probe(ctx context.Context, addr string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
	if err != nil {
		return err
	}
	c := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		return fmt.Errorf("%s/healthz answered %s: %q", addr, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
