package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/statewright-go/statewright/agent/model"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/testreport"
)

// Tool names the model sees.
const (
	ReadFile   = "read_file"
	ListDir    = "list_dir"
	Grep       = "grep"
	EditFile   = "edit_file"
	WriteFile  = "write_file"
	RunCommand = "run_command"
	RunTest    = "run_test"
	// Transition is handled by the runner (the runtime's transition), not by Exec.
	Transition = "statewright_transition"
)

// Names lists the file and command tools in the order they are offered.
var Names = []string{ReadFile, ListDir, Grep, EditFile, WriteFile, RunCommand, RunTest}

// Definitions of the tools for the model (JSON Schema parameters).
var definitions = map[string]model.Tool{
	ReadFile: {Name: ReadFile, Description: "Read a window of lines of a file in the workspace, numbered. Defaults to lines 1-200; ask for the next window with start_line.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"path relative to the workspace"},"start_line":{"type":"integer","description":"first line, 1-based"},"end_line":{"type":"integer","description":"last line, inclusive"}},"required":["path"]}`)},
	ListDir: {Name: ListDir, Description: "List a directory of the workspace (directories end with /).",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"directory relative to the workspace (default .)"}}}`)},
	Grep: {Name: Grep, Description: "Search files of the workspace for a regular expression (RE2); prints path:line: text.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string","description":"file or directory (default .)"},"glob":{"type":"string","description":"only file names matching this glob, e.g. *.go"}},"required":["pattern"]}`)},
	EditFile: {Name: EditFile, Description: "Replace one exact occurrence of old_string with new_string in a file and show the diff. old_string must match exactly once: include enough surrounding lines to make it unique.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"}},"required":["path","old_string","new_string"]}`)},
	WriteFile: {Name: WriteFile, Description: "Create a file, or replace a whole file, with content.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)},
	RunCommand: {Name: RunCommand, Description: "Run a shell command (bash) in the workspace, without network, with a timeout. Output is capped.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"timeout_seconds":{"type":"integer"}},"required":["command"]}`)},
	RunTest: {Name: RunTest, Description: "Run the project's tests (the given test command, or the default one) and report the result.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"a test command such as 'go test ./...' or 'python3 -m pytest -q' (default: the project's)"}}}`)},
}

// TransitionDef is the statewright_transition tool, listing the events the
// model may send from its state.
func TransitionDef(events []string) model.Tool {
	enum, _ := json.Marshal(events)
	return model.Tool{Name: Transition,
		Description: "Move the workflow to its next phase by sending an event (" + strings.Join(events, ", ") + "). Do this when the current phase's work is done.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"event":{"type":"string","enum":` + string(enum) + `},"reason":{"type":"string"}},"required":["event"]}`)}
}

// Definition returns the model-facing definition of a tool.
func Definition(name string) (model.Tool, bool) {
	d, ok := definitions[name]
	return d, ok
}

// Set carries tool calls out in a workspace.
type Set struct {
	WS      *Workspace
	Sandbox *Sandbox
	// TestCommand is run_test's default command.
	TestCommand string
	// Limits bound commands.
	Limits Limits
	// SandboxEnv, when set (and Sandbox has bubblewrap), makes commands
	// run under the profile of the phase each call is decided in: the
	// runner asks the runtime for it and passes it to ExecIn.
	SandboxEnv *policy.SandboxEnv
}

// Sandboxed reports whether name's commands run under a phase's profile.
func (s *Set) Sandboxed(name string) bool {
	return (name == RunCommand || name == RunTest) && s.SandboxEnv != nil && s.Sandbox != nil && s.Sandbox.Bwrap != ""
}

// Result is a tool's answer to the model.
type Result struct {
	// Output is the text the model sees.
	Output string
	// Failed marks an error (the call did not do what was asked).
	Failed bool
	// ExitCode is a command's exit status.
	ExitCode *int
	// Test is a test command's structured evidence (nil for anything else).
	Test *testreport.Evidence
}

func fail(format string, args ...any) Result {
	return Result{Output: fmt.Sprintf(format, args...), Failed: true}
}

// Args are the decoded arguments of any tool.
type Args struct {
	Path           string `json:"path"`
	StartLine      int    `json:"start_line"`
	EndLine        int    `json:"end_line"`
	Pattern        string `json:"pattern"`
	Glob           string `json:"glob"`
	OldString      string `json:"old_string"`
	NewString      string `json:"new_string"`
	Content        string `json:"content"`
	Command        string `json:"command"`
	TimeoutSeconds int    `json:"timeout_seconds"`
	Event          string `json:"event"`
	Raw            string `json:"_raw"`
}

// DecodeArgs decodes a call's arguments, refusing arguments that were not a JSON object.
func DecodeArgs(raw json.RawMessage) (Args, error) {
	var a Args
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, fmt.Errorf("arguments are not a JSON object: %w", err)
	}
	if a.Raw != "" {
		return a, fmt.Errorf("arguments are not a JSON object: %.200s", a.Raw)
	}
	return a, nil
}

// PolicyCall maps a call to the Claude Code tool shape the runtime decides
// (Read, LS, Grep, Edit, Write, Bash), with paths resolved inside the
// workspace. A path outside the workspace is an error (the runner refuses
// the call before asking the runtime).
func (s *Set) PolicyCall(name string, a Args) (tool string, input map[string]any, err error) {
	path := func(p string) (string, error) {
		abs, _, err := s.WS.Resolve(p)
		return abs, err
	}
	switch name {
	case ReadFile:
		p, err := path(a.Path)
		return "Read", map[string]any{"file_path": p}, err
	case ListDir:
		p, err := path(a.Path)
		return "LS", map[string]any{"path": p}, err
	case Grep:
		p, err := path(a.Path)
		return "Grep", map[string]any{"pattern": a.Pattern, "path": p}, err
	case EditFile:
		p, err := path(a.Path)
		return "Edit", map[string]any{"file_path": p, "old_string": a.OldString, "new_string": a.NewString}, err
	case WriteFile:
		p, err := path(a.Path)
		return "Write", map[string]any{"file_path": p, "content": a.Content}, err
	case RunCommand:
		if strings.TrimSpace(a.Command) == "" {
			return "", nil, errors.New("command is empty")
		}
		return "Bash", map[string]any{"command": a.Command}, nil
	case RunTest:
		c := a.Command
		if strings.TrimSpace(c) == "" {
			c = s.TestCommand
		}
		if strings.TrimSpace(c) == "" {
			return "", nil, errors.New("no test command given and the project has none configured")
		}
		return "Bash", map[string]any{"command": c}, nil
	}
	return "", nil, fmt.Errorf("unknown tool %q", name)
}

// Exec carries out a call the runtime allowed, commands under the default
// profile.
func (s *Set) Exec(ctx context.Context, name string, a Args) Result {
	return s.ExecIn(ctx, name, a, nil)
}

// ExecIn carries out a call the runtime allowed, commands under prof (the
// profile of the phase the call was decided in; nil: the default profile).
func (s *Set) ExecIn(ctx context.Context, name string, a Args, prof *sandbox.Profile) Result {
	switch name {
	case ReadFile:
		return s.readFile(a)
	case ListDir:
		return s.listDir(a)
	case Grep:
		return s.grep(a)
	case EditFile:
		return s.editFile(a)
	case WriteFile:
		return s.writeFile(a)
	case RunCommand, RunTest:
		c := a.Command
		if name == RunTest && strings.TrimSpace(c) == "" {
			c = s.TestCommand
		}
		// The call's timeout_seconds can only shorten the set's limit (or
		// the default when the set names none).
		lim := s.Limits.withDefaults()
		if a.TimeoutSeconds > 0 && time.Duration(a.TimeoutSeconds)*time.Second < lim.Timeout {
			lim.Timeout = time.Duration(a.TimeoutSeconds) * time.Second
		}
		r, err := s.Sandbox.RunIn(ctx, s.WS, prof, c, lim)
		if err != nil {
			return fail("%v", err)
		}
		code := r.ExitCode
		out := r.Output
		if r.TimedOut {
			out += fmt.Sprintf("\n[timed out after %s]", lim.Timeout)
		}
		if r.Stopped {
			out += "\n[the phase's sandbox stopped while the command ran (the run left the phase it was decided in); the command was killed]"
		}
		if strings.TrimSpace(out) == "" {
			out = "(no output)"
		}
		return Result{Output: fmt.Sprintf("exit code %d\n%s", code, out), Failed: code != 0, ExitCode: &code, Test: r.Test}
	}
	return fail("unknown tool %q", name)
}

// DefaultWindow is how many lines read_file returns when no end is given;
// MaxWindow caps any window.
const (
	DefaultWindow = 200
	MaxWindow     = 400
)

// Window normalises a read_file line window to [start, end] (1-based, inclusive).
func Window(a Args) (start, end int) {
	start = max(a.StartLine, 1)
	end = a.EndLine
	if end < start {
		end = start + DefaultWindow - 1
	}
	if end-start+1 > MaxWindow {
		end = start + MaxWindow - 1
	}
	return start, end
}

func (s *Set) readFile(a Args) Result {
	abs, rel, err := s.WS.Resolve(a.Path)
	if err != nil {
		return fail("%v", err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return fail("read %s: %v", rel, err)
	}
	lines := splitLines(string(data))
	start, end := Window(a)
	if start > len(lines) && len(lines) > 0 {
		return fail("%s has %d lines; start_line %d is past the end", rel, len(lines), start)
	}
	end = min(end, len(lines))
	var b strings.Builder
	fmt.Fprintf(&b, "%s (lines %d-%d of %d)\n", rel, start, end, len(lines))
	for i := start; i <= end; i++ {
		fmt.Fprintf(&b, "%5d\t%s\n", i, lines[i-1])
	}
	if end < len(lines) {
		fmt.Fprintf(&b, "… %d more lines (read_file with start_line %d)\n", len(lines)-end, end+1)
	}
	return Result{Output: b.String()}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

func (s *Set) listDir(a Args) Result {
	abs, rel, err := s.WS.Resolve(a.Path)
	if err != nil {
		return fail("%v", err)
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		return fail("list %s: %v", rel, err)
	}
	var b strings.Builder
	for i, e := range ents {
		if i == 500 {
			fmt.Fprintf(&b, "… %d more\n", len(ents)-500)
			break
		}
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		b.WriteString(n + "\n")
	}
	if b.Len() == 0 {
		return Result{Output: "(empty directory)"}
	}
	return Result{Output: b.String()}
}

// skipDir are directories grep does not descend into.
var skipDir = map[string]bool{".git": true, "node_modules": true, "__pycache__": true, ".statewright": true, "vendor": true}

func (s *Set) grep(a Args) Result {
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return fail("bad pattern: %v", err)
	}
	abs, _, err := s.WS.Resolve(a.Path)
	if err != nil {
		return fail("%v", err)
	}
	var b strings.Builder
	n := 0
	const maxMatches = 100
	walkErr := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != abs && skipDir[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // symlinks are not followed out of the workspace
		}
		if a.Glob != "" {
			if ok, _ := filepath.Match(a.Glob, d.Name()); !ok {
				return nil
			}
		}
		if fi, err := d.Info(); err != nil || fi.Size() > 1<<20 {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || bytes.IndexByte(data, 0) >= 0 {
			return nil
		}
		rel, _ := filepath.Rel(s.WS.Root, p)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for ln := 1; sc.Scan(); ln++ {
			if re.MatchString(sc.Text()) {
				n++
				if n > maxMatches {
					return fs.SkipAll
				}
				line := sc.Text()
				if len(line) > 300 {
					line = line[:300] + "…"
				}
				fmt.Fprintf(&b, "%s:%d: %s\n", filepath.ToSlash(rel), ln, line)
			}
		}
		return nil
	})
	if walkErr != nil {
		return fail("grep: %v", walkErr)
	}
	if n == 0 {
		return Result{Output: "no matches"}
	}
	if n > maxMatches {
		fmt.Fprintf(&b, "… more than %d matches; narrow the pattern or the path\n", maxMatches)
	}
	return Result{Output: b.String()}
}

func (s *Set) editFile(a Args) Result {
	abs, rel, err := s.WS.Resolve(a.Path)
	if err != nil {
		return fail("%v", err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return fail("edit %s: %v", rel, err)
	}
	if a.OldString == "" {
		return fail("edit %s: old_string is empty; to create or replace a whole file use write_file", rel)
	}
	if a.OldString == a.NewString {
		return fail("edit %s: old_string and new_string are the same", rel)
	}
	old := string(data)
	switch c := strings.Count(old, a.OldString); c {
	case 0:
		return fail("edit %s: old_string was not found; read the file again and copy the text exactly (whitespace included)", rel)
	case 1:
	default:
		return fail("edit %s: old_string matches %d times; include more surrounding lines so it matches exactly once", rel, c)
	}
	nw := strings.Replace(old, a.OldString, a.NewString, 1)
	if err := writeKeepMode(abs, []byte(nw)); err != nil {
		return fail("edit %s: %v", rel, err)
	}
	return Result{Output: "edited " + rel + "\n" + Diff(rel, old, nw)}
}

func (s *Set) writeFile(a Args) Result {
	abs, rel, err := s.WS.Resolve(a.Path)
	if err != nil {
		return fail("%v", err)
	}
	old, rerr := os.ReadFile(abs)
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fail("write %s: %v", rel, err)
	}
	if err := writeKeepMode(abs, []byte(a.Content)); err != nil {
		return fail("write %s: %v", rel, err)
	}
	if rerr != nil {
		return Result{Output: fmt.Sprintf("created %s (%d lines)", rel, len(splitLines(a.Content)))}
	}
	return Result{Output: "replaced " + rel + "\n" + Diff(rel, string(old), a.Content)}
}

// writeKeepMode writes data to an existing file keeping its mode, or creates it 0644.
func writeKeepMode(p string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(p); err == nil {
		mode = fi.Mode().Perm()
	}
	return os.WriteFile(p, data, mode)
}

// Diff renders a unified diff of one changed region (common leading and
// trailing lines are context), enough to show an edit.
func Diff(name, a, b string) string {
	al, bl := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	if pre == len(al) && pre == len(bl) {
		return "(no change)"
	}
	const ctx = 2
	s := max(pre-ctx, 0)
	ae, be := len(al)-suf, len(bl)-suf
	ea, eb := min(ae+ctx, len(al)), min(be+ctx, len(bl))
	var w strings.Builder
	fmt.Fprintf(&w, "--- a/%s\n+++ b/%s\n@@ -%d,%d +%d,%d @@\n", name, name, s+1, ea-s, s+1, eb-s)
	for i := s; i < pre; i++ {
		w.WriteString(" " + al[i] + "\n")
	}
	for i := pre; i < ae; i++ {
		w.WriteString("-" + al[i] + "\n")
	}
	for i := pre; i < be; i++ {
		w.WriteString("+" + bl[i] + "\n")
	}
	for i := ae; i < ea; i++ {
		w.WriteString(" " + al[i] + "\n")
	}
	return w.String()
}

// SortedNames returns names sorted in the offering order of Names.
func SortedNames(names []string) []string {
	order := map[string]int{}
	for i, n := range Names {
		order[n] = i
	}
	out := append([]string(nil), names...)
	sort.SliceStable(out, func(i, j int) bool { return order[out[i]] < order[out[j]] })
	return out
}
