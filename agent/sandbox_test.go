package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/agent"
	"github.com/statewright-go/statewright/agent/events"
	fm "github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
)

const phaseSandboxWorkflow = `id: sbx
initial: planning
states:
  planning:
    allowed_tools: [Read, Bash]
    sandbox: {exec: true}
    on: {PLANNED: implementing}
  implementing:
    allowed_tools: [Read, Edit, Write, Bash]
    sandbox: {exec: true}
    on: {DONE: done}
  done: {type: final}
`

// TestRunPhaseSandbox: statewright agent's commands run under the profile
// of the phase they are decided in. In planning (read-only, exec in the
// sandbox) a python3 write is allowed by the law and fails on disk; in
// implementing the same kind of write lands, while .claude and the store
// stay out of reach.
func TestRunPhaseSandbox(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".claude/settings.json", "{}")
	write(t, dir, "wf.yaml", phaseSandboxWorkflow)
	h := newHarness(t, dir)
	if h.sb.Bwrap == "" {
		if os.Getenv("STATEWRIGHT_REQUIRE_SANDBOX") != "" {
			t.Fatalf("no sandbox: %s", h.sb.Why)
		}
		t.Skip("no sandbox: " + h.sb.Why)
	}
	srv := fm.NewChatCompletions(fm.Script{Turns: []fm.Turn{
		call("run_command", map[string]any{"command": `python3 -c 'open("planned.txt","w").write("x")'`}),
		call("statewright_transition", map[string]any{"event": "PLANNED"}),
		call("run_command", map[string]any{"command": `python3 -c 'open("impl.txt","w").write("x")'; python3 -c 'open(".cla"+"ude/settings.json","w").write("owned")'; echo done`}),
		call("statewright_transition", map[string]any{"event": "DONE"}),
	}}, fm.WithLog(t.Logf))
	defer srv.Close()
	cfg := h.config(srv, filepath.Join(dir, "wf.yaml"), "Plan, then implement.", "")
	cfg.Tools.SandboxEnv = &policy.SandboxEnv{ProjectDir: h.ws.Root, Home: t.TempDir(), SessionDir: filepath.Join(t.TempDir(), "session")}
	res, err := agent.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != events.OutcomeSuccess || res.FinalState != "done" {
		t.Fatalf("result %+v\n%s", res, h.jsnl.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "planned.txt")); err == nil {
		t.Error("planned.txt was written in the read-only phase")
	}
	if _, err := os.Stat(filepath.Join(dir, "impl.txt")); err != nil {
		t.Errorf("impl.txt was not written in implementing: %v\n%s", err, h.jsnl.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".claude", "settings.json")); string(b) != "{}" {
		t.Errorf(".claude/settings.json = %q", b)
	}
	// The model saw the read-only refusals.
	reqs := srv.MainRequests()
	for _, i := range []int{1, 3} {
		c, err := reqs[i].Chat()
		if err != nil {
			t.Fatal(err)
		}
		if last := c.Messages[len(c.Messages)-1].Text(); !strings.Contains(last, "Read-only file system") {
			t.Errorf("command result %d: %q", i, last)
		}
	}
}

const followWorkflow = `id: follow
initial: implementing
states:
  implementing:
    allowed_tools: [Read, Edit, Write, Bash, Background]
    sandbox: {exec: true}
    on: {DONE: reviewing}
  reviewing:
    allowed_tools: [Read, Bash]
    on: {OK: done}
  done: {type: final}
`

// TestRunCommandFollowsPhase: a command statewright agent runs in a phase
// that may write the project keeps appending to a file, and leaves a
// process doing the same; a person moves the run to a read-only phase
// elsewhere (the store, not the runner). The command and its process die,
// the file stops growing, and the model is told why.
func TestRunCommandFollowsPhase(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "wf.yaml", followWorkflow)
	h := newHarness(t, dir)
	if h.sb.Bwrap == "" {
		if os.Getenv("STATEWRIGHT_REQUIRE_SANDBOX") != "" {
			t.Fatalf("no sandbox: %s", h.sb.Why)
		}
		t.Skip("no sandbox: " + h.sb.Why)
	}
	ticks, bgTicks := filepath.Join(dir, "ticks"), filepath.Join(dir, "bg-ticks")
	loop := func(p string) string { return "while :; do echo x >> " + p + "; sleep 0.05; done" }
	srv := fm.NewChatCompletions(fm.Script{Turns: []fm.Turn{
		call("run_command", map[string]any{"command": "(" + loop(bgTicks) + ") & " + loop(ticks), "timeout_seconds": 100}),
		call("statewright_transition", map[string]any{"event": "OK"}),
	}}, fm.WithLog(t.Logf))
	defer srv.Close()
	cfg := h.config(srv, filepath.Join(dir, "wf.yaml"), "Implement.", "")
	cfg.Session = "agent:follow-test"
	cfg.Tools.SandboxEnv = &policy.SandboxEnv{ProjectDir: h.ws.Root, Home: t.TempDir(), SessionDir: filepath.Join(t.TempDir(), "session")}

	moved := make(chan error, 1)
	go func() {
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if size(ticks) > 4 && size(bgTicks) > 4 {
				break
			}
			if time.Now().After(deadline) {
				moved <- errors.New("the command never wrote:\n" + h.jsnl.String())
				return
			}
		}
		_, err := h.svc.Transition(context.Background(), cfg.Session, "DONE", nil, runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli"})
		moved <- err
	}()
	res, err := agent.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-moved; err != nil {
		t.Fatal(err)
	}
	if res.FinalState != "done" {
		t.Fatalf("result %+v\n%s", res, h.jsnl.String())
	}
	n, m := size(ticks), size(bgTicks)
	time.Sleep(500 * time.Millisecond)
	if size(ticks) != n || size(bgTicks) != m {
		t.Error("implementing's loops still write the project after the run moved to reviewing")
	}
	c, err := srv.MainRequests()[1].Chat()
	if err != nil {
		t.Fatal(err)
	}
	var result string
	for _, m := range c.Messages {
		if txt := m.Text(); strings.Contains(txt, "exit code ") {
			result = txt
		}
	}
	if !strings.Contains(result, "the phase's sandbox stopped while the command ran") || !strings.Contains(result, "exit code 137") {
		t.Errorf("the command's result: %q", result)
	}
}

func size(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}
