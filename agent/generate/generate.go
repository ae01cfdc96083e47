// Package generate asks a model to draft a workflow for a task, validates
// the draft, and feeds the errors back to the model for another round (at
// most MaxRounds). The model never decides anything at run time: its
// draft is a file a person reviews and the engine enforces.
package generate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/agent/model"
	"github.com/statewright-go/statewright/workflow"
)

// MaxRounds bounds the drafts asked for.
const MaxRounds = 3

// SystemPrompt tells the model what to write.
const SystemPrompt = `You design workflows for statewright, which puts an AI coding agent under a state machine.
Answer with ONE JSON object and nothing else (no prose, no markdown fence). Shape:

{
  "id": "kebab-case-name",
  "initial": "first-state",
  "meta": { "description": "one line", "task_type": "bugfix|feature|refactor|research|release", "danger_level": "safe|moderate|dangerous" },
  "guards": { "tests_passed": { "field": "runtime.last_test.passed", "op": "eq", "value": true } },
  "states": {
    "STATE": {
      "instructions": "what the agent does in this phase and which event to send when done",
      "allowed_tools": ["Read", "Grep", "Glob", "LS", "Edit", "Write", "Bash"],
      "allowed_commands": ["go test", "pytest"],
      "max_iterations": 20,
      "max_edit_lines": 40,
      "on": { "EVENT": "target-state", "GUARDED": { "target": "t", "guard": "tests_passed" }, "GATED": { "target": "t", "requires_approval": true, "approval_message": "why a person must look" } }
    },
    "done": { "type": "final" },
    "failed": { "type": "final" }
  }
}

Rules: every state is reachable from "initial"; every non-final state has events, including FAIL to "failed";
there is a final "done" (or similar) and a final "failed"; read-only phases (localizing, planning) list no Edit,
Write or Bash that writes; a phase that runs tests lists Bash and allowed_commands; moving on after tests
uses the tests_passed guard; destructive or irreversible steps (release, deploy, push) need requires_approval.
Tool names: Read, Grep, Glob, LS, Edit, MultiEdit, Write, Bash, WebFetch, TodoWrite.`

// Attempt is one round.
type Attempt struct {
	Round  int      `json:"round"`
	Raw    string   `json:"raw"`
	Errors []string `json:"errors,omitempty"`
}

// Result is a valid draft.
type Result struct {
	Definition *workflow.Definition
	// Source is the draft as the model wrote it (the JSON object).
	Source   []byte
	Attempts []Attempt
	// Warnings are validation warnings of the accepted draft.
	Warnings []string
}

// ErrNoValidDraft: every round produced an invalid draft.
var ErrNoValidDraft = errors.New("generate: no valid workflow")

// Generate drafts a workflow for task with the client's model.
func Generate(ctx context.Context, c model.Client, modelName, task string, rounds int) (*Result, error) {
	if rounds <= 0 || rounds > MaxRounds {
		rounds = MaxRounds
	}
	msgs := []model.Message{{Role: "system", Content: SystemPrompt}, {Role: "user", Content: "Task: " + task}}
	var attempts []Attempt
	for round := 1; round <= rounds; round++ {
		resp, err := c.Chat(ctx, model.Request{Model: modelName, Messages: msgs})
		if err != nil {
			return &Result{Attempts: attempts}, fmt.Errorf("generate: round %d: %w", round, err)
		}
		raw := resp.Content
		if strings.TrimSpace(raw) == "" {
			raw = resp.Reasoning
		}
		src, errs, warns, def := Check(raw)
		attempts = append(attempts, Attempt{Round: round, Raw: raw, Errors: errs})
		if len(errs) == 0 {
			return &Result{Definition: def, Source: src, Attempts: attempts, Warnings: warns}, nil
		}
		msgs = append(msgs, model.Message{Role: "assistant", Content: raw},
			model.Message{Role: "user", Content: "That workflow is invalid:\n- " + strings.Join(errs, "\n- ") + "\nAnswer with the corrected JSON object only."})
	}
	return &Result{Attempts: attempts}, fmt.Errorf("%w after %d rounds", ErrNoValidDraft, rounds)
}

// Check extracts the JSON object from a draft and validates it: the
// workflow format's parse and validation errors, plus what an agent
// workflow needs (a final failure state, events in every non-final state).
func Check(raw string) (src []byte, errs, warns []string, def *workflow.Definition) {
	text := extractObject(raw)
	if text == "" {
		return nil, []string{"the answer contains no JSON object"}, nil, nil
	}
	src = []byte(text)
	def, diags, err := workflow.Parse(src, workflow.ParseOptions{Source: "draft"})
	if err == nil && def != nil {
		diags = append(diags, workflow.Validate(def)...)
	} else {
		var pe *workflow.ParseError
		if len(diags) == 0 && errors.As(err, &pe) {
			diags = pe.Diagnostics
		}
		if len(diags) == 0 && err != nil {
			errs = append(errs, err.Error())
		}
	}
	for _, d := range diags {
		if d.Severity == workflow.SeverityError {
			errs = append(errs, d.String())
		} else {
			warns = append(warns, d.String())
		}
	}
	if def == nil {
		return src, errs, warns, def
	}
	hasFail, hasFinal := false, false
	for name, st := range def.States {
		if st.IsFinal() {
			hasFinal = true
			if name == "failed" {
				hasFail = true
			}
			continue
		}
		if len(st.On) == 0 {
			errs = append(errs, fmt.Sprintf("state %q is not final and has no events (add at least FAIL → failed)", name))
		}
	}
	if !hasFinal {
		errs = append(errs, "there is no final state")
	}
	if !hasFail {
		errs = append(errs, `there is no final state named "failed" for the agent to give up in`)
	}
	return src, errs, warns, def
}

// extractObject returns the draft's JSON object: the whole text, a fenced
// block's body, or the outermost {...}.
func extractObject(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "```"); i >= 0 {
		body := s[i+3:]
		if nl := strings.IndexByte(body, '\n'); nl >= 0 {
			body = body[nl+1:]
		}
		if j := strings.Index(body, "```"); j >= 0 {
			s = strings.TrimSpace(body[:j])
		}
	}
	i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || j < i {
		return ""
	}
	return s[i : j+1]
}
