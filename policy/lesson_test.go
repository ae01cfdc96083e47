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

// TestProtectedLessonKept: a phase keeps the lesson of its last deny of
// an edit of a protected file (denyProtected). Decided in turn, each
// call's decision equals the one built without the kept lesson, whatever
// was denied before (another file, tool, phase or spelling of the same
// file), and after the caller reuses the input's bytes for another call.
// A repeated deny takes the kept lesson: it allocates no reason.
func TestProtectedLessonKept(t *testing.T) {
	law := benchLaw(t)
	impl := &RunState{Active: true, State: "implementing"}
	plan := &RunState{Active: true, State: "planning"}
	edit := func(tool, path string) *ToolCall {
		in := `{"file_path":"` + path + `","old_string":"a","new_string":"b"}`
		if tool == "Write" {
			in = `{"file_path":"` + path + `","content":"x"}`
		}
		return &ToolCall{Tool: tool, Cwd: "/repo", ProjectDir: "/repo", Input: []byte(in)}
	}
	calls := []struct {
		run  *RunState
		call *ToolCall
	}{
		{impl, edit("Edit", ".claude/settings.json")},
		{impl, edit("Edit", ".claude/settings.json")},
		{impl, edit("Write", ".claude/settings.json")},
		{impl, edit("Edit", "/repo/.claude/settings.json")},
		{impl, edit("Edit", ".git/config")},
		{plan, edit("Edit", ".git/config")},
		{impl, edit("Edit", ".git/config")},
		{nil, edit("Edit", ".git/config")},
		{impl, edit("Edit", "src/../.git/config")},
		{impl, edit("Edit", "/repo/workflows/dev.yaml")},
		{impl, edit("Edit", "src/a.go")},
		{impl, edit("Edit", ".claude/settings.json")},
	}
	protected := 0
	for round := range 2 {
		for i, c := range calls {
			protLessonCache = false
			want := law.Decide(c.run, c.call)
			protLessonCache = true
			got := law.Decide(c.run, c.call)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, call %d (%s): kept lesson differs:\ngot  %+v\nwant %+v", round, i, c.call.Input, got, want)
			}
			if want.Rule == RuleSelfProtect {
				protected++
			}
		}
	}
	if protected == 0 {
		t.Fatal("no call was denied as an edit of a protected file")
	}

	// The caller's buffer, reused after a deny for another spelling of
	// the same file, as long: the kept lesson, which names the file as
	// first written, is not taken for it.
	buf := []byte(`{"file_path":"/repo/.git/config","old_string":"a","new_string":"b"}`)
	call := &ToolCall{Tool: "Edit", Cwd: "/repo", ProjectDir: "/repo", Input: buf}
	first := law.Decide(impl, call)
	copy(buf, `{"file_path":"/repo/.git/CONFIG","old_string":"a","new_string":"b"}`)
	protLessonCache = false
	want := law.Decide(impl, call)
	protLessonCache = true
	if got := law.Decide(impl, call); !reflect.DeepEqual(got, want) || got.Reason == first.Reason {
		t.Fatalf("after the input's bytes were reused:\ngot  %+v\nwant %+v", got, want)
	}

	// A repeated deny of an absolute path allocates nothing.
	call = edit("Edit", "/repo/.claude/settings.json")
	law.Decide(impl, call)
	if allocs := testing.AllocsPerRun(100, func() { law.Decide(impl, call) }); allocs != 0 {
		t.Errorf("a repeated deny of a protected file: %v allocations, want 0", allocs)
	}
}
