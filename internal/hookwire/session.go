package hookwire

import (
	"errors"
	"io"
)

// Hello is what a decider says about itself, once its MAC checked.
type Hello struct {
	Identity
	// Pid is the decider's process id; Version its protocol.
	Pid     int
	Version string
}

// Session is one authenticated exchange, from the client's side.
type Session struct {
	rw     io.ReadWriter
	key    []byte
	nc, nd []byte
}

// ErrStale is returned by Handshake when the decider runs another binary
// or protocol than the one expected.
var ErrStale = errors.New("hookwire: the decider runs another binary or protocol (stale)")

// Handshake sends the client's hello on rw and checks the decider's: it
// must prove key over the client's fresh nonce. When want is not nil, the
// decider must run the binary want identifies and speak Version, else
// Handshake returns the hello with ErrStale (the session still works, so
// that the caller can ask the stale decider to quit).
func Handshake(rw io.ReadWriter, key []byte, want *Identity) (*Session, Hello, error) {
	nc, err := Nonce()
	if err != nil {
		return nil, Hello{}, err
	}
	if err := WriteFrame(rw, KindClientHello, nc[:]); err != nil {
		return nil, Hello{}, err
	}
	p, err := ReadFrame(rw, KindDeciderHello)
	if err != nil {
		return nil, Hello{}, err
	}
	if len(p) < 32 {
		return nil, Hello{}, errShort
	}
	nd := p[:32]
	body, err := SplitMAC(key, LabelDeciderHello, nc[:], nd, p[32:])
	if err != nil {
		return nil, Hello{}, err
	}
	var h Hello
	if h.Identity, h.Pid, h.Version, err = UnmarshalIdentity(body); err != nil {
		return nil, Hello{}, err
	}
	s := &Session{rw: rw, key: key, nc: nc[:], nd: nd}
	if want != nil && (h.Identity != *want || h.Version != Version) {
		return s, h, ErrStale
	}
	return s, h, nil
}

// Send sends the request.
func (s *Session) Send(req *Request) error {
	body := req.Marshal()
	return WriteFrame(s.rw, KindRequest, MAC(s.key, LabelRequest, s.nc, s.nd, body), body)
}

// Receive reads the answer and checks its MAC.
func (s *Session) Receive() (*Answer, error) {
	p, err := ReadFrame(s.rw, KindAnswer)
	if err != nil {
		return nil, err
	}
	body, err := SplitMAC(s.key, LabelAnswer, s.nc, s.nd, p)
	if err != nil {
		return nil, err
	}
	return UnmarshalAnswer(body)
}

// ServerSession is one authenticated exchange, from the decider's side.
type ServerSession struct {
	rw     io.ReadWriter
	key    []byte
	nc, nd []byte
}

// Accept reads the client's hello on rw and answers with the decider's,
// proving key over the client's nonce.
func Accept(rw io.ReadWriter, key []byte, id Identity, pid int) (*ServerSession, error) {
	p, err := ReadFrame(rw, KindClientHello)
	if err != nil {
		return nil, err
	}
	return AcceptHello(rw, p, key, id, pid)
}

// AcceptHello is Accept for a client hello read already (ReadFirst's
// payload p).
func AcceptHello(rw io.ReadWriter, p []byte, key []byte, id Identity, pid int) (*ServerSession, error) {
	if len(p) != 32 {
		return nil, errShort
	}
	nd, err := Nonce()
	if err != nil {
		return nil, err
	}
	body := MarshalIdentity(id, pid, Version)
	if err := WriteFrame(rw, KindDeciderHello, nd[:], MAC(key, LabelDeciderHello, p, nd[:], body), body); err != nil {
		return nil, err
	}
	return &ServerSession{rw: rw, key: key, nc: p, nd: nd[:]}, nil
}

// ReadRequest reads the request; a client that does not prove the key
// gets ErrBadMAC.
func (s *ServerSession) ReadRequest() (*Request, error) {
	p, err := ReadFrame(s.rw, KindRequest)
	if err != nil {
		return nil, err
	}
	body, err := SplitMAC(s.key, LabelRequest, s.nc, s.nd, p)
	if err != nil {
		return nil, err
	}
	return UnmarshalRequest(body)
}

// WriteAnswer sends the answer.
func (s *ServerSession) WriteAnswer(a *Answer) error {
	body := a.Marshal()
	return WriteFrame(s.rw, KindAnswer, MAC(s.key, LabelAnswer, s.nc, s.nd, body), body)
}
