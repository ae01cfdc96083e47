// Package hookwire is the protocol between the thin hook client
// (cmd/statewright-hook) and the local decider (internal/decider): where
// the decider's socket and the per-install key live, how each side proves
// it holds the key, and how a hook request and its answer are framed.
//
// It imports only small parts of the standard library, because the thin
// client links it and must start near a trivial program's spawn cost
// (docs/hooks.md).
//
// One exchange over a fresh unix-socket connection:
//
//	client → decider  hello: a fresh nonce Nc
//	decider → client  hello: a fresh nonce Nd, the decider's identity (the
//	                  binary it runs: device, inode, size, mtime; its pid and
//	                  protocol), MAC(key, "decider-hello" Nc Nd identity)
//	client → decider  request: MAC(key, "request" Nc Nd body), body
//	decider → client  answer: MAC(key, "answer" Nc Nd body), body
//
// The MAC is HMAC-SHA256 under the per-install key. Each side proves the
// key over the other's fresh nonce, so a process that does not hold the
// key can neither pose as the decider (a fake socket) nor as a client, and
// a relay between the two can change nothing without breaking a MAC. A
// peer-UID check alone would prove nothing: the agent runs as the same
// user. The socket directory and the key are hidden in the OS sandbox and
// secret to the static law (runtime.DiscoverHost).
package hookwire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/statewright-go/statewright/internal/rawfile"
)

// Version names this protocol. A decider that speaks another version is
// refused (and replaced).
const Version = "statewright-hook/1"

// DefaultDeadline is the hook's own deadline when the command line names
// none; it equals install.DefaultDeadline (a test checks).
const DefaultDeadline = 5 * time.Second

// MaxInputBytes bounds the hook input; it equals harness.MaxInputBytes (a
// test checks). A larger input goes to the full binary, which refuses it.
const MaxInputBytes = 32 << 20

// maxFrame bounds one frame: the input, the environment and the argv.
const maxFrame = MaxInputBytes + 4<<20

// KeySize is the size of the per-install key.
const KeySize = 32

// Dir returns the decider's directory for an environment: the socket,
// lock, log and key live there. It is statewright's configuration
// directory's "decider" subdirectory ($XDG_CONFIG_HOME/statewright/decider,
// else ~/.config/statewright/decider), which the OS sandbox hides whole and
// the static law keeps secret. "" when neither variable names an absolute
// directory.
func Dir(getenv func(string) string) string {
	if c := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(c) {
		return filepath.Join(c, "statewright", "decider")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "statewright", "decider")
	}
	return ""
}

// Paths are the decider's files for one statewright binary: each binary
// path gets a decider of its own, so two installs never replace each
// other's.
type Paths struct {
	// Dir is the decider directory; Key the per-install key in it.
	Dir, Key string
	// Socket is where the decider listens; Lock the file its running
	// instance holds a lock on; Log where it logs; Fail marks a recent
	// failure to start (clients then do not retry at once).
	Socket, Lock, Log, Fail string
}

// KeyPath returns the per-install key's file in the decider directory.
func KeyPath(dir string) string { return filepath.Join(dir, "key") }

// PathsFor returns the decider's files in dir for the binary at bin.
func PathsFor(dir, bin string) Paths {
	h := sha256.Sum256([]byte(bin))
	base := filepath.Join(dir, "d-"+hex.EncodeToString(h[:6]))
	return Paths{Dir: dir, Key: KeyPath(dir), Socket: base + ".sock", Lock: base + ".lock", Log: base + ".log", Fail: base + ".fail"}
}

// ReadKey reads the per-install key.
func ReadKey(path string) ([]byte, error) {
	b, err := rawfile.Read(path, 1<<10, 128)
	if err != nil {
		return nil, err
	}
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	k := make([]byte, KeySize)
	if n, err := hex.Decode(k, b); err != nil || n != KeySize || len(b) != 2*KeySize {
		return nil, errors.New("hookwire: the key file " + path + " does not hold a key")
	}
	return k, nil
}

