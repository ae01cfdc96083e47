package workflow

import "strings"

// Git tool names: the tools of git MCP servers (mcp__git__git_commit) and
// statewright's agent adapters (git_add, git_log). A workflow that lists one
// names what it lets the agent do to the repository, so the policy grants
// the shell's GitWrite capability only for the names that mutate, and the
// privilege ladder rates those at "git mutate" and the others at "read".

// gitReadVerbs are the git tool verbs that only read the repository.
var gitReadVerbs = map[string]bool{
	"status": true, "log": true, "diff": true, "diff_staged": true, "diff_unstaged": true,
	"show": true, "blame": true, "grep": true, "ls_files": true, "ls_tree": true,
	"rev_parse": true, "describe": true, "shortlog": true, "reflog": true, "list_branches": true,
	"branches": true, "list_tags": true, "list_remotes": true, "cat_file": true,
}

// gitMutatingVerbs are the git tool verbs that change the repository, its
// refs, its index, its work tree or a remote. git_branch is here: the
// statewright agent's ladder rates it a mutation (it can create and delete
// branches), although some servers' git_branch only lists them.
var gitMutatingVerbs = map[string]bool{
	"add": true, "commit": true, "push": true, "pull": true, "fetch": true, "merge": true,
	"rebase": true, "reset": true, "checkout": true, "switch": true, "restore": true,
	"branch": true, "create_branch": true, "delete_branch": true, "tag": true, "create_tag": true,
	"stash": true, "cherry_pick": true, "revert": true, "rm": true, "mv": true, "clean": true,
	"init": true, "clone": true, "apply": true, "am": true, "remote": true, "config": true,
	"worktree": true, "submodule": true, "gc": true, "prune": true, "update_ref": true,
}

// gitVerb returns the verb of a git tool name ("commit" for git_commit and
// mcp__git__git_commit), or "" when name is no git tool name.
func gitVerb(name string) string {
	l := strings.ToLower(name)
	if strings.HasPrefix(l, "mcp__") {
		if i := strings.LastIndex(l, "__"); i >= len("mcp__") {
			l = l[i+2:]
		}
	}
	verb, ok := strings.CutPrefix(l, "git_")
	if !ok {
		return ""
	}
	return verb
}

// GitToolMutates reports whether name is a git tool that changes the
// repository (git_commit, git_push, mcp__git__git_add, ...). Read tools
// (git_log, git_status, git_diff) and git_* names this table does not know
// report false: listing them grants no git writes.
func GitToolMutates(name string) bool {
	return gitMutatingVerbs[gitVerb(name)]
}

// gitToolReads reports whether name is a git tool known to only read.
func gitToolReads(name string) bool {
	return gitReadVerbs[gitVerb(name)]
}
