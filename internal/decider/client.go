//go:build unix

package decider

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/statewright-go/statewright/internal/hookwire"
)

// Ask sends one control request (hookwire.OpStatus, hookwire.OpQuit) to
// the decider of bin in dir, as the thin client would reach it. The hello
// is returned even when the decider is stale (with hookwire.ErrStale).
func Ask(dir, bin string, op byte) (*hookwire.Answer, hookwire.Hello, error) {
	paths := hookwire.PathsFor(dir, bin)
	key, err := hookwire.ReadKey(paths.Key)
	if err != nil {
		return nil, hookwire.Hello{}, err
	}
	want, err := hookwire.StatIdentity(bin)
	if err != nil {
		return nil, hookwire.Hello{}, err
	}
	c, err := hookwire.Dial(paths.Socket, 2*time.Second)
	if err != nil {
		return nil, hookwire.Hello{}, err
	}
	defer c.Close()
	s, hello, err := hookwire.Handshake(c, key, &want)
	if err != nil && !(errors.Is(err, hookwire.ErrStale) && op == hookwire.OpQuit) {
		return nil, hello, err
	}
	if err := s.Send(&hookwire.Request{Op: op}); err != nil {
		return nil, hello, err
	}
	a, err := s.Receive()
	return a, hello, err
}

// StatusOf asks the decider of bin in dir for its status.
func StatusOf(dir, bin string) (*Status, error) {
	a, _, err := Ask(dir, bin, hookwire.OpStatus)
	if err != nil {
		return nil, err
	}
	var st Status
	if err := json.Unmarshal(a.Stdout, &st); err != nil {
		return nil, err
	}
	return &st, nil
}
