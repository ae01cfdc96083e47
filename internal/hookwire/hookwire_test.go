package hookwire

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

func TestDir(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/c", "HOME": "/h"}, "/c/statewright/decider"},
		{map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/h"}, "/h/.config/statewright/decider"},
		{map[string]string{"HOME": "/h"}, "/h/.config/statewright/decider"},
		{map[string]string{"HOME": "h"}, ""},
		{nil, ""},
	} {
		if got := Dir(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %q, want %q", c.env, got, c.want)
		}
	}
	a, b := PathsFor("/d", "/usr/bin/statewright"), PathsFor("/d", "/opt/bin/statewright")
	if a.Socket == b.Socket || a.Key != b.Key || a.Key != KeyPath("/d") {
		t.Errorf("two binaries share a socket or not the key: %+v %+v", a, b)
	}
}

// TestEnsureKey: concurrent first uses agree on one key, kept private.
func TestEnsureKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decider", "key")
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := EnsureKey(path)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if !bytes.Equal(k, keys[0]) || len(k) != KeySize {
			t.Fatalf("keys differ: %x %x", k, keys[0])
		}
	}
	if k, err := ReadKey(path); err != nil || !bytes.Equal(k, keys[0]) {
		t.Errorf("ReadKey: %x %v", k, err)
	}
}

func TestRoundTrip(t *testing.T) {
	r := &Request{Op: OpHook, Args: []string{"hook", "claude-code", "pre-tool-use", "--store", "x"}, Env: []string{"A=1", "B="},
		Dir: "/p", Umask: 0o22, Budget: 3 * time.Second, Input: []byte(`{"a":1}`)}
	got, err := UnmarshalRequest(r.Marshal())
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Errorf("request: %+v %v", got, err)
	}
	a := &Answer{Exit: 2, Stdout: []byte("{}"), Stderr: "denied"}
	if got, err := UnmarshalAnswer(a.Marshal()); err != nil || !reflect.DeepEqual(got, a) {
		t.Errorf("answer: %+v %v", got, err)
	}
	id := Identity{1, 2, 3, 4}
	if gid, pid, v, err := UnmarshalIdentity(MarshalIdentity(id, 42, Version)); err != nil || gid != id || pid != 42 || v != Version {
		t.Errorf("identity: %v %d %q %v", gid, pid, v, err)
	}
}

// pipe is one end of an in-memory connection.
type pipe struct {
	io.Reader
	io.Writer
}

func pair() (client, server pipe) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	return pipe{cr, cw}, pipe{sr, sw}
}

// TestExchange: both sides prove the key; a decider with another key, or
// another binary, is refused by the client; a client with another key is
// refused by the decider.
func TestExchange(t *testing.T) {
	key := bytes.Repeat([]byte{1}, KeySize)
	other := bytes.Repeat([]byte{2}, KeySize)
	id := Identity{Dev: 1, Ino: 2, Size: 3, Mtime: 4}
	serve := func(p pipe, key []byte, got chan<- *Request) {
		s, err := Accept(p, key, id, 7)
		if err != nil {
			got <- nil
			return
		}
		r, err := s.ReadRequest()
		got <- r
		if err == nil {
			s.WriteAnswer(&Answer{Exit: 2, Stderr: "no"})
		}
	}
	for _, c := range []struct {
		name                string
		clientKey, srvKey   []byte
		want                Identity
		handshake, received bool
		stale               bool
	}{
		{"same key and binary", key, key, id, true, true, false},
		{"fake decider", key, other, id, false, false, false},
		{"stale decider", key, key, Identity{Dev: 1, Ino: 9, Size: 3, Mtime: 4}, true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cp, sp := pair()
			got := make(chan *Request, 1)
			go serve(sp, c.srvKey, got)
			s, hello, err := Handshake(cp, c.clientKey, &c.want)
			switch {
			case c.stale && !errors.Is(err, ErrStale):
				t.Fatalf("stale: %v", err)
			case !c.handshake && !errors.Is(err, ErrBadMAC):
				t.Fatalf("fake: %v", err)
			case c.handshake && !c.stale && err != nil:
				t.Fatal(err)
			}
			if !c.handshake {
				return
			}
			if hello.Pid != 7 || hello.Version != Version {
				t.Errorf("hello %+v", hello)
			}
			if c.stale {
				return
			}
			if err := s.Send(&Request{Op: OpHook, Input: []byte("x")}); err != nil {
				t.Fatal(err)
			}
			a, err := s.Receive()
			if err != nil || a.Exit != 2 || a.Stderr != "no" {
				t.Errorf("answer %+v %v", a, err)
			}
			if r := <-got; r == nil || string(r.Input) != "x" {
				t.Errorf("request %+v", r)
			}
		})
	}

	// A client with another key: the decider refuses its request.
	cp, sp := pair()
	got := make(chan *Request, 1)
	go serve(sp, key, got)
	s, _, err := Handshake(cp, other, nil)
	if !errors.Is(err, ErrBadMAC) {
		t.Fatalf("a client with another key accepted the decider: %v", err)
	}
	_ = s
	body := (&Request{Op: OpHook}).Marshal()
	go WriteFrame(cp, KindRequest, MAC(other, LabelRequest, make([]byte, 32), make([]byte, 32), body), body)
	if r := <-got; r != nil {
		t.Errorf("the decider read a request signed with another key: %+v", r)
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add((&Request{Op: OpHook, Args: []string{"a"}, Env: []string{"B=1"}, Input: []byte("{}")}).Marshal())
	f.Add((&Answer{Exit: 2, Stderr: "x"}).Marshal())
	f.Add(MarshalIdentity(Identity{1, 2, 3, 4}, 5, Version))
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := UnmarshalRequest(b); err == nil {
			if r2, err := UnmarshalRequest(r.Marshal()); err != nil || !reflect.DeepEqual(r, r2) {
				t.Errorf("request does not round-trip: %v", err)
			}
		}
		if a, err := UnmarshalAnswer(b); err == nil {
			if a2, err := UnmarshalAnswer(a.Marshal()); err != nil || !reflect.DeepEqual(a, a2) {
				t.Errorf("answer does not round-trip: %v", err)
			}
		}
		UnmarshalIdentity(b)
		ReadFrame(bytes.NewReader(b), KindRequest)
		ReadFirst(bytes.NewReader(b))
	})
}

