package wfgraph

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/workflow"
)

func parse(t *testing.T, src string) *workflow.Definition {
	t.Helper()
	def, _, err := workflow.Parse([]byte(src), workflow.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return def
}

func TestBuildRanksAndEdges(t *testing.T) {
	def := parse(t, `{"id":"x","initial":"a","states":{
	  "a":{"on":{"GO":"b","SKIP":{"target":"c","requires_approval":true}},"safe_next":"a"},
	  "b":{"on":{"BACK":"a","DONE":[{"target":"c","guard":"ok"},{"target":"b"}]}},
	  "c":{"type":"final"},
	  "lonely":{"on":{"X":"ghost"}}},
	  "guards":{"ok":{"field":"data.ok","op":"eq","value":true}}}`)
	g := Build(def)
	ranks := map[string]int{}
	for _, n := range g.Nodes {
		ranks[n.Name] = n.Rank
	}
	want := map[string]int{"a": 0, "b": 1, "c": 1, "lonely": 2, "ghost": 3}
	for k, v := range want {
		if ranks[k] != v {
			t.Errorf("rank(%s) = %d, want %d (all %v)", k, ranks[k], v, ranks)
		}
	}
	if n := g.Node("ghost"); n == nil || !n.Missing {
		t.Errorf("ghost should be a missing node: %+v", n)
	}
	if n := g.Node("a"); !n.Initial {
		t.Errorf("a should be initial")
	}
	if n := g.Node("c"); !n.Final {
		t.Errorf("c should be final")
	}
	var labels []string
	for _, e := range g.Out("a") {
		labels = append(labels, e.Label+">"+e.To)
	}
	if got := strings.Join(labels, ","); got != "GO>b,SKIP (approval)>c,(safe_next)>a" {
		t.Errorf("edges of a = %s", got)
	}
	var bl []string
	for _, e := range g.Out("b") {
		bl = append(bl, e.Label+">"+e.To)
	}
	if got := strings.Join(bl, ","); got != "BACK>a,DONE [ok]>c,DONE [else]>b" {
		t.Errorf("edges of b = %s", got)
	}
}

func TestSVGMarksCurrentAndIsWellFormed(t *testing.T) {
	for _, name := range workflow.TemplateNames() {
		def, err := workflow.LoadTemplate(name)
		if err != nil {
			t.Fatal(err)
		}
		svg := SVG(Build(def), def.Initial)
		d := xml.NewDecoder(strings.NewReader(svg))
		for {
			_, err := d.Token()
			if err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("%s: SVG is not well-formed XML: %v", name, err)
				}
				break
			}
		}
		want := `<g class="node initial current" data-state="` + def.Initial + `" aria-current="step">`
		if !strings.Contains(svg, want) {
			t.Errorf("%s: the current state is not marked (%s)", name, want)
		}
		if strings.Count(svg, `aria-current`) != 1 {
			t.Errorf("%s: more than one current state", name)
		}
	}
}

func TestBuildNilAndEmpty(t *testing.T) {
	if g := Build(nil); len(g.Nodes) != 0 {
		t.Fatal("nil definition drew nodes")
	}
	svg := SVG(Build(&workflow.Definition{}), "")
	if !strings.HasPrefix(svg, "<svg") {
		t.Fatal("empty graph drew no svg")
	}
}
