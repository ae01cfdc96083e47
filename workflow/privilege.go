package workflow

import "strings"

// The privilege ladder (docs/workflow-format.md) rates what a tool can do, so that
// the safety checks can flag a phase that jumps from reading to reaching
// outside the machine without a person's approval. Rungs are named; their
// numbers follow the seed design (read 0, write 1, execute 2, git mutate
// 3, external 4), or, for a file that says "compat": "statewright", the
// Rust project's numbering (read 1, write 2, execute and git mutate 3,
// external 4). The ladder knows the tool names of Claude Code, Codex,
// Cursor, opencode and Pi, the capabilities statewright-go workflows may
// list, and statewright's agent tools; a workflow rates any other tool in
// "tool_privileges". An unknown tool stands on the top rung, the safe side
// of the escalation check.

// Rung is a step of the privilege ladder.
type Rung int

// The rungs, lowest first.
const (
	// RungNone: tools that act on nothing outside the conversation
	// (TodoWrite, AskUserQuestion, statewright's own control tools).
	RungNone Rung = iota
	// RungRead: read and search tools (Read, Grep, Glob, git_log, ...).
	RungRead
	// RungWrite: tools that change files (Edit, Write, apply_patch, ...).
	RungWrite
	// RungExecute: tools that run programs (Bash, Exec, run_test, ...).
	RungExecute
	// RungGit: tools that mutate a git repository (GitWrite, git_commit,
	// git_push, ...).
	RungGit
	// RungExternal: tools that reach outside the machine, destroy or need
	// privileges (WebFetch, Network, Destructive, deploy, ...), every tool
	// the ladder does not know, and a state without allowed_tools.
	RungExternal
)

// LadderRungs are the names "tool_privileges" may give, lowest first.
var LadderRungs = []string{"read", "write", "execute", "git", "external"}

var rungByName = map[string]Rung{"read": RungRead, "write": RungWrite, "execute": RungExecute, "git": RungGit, "external": RungExternal}

// String names the rung.
func (r Rung) String() string {
	if r == RungNone {
		return "none"
	}
	return LadderRungs[r-1]
}

// Number is the rung's number on the seed design's ladder (read 0, write
// 1, execute 2, git mutate 3, external 4), or, with rust set, on the Rust
// project's (read 1, write 2, execute and git mutate 3, external 4).
func (r Rung) Number(rust bool) int {
	if rust {
		return [...]int{0, 1, 2, 3, 3, 4}[r]
	}
	return [...]int{0, 0, 1, 2, 3, 4}[r]
}

// toolRungs maps lower-cased tool and capability names to their rung.
var toolRungs = map[string]Rung{
	// Meta tools: no effect outside the conversation.
	"todowrite": RungNone, "todoread": RungNone, "askuserquestion": RungNone, "exitplanmode": RungNone,
	"enterplanmode": RungNone, "skill": RungNone, "update_plan": RungNone, "request_user_input": RungNone,
	"question": RungNone, "updatetodos": RungNone,

	// Read and search (Claude Code, Codex, Cursor, opencode, Pi, statewright's agent).
	"read": RungRead, "grep": RungRead, "glob": RungRead, "ls": RungRead, "list": RungRead, "find": RungRead,
	"notebookread": RungRead, "bashoutput": RungRead, "view_image": RungRead, "read_file": RungRead,
	"readfile": RungRead, "search_files": RungRead, "list_directory": RungRead, "list_dir": RungRead,
	"listdirectory": RungRead, "grep_files": RungRead, "searchfiles": RungRead, "searchcodebase": RungRead,
	"codebasesearch": RungRead, "filesearch": RungRead, "find_files": RungRead, "inspect_class": RungRead,
	"diff": RungRead, "lsp": RungRead, "readmcpresourcetool": RungRead, "listmcpresourcestool": RungRead,
	"list_mcp_resources": RungRead, "list_mcp_resource_templates": RungRead, "read_mcp_resource": RungRead,
	// Subagents: their own calls are decided like the parent's.
	"task": RungRead, "agent": RungRead,

	// File changes.
	"edit": RungWrite, "write": RungWrite, "multiedit": RungWrite, "notebookedit": RungWrite,
	"apply_patch": RungWrite, "applypatch": RungWrite, "patch": RungWrite, "write_file": RungWrite,
	"edit_file": RungWrite, "create_file": RungWrite, "delete_file": RungWrite, "edit_line": RungWrite,
	"edit_block": RungWrite, "patch_file": RungWrite, "insert_between": RungWrite,
	"write_task_reproducer": RungWrite, "strreplace": RungWrite, "multistrreplace": RungWrite, "delete": RungWrite,

	// Running programs.
	"bash": RungExecute, "shell": RungExecute, "local_shell": RungExecute, "exec_command": RungExecute,
	"shell_command": RungExecute, "unified_exec": RungExecute, "container.exec": RungExecute,
	"write_stdin": RungExecute, "killshell": RungExecute, "killbash": RungExecute, "exec": RungExecute,
	"run_command": RungExecute, "run_test": RungExecute, "run_build": RungExecute, "background": RungExecute,

	// Git mutations (git_* tool names: see GitToolMutates).
	"gitwrite": RungGit,

	// Outside the machine, destructive or privileged.
	"webfetch": RungExternal, "websearch": RungExternal, "web_search": RungExternal, "web.run": RungExternal,
	"codesearch": RungExternal, "network": RungExternal, "destructive": RungExternal, "privileged": RungExternal,
	"nestedagent": RungExternal, "http_request": RungExternal, "deploy": RungExternal,
	"database_query": RungExternal, "database_mutate": RungExternal,
}

