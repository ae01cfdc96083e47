package workflow

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSONSchema()))
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(SchemaURL)
	if err != nil {
		t.Fatalf("compile schema: %v", err)
	}
	return sch
}

// schemaAccepts validates a JSON document against the schema; a document
// that is not JSON at all is rejected.
func schemaAccepts(sch *jsonschema.Schema, data []byte) (bool, error) {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return false, err
	}
	err = sch.Validate(inst)
	return err == nil, err
}

// TestSchemaAgreesWithParser checks that the JSON Schema and Parse (strict:
// a compat: statewright file is read by the parser, not the schema) accept
// and reject the same JSON files: every JSON case
// of the conformance corpus and every bundled template.
func TestSchemaAgreesWithParser(t *testing.T) {
	sch := compileSchema(t)
	type doc struct {
		name string
		data []byte
		skip bool
	}
	var docs []doc
	for _, c := range loadCorpus(t) {
		if c.isJSON() {
			docs = append(docs, doc{filepath.Base(c.archive) + "/" + c.name, c.data, c.has("# schema-skip")})
		}
	}
	for _, name := range templateNames(t) {
		data := templateData(t, name)
		docs = append(docs, doc{name: "template/" + name, data: data})
	}
	if len(docs) < 100 {
		t.Errorf("only %d JSON documents to compare", len(docs))
	}
	accepted, rejected, skipped := 0, 0, 0
	for _, d := range docs {
		// The schema is the strict format: compat: statewright relaxes the
		// parser, never the schema.
		_, _, perr := Parse(d.data, ParseOptions{Strict: true})
		ok, serr := schemaAccepts(sch, d.data)
		if d.skip {
			skipped++
			if (perr == nil) == ok {
				t.Errorf("%s: marked schema-skip but schema and parser agree (parse ok=%v); drop the directive", d.name, perr == nil)
			}
			continue
		}
		if (perr == nil) != ok {
			t.Errorf("%s: parser ok=%v (%v), schema ok=%v (%v)", d.name, perr == nil, perr, ok, serr)
		}
		if ok {
			accepted++
		} else {
			rejected++
		}
	}
	t.Logf("%d documents: %d accepted by both, %d rejected by both, %d known disagreements", len(docs), accepted, rejected, skipped)
	if accepted == 0 || rejected == 0 {
		t.Errorf("the comparison needs both accepted and rejected documents")
	}
}

// templateNames lists the bundled templates.
func templateNames(t *testing.T) []string {
	t.Helper()
	names := TemplateNames()
	if len(names) == 0 {
		t.Fatal("no bundled templates")
	}
	return names
}

func templateData(t *testing.T, name string) []byte {
	t.Helper()
	data, err := TemplateSource(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestSchemaIsValidDraft202012(t *testing.T) {
	var m map[string]any
	if err := json.Unmarshal(JSONSchema(), &m); err != nil {
		t.Fatal(err)
	}
	if got := m["$schema"]; got != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", got)
	}
	if got := m["$id"]; got != SchemaURL {
		t.Errorf("$id = %v, want %s", got, SchemaURL)
	}
	compileSchema(t)
}

func TestSchemaRejectsTypo(t *testing.T) {
	// Not an agreement case: the schema cannot know typos, but it must
	// reject wrong types the parser rejects, with a path in its error.
	sch := compileSchema(t)
	ok, err := schemaAccepts(sch, []byte(`{"id":"x","initial":"a","states":{"a":{"max_iterations":-1}}}`))
	if ok {
		t.Fatal("schema accepted a negative max_iterations")
	}
	if !strings.Contains(err.Error(), "max_iterations") {
		t.Errorf("schema error does not name the field: %v", err)
	}
}

var hugeExponent = regexp.MustCompile(`[0-9][eE][+-]?0*[0-9]{4,}`)

// FuzzSchemaAgreement checks that the JSON Schema and Parse agree on every
// JSON input, apart from what JSON Schema cannot see (duplicate keys,
// numbers beyond float64, nesting deeper than the parser allows, a byte
// order mark).
func FuzzSchemaAgreement(f *testing.F) {
	for _, c := range loadCorpus(f) {
		if c.isJSON() {
			f.Add(c.data)
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSONSchema()))
	if err != nil {
		f.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		f.Fatal(err)
	}
	sch, err := c.Compile(SchemaURL)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		trimmed := bytes.TrimLeft(data, " \t\r\n")
		if len(trimmed) == 0 || trimmed[0] != '{' {
			return // YAML: not a schema matter
		}
		if hugeExponent.Match(data) {
			return // the schema library's big.Rat arithmetic would take ages
		}
		_, _, perr := Parse(data, ParseOptions{Strict: true})
		if pe, ok := perr.(*ParseError); ok {
			for _, d := range pe.Diagnostics {
				if d.Code == CodeDuplicateKey || strings.Contains(d.Message, "out of range") || strings.Contains(d.Message, "nests deeper") {
					return
				}
			}
		}
		ok, serr := schemaAccepts(sch, data)
		if (perr == nil) != ok {
			t.Fatalf("parser ok=%v (%v), schema ok=%v (%v)", perr == nil, perr, ok, serr)
		}
	})
}
