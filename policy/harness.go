package policy

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Harness names a coding-agent harness whose tool names the policy knows.
type Harness string

// Harnesses with an alias table.
const (
	ClaudeCode Harness = "claude-code"
	Codex      Harness = "codex"
	Cursor     Harness = "cursor"
	OpenCode   Harness = "opencode"
	Pi         Harness = "pi"
)

// Harnesses lists the supported harnesses, in harnessIndex order.
var Harnesses = []Harness{ClaudeCode, Codex, Cursor, OpenCode, Pi}

// numHarnesses is len(Harnesses), for arrays indexed by harnessIndex.
const numHarnesses = 5

// ParseHarness maps a harness name (or a common alias such as "claude") to a Harness.
func ParseHarness(s string) (Harness, error) {
	switch strings.ToLower(s) {
	case "", "claude-code", "claude", "claudecode", "claude_code":
		return ClaudeCode, nil
	case "codex", "omx":
		return Codex, nil
	case "cursor":
		return Cursor, nil
	case "opencode":
		return OpenCode, nil
	case "pi":
		return Pi, nil
	}
	return "", fmt.Errorf("unknown harness %q (want one of claude-code, codex, cursor, opencode, pi)", s)
}

// kind is the canonical tool a call is decided as.
type kind uint8

const (
	kOther        kind = iota // a tool without canonical form (MCP tools, custom tools): allowed by exact name
	kRead                     // Read
	kWrite                    // Write (create or overwrite a whole file)
	kEdit                     // Edit (replace a string in a file)
	kMultiEdit                // MultiEdit
	kNotebookEdit             // NotebookEdit (a write)
	kApplyPatch               // a patch body (Codex apply_patch, opencode patch): an edit
	kDelete                   // a file deletion tool (Cursor Delete): an edit
	kBash                     // a shell command
	kBashAux                  // BashOutput, KillShell: follow-ups of the agent's own shell
	kWriteStdin               // write_stdin: input to a running process (exec)
	kGrep                     // Grep
	kGlob                     // Glob
	kLS                       // LS
	kWebFetch                 // WebFetch
	kWebSearch                // WebSearch
	kTask                     // Task / Agent: a subagent, allowed; its calls are decided like the parent's
	kMeta                     // TodoWrite, AskUserQuestion, ExitPlanMode, Skill, update_plan: always allowed
	kControl                  // statewright's own control tools
	numKinds
)

// canonicalNames are the canonical names a workflow lists; the index is the kind.
var canonicalNames = [numKinds]string{
	kRead: "Read", kWrite: "Write", kEdit: "Edit", kMultiEdit: "MultiEdit",
	kNotebookEdit: "NotebookEdit", kApplyPatch: "Edit", kDelete: "Edit",
	kBash: "Bash", kBashAux: "Bash", kWriteStdin: "Bash", kGrep: "Grep", kGlob: "Glob", kLS: "LS",
	kWebFetch: "WebFetch", kWebSearch: "WebSearch", kTask: "Task",
}

// toolBits is a set of kinds granted by a phase.
type toolBits uint32

func bit(k kind) toolBits { return 1 << k }

// satisfiedBy lists, for each kind, the granted kinds that allow it.
var satisfiedBy = [numKinds]toolBits{
	kRead:         bit(kRead),
	kWrite:        bit(kWrite),
	kEdit:         bit(kEdit),
	kMultiEdit:    bit(kMultiEdit) | bit(kEdit),
	kNotebookEdit: bit(kNotebookEdit) | bit(kEdit) | bit(kWrite),
	kApplyPatch:   bit(kApplyPatch) | bit(kEdit) | bit(kWrite) | bit(kMultiEdit),
	kDelete:       bit(kDelete) | bit(kEdit),
	kBash:         bit(kBash),
	kBashAux:      bit(kBash),
	kWriteStdin:   bit(kBash),
	kGrep:         bit(kGrep),
	kGlob:         bit(kGlob),
	kLS:           bit(kLS) | bit(kGlob) | bit(kRead),
	kWebFetch:     bit(kWebFetch),
	kWebSearch:    bit(kWebSearch),
	kTask:         bit(kTask),
}

