package workflow

import (
	"encoding/json"
	"os"
	"testing"

	"gopkg.in/yaml.v3"
)

// fuzzSeeds adds the conformance corpus, the templates and the benchmark
// workflow to a fuzz target's seed corpus.
func fuzzSeeds(f *testing.F) {
	for _, c := range loadCorpus(f) {
		f.Add(c.data)
	}
	for _, name := range TemplateNames() {
		if data, err := TemplateSource(name); err == nil {
			f.Add(data)
		}
	}
	if data, err := os.ReadFile("testdata/bench/sdlc.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte("id: x\ninitial: a\nstates: {a: &s {type: final}, b: *s}\n"))
	f.Add([]byte(`{"id":"x","initial":"a","states":{"a":{"on":{"GO":[{"target":"a"}]}}},"guards":{"g":{"not":{"not":"g"}}}}`))
}

// FuzzParse checks that Parse never panics, that a failed parse carries an
// error diagnostic with a position, and that a successful parse survives a
// round trip through encoding/json.
func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		def, diags, err := Parse(data, ParseOptions{})
		if err != nil {
			if def != nil {
				t.Fatal("Parse returned a definition with an error")
			}
			pe, ok := err.(*ParseError)
			if !ok || !pe.Diagnostics.HasErrors() {
				t.Fatalf("error %v is not a *ParseError with errors", err)
			}
			for _, d := range pe.Diagnostics {
				if !d.Pos.IsValid() {
					t.Fatalf("diagnostic without position: %+v", d)
				}
			}
			return
		}
		if diags.HasErrors() {
			t.Fatalf("success with error diagnostics: %v", diags)
		}
		if def.Context == nil || def.States == nil {
			t.Fatal("nil Context or States after a successful parse")
		}
		enc, err := json.Marshal(def)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		def2, _, err := Parse(enc, ParseOptions{Strict: true})
		if err != nil {
			t.Fatalf("re-parse of %s: %v", enc, err)
		}
		enc2, err := json.Marshal(def2)
		if err != nil {
			t.Fatalf("marshal again: %v", err)
		}
		if string(enc) != string(enc2) {
			t.Fatalf("round trip not stable:\n%s\n%s", enc, enc2)
		}
	})
}

// FuzzValidate checks that Validate never panics on any parsed definition
// and that every finding has a code and a position.
func FuzzValidate(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		def, _, err := Parse(data, ParseOptions{})
		if err != nil {
			return
		}
		for _, d := range Validate(def) {
			if d.Code == "" || d.Message == "" || !d.Pos.IsValid() {
				t.Fatalf("finding without code, message or position: %+v", d)
			}
		}
	})
}

func benchSources(b *testing.B) (jsonSrc, yamlSrc []byte) {
	b.Helper()
	jsonSrc, err := os.ReadFile("testdata/bench/sdlc.json")
	if err != nil {
		b.Fatal(err)
	}
	var generic map[string]any
	if err := json.Unmarshal(jsonSrc, &generic); err != nil {
		b.Fatal(err)
	}
	yamlSrc, err = yaml.Marshal(generic)
	if err != nil {
		b.Fatal(err)
	}
	return jsonSrc, yamlSrc
}

func BenchmarkParseJSON(b *testing.B) {
	src, _ := benchSources(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse(src, ParseOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseYAML(b *testing.B) {
	_, src := benchSources(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse(src, ParseOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	src, _ := benchSources(b)
	def, _, err := Parse(src, ParseOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		Validate(def)
	}
}

func TestBenchWorkflowIsClean(t *testing.T) {
	// The benchmark workflow is also a realistic statewright-go file: it
	// must parse and validate without findings.
	data, err := os.ReadFile("testdata/bench/sdlc.json")
	if err != nil {
		t.Fatal(err)
	}
	def, diags, err := Parse(data, ParseOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	diags = append(diags, Validate(def)...)
	for _, d := range diags {
		t.Errorf("%s [%s]", d, d.Code)
	}
}
