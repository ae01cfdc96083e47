package wfgraph

import (
	"fmt"
	"html"
	"strings"
	"unicode/utf8"
)

// Drawing metrics of SVG, in pixels.
const (
	charW    = 7.5 // average width of a character at the label font size
	nodeH    = 34
	rowGap   = 34
	colGap   = 150
	margin   = 24
	minBoxW  = 90
	labelH   = 14 // a label line's height
	labelPad = 6  // room around a label
)

func textW(s string) float64 { return float64(utf8.RuneCountInString(s)) * charW }

// SVG draws g as a self-contained SVG document, highlighting the state
// named current (class "current"). Every state is a <g class="node"
// data-state="NAME">; the current one also has class "current" and
// aria-current="step". Colours come from classes, with defaults embedded,
// so a page may restyle them.
func SVG(g *Graph, current string) string {
	// Column widths: the widest box in each rank.
	colW := make([]float64, g.Ranks)
	rows := make([]int, g.Ranks)
	for _, n := range g.Nodes {
		colW[n.Rank] = max(colW[n.Rank], max(minBoxW, textW(nodeLabel(n))+28))
		rows[n.Rank] = max(rows[n.Rank], n.Row+1)
	}
	// The gap after each rank fits the widest label of the edges that
	// cross it, so a label never runs into the boxes on either side.
	rankOf := map[string]int{}
	for _, n := range g.Nodes {
		rankOf[n.Name] = n.Rank
	}
	gap := make([]float64, g.Ranks)
	for r := range gap {
		gap[r] = colGap
	}
	for _, e := range g.Edges {
		if e.Kind == EdgeInterrupt {
			continue
		}
		from, ok1 := rankOf[e.From]
		to, ok2 := rankOf[e.To]
		if !ok1 || !ok2 || to <= from {
			continue
		}
		// The label sits halfway: spread its width over the gaps crossed.
		need := (textW(e.Label) + labelPad*2) / float64(to-from)
		for r := from; r < to; r++ {
			gap[r] = max(gap[r], need)
		}
	}
	colX := make([]float64, g.Ranks)
	x := float64(margin)
	for r := range colW {
		colX[r] = x
		x += colW[r] + gap[r]
	}
	maxRows := 1
	for _, r := range rows {
		maxRows = max(maxRows, r)
	}
	width := x + margin
	if g.Ranks > 0 {
		width -= gap[g.Ranks-1]
	}
	height := float64(margin*2 + maxRows*(nodeH+rowGap) + 40)
	if g.Ranks == 0 {
		width = 200
	}
	// What is drawn may reach past that (loops above the top row, arcs
	// under the bottom one, long labels): the view box grows to hold it.
	minX, minY, maxX, maxY := 0.0, 0.0, width, height
	fit := func(x0, y0, x1, y1 float64) {
		minX, minY, maxX, maxY = min(minX, x0), min(minY, y0), max(maxX, x1), max(maxY, y1)
	}
	type box struct{ x, y, w float64 }
	boxes := map[string]box{}
	for _, n := range g.Nodes {
		w := colW[n.Rank]
		boxes[n.Name] = box{colX[n.Rank], float64(margin+20) + float64(n.Row)*(nodeH+rowGap), w}
	}

	var body strings.Builder
	b := &body
	b.WriteString(`<defs><marker id="wfarrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>`)
	b.WriteString(`<style>.wfgraph{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}` +
		`.wfgraph .node rect{fill:#f4f6f8;stroke:#7a8591;stroke-width:1.2}` +
		`.wfgraph .node.final rect{stroke-width:3;stroke-dasharray:none}` +
		`.wfgraph .node.missing rect{fill:#fde8e8;stroke:#c0392b;stroke-dasharray:4 3}` +
		`.wfgraph .node.current rect{fill:#1f6feb;stroke:#0b3d91;stroke-width:2.5}` +
		`.wfgraph .node.current text{fill:#fff;font-weight:bold}` +
		`.wfgraph .edge path{fill:none;stroke:#555;stroke-width:1.3}` +
		`.wfgraph .edge.approval path{stroke:#c0392b;stroke-width:2}` +
		`.wfgraph .edge.fail path,.wfgraph .edge.safe-next path{stroke:#999;stroke-dasharray:5 4}` +
		`.wfgraph .edge text{fill:#333;paint-order:stroke;stroke:#fff;stroke-width:3px}` +
		`.wfgraph .edge.approval text{fill:#c0392b}</style>`)

	// Edges first, under the nodes. Labels of edges between the same two
	// states are stacked, not drawn over each other.
	loops := map[string]int{}
	pairs := map[string]int{}
	// placed are the boxes and the labels drawn so far: a label that
	// would cover one moves down a line until it covers none.
	var placed []rect
	for _, bx := range boxes {
		placed = append(placed, rect{bx.x, bx.y, bx.x + bx.w, bx.y + nodeH})
	}
	for _, e := range g.Edges {
		if e.Kind == EdgeInterrupt {
			continue
		}
		s, ok1 := boxes[e.From]
		t, ok2 := boxes[e.To]
		if !ok1 || !ok2 {
			continue
		}
		var d string
		var lx, ly float64
		switch {
		case e.From == e.To:
			k := float64(loops[e.From])
			loops[e.From]++
			cx := s.x + s.w/2
			top := s.y - 14 - (labelH+2)*k
			d = fmt.Sprintf("M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f", cx-12, s.y, cx-30, top-18, cx+30, top-18, cx+12, s.y)
			lx, ly = cx, top-16
		case t.x == s.x:
			// Same rank: a bulge to the right of both boxes.
			x1, y1 := s.x+s.w, s.y+nodeH/2
			x2, y2 := t.x+t.w, t.y+nodeH/2
			k := float64(loops[e.From+"\x00side"])
			out := x1 + 46 + 10*k
			loops[e.From+"\x00side"]++
			d = fmt.Sprintf("M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f", x1, y1, out, y1, out, y2, x2, y2)
			lx, ly = out-6, (y1+y2)/2+4+labelH*k
		case t.x > s.x:
			x1, y1 := s.x+s.w, s.y+nodeH/2
			x2, y2 := t.x, t.y+nodeH/2
			mx := (x1 + x2) / 2
			d = fmt.Sprintf("M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f", x1, y1, mx, y1, mx, y2, x2, y2)
			k := float64(pairs[e.From+"\x00"+e.To])
			pairs[e.From+"\x00"+e.To]++
			lx, ly = mx, (y1+y2)/2-5-labelH*k
		default:
			// Back or sideways: an arc under both boxes.
			x1, y1 := s.x+s.w/2, s.y+nodeH
			x2, y2 := t.x+t.w/2, t.y+nodeH
			low := max(y1, y2) + 28 + (labelH+2)*float64(loops[e.From+"\x00back"])
			loops[e.From+"\x00back"]++
			d = fmt.Sprintf("M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f", x1, y1, x1, low+10, x2, low+10, x2, y2)
			lx, ly = (x1+x2)/2, low+16
		}
		cls := "edge"
		switch e.Kind {
		case EdgeApproval:
			cls += " approval"
		case EdgeFail:
			cls += " fail"
		case EdgeSafeNext:
			cls += " safe-next"
		}
		lr := labelRect(lx, ly, e.Label)
		for i := 0; i < 64 && lr.overlapsAny(placed); i++ {
			ly += labelH
			lr = labelRect(lx, ly, e.Label)
		}
		placed = append(placed, lr)
		fit(lr.x0-labelPad, lr.y0-labelPad, lr.x1+labelPad, lr.y1+labelPad)
		fmt.Fprintf(b, `<g class="%s" data-from="%s" data-to="%s"><path d="%s" marker-end="url(#wfarrow)"/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text></g>`,
			cls, esc(e.From), esc(e.To), d, lx, ly, esc(e.Label))
	}
	for _, n := range g.Nodes {
		bx := boxes[n.Name]
		cls := "node"
		if n.Final {
			cls += " final"
		}
		if n.Missing {
			cls += " missing"
		}
		if n.Initial {
			cls += " initial"
		}
		aria := ""
		if n.Name == current {
			cls += " current"
			aria = ` aria-current="step"`
		}
		label := nodeLabel(n)
		fmt.Fprintf(b, `<g class="%s" data-state="%s"%s><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%d" rx="10"/><text x="%.1f" y="%.1f" text-anchor="middle" dominant-baseline="central">%s</text></g>`,
			cls, esc(n.Name), aria, esc(n.Name), bx.x, bx.y, bx.w, nodeH, bx.x+bx.w/2, bx.y+nodeH/2, esc(label))
		if n.Initial {
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="5" fill="#333"/>`, bx.x-10, bx.y+nodeH/2)
		}
	}
	b.WriteString(`</svg>`)
	minX, minY = minX-margin/2, minY-margin/2
	w, h := maxX-minX, maxY-minY
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" class="wfgraph" viewBox="%.0f %.0f %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="workflow graph">`,
		minX, minY, w, h, w, h) + body.String()
}

// rect is an axis-aligned box of the drawing.
type rect struct{ x0, y0, x1, y1 float64 }

// labelRect is the box an edge label drawn at (x, y) (its baseline's
// middle) covers.
func labelRect(x, y float64, label string) rect {
	w := textW(label)
	return rect{x - w/2, y - labelH + 3, x + w/2, y + 3}
}

func (r rect) overlaps(o rect) bool {
	return r.x0 < o.x1 && o.x0 < r.x1 && r.y0 < o.y1 && o.y0 < r.y1
}

func (r rect) overlapsAny(rs []rect) bool {
	for _, o := range rs {
		if r.overlaps(o) {
			return true
		}
	}
	return false
}

// nodeLabel is the text drawn in a node's box.
func nodeLabel(n Node) string {
	if n.Missing {
		return n.Name + " (missing)"
	}
	return n.Name
}

func esc(s string) string { return html.EscapeString(s) }