// editTools are the kinds that unlock shell write and modify.
const editTools = toolBits(1<<kWrite | 1<<kEdit | 1<<kMultiEdit | 1<<kNotebookEdit | 1<<kApplyPatch)

// toolInfo is what an alias table says about a raw tool name.
type toolInfo struct {
	kind  kind
	canon string // canonical name, or the raw name for kOther/kMeta
}

// harnessTools is one harness's alias table: raw tool name → canonical tool.
type harnessTools map[string]toolInfo

func table(entries map[kind][]string) harnessTools {
	t := harnessTools{}
	for k, names := range entries {
		for _, n := range names {
			c := canonicalNames[k]
			if k == kMeta || k == kOther {
				c = n
			}
			t[n] = toolInfo{kind: k, canon: c}
		}
	}
	return t
}

// harnessAliases are the raw names each harness reports to its hooks or
// plugins, per canonical tool (docs/architecture.md, decision pipeline
// step 3). The first name of a list is the one the harness's model calls,
// which lessons name (LessonTools).
var harnessAliases = map[Harness]map[kind][]string{
	ClaudeCode: {
		kRead:         {"Read", "NotebookRead", "ReadMcpResourceTool", "ListMcpResourcesTool"},
		kWrite:        {"Write"},
		kEdit:         {"Edit"},
		kMultiEdit:    {"MultiEdit"},
		kNotebookEdit: {"NotebookEdit"},
		kBash:         {"Bash"},
		kBashAux:      {"BashOutput", "KillShell", "KillBash"},
		kGrep:         {"Grep"},
		kGlob:         {"Glob"},
		kLS:           {"LS"},
		kWebFetch:     {"WebFetch"},
		kWebSearch:    {"WebSearch"},
		kTask:         {"Task", "Agent"},
		kMeta:         {"TodoWrite", "TodoRead", "AskUserQuestion", "ExitPlanMode", "EnterPlanMode", "Skill", "SlashCommand", "ToolSearch", "SendMessage"},
	},
	// Codex reports its shell (exec_command, shell_command) to hooks as
	// "Bash" and the patch tool as "apply_patch"; the model-facing names
	// are listed too, for `statewright check` and plugins. The goal and
	// multi-agent bookkeeping tools are what Codex 0.169 offers.
	Codex: {
		kRead:       {"read_file", "view_image", "list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"},
		kApplyPatch: {"apply_patch"},
		kBash:       {"exec_command", "shell", "shell_command", "local_shell", "container.exec", "unified_exec", "Bash"},
		kWriteStdin: {"write_stdin"},
		kGrep:       {"grep_files"},
		kLS:         {"list_dir"},
		kWebSearch:  {"web_search"},
		kWebFetch:   {"web.run"},
		kTask:       {"spawn_agent", "send_input", "wait_agent", "resume_agent", "close_agent", "list_agents", "interrupt_agent"},
		kMeta:       {"update_plan", "request_user_input", "get_goal", "create_goal", "update_goal", "tool_search"},
	},
	Cursor: {
		kRead:       {"Read", "ReadFile"},
		kWrite:      {"Write"},
		kEdit:       {"Edit", "StrReplace", "MultiStrReplace"},
		kApplyPatch: {"ApplyPatch"},
		kDelete:     {"Delete"},
		kBash:       {"Shell"},
		kGrep:       {"Grep", "SearchFiles", "SearchCodebase", "CodebaseSearch"},
		kGlob:       {"Glob", "FileSearch"},
		kLS:         {"LS", "ListDirectory"},
		kWebFetch:   {"WebFetch"},
		kWebSearch:  {"WebSearch"},
		kTask:       {"Task"},
		kMeta:       {"TodoWrite", "UpdateTodos"},
	},
	OpenCode: {
		kRead:       {"read", "lsp"},
		kWrite:      {"write"},
		kEdit:       {"edit"},
		kMultiEdit:  {"multiedit"},
		kApplyPatch: {"patch", "apply_patch"},
		kBash:       {"bash"},
		kGrep:       {"grep"},
		kGlob:       {"glob"},
		kLS:         {"list"},
		kWebFetch:   {"webfetch"},
		kWebSearch:  {"websearch", "codesearch"},
		kTask:       {"task"},
		kMeta:       {"todowrite", "todoread", "skill", "question"},
	},
	Pi: {
		kRead:  {"read"},
		kWrite: {"write"},
		kEdit:  {"edit"},
		kBash:  {"bash"},
		kGrep:  {"grep"},
		kGlob:  {"find"},
		kLS:    {"ls"},
	},
}

