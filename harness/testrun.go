package harness

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/testreport/testrun"
)

// Test evidence on the hook path without the sandbox launcher (issue 15.2):
// an allowed plain test command is rewritten to run through `statewright
// testrun`, which makes the runner also write its structured report; the
// call's directory (the sandbox package's layout, outside the project) holds
// the evidence until PostToolUse hands it to the runtime. Under the sandbox
// the launcher runs the command instead, and this path is not taken.

// TestRunRewrite returns the tool input with its command (under key)
// rewritten to run through `statewright testrun`, or nil when the command
// is no plain test command (or statewright's own path or the per-session
// directory cannot be found: the command then runs as it is, and its
// evidence says it had no report).
func TestRunRewrite(session, toolUseID, projectDir string, input json.RawMessage, key string) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return nil
	}
	command, ok := m[key].(string)
	if !ok || toolUseID == "" || !testrun.IsTestCommand(command) {
		return nil
	}
	dir, ok := testCallDir(session, toolUseID)
	if !ok {
		return nil
	}
	bin, err := os.Executable()
	if err != nil {
		return nil
	}
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	if testrun.MarkCall(dir, projectDir, command) != nil {
		return nil
	}
	m[key] = testrun.Command(bin, dir, command)
	out, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return out
}

// TestRunAfter puts the evidence `statewright testrun` recorded for the
// call into tr (runtime.ToolResult.TestReport), gives tr back the agent's
// own command under key (the harness reports the rewritten one), and
// removes the call's directory. A call that did not run through testrun is
// left alone.
func TestRunAfter(tr *runtime.ToolResult, key string) {
	dir, ok := testCallDir(tr.Session, tr.ToolUseID)
	if !ok {
		return
	}
	command, ev, marked := testrun.ReadCall(dir)
	if !marked {
		return
	}
	_ = os.RemoveAll(dir)
	tr.TestReport = ev
	var m map[string]any
	if json.Unmarshal(tr.Call.Input, &m) == nil && m != nil && command != "" {
		m[key] = command
		if b, err := json.Marshal(m); err == nil {
			tr.Call.Input = b
		}
	}
}

// testCallDir is the call's directory in the sandbox package's layout.
func testCallDir(session, toolUseID string) (string, bool) {
	if toolUseID == "" {
		return "", false
	}
	root, err := sandbox.DefaultRoot()
	if err != nil {
		return "", false
	}
	return sandbox.CallDir(sandbox.SessionDir(root, session), toolUseID).Dir, true
}
