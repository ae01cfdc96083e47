package store

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestHashGolden pins the bytes stored chains were hashed with: each hash
// below was computed by the store as it was before the one-buffer hash
// (d78cfd8) and the compact-JSON shortcut (727fa38), at cc14270. A change
// to the layout, a domain, the compaction or the input digest breaks every
// stored chain and every approval bound to an input digest: it must fail
// here, not only against another copy of the same code.
func TestHashGolden(t *testing.T) {
	events := []struct {
		e    Event
		hash string
	}{
		{Event{Seq: 1, SessionKey: "claude-code:s1", Time: time.Unix(1764806400, 123456789).UTC(), Kind: KindDecision,
			State: "planning", Tool: "Read", InputDigest: "d1", Decision: "allow", Rule: "allowed", Reason: "ok", ToolUseID: "toolu_01",
			Data: json.RawMessage(`{"actor":{"kind":"agent"},"enforced":true}`)},
			"b08c0b31aa85e46e29c79d0da19e9d646984338c1042236d6712952dad78386d"}, // legacy global chain (v1)
		{Event{Chain: "run_01", ChainSeq: 2, PrevHash: "ab", RunID: "run_01", SessionKey: "claude-code:s1", Time: time.Unix(1764806401, 5).UTC(),
			Kind: KindResult, State: "implementing", Tool: "Write", ToolUseID: "gw_0102", Reason: strings.Repeat("é", 100),
			Data: json.RawMessage(" {\"bytes\" : 5,\n \"note\":\"a b\"} ")},
			"769265782b31944274c57a03ca2d95d0078aa4c5898b7ef676e2e6f86bdcf77a"}, // a run's chain (v2), data not compact, a 2-byte length
		{Event{Chain: "session:claude-code:s2", ChainSeq: 1, SessionKey: "claude-code:s2", Time: time.Unix(-1, 0).UTC(), Kind: KindDecision},
			"8b437e4acc171f1498e2fac0085acf9b6d6e95c3f5d4fe6d8d76a8c776678acc"}, // empty fields, a negative time
	}
	for i, c := range events {
		if got := HashEvent(&c.e); got != c.hash {
			t.Errorf("event %d: HashEvent %s, want %s", i, got, c.hash)
		}
		d, err := CompactData(c.e.Data)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		e := c.e
		e.Data = d
		if got := HashCompacted(&e); got != c.hash {
			t.Errorf("event %d: HashCompacted %s, want %s", i, got, c.hash)
		}
	}

	digests := []struct{ in, digest string }{
		{`{"command":"go test ./..."}`, "d7e5989af12b7e6bbe4472506ac9626e0f9e63fd4449d65b80dd012652e6610c"},
		{"{ \"command\" : \"go test ./...\" }", "d7e5989af12b7e6bbe4472506ac9626e0f9e63fd4449d65b80dd012652e6610c"},
		{`{"file_path":"a.go","content":"x\ny \"q\" \\"}`, "265818767d3626a465087aa9dc8565b3ab18abb09891a75b4b2a96339aa7ce7c"},
		{`{"a":"b c"}`, "38cc6e2f67cb1ba72ac3667828c60fa517302e9ebd46d74333f15efbd1f83490"},
		{`not json {`, "c3f07c17117dc1953b6b514cc4e816c00a33fb6cbbe66cbb31e5e22cd1a05fd0"},
		{``, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	}
	for _, c := range digests {
		if got := InputDigest([]byte(c.in)); got != c.digest {
			t.Errorf("InputDigest(%q) = %s, want %s", c.in, got, c.digest)
		}
	}
	if d, err := CompactData(json.RawMessage(" {\"a\" : [1, 2]} ")); err != nil || string(d) != `{"a":[1,2]}` {
		t.Errorf("CompactData: %q, %v", d, err)
	}
}
