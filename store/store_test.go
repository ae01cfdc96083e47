package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
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
			v := NewChainVerifier(10, "anchorhash")
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

func TestInputDigestAndCompactData(t *testing.T) {
	if InputDigest([]byte(`{"a": 1}`)) != InputDigest([]byte(`{"a":1}`)) {
		t.Error("InputDigest depends on JSON whitespace")
	}
	if InputDigest([]byte("not json  ")) == InputDigest([]byte("not json")) {
		t.Error("InputDigest of non-JSON input must hash the raw bytes")
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
