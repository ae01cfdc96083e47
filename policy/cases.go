package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/engine"
	"gopkg.in/yaml.v3"
)

// Case is one expected decision: a tool call in a state, and what the law
// must answer. Teams keep files of cases next to their workflows and check
// them with `statewright test WORKFLOW CASES`; the policy corpus uses the
// same format.
type Case struct {
	// Name identifies the case in reports (default: "#N tool").
	Name string `yaml:"name" json:"name"`
	// State is the run's state. Empty with run_state.active false means no run.
	State string `yaml:"state" json:"state"`
	// Harness names the alias table (default claude-code).
	Harness string `yaml:"harness" json:"harness"`
	// Tool is the harness's raw tool name.
	Tool string `yaml:"tool" json:"tool"`
	// Input is the tool input (an object).
	Input any `yaml:"input" json:"input"`
	// Cwd and ProjectDir are the call's working directory and project root.
	Cwd        string `yaml:"cwd" json:"cwd"`
	ProjectDir string `yaml:"project_dir" json:"project_dir"`
	// ResolvedPaths maps paths as written to the real paths the runtime
	// resolved (symlinks).
	ResolvedPaths map[string]string `yaml:"resolved_paths" json:"resolved_paths"`
	// Sandboxed decides the call as one whose shell command runs under the
	// phase's OS sandbox (ToolCall.Sandboxed).
	Sandboxed bool `yaml:"sandboxed" json:"sandboxed"`
	// Granted decides the call as one a person granted after an ask rule
	// asked for it (ToolCall.Granted).
	Granted bool `yaml:"granted" json:"granted"`
	// Hints are the MCP tool's annotations from its trusted server
	// (ToolCall.Hints).
	Hints *ToolHints `yaml:"hints" json:"hints"`
	// RunState overrides the fresh run in State.
	RunState *CaseRunState `yaml:"run_state" json:"run_state"`
	// Expect is allow, deny or ask.
	Expect string `yaml:"expect" json:"expect"`
	// Rule, when set, is the expected rule id.
	Rule string `yaml:"rule" json:"rule"`
	// NextEvents, when set, are the expected next events (in order).
	NextEvents []string `yaml:"next_events" json:"next_events"`
	// ReasonContains, when set, must all appear in the reason.
	ReasonContains []string `yaml:"reason_contains" json:"reason_contains"`
	// FilesEdited, when set, are the expected Effects.FilesEdited.
	FilesEdited []string `yaml:"files_edited" json:"files_edited"`
	// CountIteration, when set, is the expected Effects.CountIteration.
	CountIteration *bool `yaml:"count_iteration" json:"count_iteration"`
	// Transition, when set, is the expected Effects.Transition ("-" for none).
	Transition string `yaml:"transition" json:"transition"`
	// Interrupt, when set, is the expected Effects.FireInterrupt ("-" for none).
	Interrupt string `yaml:"interrupt" json:"interrupt"`
	// Line is the case's line in its file (set by ParseCases for YAML and JSON lines).
	Line int `yaml:"-" json:"-"`
}

// CaseRunState is the run state of a case; every field is optional.
type CaseRunState struct {
	Active          *bool          `yaml:"active" json:"active"`
	State           string         `yaml:"state" json:"state"`
	Iterations      uint32         `yaml:"iterations" json:"iterations"`
	FilesEdited     []string       `yaml:"files_edited" json:"files_edited"`
	PendingApproval *Approval      `yaml:"pending_approval" json:"pending_approval"`
	History         []engine.Frame `yaml:"history" json:"history"`
}

// RunState returns the run state a case describes: a fresh active run in
// state unless overridden.
func (c *CaseRunState) RunState(state string) *RunState {
	rs := &RunState{Active: true, State: state}
	if c == nil {
		return rs
	}
	if c.Active != nil {
		rs.Active = *c.Active
	}
	if c.State != "" {
		rs.State = c.State
	}
	rs.Iterations = c.Iterations
	rs.FilesEdited = c.FilesEdited
	rs.PendingApproval = c.PendingApproval
	rs.History = c.History
	return rs
}

// CaseFile is a file of cases; Workflow optionally names the workflow they
// are for (used by the policy corpus; `statewright test` takes the workflow
// as an argument).
type CaseFile struct {
	Workflow string `yaml:"workflow" json:"workflow"`
	Cases    []Case `yaml:"cases" json:"cases"`
}

