package engine

import "strings"

// DataKey is the context key under which event data is kept.
const DataKey = "data"

// RuntimeKey is the context key holding runtime evidence; event data never
// writes it.
const RuntimeKey = "runtime"

// withEventData returns ctx with data shallow-merged into ctx["data"]. A
// non-object ctx["data"] is replaced. With no data, ctx itself is returned
// (no copy). ctx is never modified.
func withEventData(ctx, data map[string]any) map[string]any {
	if len(data) == 0 {
		return ctx
	}
	out := make(map[string]any, len(ctx)+1)
	for k, v := range ctx {
		out[k] = v
	}
	prev, _ := ctx[DataKey].(map[string]any)
	merged := make(map[string]any, len(prev)+len(data))
	for k, v := range prev {
		merged[k] = v
	}
	for k, v := range data {
		merged[k] = v
	}
	out[DataKey] = merged
	return out
}

// trustMerge is statewright's context patch for definitions that set
// trust_event_data: data is shallow-merged at the top level, except the
// reserved keys "runtime" and "data" and every "_"-prefixed key (such as
// _interrupt_return and _fork), which event data can never set.
func trustMerge(ctx, data map[string]any) map[string]any {
	n := 0
	for k := range data {
		if !reservedKey(k) {
			n++
		}
	}
	if n == 0 {
		return ctx
	}
	out := make(map[string]any, len(ctx)+n)
	for k, v := range ctx {
		out[k] = v
	}
	for k, v := range data {
		if !reservedKey(k) {
			out[k] = v
		}
	}
	return out
}

// reservedKey reports whether event data may not set top-level key k.
func reservedKey(k string) bool {
	return k == RuntimeKey || k == DataKey || strings.HasPrefix(k, "_")
}

// MergeData returns the context a step with event data produces for def,
// without resolving anything: ctx ⊕ {"data": ctx.data ⊕ data}, or under
// trust_event_data the filtered top-level merge. ctx is not modified.
func MergeData(trust bool, ctx, data map[string]any) map[string]any {
	if trust {
		return trustMerge(ctx, data)
	}
	return withEventData(ctx, data)
}
