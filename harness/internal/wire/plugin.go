package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
)

// This file is the wire between statewright's in-process harness plugins
// (the opencode plugin and the Pi extension, both TypeScript, rendered
// from plugins/) and the statewright binary. The plugin runs `statewright
// hook HARNESS EVENT` with one JSON object on stdin and reads one JSON
// answer on stdout; the law stays in Go.
//
// Fail closed, on both sides: the binary answers every failure to decide a
// tool call with a deny (exit code PluginExitDeny); the plugin allows a
// call only on exit code 0 with a well-formed answer whose decision is
// "allow", and blocks on anything else (the binary missing, a crash, a
// timeout, garbage on stdout).

// The plugin events.
const (
	// ToolBefore decides a tool call before it runs (opencode
	// tool.execute.before, Pi tool_call): allow, or deny with the reason.
	ToolBefore = "tool-before"
	// ToolAfter records a tool call's outcome (opencode tool.execute.after,
	// Pi tool_result); after a control tool it returns the phase context.
	ToolAfter = "tool-after"
	// SessionStart reports a new session (opencode session.created, Pi
	// session_start); it may start the operator's default workflow and
	// returns the phase context.
	SessionStart = "session-start"
	// Context returns the phase context for the model's system prompt (Pi
	// before_agent_start, opencode's system transform).
	PromptContext = "context"
	// Control runs one of statewright's control tools for the session,
	// for harnesses whose plugin registers them itself (Pi).
	Control = "control"
)

// PluginEvents lists every plugin event, in documentation order. The
// plugin wire spells events the same on the command line and on the wire.
var PluginEvents = Events{{Arg: SessionStart, Name: SessionStart}, {Arg: PromptContext, Name: PromptContext},
	{Arg: ToolBefore, Name: ToolBefore}, {Arg: ToolAfter, Name: ToolAfter}, {Arg: Control, Name: Control}}

// ErrPluginMalformed is wrapped by every plugin input decoding error.
var ErrPluginMalformed = errors.New("statewright plugin: malformed hook input")

// PluginInput is what the plugin sends on stdin: one JSON object.
type PluginInput struct {
	// Session is the harness's session id (opencode "ses_…", Pi's UUID).
	Session string `json:"session"`
	// Cwd is the project directory the harness runs in.
	Cwd string `json:"cwd"`
	// Tool is the tool's name as the harness reports it ("write", "bash",
	// "statewright_transition"). Required for tool events and Control.
	Tool string `json:"tool,omitempty"`
	// CallID is the harness's id of the tool call; decisions and results
	// are idempotent on it.
	CallID string `json:"call_id,omitempty"`
	// Args is the tool's input, a JSON object.
	Args json.RawMessage `json:"args,omitempty"`
	// Output is the tool's result text (ToolAfter), possibly truncated;
	// OutputBytes is the whole text's size when it was.
	Output      string `json:"output,omitempty"`
	OutputBytes int64  `json:"output_bytes,omitempty"`
	// Failed reports that the tool failed (ToolAfter).
	Failed bool `json:"failed,omitempty"`
	// ExitCode is a shell tool's exit status, when the harness reports it.
	ExitCode *int `json:"exit_code,omitempty"`
}

var pluginDecoding = Decoding{Malformed: ErrPluginMalformed, Strict: true, NotObject: "want one JSON object on stdin"}

// DecodePlugin parses and checks the plugin's input for event. Every error
// wraps ErrPluginMalformed and says what is wrong.
func DecodePlugin(event string, data []byte) (*PluginInput, error) {
	var in PluginInput
	if err := pluginDecoding.Decode(data, &in); err != nil {
		return nil, err
	}
	if !ValidSessionID(in.Session) {
		return nil, fmt.Errorf("%w: session %q is missing or not a plausible session id", ErrPluginMalformed, in.Session)
	}
	if in.Cwd == "" || in.Cwd[0] != '/' {
		return nil, fmt.Errorf("%w: cwd %q is not an absolute path", ErrPluginMalformed, in.Cwd)
	}
	switch event {
	case ToolBefore, ToolAfter, Control:
		if strings.TrimSpace(in.Tool) == "" || len(in.Tool) > maxIDBytes {
			return nil, fmt.Errorf("%w: %s needs a tool name", ErrPluginMalformed, event)
		}
		if len(in.Args) == 0 || string(in.Args) == "null" {
			in.Args = json.RawMessage(`{}`)
		}
		var m map[string]json.RawMessage
		if !IsObject(in.Args) || json.Unmarshal(in.Args, &m) != nil || m == nil {
			return nil, fmt.Errorf("%w: args of %s is not a JSON object", ErrPluginMalformed, in.Tool)
		}
	}
	return &in, nil
}