// ParseCases decodes a cases file: YAML (a list of cases, or a mapping with
// "cases" and optionally "workflow"), or JSON lines (one case object per
// line). It checks every case names a tool and expects allow, deny or ask.
func ParseCases(data []byte) (*CaseFile, error) {
	var cf CaseFile
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("{")) && isJSONLines(trimmed) {
		for i, line := range bytes.Split(data, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 || line[0] == '#' {
				continue
			}
			var c Case
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&c); err != nil {
				return nil, fmt.Errorf("line %d: %v", i+1, err)
			}
			c.Line = i + 1
			cf.Cases = append(cf.Cases, c)
		}
	} else {
		var root yaml.Node
		if err := yaml.Unmarshal(data, &root); err != nil {
			return nil, err
		}
		if len(root.Content) == 0 {
			return nil, fmt.Errorf("no cases")
		}
		doc := root.Content[0]
		list := doc
		if doc.Kind == yaml.MappingNode {
			var raw struct {
				Workflow string    `yaml:"workflow"`
				Cases    yaml.Node `yaml:"cases"`
			}
			if err := doc.Decode(&raw); err != nil {
				return nil, err
			}
			cf.Workflow = raw.Workflow
			list = &raw.Cases
		}
		if list.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("line %d: want a list of cases", list.Line)
		}
		for _, n := range list.Content {
			var c Case
			if err := n.Decode(&c); err != nil {
				return nil, fmt.Errorf("line %d: %v", n.Line, err)
			}
			if err := checkKeys(n); err != nil {
				return nil, err
			}
			c.Line = n.Line
			cf.Cases = append(cf.Cases, c)
		}
	}
	for i := range cf.Cases {
		c := &cf.Cases[i]
		if c.Tool == "" {
			return nil, fmt.Errorf("line %d: case %q names no tool", c.Line, c.Name)
		}
		if _, err := ParseVerdict(c.Expect); err != nil {
			return nil, fmt.Errorf("line %d: case %q: expect: %v", c.Line, c.Name, err)
		}
		if c.Name == "" {
			c.Name = fmt.Sprintf("#%d %s", i+1, c.Tool)
		}
	}
	return &cf, nil
}

func isJSONLines(b []byte) bool {
	first, _, _ := bytes.Cut(b, []byte("\n"))
	return json.Valid(bytes.TrimSpace(first))
}

var caseKeys = map[string]bool{
	"name": true, "state": true, "harness": true, "tool": true, "input": true, "cwd": true,
	"project_dir": true, "resolved_paths": true, "sandboxed": true, "granted": true, "hints": true, "run_state": true, "expect": true, "rule": true, "next_events": true,
	"reason_contains": true, "files_edited": true, "count_iteration": true, "transition": true, "interrupt": true,
}

// checkKeys rejects unknown keys in a YAML case (a typo must not turn a
// check off silently).
func checkKeys(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a case is a mapping", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !caseKeys[k.Value] {
			return fmt.Errorf("line %d: unknown key %q in case", k.Line, k.Value)
		}
	}
	return nil
}

// ToolCall builds the tool call a case describes.
func (c *Case) ToolCall() (*ToolCall, error) {
	h, err := ParseHarness(c.Harness)
	if err != nil {
		return nil, err
	}
	call := &ToolCall{Harness: h, Tool: c.Tool, Cwd: c.Cwd, ProjectDir: c.ProjectDir, ResolvedPaths: c.ResolvedPaths, Sandboxed: c.Sandboxed, Granted: c.Granted, Hints: c.Hints}
	if c.Input != nil {
		b, err := json.Marshal(c.Input)
		if err != nil {
			return nil, fmt.Errorf("input: %v", err)
		}
		call.Input = b
	} else {
		call.Input = json.RawMessage("{}")
	}
	return call, nil
}

// RunCase decides the case and returns the decision and the mismatches with its
// expectations (none when the case passes).
func (l *Law) RunCase(c *Case) (Decision, []string) {
	call, err := c.ToolCall()
	if err != nil {
		return Decision{}, []string{err.Error()}
	}
	rs := c.RunState.RunState(c.State)
	d := l.Decide(rs, call)
	var bad []string
	if d.Verdict.String() != c.Expect {
		bad = append(bad, fmt.Sprintf("decision %s, want %s", d.Verdict, c.Expect))
	}
	if c.Rule != "" && string(d.Rule) != c.Rule {
		bad = append(bad, fmt.Sprintf("rule %s, want %s", d.Rule, c.Rule))
	}
	if c.NextEvents != nil && !slices.Equal(d.NextEvents, c.NextEvents) {
		bad = append(bad, fmt.Sprintf("next_events %v, want %v", d.NextEvents, c.NextEvents))
	}
	for _, s := range c.ReasonContains {
		if !strings.Contains(d.Reason, s) {
			bad = append(bad, fmt.Sprintf("reason does not contain %q", s))
		}
	}
	if c.FilesEdited != nil && !slices.Equal(d.Effects.FilesEdited, c.FilesEdited) && !(len(c.FilesEdited) == 0 && len(d.Effects.FilesEdited) == 0) {
		bad = append(bad, fmt.Sprintf("files_edited %v, want %v", d.Effects.FilesEdited, c.FilesEdited))
	}
	if c.CountIteration != nil && d.Effects.CountIteration != *c.CountIteration {
		bad = append(bad, fmt.Sprintf("count_iteration %v, want %v", d.Effects.CountIteration, *c.CountIteration))
	}
	if c.Transition != "" {
		want := c.Transition
		if want == "-" {
			want = ""
		}
		if d.Effects.Transition != want {
			bad = append(bad, fmt.Sprintf("transition %q, want %q", d.Effects.Transition, want))
		}
	}
	if c.Interrupt != "" {
		want := c.Interrupt
		if want == "-" {
			want = ""
		}
		if d.Effects.FireInterrupt != want {
			bad = append(bad, fmt.Sprintf("interrupt %q, want %q", d.Effects.FireInterrupt, want))
		}
	}
	if len(bad) > 0 {
		bad = append(bad, "reason: "+d.Reason)
	}
	return d, bad
}
