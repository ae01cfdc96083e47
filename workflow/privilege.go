package workflow

import "strings"

// Privilege levels of the safety validator's ladder. statewright's agent
// validator defines the same five rungs for its own tool names; this ladder
// also knows the tool names of Claude Code, Codex, opencode and Pi and the
// capabilities statewright-go workflows may list.
const (
	// PrivilegeNone: tools that act on nothing outside the conversation
	// (TodoWrite, AskUserQuestion, statewright's own control tools).
	PrivilegeNone = 0
	// PrivilegeRead: read and search tools (Read, Grep, Glob, LS, ...).
	PrivilegeRead = 1
	// PrivilegeWrite: tools that change files (Edit, Write, MultiEdit,
	// NotebookEdit, apply_patch, ...).
	PrivilegeWrite = 2
	// PrivilegeExec: tools that run programs (Bash, Exec, GitWrite, ...).
	// Tool names the ladder does not know are rated here too: an unknown
	// MCP tool may do anything a program can.
	PrivilegeExec = 3
	// PrivilegeExternal: tools that reach outside the machine or destroy
	// (WebFetch, WebSearch, Network, Destructive, Privileged, deploy, ...).
	// A state without allowed_tools allows every tool and is rated here.
	PrivilegeExternal = 4
)

// toolPrivileges maps lower-cased tool and capability names to their rung.
var toolPrivileges = map[string]int{
	// Meta tools: no effect outside the conversation.
	"todowrite": 0, "todoread": 0, "askuserquestion": 0, "exitplanmode": 0, "skill": 0,
	"update_plan": 0, "request_user_input": 0,

	// Read and search (Claude Code, opencode, Pi, Codex, statewright's agent).
	"read": 1, "grep": 1, "glob": 1, "ls": 1, "list": 1, "find": 1, "notebookread": 1,
	"bashoutput": 1, "view_image": 1, "read_file": 1, "search_files": 1, "list_directory": 1,
	"git_status": 1, "git_log": 1, "git_diff": 1, "find_files": 1, "inspect_class": 1, "diff": 1,
	// Subagents: their own calls are decided like the parent's.
	"task": 1, "agent": 1,

	// File changes.
	"edit": 2, "write": 2, "multiedit": 2, "notebookedit": 2, "apply_patch": 2, "patch": 2,
	"write_file": 2, "edit_file": 2, "create_file": 2, "delete_file": 2, "edit_line": 2,
	"edit_block": 2, "patch_file": 2, "insert_between": 2, "write_task_reproducer": 2,

	// Running programs.
	"bash": 3, "shell": 3, "local_shell": 3, "exec_command": 3, "write_stdin": 3, "killshell": 3,
	"exec": 3, "gitwrite": 3, "run_command": 3, "run_test": 3, "run_build": 3, "git_add": 3,
	"git_commit": 3, "git_push": 3, "git_checkout": 3, "git_branch": 3,

	// Outside the machine, destructive or privileged.
	"webfetch": 4, "websearch": 4, "web_search": 4, "network": 4, "destructive": 4,
	"privileged": 4, "http_request": 4, "deploy": 4, "database_query": 4, "database_mutate": 4,
}

// ToolPrivilege returns the rung of the privilege ladder for a tool or
// capability name (case-insensitive). statewright's own control tools
// (mcp__statewright__*, statewright_*) are PrivilegeNone; unknown names are
// PrivilegeExec (statewright rated them 0, which let any unknown tool pass
// its checks).
func ToolPrivilege(name string) int {
	l := strings.ToLower(name)
	if p, ok := toolPrivileges[l]; ok {
		return p
	}
	if strings.HasPrefix(l, "mcp__statewright__") || strings.HasPrefix(l, "statewright_") {
		return PrivilegeNone
	}
	return PrivilegeExec
}

// StatePrivilege returns the highest rung a state's tools reach. A final
// state allows nothing (0); a state without allowed_tools allows every tool
// (PrivilegeExternal). disallowed_tools are taken out of allowed_tools.
func StatePrivilege(s *State) int {
	if s == nil || s.IsFinal() {
		return PrivilegeNone
	}
	if s.AllowedTools == nil {
		return PrivilegeExternal
	}
	max := PrivilegeNone
	for _, t := range effectiveTools(s) {
		if p := ToolPrivilege(t); p > max {
			max = p
		}
	}
	return max
}

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
		if toolPrivileges[strings.ToLower(t)] == PrivilegeWrite {
			return true
		}
	}
	return false
}
