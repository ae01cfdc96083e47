package hookwire

import (
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"time"
)

// The one-shot exchange: a hook in one round trip. The client does not
// wait for the decider's hello before it sends its request; the request
// carries everything the hello exchange gave the decider instead:
//
//	client → decider  one-shot request: a fresh nonce Nc,
//	                  MAC(key, "request-1rt" Nc body), body; the body
//	                  holds the identity the client expects the decider to
//	                  run (binary and protocol), the identity of the socket
//	                  file it connected to, the time it was sent and the
//	                  request
//	decider → client  hello, as in the exchange above (over Nc and a fresh
//	                  Nd), sent at once, before the decider decides
//	decider → client  answer, as above (its MAC over Nc and Nd)
//
// The decider acts on a one-shot request only when its MAC holds, when it
// runs the binary and protocol the client expects (else it answers Refused
// and the client, seeing the hello, takes it as stale), when it listens on
// the socket file the client connected to, when the request was sent
// within OneShotWindow, and when it has not seen Nc in that window
// (ReplayGuard). A request taken by a fake listener at the socket path
// thus cannot be played to the real decider, which listens on another
// file; a request is acted on at most once. The client still learns the
// decider holds the key from the hello and the answer, both over its
// fresh Nc, and still takes a decider that does not greet within its
// handshake time as hung.

// LabelOneShot labels a one-shot request's MAC.
const LabelOneShot = "request-1rt"

// KindOneShot is a one-shot request's frame kind.
const KindOneShot = 'Q'

// OneShotWindow bounds how old a one-shot request may be when the decider
// reads it (a local socket delivers it within microseconds).
const OneShotWindow = 10 * time.Second

// ErrReplayed is returned for a one-shot request that is too old, from
// the future, or seen before.
var ErrReplayed = errors.New("hookwire: a one-shot request out of its window or seen before")

// ErrOtherSocket is returned for a one-shot request made for another
// socket file than the decider's.
var ErrOtherSocket = errors.New("hookwire: a one-shot request for another socket")

// SendOneShot sends req to the decider as a one-shot request: want is the
// binary the client would run itself, sock the identity of the socket file
// it connected to. The session reads the decider's hello (ReadHello), then
// its answer (Receive).
func SendOneShot(rw io.ReadWriter, key []byte, want, sock Identity, req *Request, now time.Time) (*Session, error) {
	nc, err := Nonce()
	if err != nil {
		return nil, err
	}
	ids := MarshalIdentity(want, 0, Version)
	r := req.Marshal()
	body := make([]byte, 0, 16+len(ids)+48+len(r))
	body = appendString(body, string(ids))
	body = appendString(body, string(MarshalIdentity(sock, 0, "")))
	body = binary.BigEndian.AppendUint64(body, uint64(now.UnixNano()))
	body = append(body, r...)
	if err := WriteFrame(rw, KindOneShot, nc[:], MAC(key, LabelOneShot, nc[:], nil, body), body); err != nil {
		return nil, err
	}
	return &Session{rw: rw, key: key, nc: nc[:]}, nil
}

// ReadHello reads the decider's hello after SendOneShot and checks it: it
// must prove the key over the client's nonce; when want is not nil, the
// decider must run the binary want identifies and speak Version, else
// ReadHello returns the hello with ErrStale (the decider then refused the
// request).
func (s *Session) ReadHello(want *Identity) (Hello, error) {
	p, err := ReadFrame(s.rw, KindDeciderHello)
	if err != nil {
		return Hello{}, err
	}
	if len(p) < 32 {
		return Hello{}, errShort
	}
	nd := p[:32]
	body, err := SplitMAC(s.key, LabelDeciderHello, s.nc, nd, p[32:])
	if err != nil {
		return Hello{}, err
	}
	var h Hello
	if h.Identity, h.Pid, h.Version, err = UnmarshalIdentity(body); err != nil {
		return Hello{}, err
	}
	s.nd = nd
	if want != nil && (h.Identity != *want || h.Version != Version) {
		return h, ErrStale
	}
	return h, nil
}

