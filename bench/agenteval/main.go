// Command agenteval runs `statewright eval` on the agent's fixture suite
// against the reactive flailing fake model (internal/fakemodel), the run CI
// makes in agent/eval's test, and records the report:
//
//	go run ./bench/agenteval > bench/agent-eval.txt   # also writes bench/agent-eval.json
//
// It builds statewright, serves the fake model on a loopback port, and runs
// the real CLI against it, so the recorded report is exactly what a user
// gets from `statewright eval --suite agent/testdata/eval --model URL#MODEL`.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/statewright-go/statewright/agent/eval"
	fm "github.com/statewright-go/statewright/internal/fakemodel"
)

func main() {
	suiteDir := flag.String("suite", "agent/testdata/eval", "the suite")
	jsonOut := flag.String("json", "bench/agent-eval.json", "where the JSON report goes")
	flag.Parse()
	if err := run(*suiteDir, *jsonOut); err != nil {
		fmt.Fprintln(os.Stderr, "agenteval:", err)
		os.Exit(1)
	}
}

func run(suiteDir, jsonOut string) error {
	suite, err := eval.Load(suiteDir)
	if err != nil {
		return err
	}
	var oracles []fm.Oracle
	for _, t := range suite.Tasks {
		var o fm.Oracle
		if err := json.Unmarshal(t.Oracle, &o); err != nil {
			return fmt.Errorf("%s: oracle: %w", t.ID, err)
		}
		o.Task, o.TestCommand = t.Task, t.TestCommand
		oracles = append(oracles, o)
	}
	srv := fm.NewChatCompletions(fm.Script{Respond: fm.Flailing(oracles)})
	defer srv.Close()
	tmp, err := os.MkdirTemp("", "agenteval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "statewright")
	build := exec.Command("go", "build", "-o", bin, "./cmd/statewright")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	start := time.Now()
	cmd := exec.Command(bin, "eval", "--suite", suiteDir, "--model", srv.URL+"#flailing-coder", "--json", jsonOut)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("statewright eval: %w", err)
	}
	fmt.Printf("\nmodel: internal/fakemodel Flailing (reactive: read loops, edits while planning, whole-file rewrites, no test runs; follows deny reasons)\n")
	fmt.Printf("suite: %s (%d tasks), workflow %s; wall time %s on %s\n", suiteDir, len(suite.Tasks), suite.Workflow, time.Since(start).Round(time.Second), hostNote())
	return nil
}

func hostNote() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "this machine"
	}
	return "a machine with load average " + string(b[:len(b)-1])
}
