//go:build unix

package main

import (
	"os"
	"syscall"
	"time"

	"github.com/statewright-go/statewright/internal/hookwire"
)

// askDecider asks the decider of bin to answer the hook; nil when none
// answered in time (then, when none seems to run, it starts one for the
// next hook).
func askDecider(bin string, args []string, input []byte, start time.Time, deadline time.Duration) *hookwire.Answer {
	dir := hookwire.Dir(os.Getenv)
	if dir == "" {
		return nil
	}
	paths := hookwire.PathsFor(dir, bin)
	want, err := hookwire.StatIdentity(bin)
	if err != nil {
		return nil // no full binary: exec fails and the wrapper denies
	}
	key, err := hookwire.ReadKey(paths.Key)
	if err != nil {
		startDecider(bin, paths)
		return nil
	}
	until := start.Add(deadline - reserveFor(deadline))
	// The socket file's identity binds the request to the decider that
	// listens on it (hookwire.AcceptOneShot).
	sock, err := hookwire.StatIdentity(paths.Socket)
	if err != nil {
		startDecider(bin, paths)
		return nil
	}
	c, err := hookwire.Dial(paths.Socket, min(handshakeFor(deadline), time.Until(until)))
	if err != nil {
		startDecider(bin, paths)
		return nil
	}
	defer c.Close()
	wd, _ := os.Getwd()
	old := syscall.Umask(0)
	syscall.Umask(old)
	req := &hookwire.Request{Op: hookwire.OpHook, Args: args, Env: os.Environ(), Dir: wd, Umask: uint32(old), Input: input,
		Budget: time.Until(until) - marginFor(deadline)}
	// The request may be large (the input): it may take until until to
	// send; the hello must come within the handshake time (Dial's).
	if req.Budget <= 0 || c.SetWriteTimeout(time.Until(until)) != nil {
		return nil
	}
	// One round trip: the request goes out with the client's nonce; the
	// decider's hello, over that nonce, must come within the handshake
	// time (else it is taken as hung), its answer by until.
	s, err := hookwire.SendOneShot(c, key, want, sock, req, time.Now())
	if err != nil {
		return nil
	}
	if _, err := s.ReadHello(&want); err != nil {
		// Stale (it refused the request), hung, or not the decider (a
		// fake socket): replaced. A decider started by an older binary
		// is asked to quit by the new one (decider.lock).
		startDecider(bin, paths)
		return nil
	}
	if c.SetReadTimeout(time.Until(until)) != nil {
		return nil
	}
	a, err := s.Receive()
	if err != nil || a.Refused != "" {
		return nil
	}
	return a
}

// startDecider starts `statewright decider serve` for bin, detached from
// the hook (its own session, no standard streams: nothing it does reaches
// the harness), unless a start failed moments ago.
func startDecider(bin string, paths hookwire.Paths) {
	if fi, err := os.Stat(paths.Fail); err == nil && time.Since(fi.ModTime()) < 30*time.Second {
		return
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return
	}
	defer null.Close()
	closeInherited()
	p, err := os.StartProcess(bin, []string{bin, "decider", "serve", "--dir", paths.Dir}, &os.ProcAttr{
		Files: []*os.File{null, null, null},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err == nil {
		p.Release()
	}
}
