package decider

import (
	"reflect"
	"testing"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
)

// TestRuntimeKeyCoversOptions: a runtime is reused only for the same
// options. Every field of runtime.Options and policy.Options must be in
// runtimeKey, or be one that runtime() never caches for; a field added
// later fails here until it is placed.
func TestRuntimeKeyCoversOptions(t *testing.T) {
	key := map[string]bool{}
	for f := range reflect.TypeFor[runtimeKey]().Fields() {
		key[f.Name] = true
	}
	uncached := map[string]bool{"Workflows": true, "Now": true, "Resolver": true, "Policy": true, "Observer": true}
	for f := range reflect.TypeFor[runtime.Options]().Fields() {
		if !key[f.Name] && !uncached[f.Name] {
			t.Errorf("runtime.Options.%s is not part of the decider's runtime key", f.Name)
		}
	}
	for f := range reflect.TypeFor[policy.Options]().Fields() {
		if !key[f.Name] {
			t.Errorf("policy.Options.%s is not part of the decider's runtime key", f.Name)
		}
	}
}