// harnessTables are the alias tables, one per harness: raw tool name →
// canonical tool.
var harnessTables = func() map[Harness]harnessTools {
	m := map[Harness]harnessTools{}
	for h, a := range harnessAliases {
		m[h] = table(a)
	}
	return m
}()

// Direct references to the busiest tables (no map lookup on the hot path).
var (
	claudeTable = harnessTables[ClaudeCode]
	codexTable  = harnessTables[Codex]
	// claudeSlots and codexSlots hold those tables' names where their
	// slot function puts them: a name is answered by one string
	// comparison, without hashing it (a name whose slot another took is
	// in the map only).
	claudeSlots = newToolSlots(claudeTable)
	codexSlots  = newToolSlots(codexTable)
)

// toolSlots is a direct-mapped table of a harness's tool names: slot(name)
// is a multiply-shift of the name's length and first, middle and last
// bytes, with a multiplier chosen when the table is built so that no two
// of the harness's names share a slot (else the first, in sorted order,
// keeps it).
type toolSlots struct {
	mul   uint64
	slots [128]toolSlot
}

type toolSlot struct {
	name string
	info toolInfo
}

func (ts *toolSlots) slot(s string) *toolSlot {
	if s == "" {
		return &ts.slots[0]
	}
	h := uint64(len(s)) | uint64(s[0])<<8 | uint64(s[len(s)/2])<<16 | uint64(s[len(s)-1])<<24
	return &ts.slots[(h*ts.mul)>>57]
}

// lookup returns name's entry when the slots hold it.
func (ts *toolSlots) lookup(name string) (toolInfo, bool) {
	if sl := ts.slot(name); sl.name == name && name != "" {
		return sl.info, true
	}
	return toolInfo{}, false
}

func newToolSlots(t harnessTools) *toolSlots {
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	best, bestIn := &toolSlots{}, -1
	for i := range uint64(256) {
		ts := &toolSlots{mul: 0x9E3779B97F4A7C15 + i*0x632BE59BD9B4E01A}
		in := 0
		for _, n := range names {
			if sl := ts.slot(n); n != "" && sl.name == "" {
				*sl = toolSlot{n, t[n]}
				in++
			}
		}
		if in > bestIn {
			best, bestIn = ts, in
		}
		if in == len(names) {
			break
		}
	}
	return best
}

// lowerTables are the same tables keyed by lower-cased name, the fallback
// when a harness reports a name in another case. Built on first use, not at
// init: a hook process rarely needs it.
var lowerTables = sync.OnceValue(func() map[Harness]harnessTools {
	out := map[Harness]harnessTools{}
	for h, t := range harnessTables {
		lt := harnessTools{}
		for n, info := range t {
			ln := strings.ToLower(n)
			if _, dup := lt[ln]; !dup || n == ln {
				lt[ln] = info
			}
		}
		out[h] = lt
	}
	return out
})