// TestOneShot: the one-shot exchange authenticates both sides as the
// exchange in steps does, and the decider acts on a request only for its
// own binary and socket, within the window, once.
func TestOneShot(t *testing.T) {
	key := bytes.Repeat([]byte{1}, KeySize)
	other := bytes.Repeat([]byte{2}, KeySize)
	id := Identity{Dev: 1, Ino: 2, Size: 3, Mtime: 4}
	sock := Identity{Dev: 5, Ino: 6}
	now := time.Unix(1_800_000_000, 0)
	// frame is a one-shot request as a client sends it.
	frame := func(key []byte, want, sock Identity, sent time.Time) []byte {
		var b bytes.Buffer
		if _, err := SendOneShot(&b, key, want, sock, &Request{Op: OpHook, Input: []byte("x")}, sent); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	// accept runs the decider's side on a captured frame.
	accept := func(f []byte, srvKey []byte, guard *ReplayGuard) (*Request, []byte, error) {
		kind, p, err := ReadFirst(bytes.NewReader(f))
		if err != nil || kind != KindOneShot {
			t.Fatalf("ReadFirst: %c %v", kind, err)
		}
		var out bytes.Buffer
		_, r, err := AcceptOneShot(&out, p, srvKey, id, 7, sock, guard, now)
		return r, out.Bytes(), err
	}
	var guard ReplayGuard
	good := frame(key, id, sock, now.Add(-time.Millisecond))
	for _, c := range []struct {
		name   string
		f      []byte
		srvKey []byte
		want   error
	}{
		{"same key, binary and socket", good, key, nil},
		{"the same request again", good, key, ErrReplayed},
		{"a client with another key", frame(other, id, sock, now), key, ErrBadMAC},
		{"a client expecting another binary", frame(key, Identity{Dev: 1, Ino: 9, Size: 3, Mtime: 4}, sock, now), key, ErrStale},
		{"made for another socket file (a fake listener's)", frame(key, id, Identity{Dev: 5, Ino: 7}, now), key, ErrOtherSocket},
		{"sent too long ago", frame(key, id, sock, now.Add(-OneShotWindow-time.Second)), key, ErrReplayed},
		{"sent in the future", frame(key, id, sock, now.Add(time.Minute)), key, ErrReplayed},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _, err := accept(c.f, c.srvKey, &guard)
			if !errors.Is(err, c.want) && !(c.want == nil && err == nil) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if c.want == nil && (r == nil || string(r.Input) != "x") {
				t.Errorf("request %+v", r)
			}
		})
	}

	// The client's side: the decider's hello and answer over its nonce.
	for _, c := range []struct {
		name    string
		srvKey  []byte
		srvID   Identity
		wantErr error
	}{
		{"the decider", key, id, nil},
		{"a fake decider", other, id, ErrBadMAC},
		{"a stale decider", key, Identity{Dev: 1, Ino: 2, Size: 3, Mtime: 5}, ErrStale},
	} {
		t.Run("client: "+c.name, func(t *testing.T) {
			cp, sp := pair()
			go func() {
				_, p, err := ReadFirst(sp)
				if err != nil {
					return
				}
				var g ReplayGuard
				s, _, err := AcceptOneShot(sp, p, c.srvKey, c.srvID, 7, sock, &g, time.Now())
				if s == nil {
					// A fake decider: it cannot check the MAC, and answers
					// with its own key.
					nd := make([]byte, 32)
					hello := MarshalIdentity(c.srvID, 7, Version)
					WriteFrame(sp, KindDeciderHello, nd, MAC(c.srvKey, LabelDeciderHello, p[:32], nd, hello), hello)
					return
				}
				if err != nil {
					s.WriteAnswer(&Answer{Refused: err.Error()})
					return
				}
				s.WriteAnswer(&Answer{Exit: 2, Stderr: "no"})
			}()
			s, err := SendOneShot(cp, key, id, sock, &Request{Op: OpHook}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			h, err := s.ReadHello(&id)
			if !errors.Is(err, c.wantErr) && !(c.wantErr == nil && err == nil) {
				t.Fatalf("hello: %v, want %v", err, c.wantErr)
			}
			if err != nil {
				return
			}
			if h.Pid != 7 || h.Version != Version {
				t.Errorf("hello %+v", h)
			}
			if a, err := s.Receive(); err != nil || a.Exit != 2 || a.Stderr != "no" {
				t.Errorf("answer %+v %v", a, err)
			}
		})
	}
}