// EnsureKey returns the per-install key at path, creating it (mode 0600,
// in a 0700 directory) when it is missing. Concurrent callers agree on one
// key: the file is created exclusively.
func EnsureKey(path string) ([]byte, error) {
	if k, err := ReadKey(path); err == nil {
		return k, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	k := make([]byte, KeySize)
	if err := randomFill(k); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	_, werr := f.WriteString(hex.EncodeToString(k) + "\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		return nil, err
	}
	// A hard link fails when another process made the key first: then
	// that one holds.
	if err := os.Link(f.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	return ReadKey(path)
}

// Identity says which binary a decider runs and which protocol it speaks.
// A client compares it with the binary it would run itself: a decider
// started by an older binary (replaced since) is stale.
type Identity struct {
	// Dev, Ino, Size and Mtime identify the binary's file (Mtime in
	// nanoseconds since the epoch).
	Dev, Ino, Size, Mtime uint64
}

// Nonce returns a fresh random nonce.
func Nonce() ([32]byte, error) {
	var n [32]byte
	err := randomFill(n[:])
	return n, err
}

// MAC returns HMAC-SHA256 under key over label, the two nonces and body.
func MAC(key []byte, label string, nc, nd []byte, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	m.Write([]byte{0})
	m.Write(nc)
	m.Write(nd)
	m.Write(body)
	return m.Sum(nil)
}

// Labels of the MACs.
const (
	LabelDeciderHello = "decider-hello"
	LabelRequest      = "request"
	LabelAnswer       = "answer"
)

// Message kinds (the first byte of a frame).
const (
	KindClientHello  = 'h'
	KindDeciderHello = 'H'
	KindRequest      = 'R'
	KindAnswer       = 'A'
)

// Operations a request asks for.
const (
	// OpHook answers one hook.
	OpHook = 'x'
	// OpStatus reports the decider's status (Answer.Stdout: a JSON object).
	OpStatus = 's'
	// OpQuit makes the decider exit (a client that found it stale).
	OpQuit = 'q'
)

// Request is one request to the decider.
type Request struct {
	// Op is OpHook, OpStatus or OpQuit.
	Op byte
	// Args are the hook command's arguments after the program name
	// ("hook", HARNESS, EVENT, flags...).
	Args []string
	// Env is the hook process's environment; Dir its working directory;
	// Umask its umask.
	Env   []string
	Dir   string
	Umask uint32
	// Budget is how long the decider has to answer, from when it reads the
	// request (the hook's --deadline is replaced by it).
	Budget time.Duration
	// Input is the hook's input (its stdin).
	Input []byte
}

// Answer is the decider's answer.
type Answer struct {
	// Refused, when set, says why the decider would not answer this
	// request (another mount namespace, an unknown operation): the client
	// decides in process instead.
	Refused string
	// Exit, Stdout and Stderr are the hook's answer.
	Exit   int
	Stdout []byte
	Stderr string
}

// MarshalIdentity renders the decider's hello body (without the MAC).
func MarshalIdentity(id Identity, pid int, version string) []byte {
	b := make([]byte, 0, 64)
	b = binary.AppendUvarint(b, id.Dev)
	b = binary.AppendUvarint(b, id.Ino)
	b = binary.AppendUvarint(b, id.Size)
	b = binary.AppendUvarint(b, id.Mtime)
	b = binary.AppendUvarint(b, uint64(pid))
	return appendString(b, version)
}

// UnmarshalIdentity parses MarshalIdentity's output.
func UnmarshalIdentity(b []byte) (id Identity, pid int, version string, err error) {
	d := decoder{b: b}
	id.Dev, id.Ino, id.Size, id.Mtime = d.uvarint(), d.uvarint(), d.uvarint(), d.uvarint()
	pid = int(d.uvarint())
	version = d.string()
	return id, pid, version, d.done()
}

// Marshal renders a request's body.
func (r *Request) Marshal() []byte {
	n := 64 + len(r.Input) + len(r.Dir)
	for _, s := range r.Args {
		n += len(s) + 4
	}
	for _, s := range r.Env {
		n += len(s) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, r.Op)
	b = appendStrings(b, r.Args)
	b = appendStrings(b, r.Env)
	b = appendString(b, r.Dir)
	b = binary.AppendUvarint(b, uint64(r.Umask))
	b = binary.AppendUvarint(b, uint64(max(r.Budget, 0)))
	return appendString(b, string(r.Input))
}

// UnmarshalRequest parses a request's body.
func UnmarshalRequest(b []byte) (*Request, error) {
	d := decoder{b: b}
	r := &Request{Op: d.byte()}
	r.Args = d.strings()
	r.Env = d.strings()
	r.Dir = d.string()
	r.Umask = uint32(d.uvarint())
	r.Budget = time.Duration(d.uvarint())
	r.Input = []byte(d.string())
	return r, d.done()
}

// Marshal renders an answer's body.
func (a *Answer) Marshal() []byte {
	b := make([]byte, 0, 16+len(a.Refused)+len(a.Stdout)+len(a.Stderr))
	b = appendString(b, a.Refused)
	b = binary.AppendVarint(b, int64(a.Exit))
	b = appendString(b, string(a.Stdout))
	return appendString(b, a.Stderr)
}

// UnmarshalAnswer parses an answer's body.
func UnmarshalAnswer(b []byte) (*Answer, error) {
	d := decoder{b: b}
	a := &Answer{Refused: d.string()}
	a.Exit = int(d.varint())
	a.Stdout = []byte(d.string())
	a.Stderr = d.string()
	return a, d.done()
}

// WriteFrame writes one frame: a 4-byte big-endian length, kind, payload.
func WriteFrame(w io.Writer, kind byte, payload ...[]byte) error {
	n := 1
	for _, p := range payload {
		n += len(p)
	}
	if n > maxFrame {
		return errors.New("hookwire: frame too large")
	}
	b := make([]byte, 5, 5+n)
	binary.BigEndian.PutUint32(b, uint32(n))
	b[4] = kind
	for _, p := range payload {
		b = append(b, p...)
	}
	_, err := w.Write(b)
	return err
}

// ReadFrame reads one frame of the given kind and returns its payload.
func ReadFrame(r io.Reader, kind byte) ([]byte, error) {
	_, p, err := readFrame(r, func(k byte) (uint32, bool) {
		if k != kind {
			return 0, false
		}
		if kind == KindClientHello || kind == KindDeciderHello {
			return 1 << 10, true // nothing big before a peer proved the key
		}
		return maxFrame, true
	})
	return p, err
}

// readFrame reads one frame whose kind limit accepts, at most the size
// limit returns for it.
func readFrame(r io.Reader, limit func(kind byte) (uint32, bool)) (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[:4])
	max, ok := limit(h[4])
	if !ok {
		return 0, nil, errors.New("hookwire: unexpected message kind " + strconv.Quote(string(h[4:])))
	}
	if n < 1 || n > max {
		return 0, nil, errors.New("hookwire: bad frame length")
	}
	b := make([]byte, n-1)
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, nil, err
	}
	return h[4], b, nil
}

// ErrBadMAC is returned when a peer does not prove the key.
var ErrBadMAC = errors.New("hookwire: the peer does not hold the key")

// SplitMAC splits a payload into its leading MAC and the body, checking
// the MAC under key.
func SplitMAC(key []byte, label string, nc, nd, payload []byte) ([]byte, error) {
	if len(payload) < sha256.Size {
		return nil, ErrBadMAC
	}
	mac, body := payload[:sha256.Size], payload[sha256.Size:]
	if !hmac.Equal(mac, MAC(key, label, nc, nd, body)) {
		return nil, ErrBadMAC
	}
	return body, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

// decoder reads what the append functions wrote; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("hookwire: truncated message")

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errShort
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) strings() []string {
	n := d.uvarint()
	if n > uint64(len(d.b)) { // each string takes at least one byte
		d.fail()
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		out = append(out, d.string())
	}
	return out
}

func (d *decoder) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("hookwire: trailing bytes in message")
	}
	return d.err
}

// ClientName is the thin client's file name: init installs it beside the
// full binary, whose name is "statewright".
const ClientName = "statewright-hook"
