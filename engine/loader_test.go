package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/workflow"
)

// Corpus machines are parsed with workflow.Parse; this file decodes the case
// values (contexts, data, inline guards) the way Parse decodes values:
// integral numbers as int64, others as float64.

// decodeJSON decodes data with numbers as int64 (integral literals) or float64.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return normalize(v), nil
}

func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		s := x.String()
		if !strings.ContainsAny(s, ".eE") {
			if i, err := x.Int64(); err == nil {
				return i
			}
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
		return x
	case map[string]any:
		for k := range x {
			x[k] = normalize(x[k])
		}
		return x
	}
	return v
}

func str(v any) string { s, _ := v.(string); return s }

func loadGuard(v any) (*workflow.Guard, error) {
	switch x := v.(type) {
	case string:
		return &workflow.Guard{Ref: x}, nil
	case map[string]any:
		g := &workflow.Guard{Field: str(x["field"]), Op: workflow.GuardOp(str(x["op"])), Value: x["value"]}
		for _, key := range []string{"all", "any"} {
			if a, ok := x[key].([]any); ok {
				list := []*workflow.Guard{}
				for _, e := range a {
					c, err := loadGuard(e)
					if err != nil {
						return nil, err
					}
					list = append(list, c)
				}
				if key == "all" {
					g.All = list
				} else {
					g.Any = list
				}
			}
		}
		if n, ok := x["not"]; ok {
			c, err := loadGuard(n)
			if err != nil {
				return nil, err
			}
			g.Not = c
		}
		return g, nil
	}
	return nil, fmt.Errorf("unrecognised guard %v", v)
}