// ValidSessionID accepts harness session ids (UUIDs, opencode's "ses_…"):
// an ASCII letter or digit, then at most 127 letters, digits, '.', '_' or
// '-'. It matches what the MCP server accepts as a session stamp.
func ValidSessionID(id string) bool {
	if len(id) == 0 || len(id) > 128 || !isAlnum(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		if c := id[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Exit codes of the plugin hook command.
const (
	// PluginExitOK: the answer on stdout holds the decision.
	PluginExitOK = 0
	// PluginExitDeny: the call is denied (the answer on stdout says why).
	// The plugins treat every code but 0 as a deny.
	PluginExitDeny = 2
)

// Decisions a plugin answer carries.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
	// DecisionOK answers events that decide nothing (results, context,
	// control).
	DecisionOK = "ok"
)

// PluginAnswer is what the command prints on stdout: one JSON object.
type PluginAnswer struct {
	// Decision is "allow" or "deny" for ToolBefore, "ok" otherwise.
	Decision string `json:"decision"`
	// Reason says why a call was denied; the plugin hands it to the model
	// as the tool's error.
	Reason string `json:"reason,omitempty"`
	// Args, when set, replaces the tool's arguments (the session stamp on
	// statewright's MCP control tools).
	Args json.RawMessage `json:"args,omitempty"`
	// Context is text for the model: the phase, its tools and next events.
	Context string `json:"context,omitempty"`
	// Text is a control tool's result (Control).
	Text string `json:"text,omitempty"`
	// IsError marks a control tool's result as an error (Control).
	IsError bool `json:"is_error,omitempty"`
	// Notice is a warning for the user (a failure on a non-blocking event).
	Notice string `json:"notice,omitempty"`
	// Model is the phase's model, for the plugin to switch to, with its
	// thinking level (set with Context; absent when the phase names none).
	Model *PluginModel `json:"model,omitempty"`
	// Exit is the process exit code (not encoded).
	Exit int `json:"-"`
}

// Answer renders the plugin answer as the hook's answer: one line of JSON
// on stdout (an encoding failure, which only invalid Args can cause, is a
// deny that says so).
func (a PluginAnswer) Answer() harness.Answer {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a); err != nil {
		b.Reset()
		enc.Encode(PluginAnswer{Decision: DecisionDeny, Reason: "statewright: could not encode the answer: " + err.Error()})
		return harness.Answer{Exit: PluginExitDeny, Stdout: b.Bytes()}
	}
	return harness.Answer{Exit: a.Exit, Stdout: b.Bytes()}
}

// PluginModel is the model a phase names: an id ("provider/model" or a
// bare model id, as the workflow writes it) and a thinking level.
type PluginModel struct {
	ID            string `json:"id,omitempty"`
	ThinkingLevel string `json:"thinking_level,omitempty"`
}

// phase answers with the phase context of v and the phase's model.
func (p *Plugin) phase(v *runtime.RunView) PluginAnswer {
	a := done(PhaseContext(v, p.Harness, p.TransitionTool))
	a.Model = phaseModel(v)
	return a
}

// phaseModel is v's model for the plugin (nil when the phase names none).
func phaseModel(v *runtime.RunView) *PluginModel {
	if v == nil || v.Run == nil || v.Model == "" && v.ThinkingLevel == "" {
		return nil
	}
	return &PluginModel{ID: v.Model, ThinkingLevel: v.ThinkingLevel}
}

// allowCall allows a tool call; args, when non-nil, replace its arguments.
func allowCall(args json.RawMessage) PluginAnswer {
	return PluginAnswer{Decision: DecisionAllow, Args: args, Exit: PluginExitOK}
}

// denyCall denies a tool call with reason.
func denyCall(reason string) PluginAnswer {
	return PluginAnswer{Decision: DecisionDeny, Reason: reason, Exit: PluginExitDeny}
}

// done answers an event that decides nothing, with optional context.
func done(context string) PluginAnswer {
	return PluginAnswer{Decision: DecisionOK, Context: context, Exit: PluginExitOK}
}

// PluginFailure is the answer when the command cannot do its job for
// event: ToolBefore, Control and an unknown event deny (fail closed); the
// other events carry a notice and a context line saying that every tool
// call is denied until a person fixes it.
func PluginFailure(event, msg string) PluginAnswer {
	msg = Prefixed(msg)
	switch event {
	case SessionStart, PromptContext, ToolAfter:
		return PluginAnswer{Decision: DecisionOK, Notice: msg + " (run `statewright doctor`)",
			Context: msg + ". Until a person fixes this, statewright denies every tool call.", Exit: PluginExitOK}
	case Control:
		return PluginAnswer{Decision: DecisionDeny, Reason: msg, Text: msg, IsError: true, Exit: PluginExitDeny}
	}
	return denyCall(msg + FailClosed)
}

// Plugin is a harness whose plugin speaks this wire (opencode, Pi): the
// Respond and Failure of its adapter.
type Plugin struct {
	// Harness is the policy's harness (its tool alias table).
	Harness policy.Harness
	// ControlPrefixes are the tool-name prefixes of statewright's control
	// tools as the harness names them (opencode: the MCP server's
	// "statewright_statewright_"; Pi: the extension's own "statewright_").
	ControlPrefixes []string
	// TransitionTool is the name the model calls to move the run on.
	TransitionTool string
	// NoAsk explains, in a deny, why the harness cannot ask a person.
	NoAsk string
	// ShellTool is the harness's shell tool, whose "command" argument a
	// sandboxing hook rewrites to run under the launcher ("bash").
	ShellTool string
}

// SessionKey returns the store's session key for a harness session id.
func (p *Plugin) SessionKey(id string) string { return string(p.Harness) + ":" + id }

// Actor is the governed agent, through the plugin.
func (p *Plugin) Actor() runtime.Actor {
	return runtime.Actor{Kind: runtime.ActorAgent, Channel: "hook:" + string(p.Harness)}
}

// IsControlTool reports whether tool is one of statewright's control tools,
// matched by exact prefix.
func (p *Plugin) IsControlTool(tool string) bool {
	_, ok := p.controlOp(tool)
	return ok
}

// controlOp returns the MCP tool name ("statewright_transition") of a
// control tool as the harness names it.
func (p *Plugin) controlOp(tool string) (string, bool) {
	for _, pre := range p.ControlPrefixes {
		if rest, ok := strings.CutPrefix(tool, pre); ok {
			return "statewright_" + rest, true
		}
	}
	return "", false
}

// ToolCall converts a ToolBefore input into the runtime's view of the call.
func (p *Plugin) ToolCall(in *PluginInput, project string) runtime.ToolCall {
	input := in.Args
	if p.Harness == policy.Pi {
		input = piPathAsRead(in.Tool, input)
	}
	return runtime.ToolCall{
		Session: p.SessionKey(in.Session),
		Call: policy.ToolCall{Harness: p.Harness, Tool: in.Tool, Input: input, Cwd: in.Cwd,
			ProjectDir: project, ToolUseID: in.CallID},
		Actor: p.Actor(),
	}
}

// piPathTools are Pi's tools that read their "path" through its
// expandPath (path-utils.js).
var piPathTools = map[string]bool{"read": true, "write": true, "edit": true, "ls": true, "find": true, "grep": true}

// piPathAsRead returns a Pi tool's arguments with its "path" as Pi reads
// it: a leading "@" (Pi's file mention) dropped and Unicode spaces turned
// into spaces, as expandPath does before it resolves the path, so that
// the law decides on the file the tool opens ({"path":"@~/.ssh/id_rsa"}
// reads ~/.ssh/id_rsa). Other arguments and other tools are unchanged;
// the arguments Pi runs with are never rewritten.
func piPathAsRead(tool string, args json.RawMessage) json.RawMessage {
	if !piPathTools[tool] || !bytes.Contains(args, []byte(`"path"`)) {
		return args
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	var path string
	if json.Unmarshal(m["path"], &path) != nil {
		return args
	}
	read := strings.TrimPrefix(path, "@")
	read = strings.Map(func(r rune) rune {
		if r == 0xa0 || r >= 0x2000 && r <= 0x200a || r == 0x202f || r == 0x205f || r == 0x3000 {
			return ' '
		}
		return r
	}, read)
	if read == path {
		return args
	}
	b, err := json.Marshal(read)
	if err != nil {
		return args
	}
	m["path"] = b
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}

// ToolResult converts a ToolAfter input into the runtime's record of the
// call's outcome.
func (p *Plugin) ToolResult(in *PluginInput, project string) runtime.ToolResult {
	tc := p.ToolCall(in, project)
	var out json.RawMessage
	if in.Output != "" {
		out, _ = json.Marshal(in.Output)
	}
	return runtime.ToolResult{Session: tc.Session, ToolUseID: in.CallID, Call: tc.Call, Failed: in.Failed,
		ExitCode: in.ExitCode, Output: out, OutputBytes: in.OutputBytes, Actor: tc.Actor}
}

// PreToolAnswer turns the runtime's decision into the plugin's answer:
// allow (a control tool's arguments stamped with the session), or deny
// with the reason. The plugins cannot ask a person from inside a tool
// hook, so ask is a deny that says how a person can act. Audit-only runs
// allow whatever the decision.
func (p *Plugin) PreToolAnswer(in *PluginInput, res runtime.DecideResult) PluginAnswer {
	var stamped json.RawMessage
	if p.IsControlTool(in.Tool) {
		s, err := Stamp(in.Args, in.Session, ErrPluginMalformed, "args")
		if err != nil {
			return denyCall(Prefixed(err.Error()))
		}
		stamped = s
	}
	switch outcome, reason := Verdict(res); outcome {
	case Allowed:
		return allowCall(stamped)
	case Asked:
		return denyCall(reason + " " + p.NoAsk)
	default:
		return denyCall(reason)
	}
}

// Failure implements harness.Adapter.
func (p *Plugin) Failure(event, reason string) harness.Answer {
	return PluginFailure(event, reason).Answer()
}

// Respond implements harness.Adapter.
func (p *Plugin) Respond(ctx context.Context, h *harness.Hook, event string, input []byte) harness.Answer {
	return p.respond(ctx, h, event, input).Answer()
}

func (p *Plugin) respond(ctx context.Context, h *harness.Hook, event string, input []byte) PluginAnswer {
	if _, err := PluginEvents.Parse(string(p.Harness)+": ", event); err != nil {
		return PluginFailure("", err.Error())
	}
	in, err := DecodePlugin(event, input)
	if err != nil {
		return PluginFailure(event, err.Error())
	}
	project := h.Project(in.Cwd)
	svc, err := h.Runtime(ctx, project)
	if err != nil {
		return PluginFailure(event, err.Error())
	}
	session := p.SessionKey(in.Session)
	switch event {
	case ToolBefore:
		tc := p.ToolCall(in, project)
		route, deny := h.RouteShell(&tc, in.Tool == p.ShellTool)
		if deny != "" {
			return denyCall(Prefixed(deny))
		}
		res, err := svc.Decide(ctx, tc)
		if err != nil {
			return PluginFailure(event, "decide "+in.Tool+": "+err.Error())
		}
		// The plugin replaces the arguments: the command runs under the
		// launcher, with the profile in force now, or a test command
		// through `statewright testrun`.
		args, _, err := route.Rewrite(res, in.Args)
		if err != nil {
			return PluginFailure(event, err.Error())
		}
		if args != nil {
			return allowCall(args)
		}
		return p.PreToolAnswer(in, res)

	case ToolAfter:
		tr := p.ToolResult(in, project)
		lesson := h.AfterShell(ctx, svc, &tr, in.Tool == p.ShellTool, in.Cwd)
		v, err := h.Record(ctx, svc, tr, p.IsControlTool(in.Tool))
		if err != nil {
			return PluginFailure(event, "record the result of "+in.Tool+": "+err.Error())
		}
		if lesson != "" {
			return done(lesson)
		}
		return p.phase(v)

	case SessionStart, PromptContext:
		v, err := h.Session(ctx, svc, string(p.Harness), session, event == SessionStart)
		switch {
		case errors.Is(err, runtime.ErrNoRun):
			return done(h.NoRunNotice(in.Session, fmt.Sprintf("a person runs `statewright start WORKFLOW --harness %s --session %s`", p.Harness, in.Session)))
		case err != nil:
			return PluginFailure(event, "read the run: "+err.Error())
		}
		return p.phase(v)

	case Control:
		return p.control(ctx, h, svc, in, project)
	}
	return PluginFailure(event, "unhandled event "+event)
}

// control runs one control tool for the plugin's session.
func (p *Plugin) control(ctx context.Context, h *harness.Hook, svc *runtime.Service, in *PluginInput, project string) PluginAnswer {
	op, ok := p.controlOp(in.Tool)
	if !ok {
		return PluginFailure(Control, in.Tool+" is not a statewright control tool")
	}
	if h.Control == nil {
		return PluginFailure(Control, "control tools are not available here")
	}
	args, err := Stamp(in.Args, in.Session, ErrPluginMalformed, "args")
	if err != nil {
		return PluginFailure(Control, err.Error())
	}
	text, isErr, err := h.Control(ctx, svc, harness.ControlRequest{Session: p.SessionKey(in.Session), Project: project,
		Tool: op, Args: args, CallID: in.CallID, Actor: p.Actor()})
	if err != nil {
		return PluginFailure(Control, "run "+in.Tool+": "+err.Error())
	}
	ans := done("")
	if v, err := svc.Status(ctx, p.SessionKey(in.Session)); err == nil && !isErr {
		ans = p.phase(v)
	}
	ans.Text, ans.IsError = text, isErr
	return ans
}

// PluginHookHelp documents `statewright hook HARNESS` for the plugin
// harnesses.
const PluginHookHelp = "The plugin sends one JSON object on stdin and reads one JSON answer on stdout. " +
	"Errors fail closed: tool-before and control deny (exit 2); the other events answer with a notice."
