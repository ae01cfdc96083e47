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

// TestLessonCacheLast: the lesson found last answers only its own key.
func TestLessonCacheLast(t *testing.T) {
	var c lessonCache
	k1, k2, k3 := makeLessonKey(kEdit, 1, 0, -1), makeLessonKey(kEdit, 2, 0, -1), makeLessonKey(kWrite, 1, 0, -1)
	l1, l2 := &cachedLesson{key: k1, reason: "one"}, &cachedLesson{key: k2, reason: "two"}
	c.store(k1, l1)
	c.store(k2, l2)
	for _, step := range []struct {
		k    lessonKey
		want *cachedLesson
	}{{k1, l1}, {k1, l1}, {k2, l2}, {k3, nil}, {k2, l2}, {k1, l1}, {k3, nil}} {
		if got := c.load(step.k); got != step.want {
			t.Fatalf("load(%v) = %+v, want %+v", step.k, got, step.want)
		}
	}
}
