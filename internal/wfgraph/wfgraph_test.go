package wfgraph

import (
	"encoding/xml"
	"fmt"
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

// TestSVGLabelsDoNotOverlapOrClip draws a workflow with long event names,
// parallel edges, self-loops and back edges, then reads the SVG back: no
// edge label covers another label or a state's box, and everything lies
// inside the view box (issue 18 item 5).
func TestSVGLabelsDoNotOverlapOrClip(t *testing.T) {
	def := parse(t, `{"id":"x","initial":"a","states":{
	  "a":{"on":{"A_VERY_LONG_EVENT_NAME_THAT_NEEDS_ROOM":"b","SECOND_LONG_EVENT_TO_THE_SAME_STATE":"b",
	             "RETRY_ONE":"a","RETRY_TWO":"a","RETRY_THREE":"a","SKIP":{"target":"c","requires_approval":true}}},
	  "b":{"on":{"BACK_TO_THE_START_WITH_A_LONG_NAME":"a","ALSO_BACK":"a","DONE":"c"}},
	  "c":{"on":{"REOPEN_EVERYTHING_FROM_THE_END":"a","FINISH":"d"}},
	  "d":{"type":"final"}}}`)
	svg := SVG(Build(def), "b")
	var doc struct {
		ViewBox string `xml:"viewBox,attr"`
		G       []struct {
			Class     string `xml:"class,attr"`
			RectAttrs struct {
				X float64 `xml:"x,attr"`
				Y float64 `xml:"y,attr"`
				W float64 `xml:"width,attr"`
				H float64 `xml:"height,attr"`
			} `xml:"rect"`
			Text struct {
				X    float64 `xml:"x,attr"`
				Y    float64 `xml:"y,attr"`
				Body string  `xml:",chardata"`
			} `xml:"text"`
		} `xml:"g"`
	}
	if err := xml.Unmarshal([]byte(svg), &doc); err != nil {
		t.Fatalf("the SVG does not parse: %v", err)
	}
	var vb rect
	var w, h float64
	if _, err := fmt.Sscanf(doc.ViewBox, "%f %f %f %f", &vb.x0, &vb.y0, &w, &h); err != nil {
		t.Fatalf("viewBox %q: %v", doc.ViewBox, err)
	}
	vb.x1, vb.y1 = vb.x0+w, vb.y0+h
	var boxes, labels []rect
	var names []string
	for _, g := range doc.G {
		switch {
		case strings.HasPrefix(g.Class, "node"):
			r := g.RectAttrs
			boxes = append(boxes, rect{r.X, r.Y, r.X + r.W, r.Y + r.H})
		case strings.HasPrefix(g.Class, "edge"):
			labels = append(labels, labelRect(g.Text.X, g.Text.Y, g.Text.Body))
			names = append(names, g.Text.Body)
		}
	}
	if len(boxes) != 4 || len(labels) != 11 {
		t.Fatalf("read %d boxes and %d labels from\n%s", len(boxes), len(labels), svg)
	}
	inside := func(r rect) bool { return r.x0 >= vb.x0 && r.y0 >= vb.y0 && r.x1 <= vb.x1 && r.y1 <= vb.y1 }
	for i, l := range labels {
		if !inside(l) {
			t.Errorf("label %q %+v is clipped by the view box %+v", names[i], l, vb)
		}
		for j := i + 1; j < len(labels); j++ {
			if l.overlaps(labels[j]) {
				t.Errorf("labels %q and %q overlap", names[i], names[j])
			}
		}
		for _, b := range boxes {
			if l.overlaps(b) {
				t.Errorf("label %q covers a state's box %+v", names[i], b)
			}
		}
	}
	for _, b := range boxes {
		if !inside(b) {
			t.Errorf("box %+v is clipped by the view box %+v", b, vb)
		}
	}
}
