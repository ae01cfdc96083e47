package policy

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/workflow"
)

// TestDecodedInputKeepsTheCorpus holds ToolCall.Decoded to deciding
// without it: every corpus case, decided as the runtime decides a call
// (first by the dormant law, then by the run's, one DecodedInput shared),
// gets the decision it gets with no DecodedInput at all; and the shared
// decoding is afterwards what a fresh decoding of the input is (no
// decision changed it).
func TestDecodedInputKeepsTheCorpus(t *testing.T) {
	dormant, err := Compile(&workflow.Definition{ID: "dormant", States: map[string]*workflow.State{}}, corpusOptions)
	if err != nil {
		t.Fatal(err)
	}
	total, shared := 0, 0
	for f, cf := range corpus(t) {
		law := loadLaw(t, cf.Workflow, corpusOptions)
		base := strings.TrimSuffix(filepath.Base(f), ".yaml")
		for i := range cf.Cases {
			c := &cf.Cases[i]
			rs := c.RunState.RunState(c.State)
			ref, err := c.ToolCall()
			if err != nil {
				t.Fatal(err)
			}
			want := law.Decide(rs, ref)

			call, _ := c.ToolCall()
			call.Decoded = &DecodedInput{}
			dormant.Decide(nil, call)
			got := law.Decide(rs, call)
			again := law.Decide(rs, call)
			total++
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(again, want) {
				t.Errorf("%s/%s: with a shared decoding %+v, then %+v; without %+v", base, c.Name, got, again, want)
			}
			if d := call.Decoded; d.m != nil || d.err != nil {
				shared++
				m, err := decodeInput(call.Input)
				if !reflect.DeepEqual(d.m, m) || (d.err == nil) != (err == nil) {
					t.Errorf("%s/%s: the shared decoding became %v (%v), the input decodes to %v (%v)", base, c.Name, d.m, d.err, m, err)
				}
			}
		}
	}
	if total < 100 || shared < 50 {
		t.Errorf("%d cases, %d decoded through the shared decoding: want at least 100 and 50", total, shared)
	}
}

// TestDecodedInputOnlyForItsBytes: a DecodedInput answers only for the
// bytes it decoded; a call whose input changed (a copy with another
// input, as the Windows reading makes) decodes its own.
func TestDecodedInputOnlyForItsBytes(t *testing.T) {
	var d DecodedInput
	a := json.RawMessage(`{"file_path":"a.go"}`)
	b := json.RawMessage(`{"file_path":".claude/settings.json"}`)
	m, err := d.decode(a)
	if err != nil || m["file_path"] != "a.go" {
		t.Fatalf("first decode: %v %v", m, err)
	}
	if m, err := d.decode(b); err != nil || m["file_path"] != ".claude/settings.json" {
		t.Fatalf("other bytes: %v %v", m, err)
	}
	// The same bytes in another slice share the first decoding; the
	// bytes changed in place do not.
	c := append(json.RawMessage(nil), a...)
	if m2, _ := d.decode(c); reflect.ValueOf(m2).Pointer() != reflect.ValueOf(m).Pointer() {
		t.Fatal("the same bytes were decoded again")
	}
	copy(c, `{"file_path":"b.go"}`)
	if m, _ := d.decode(c); m["file_path"] != "b.go" {
		t.Fatalf("bytes changed in place: %v", m)
	}
	if _, err := d.decode(json.RawMessage(`[1]`)); err == nil {
		t.Fatal("an input that is not an object decoded")
	}
}