// ToolRung returns the rung of a tool or capability name (case-insensitive)
// on def's ladder: def's "tool_privileges" first, then the ladder's table,
// then git tool names; statewright's own control tools are RungNone and
// every other name RungExternal. def may be nil.
func ToolRung(def *Definition, name string) Rung {
	if def != nil {
		if r, ok := def.ToolPrivileges[name]; ok {
			return rungByName[r]
		}
	}
	l := strings.ToLower(name)
	if r, ok := toolRungs[l]; ok {
		return r
	}
	switch {
	case GitToolMutates(l):
		return RungGit
	case gitToolReads(l):
		return RungRead
	case strings.HasPrefix(l, "mcp__statewright__") || strings.HasPrefix(l, "mcp__plugin_statewright_statewright__") || strings.HasPrefix(l, "statewright_"):
		return RungNone
	}
	return RungExternal
}

// KnownToLadder reports whether the ladder rates name by its own table
// (not by a workflow's tool_privileges, nor as an unknown tool).
func KnownToLadder(name string) bool {
	l := strings.ToLower(name)
	_, ok := toolRungs[l]
	return ok || GitToolMutates(l) || gitToolReads(l) || strings.HasPrefix(l, "mcp__statewright__") || strings.HasPrefix(l, "statewright_")
}

// StateRung returns the highest rung a state's tools reach on def's
// ladder. A final state allows nothing (RungNone); a state without
// allowed_tools allows every tool (RungExternal). disallowed_tools are
// taken out of allowed_tools; a "prefix*" entry is an unknown tool.
func StateRung(def *Definition, s *State) Rung {
	if s == nil || s.IsFinal() {
		return RungNone
	}
	if s.AllowedTools == nil {
		return RungExternal
	}
	max := RungNone
	for _, t := range effectiveTools(s) {
		if r := ToolRung(def, t); r > max {
			max = r
		}
	}
	return max
}

// RustNumbering reports whether def numbers the ladder as the Rust project
// does (a file that says "compat": "statewright").
func RustNumbering(def *Definition) bool { return def != nil && def.Compat == CompatStatewright }

// effectiveTools returns allowed_tools minus disallowed_tools
// (case-insensitive), or nil when the state is unrestricted.
func effectiveTools(s *State) []string {
	if s.AllowedTools == nil {
		return nil
	}
	out := []string{}
	for _, t := range s.AllowedTools {
		if !containsFold(s.DisallowedTools, t) {
			out = append(out, t)
		}
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// shellTools are the tool names that run shell commands.
var shellTools = []string{"Bash", "shell", "local_shell", "exec_command", "run_command", "run_test"}

// allowsShell reports whether a state lets the agent run shell commands,
// and names the shell tool for messages.
func allowsShell(s *State) (bool, string) {
	names := shellTools
	tool := "Bash"
	if s.AllowedCommandsTool != "" {
		tool = s.AllowedCommandsTool
		names = append([]string{s.AllowedCommandsTool}, shellTools...)
	}
	for _, n := range names {
		if containsFold(s.DisallowedTools, n) {
			continue
		}
		if s.AllowedTools == nil || containsFold(s.AllowedTools, n) {
			return true, tool
		}
	}
	return false, tool
}

// allowsEdit reports whether a state lets the agent edit files with an edit
// tool or capability.
func allowsEdit(s *State) bool {
	if s.AllowedTools == nil {
		return true
	}
	for _, t := range effectiveTools(s) {
		if toolRungs[strings.ToLower(t)] == RungWrite {
			return true
		}
	}
	return false
}
