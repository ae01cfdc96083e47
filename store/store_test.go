package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestResolvePath(t *testing.T) {
	wd, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		flag string
		env  map[string]string
		want string
	}{
		{"flag wins", "/x/flag.db", map[string]string{EnvStore: "/x/env.db", "XDG_STATE_HOME": "/xdg"}, "/x/flag.db"},
		{"env", "", map[string]string{EnvStore: "/x/env.db", "XDG_STATE_HOME": "/xdg"}, "/x/env.db"},
		{"relative flag", "rel/s.db", nil, filepath.Join(wd, "rel/s.db")},
		{"xdg", "", map[string]string{"XDG_STATE_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/statewright/state.db"},
		{"relative xdg is ignored", "", map[string]string{"XDG_STATE_HOME": "xdg", "HOME": "/home/u"}, "/home/u/.local/state/statewright/state.db"},
		{"home", "", map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/statewright/state.db"},
		{"postgres flag", "postgres://u@db:5432/sw?sslmode=disable", nil, "postgres://u@db:5432/sw?sslmode=disable"},
		{"postgresql env", "", map[string]string{EnvStore: "postgresql://db/sw"}, "postgresql://db/sw"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolvePath(tc.flag, func(k string) string { return tc.env[k] })
			if err != nil || got != tc.want {
				t.Errorf("ResolvePath = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestHashEventCoversEveryField(t *testing.T) {
	base := Event{Seq: 3, RunID: "run_1", SessionKey: "cc:s", Time: time.Unix(0, 1700000000123456789).UTC(),
		Kind: KindDecision, State: "testing", Tool: "Bash", InputDigest: "abc", Decision: "deny",
		Rule: "shell-capability", Reason: "no", ToolUseID: "toolu_1", Data: json.RawMessage(`{"a":1}`), PrevHash: "p"}
	h := HashEvent(&base)
	if len(h) != 64 || h != HashEvent(&base) {
		t.Fatalf("hash %q is not a stable sha256 hex", h)
	}
	// Whitespace in data and the time zone do not matter; the stored Hash is not an input.
	same := base
	same.Data = json.RawMessage("{ \"a\" :\n1 }")
	same.Time = base.Time.In(time.FixedZone("X", 3600))
	same.Hash = "whatever"
	if HashEvent(&same) != h {
		t.Error("hash depends on data whitespace, time zone or the Hash field")
	}
	// The append's hash of compacted data is HashEvent's, for data and none.
	for _, d := range []string{"{ \"a\" :\n1 }", "", " null "} {
		e := base
		e.Data = json.RawMessage(d)
		want := HashEvent(&e)
		c, err := CompactData(e.Data)
		if err != nil {
			t.Fatal(err)
		}
		e.Data = c
		if got := HashCompacted(&e); got != want {
			t.Errorf("data %q: HashCompacted %s, HashEvent %s", d, got, want)
		}
	}
	mutations := map[string]func(e *Event){
		"seq":          func(e *Event) { e.Seq++ },
		"run":          func(e *Event) { e.RunID = "run_2" },
		"session":      func(e *Event) { e.SessionKey = "cc:t" },
		"time":         func(e *Event) { e.Time = e.Time.Add(time.Nanosecond) },
		"kind":         func(e *Event) { e.Kind = KindResult },
		"state":        func(e *Event) { e.State = "x" },
		"tool":         func(e *Event) { e.Tool = "Write" },
		"input digest": func(e *Event) { e.InputDigest = "abd" },
		"decision":     func(e *Event) { e.Decision = "allow" },
		"rule":         func(e *Event) { e.Rule = "allow" },
		"reason":       func(e *Event) { e.Reason = "yes" },
		"tool use id":  func(e *Event) { e.ToolUseID = "toolu_2" },
		"data":         func(e *Event) { e.Data = json.RawMessage(`{"a":2}`) },
		"prev hash":    func(e *Event) { e.PrevHash = "q" },
		// Length prefixes: moving a byte between adjacent fields changes the hash.
		"field boundary": func(e *Event) { e.State, e.Tool = "testingB", "ash" },
	}
	for name, mut := range mutations {
		e := base
		mut(&e)
		if HashEvent(&e) == h {
			t.Errorf("changing %s does not change the hash", name)
		}
	}
}

func TestChainVerifier(t *testing.T) {
	mk := func(n int, anchorSeq int64, anchor string) []Event {
		var evs []Event
		prev := anchor
		for i := 0; i < n; i++ {
			e := Event{Seq: anchorSeq + int64(i) + 1, Kind: KindDecision, PrevHash: prev, Time: time.Unix(int64(i), 0)}
			e.Hash = HashEvent(&e)
			prev = e.Hash
			evs = append(evs, e)
		}
		return evs
	}
	good := mk(4, 10, "anchorhash")
	cases := []struct {
		name   string
		events func() []Event
		ok     bool
	}{
		{"good", func() []Event { return good }, true},
		{"gap", func() []Event { return []Event{good[0], good[2]} }, false},
		{"wrong anchor", func() []Event { return mk(2, 10, "other") }, false},
		{"wrong start", func() []Event { return mk(2, 11, "anchorhash") }, false},
		{"edited", func() []Event {
			evs := append([]Event{}, good...)
			evs[1].Reason = "x"
			return evs
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := NewChainVerifier([]Head{{Chain: "", AnchorSeq: 10, AnchorHash: "anchorhash"}}, 10, "anchorhash")
			var err error
			for _, e := range tc.events() {
				if err = v.Next(&e); err != nil {
					break
				}
			}
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrChainBroken)) {
				t.Errorf("err = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestHashEventV2(t *testing.T) {
	base := Event{Seq: 3, Chain: "run_1", ChainSeq: 2, RunID: "run_1", SessionKey: "cc:s", Time: time.Unix(0, 1700000000123456789).UTC(),
		Kind: KindDecision, State: "testing", Tool: "Bash", Decision: "deny", Reason: "no", PrevHash: "p"}
	h := HashEvent(&base)
	legacy := base
	legacy.Chain, legacy.ChainSeq = "", 0
	if h == HashEvent(&legacy) {
		t.Error("a per-run event hashes like a legacy one")
	}
	// Seq is not an input (a store places events in its log without a
	// global lock); the chain and the place in it are.
	same := base
	same.Seq = 99
	if HashEvent(&same) != h {
		t.Error("the hash of a per-run event depends on Seq")
	}
	for name, mut := range map[string]func(e *Event){
		"chain":     func(e *Event) { e.Chain = "run_2" },
		"chain seq": func(e *Event) { e.ChainSeq++ },
		"prev hash": func(e *Event) { e.PrevHash = "q" },
		"decision":  func(e *Event) { e.Decision = "allow" },
	} {
		e := base
		mut(&e)
		if HashEvent(&e) == h {
			t.Errorf("changing %s does not change the hash", name)
		}
	}
}

func TestChainVerifierPerRun(t *testing.T) {
	// Two runs and a dormant session, interleaved in the log.
	var log []Event
	heads := map[string]Event{}
	add := func(run, session string) {
		chain := ChainOf(run, session)
		p := heads[chain]
		e := Event{Seq: int64(len(log) + 1), Chain: chain, ChainSeq: p.ChainSeq + 1, PrevHash: p.Hash, RunID: run,
			SessionKey: session, Kind: KindDecision, Time: time.Unix(int64(len(log)), 0)}
		e.Hash = HashEvent(&e)
		heads[chain] = e
		log = append(log, e)
	}
	for i := 0; i < 3; i++ {
		add("run_a", "cc:a")
		add("run_b", "cc:b")
		add("", "cc:c")
	}
	verify := func(evs []Event) (*ChainVerifier, error) {
		v := NewChainVerifier(nil, 0, "")
		for _, e := range evs {
			if err := v.Next(&e); err != nil {
				return v, err
			}
		}
		return v, nil
	}
	v, err := verify(log)
	if err != nil {
		t.Fatal(err)
	}
	st := v.Status()
	if st.Events != 9 || st.Chains != 3 || st.HeadSeq != 9 || st.HeadsHash != HeadsHash(v.Heads()) {
		t.Errorf("Status = %+v", st)
	}
	stored := v.Heads()
	if err := v.CheckHeads(stored); err != nil {
		t.Errorf("CheckHeads against its own heads: %v", err)
	}
	// A chain cut short against the store's heads, a chain the heads do
	// not know, are broken.
	cut := append([]Event{}, log[:8]...) // the dormant chain's last event gone
	v2, err := verify(cut)
	if err != nil {
		t.Fatal(err)
	}
	if err := v2.CheckHeads(stored); !errors.Is(err, ErrChainBroken) || !strings.Contains(err.Error(), "session:cc:c ends at #2") {
		t.Errorf("CheckHeads of a cut chain: %v", err)
	}
	if err := v.CheckHeads(stored[:2]); !errors.Is(err, ErrChainBroken) {
		t.Errorf("CheckHeads with a chain missing from the heads: %v", err)
	}
	for name, mut := range map[string]func(evs []Event) []Event{
		"gap in a chain": func(evs []Event) []Event { return append(evs[:3:3], evs[4:]...) },
		"moved to another run's chain": func(evs []Event) []Event {
			evs[4].Chain = "run_a"
			return evs
		},
		"edited": func(evs []Event) []Event {
			evs[5].Decision = "allow"
			return evs
		},
	} {
		_, err := verify(mut(append([]Event{}, log...)))
		if !errors.Is(err, ErrChainBroken) {
			t.Errorf("%s: err = %v, want ErrChainBroken", name, err)
		}
	}
}

func TestInputDigestAndCompactData(t *testing.T) {
	if InputDigest([]byte(`{"a": 1}`)) != InputDigest([]byte(`{"a":1}`)) {
		t.Error("InputDigest depends on JSON whitespace")
	}
	if InputDigest([]byte("not json  ")) == InputDigest([]byte("not json")) {
		t.Error("InputDigest of non-JSON input must hash the raw bytes")
	}
	// Input that is not JSON as a whole (a valid prefix, trailing bytes,
	// nothing) is hashed raw, byte for byte.
	for _, in := range []string{`{"a": 1} x`, `{"a": 1`, `[1, 2] [3]`, ``, `  `} {
		sum := sha256.Sum256([]byte(in))
		if got := InputDigest([]byte(in)); got != hex.EncodeToString(sum[:]) {
			t.Errorf("InputDigest(%q) = %s, not the sha256 of the raw bytes", in, got)
		}
	}
	for in, want := range map[string]string{"": "", "  ": "", "null": "", ` { "a" : [1, 2] } `: `{"a":[1,2]}`} {
		got, err := CompactData(json.RawMessage(in))
		if err != nil || !bytes.Equal(got, []byte(want)) && !(want == "" && got == nil) {
			t.Errorf("CompactData(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := CompactData(json.RawMessage(`{`)); !errors.Is(err, ErrInvalid) {
		t.Errorf("CompactData of bad JSON: err = %v, want ErrInvalid", err)
	}
}

func TestStatus(t *testing.T) {
	for _, s := range []Status{StatusActive, StatusAwaitingApproval, StatusPaused, StatusCompleted, StatusDeactivated, StatusFailed} {
		if !s.Valid() {
			t.Errorf("%s not valid", s)
		}
		want := s == StatusActive || s == StatusAwaitingApproval || s == StatusPaused
		if s.Live() != want {
			t.Errorf("%s.Live() = %v", s, s.Live())
		}
	}
	if Status("zombie").Valid() || Status("").Live() {
		t.Error("unknown status accepted")
	}
}

// FuzzCompactData checks CompactData and InputDigest against json.Compact:
// input that is compact already (isCompact) is taken as it is, and must be
// what json.Compact would have made of it.
func FuzzCompactData(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a": 1}`, `{"s":"a b\t"}`, `{"s":"q\" x"}`, `{"s":"\\"} `, `["\\\"", " "]`,
		`null`, ` null`, `"x"`, `{"a":[1,2,{"b":"c d"}]}`, `{`, `{"a":1}x`, "{\"a\":\n1}", `{"e":"\u00e9 \\u0020"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var buf bytes.Buffer
		cerr := json.Compact(&buf, in)
		if isCompact(in) && (cerr != nil || !bytes.Equal(buf.Bytes(), in)) {
			t.Fatalf("isCompact(%q), but json.Compact gives %q, %v", in, buf.Bytes(), cerr)
		}
		got, err := CompactData(in)
		switch {
		case len(bytes.TrimSpace(in)) == 0 || cerr == nil && buf.String() == "null":
			if err != nil || got != nil {
				t.Fatalf("CompactData(%q) = %q, %v; want nil", in, got, err)
			}
		case cerr != nil:
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("CompactData(%q) = %q, %v; want ErrInvalid", in, got, err)
			}
		case err != nil || !bytes.Equal(got, buf.Bytes()):
			t.Fatalf("CompactData(%q) = %q, %v; want %q", in, got, err, buf.Bytes())
		}
		raw := in
		if cerr == nil {
			raw = buf.Bytes()
		}
		sum := sha256.Sum256(raw)
		if d := InputDigest(in); d != hex.EncodeToString(sum[:]) {
			t.Fatalf("InputDigest(%q) = %s, want the sha256 of %q", in, d, raw)
		}
	})
}

// hashEventFields is HashEvent as it was first written: each field
// written to the hash in turn. The store's hashes must not change.
func hashEventFields(e *Event, data []byte) string {
	f := fields{h: sha256.New()}
	if e.Chain == "" {
		io.WriteString(f.h, hashDomain)
		f.int(e.Seq)
	} else {
		io.WriteString(f.h, hashDomainV2)
		f.str(e.Chain)
		f.int(e.ChainSeq)
	}
	for _, s := range []string{e.PrevHash, e.RunID, e.SessionKey} {
		f.str(s)
	}
	f.int(e.Time.UnixNano())
	for _, s := range []string{string(e.Kind), e.State, e.Tool, e.InputDigest, e.Decision, e.Rule, e.Reason, e.ToolUseID, string(data)} {
		f.str(s)
	}
	return hex.EncodeToString(f.h.Sum(nil))
}

// TestHashEventLayout: the one-buffer hash is the field-by-field one, for
// both domains, empty and long fields (a length prefix of several bytes)
// and negative numbers.
func TestHashEventLayout(t *testing.T) {
	long := strings.Repeat("r", 300)
	for _, e := range []Event{
		{},
		{Seq: 7, PrevHash: "p", RunID: "run_1", SessionKey: "cc:s", Time: time.Unix(0, 1733300000000000001), Kind: KindDecision,
			State: "work", Tool: "Read", InputDigest: "d", Decision: "allow", Rule: "allowed", Reason: long, ToolUseID: "toolu_1",
			Data: json.RawMessage(`{"a":1}`)},
		{Chain: "run_1", ChainSeq: 123456789, Seq: -3, Time: time.Unix(-5, 0), Reason: "é", Data: json.RawMessage(long)},
		{Chain: "session:cc:x", ChainSeq: -1},
	} {
		if got, want := hashEvent(&e, e.Data), hashEventFields(&e, e.Data); got != want {
			t.Errorf("event %+v: hash %s, field by field %s", e, got, want)
		}
	}
}
