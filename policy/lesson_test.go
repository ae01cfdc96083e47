package policy

import (
	"reflect"
	"testing"
)

// TestLessonCacheAgrees decides every corpus case twice on one law (the
// second time from the phase's kept lessons, denyTool) and once on a law
// compiled afresh for the case: the three decisions are equal.
func TestLessonCacheAgrees(t *testing.T) {
	hits := 0
	for f, cf := range corpus(t) {
		warm := loadLaw(t, cf.Workflow, corpusOptions)
		for i := range cf.Cases {
			c := &cf.Cases[i]
			call, err := c.ToolCall()
			if err != nil {
				continue
			}
			rs := c.RunState.RunState(c.State)
			first := warm.Decide(rs, call)
			second := warm.Decide(rs, call)
			fresh := loadLaw(t, cf.Workflow, corpusOptions).Decide(rs, call)
			if !reflect.DeepEqual(first, fresh) || !reflect.DeepEqual(second, fresh) {
				t.Errorf("%s: %s: kept lesson differs:\nfirst  %+v\nsecond %+v\nfresh  %+v", f, c.Name, first, second, fresh)
			}
			if fresh.Rule == RuleToolNotAllowed {
				hits++
			}
		}
	}
	if hits == 0 {
		t.Fatal("no tool-not-allowed case in the corpus")
	}
}