// ReadFirst reads a connection's first frame: a client hello (the
// exchange in steps) or a one-shot request; it returns the kind and the
// payload.
func ReadFirst(r io.Reader) (byte, []byte, error) {
	return readFrame(r, func(kind byte) (uint32, bool) {
		switch kind {
		case KindClientHello:
			return 1 << 10, true
		case KindOneShot:
			return maxFrame, true
		}
		return 0, false
	})
}

// AcceptOneShot answers a one-shot request (the payload ReadFirst
// returned): it checks the client's MAC, sends the decider's hello (id,
// pid) and returns the session and the request. The request is returned
// with ErrStale when the client expects another binary or protocol than
// id (the caller answers Refused); with ErrOtherSocket when it was made
// for another socket file than sock; with ErrReplayed when guard refuses
// it. A client that does not prove the key gets ErrBadMAC and no hello.
func AcceptOneShot(rw io.ReadWriter, p []byte, key []byte, id Identity, pid int, sock Identity, guard *ReplayGuard, now time.Time) (*ServerSession, *Request, error) {
	if len(p) < 32 {
		return nil, nil, errShort
	}
	nc := p[:32]
	body, err := SplitMAC(key, LabelOneShot, nc, nil, p[32:])
	if err != nil {
		return nil, nil, err
	}
	d := decoder{b: body}
	want, sockBytes := d.string(), d.string()
	if d.err != nil || len(d.b) < 8 {
		return nil, nil, errShort
	}
	sent := time.Unix(0, int64(binary.BigEndian.Uint64(d.b)))
	req, err := UnmarshalRequest(d.b[8:])
	if err != nil {
		return nil, nil, err
	}
	wantID, _, wantVersion, err := UnmarshalIdentity([]byte(want))
	if err != nil {
		return nil, nil, err
	}
	sockID, _, _, err := UnmarshalIdentity([]byte(sockBytes))
	if err != nil {
		return nil, nil, err
	}
	nd, err := Nonce()
	if err != nil {
		return nil, nil, err
	}
	hello := MarshalIdentity(id, pid, Version)
	if err := WriteFrame(rw, KindDeciderHello, nd[:], MAC(key, LabelDeciderHello, nc, nd[:], hello), hello); err != nil {
		return nil, nil, err
	}
	s := &ServerSession{rw: rw, key: key, nc: nc, nd: nd[:]}
	switch {
	case wantID != id || wantVersion != Version:
		return s, req, ErrStale
	case sockID.Dev != sock.Dev || sockID.Ino != sock.Ino:
		return s, req, ErrOtherSocket
	case !guard.Fresh([32]byte(nc), sent, now):
		return s, req, ErrReplayed
	}
	return s, req, nil
}

// ReplayGuard remembers the nonces of the one-shot requests accepted
// within OneShotWindow. The zero value is ready to use.
type ReplayGuard struct {
	mu   sync.Mutex
	seen map[[32]byte]time.Time // nonce → when it leaves the window
}

// Fresh reports whether a request with nonce nc, sent at sent, may be
// acted on at now: sent within OneShotWindow (and not later than now,
// give or take a second of clock skew between two processes' readings),
// nc not seen in that time. It records nc.
func (g *ReplayGuard) Fresh(nc [32]byte, sent, now time.Time) bool {
	if sent.Before(now.Add(-OneShotWindow)) || sent.After(now.Add(time.Second)) {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil {
		g.seen = map[[32]byte]time.Time{}
	}
	if _, ok := g.seen[nc]; ok {
		return false
	}
	if len(g.seen) >= 64 {
		for k, until := range g.seen {
			if now.After(until) {
				delete(g.seen, k)
			}
		}
	}
	// Kept until the request could no longer pass the window check.
	g.seen[nc] = sent.Add(OneShotWindow + time.Second)
	return true
}