// workflowNames maps a lower-cased name a workflow may list to the kind it
// grants: canonical names, every harness's raw names, and statewright's
// adapter families (read_file, edit_file, run_command, ...).
var workflowNames = func() map[string]kind {
	m := map[string]kind{}
	for _, h := range Harnesses {
		for n, info := range harnessTables[h] {
			if info.kind == kMeta || info.kind == kOther {
				continue
			}
			ln := strings.ToLower(n)
			if _, ok := m[ln]; !ok {
				m[ln] = info.kind
			}
		}
	}
	// Canonical names win over raw names that happen to share them.
	for k, c := range canonicalNames {
		if c != "" && (kind(k) != kApplyPatch && kind(k) != kDelete && kind(k) != kBashAux && kind(k) != kWriteStdin) {
			m[strings.ToLower(c)] = kind(k)
		}
	}
	for _, e := range []struct {
		k     kind
		names []string
	}{
		{kRead, []string{"read_file", "cat"}},
		{kEdit, []string{"edit_file", "str_replace", "patch_file", "create_or_update_file"}},
		{kApplyPatch, []string{"apply_patch", "patch"}},
		{kWrite, []string{"write_file", "create_file"}},
		{kGrep, []string{"search_files", "grep_files"}},
		{kGlob, []string{"find_files", "find"}},
		{kLS, []string{"list_directory", "list_dir", "ls", "list"}},
		{kBash, []string{"shell", "exec_command", "run_command", "local_shell", "bash"}},
		{kWebFetch, []string{"fetch", "http_request", "web_fetch"}},
		{kWebSearch, []string{"web_search"}},
		{kTask, []string{"agent", "subagent", "task"}},
	} {
		for _, n := range e.names {
			m[n] = e.k
		}
	}
	return m
}()

// HarnessTool reports whether h decides a tool called name as one of its
// own tools, a meta-tool or a statewright control tool (reading its input
// as that tool's: a Write's file_path, a Bash's command), not as an opaque
// tool allowed by its exact name (an MCP tool). A proxy that decides its
// upstreams' tools by their names must not offer one so named: the law
// would read its arguments as the harness tool's, and the upstream reads
// them its own way.
func HarnessTool(h Harness, name string) bool {
	return lookupTool(h, name).kind != kOther
}

// lookupTool maps a harness's raw tool name to its canonical tool. It does
// not allocate for names in the harness's table.
func lookupTool(h Harness, raw string) toolInfo {
	var t harnessTools
	switch h {
	case ClaudeCode, "":
		if info, ok := claudeSlots.lookup(raw); ok {
			return info
		}
		t, h = claudeTable, ClaudeCode
	case Codex:
		if info, ok := codexSlots.lookup(raw); ok {
			return info
		}
		t = codexTable
	default:
		var ok bool
		if t, ok = harnessTables[h]; !ok {
			t, h = claudeTable, ClaudeCode
		}
	}
	if info, ok := t[raw]; ok {
		return info
	}
	if op, ok := controlOp(h, raw); ok {
		return toolInfo{kind: kControl, canon: op}
	}
	if info, ok := lowerTables()[h][strings.ToLower(raw)]; ok {
		return info
	}
	return toolInfo{kind: kOther, canon: raw}
}

// Control tool prefixes: statewright's MCP server, matched exactly (never a
// substring). opencode and Pi register the control tools inside their
// plugin under a bare "statewright_" prefix.
var controlPrefixes = []string{"mcp__statewright__", "mcp__plugin_statewright_statewright__"}

func controlOp(h Harness, raw string) (string, bool) {
	for _, p := range controlPrefixes {
		if strings.HasPrefix(raw, p) {
			return strings.TrimPrefix(raw[len(p):], "statewright_"), true
		}
	}
	// opencode names MCP tools "<server>_<tool>": statewright's server's
	// tools arrive as "statewright_statewright_transition".
	if (h == OpenCode || h == Pi) && strings.HasPrefix(raw, "statewright_") {
		return strings.TrimPrefix(raw[len("statewright_"):], "statewright_"), true
	}
	return "", false
}

