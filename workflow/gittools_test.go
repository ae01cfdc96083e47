package workflow

import "testing"

func TestGitToolMutates(t *testing.T) {
	for _, tc := range []struct {
		name  string
		muts  bool
		reads bool
	}{
		{"git_commit", true, false},
		{"git_push", true, false},
		{"Git_Add", true, false},
		{"git_branch", true, false},
		{"git_create_branch", true, false},
		{"mcp__git__git_commit", true, false},
		{"mcp__git__git_reset", true, false},
		{"git_log", false, true},
		{"git_status", false, true},
		{"git_diff", false, true},
		{"mcp__git__git_diff_staged", false, true},
		{"mcp__git__git_show", false, true},
		{"git_frobnicate", false, false},
		{"git_", false, false},
		{"gitcommit", false, false},
		{"mcp__github__create_issue", false, false},
		{"mcp__git_commit", false, false},
		{"Bash", false, false},
		{"", false, false},
	} {
		if got := GitToolMutates(tc.name); got != tc.muts {
			t.Errorf("GitToolMutates(%q) = %v, want %v", tc.name, got, tc.muts)
		}
		if got := gitToolReads(tc.name); got != tc.reads {
			t.Errorf("gitToolReads(%q) = %v, want %v", tc.name, got, tc.reads)
		}
	}
}
