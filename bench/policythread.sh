#!/usr/bin/env bash
# bench/policythread.sh OLD_COMMIT [ROUNDS]: the denied decisions of the
# policy benchmarks (their calls, in the dev workflow) by thread CPU time
# per decision (CLOCK_THREAD_CPUTIME_ID, the OS thread locked,
# GOMAXPROCS=1): the minimum and the median of 15 trials of 20,000 calls,
# alternating ROUNDS times (default 3) between the working tree and
# OLD_COMMIT. On a shared machine the minimum of thread CPU time moves
# least with the load; compare the two builds, not the figures with an
# idle recording's wall time. This tree's policy/bench_test.go is used in
# both; a test file is written into each tree for the build and removed.
set -euo pipefail
old=$1
rounds=${2:-3}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
name=zz_threadcpu_test.go
trap 'rm -f "$root/policy/$name"; git -C "$root" worktree remove --force "$tmp/old" 2>/dev/null || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add -q --detach "$tmp/old" "$old"
cp "$root/policy/bench_test.go" "$tmp/old/policy/bench_test.go"
writetest() {
  cat >"$1/policy/$name" <<'EOF'
package policy

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

func threadCPUTime() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func TestThreadCPU(t *testing.T) {
	if os.Getenv("POLICY_THREAD_CPU") == "" {
		t.Skip()
	}
	runtime.LockOSThread()
	law := benchLaw(t)
	plan := &RunState{Active: true, State: "planning", Iterations: 2}
	plan0 := &RunState{Active: true, State: "planning"}
	impl := &RunState{Active: true, State: "implementing"}
	content, _ := json.Marshal(strings.Repeat("some line of code\n", 64<<10/18))
	for _, c := range []struct {
		name string
		run  *RunState
		call *ToolCall
	}{
		{"AllowedRead", plan, &ToolCall{Tool: "Read", Input: json.RawMessage(`{"file_path":"/repo/src/main.go"}`)}},
		{"DeniedTool", plan0, &ToolCall{Tool: "Edit", Input: json.RawMessage(`{"file_path":"src/a.go","old_string":"a","new_string":"b"}`)}},
		{"DeniedToolClaude", plan0, &ToolCall{Tool: "Edit", Cwd: "/repo", ProjectDir: "/repo", Input: json.RawMessage(`{"file_path":"/repo/src/a.go","old_string":"\tx := 1\n\treturn x","new_string":"\tx := 2\n\treturn x"}`)}},
		{"DeniedWrite", plan0, &ToolCall{Tool: "Write", Cwd: "/repo", Input: json.RawMessage(`{"file_path":"src/big.go","content":` + string(content) + `}`)}},
		{"DeniedWriteSize/64KiB/path-first", plan0, bigWrite(64<<10, true)},
		{"DeniedWriteSize/64KiB/path-last", plan0, bigWrite(64<<10, false)},
		{"DeniedWriteSize/1024KiB/path-first", plan0, bigWrite(1<<20, true)},
		{"DeniedWriteSize/1024KiB/path-last", plan0, bigWrite(1<<20, false)},
		{"DeniedProtected", impl, &ToolCall{Tool: "Edit", Cwd: "/repo", ProjectDir: "/repo", Input: json.RawMessage(`{"file_path":".claude/settings.json","old_string":"a","new_string":"b"}`)}},
	} {
		const n = 20000
		var ts []float64
		for range 15 {
			t0 := threadCPUTime()
			for range n {
				law.Decide(c.run, c.call)
			}
			ts = append(ts, float64(threadCPUTime()-t0)/n)
		}
		sort.Float64s(ts)
		fmt.Printf("CPU %s %.0f %.0f\n", c.name, ts[0], ts[len(ts)/2])
	}
}
EOF
}
for v in old new; do
  dir=$tmp/old
  [ "$v" = new ] && dir=$root
  writetest "$dir"
  (cd "$dir" && go test -c -o "$tmp/$v.test" ./policy)
  rm "$dir/policy/$name"
done
echo "# policythread: $(git -C "$root" describe --always --dirty) (new) against $old (old), $rounds rounds; columns: build, decision, min and median thread CPU ns"
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
  for v in old new; do
    (cd "$root/policy" && POLICY_THREAD_CPU=1 GOMAXPROCS=1 "$tmp/$v.test" -test.run '^TestThreadCPU$' -test.count 1) |
      grep '^CPU ' | sed "s/^CPU /$v /"
  done
done
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