// controlClass classifies a control operation.
type controlClass uint8

const (
	ctlUnknown controlClass = iota
	ctlRead
	ctlTransition
	ctlStart
	ctlHuman
)

var controlOps = map[string]controlClass{
	"get_state": ctlRead, "get_status": ctlRead, "status": ctlRead, "list_workflows": ctlRead,
	"get_usage": ctlRead, "search_docs": ctlRead, "search_references": ctlRead,
	"get_model_traits": ctlRead, "explain": ctlRead, "history": ctlRead, "check": ctlRead,
	"transition": ctlTransition,
	"start":      ctlStart, "load_workflow": ctlStart, "start_workflow": ctlStart,
	"deactivate": ctlHuman, "pause": ctlHuman, "resume": ctlHuman, "force_state": ctlHuman,
	"create_workflow": ctlHuman, "approve": ctlHuman, "reject": ctlHuman, "off": ctlHuman,
	"stop": ctlHuman, "run_agent": ctlHuman, "fork": ctlHuman, "reset": ctlHuman,
}

// AliasTable returns a harness's raw tool names with the canonical tool each
// is decided as ("meta" for always-allowed meta-tools), sorted by raw name.
func AliasTable(h Harness) [][2]string {
	var out [][2]string
	for n, info := range harnessTables[h] {
		c := info.canon
		switch info.kind {
		case kMeta:
			c = "meta (always allowed)"
		case kTask:
			c = "Task (allowed)"
		case kWriteStdin:
			c = "Bash + Exec"
		case kApplyPatch:
			c = "Edit (patch body)"
		}
		out = append(out, [2]string{n, c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// harnessIndex is h's place in Harnesses ("" and unknown names are Claude
// Code, as in lookupTool).
func harnessIndex(h Harness) int {
	switch h {
	case Codex:
		return 1
	case Cursor:
		return 2
	case OpenCode:
		return 3
	case Pi:
		return 4
	}
	return 0
}

// canonicalIn are the tools a harness's lessons name canonically: Codex's
// model (0.169) has no read, search or list tool of its own; it reads with
// read-only shell commands, which the law admits as Read, Grep, Glob and
// LS, so its lessons keep those names.
var canonicalIn = map[Harness]toolBits{Codex: bit(kRead) | bit(kGrep) | bit(kGlob) | bit(kLS)}

// LessonTools returns tools (a phase's allowed_tools) as harness h's model
// knows them: a name that grants a canonical tool becomes the harness's own
// name for it (opencode's read, Pi's find for Glob, Codex's apply_patch for
// Write and Edit, Cursor's Shell for Bash); capability words, MCP tools and
// names the harness has no tool for stay as written. Duplicates are
// dropped; nil stays nil.
func LessonTools(h Harness, tools []string) []string {
	if tools == nil {
		return nil
	}
	h = Harnesses[harnessIndex(h)]
	a := harnessAliases[h]
	out := make([]string, 0, len(tools))
	seen := map[string]bool{}
	for _, t := range tools {
		n := t
		if k, ok := workflowNames[strings.ToLower(t)]; ok && !strings.HasSuffix(t, "*") {
			names := a[k]
			if canonicalIn[h]&bit(k) != 0 {
				names = []string{canonicalNames[k]}
			}
			if len(names) == 0 && (k == kWrite || k == kEdit || k == kMultiEdit || k == kNotebookEdit) {
				names = a[kApplyPatch] // the harness edits through its patch tool
			}
			if len(names) > 0 {
				n = names[0]
			}
		} else {
			for _, m := range a[kMeta] { // TodoWrite is opencode's todowrite
				if strings.EqualFold(m, t) {
					n = m
				}
			}
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
