//go:build e2e && linux

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/sandbox"
)

// gwSandboxWorkflow: writing may write the project, reviewing only read.
const gwSandboxWorkflow = `{"id":"gw-sb","initial":"writing","states":{
 "writing":{"allowed_tools":["Read","Write","Edit","LS","Glob"],"on":{"DONE":"reviewing"}},
 "reviewing":{"allowed_tools":["Read","LS","Glob"],"on":{"BACK":"writing","OK":"done"}},
 "done":{"type":"final"}}}`

// fsProcesses are the processes of the filesystem server serving dir in
// PID namespaces other than the test's (so under a sandbox), by PID, each
// with how its mount namespace has dir: "rw" or "ro".
func fsProcesses(t *testing.T, dir string) map[int]string {
	t.Helper()
	self, _ := os.Readlink("/proc/self/ns/pid")
	ents, _ := os.ReadDir("/proc")
	out := map[int]string{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		// The server of this test is given dir as its allowed directory.
		if !bytes.Contains(cmdline, []byte("mcp-server-filesystem")) || !bytes.Contains(cmdline, []byte("\x00"+dir)) {
			continue
		}
		if ns, _ := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "pid")); ns == "" || ns == self {
			continue
		}
		mi, err := os.ReadFile(filepath.Join("/proc", e.Name(), "mountinfo"))
		if err != nil {
			continue // it ended since
		}
		// The mount dir is in: the deepest mount point at or above it, the
		// last one made there.
		mode, depth := "", -1
		for _, line := range strings.Split(string(mi), "\n") {
			// id parent major:minor root mount-point options ...
			f := strings.Fields(line)
			if len(f) < 6 || (f[4] != dir && f[4] != "/" && !strings.HasPrefix(dir, f[4]+"/")) {
				continue
			}
			if d := len(f[4]); d >= depth {
				mode, depth = strings.Split(f[5], ",")[0], d
			}
		}
		out[pid] = mode
	}
	return out
}

// TestGatewayFilesystemSandboxed drives the real filesystem server through
// `statewright mcp --sandbox`: the client session's process of it runs in
// a PID namespace of its own with the project mounted read-write in
// writing, where its writes land; the gateway's own process (listing) has
// it read-only; a person's transition to reviewing stops the session's
// process with no call after it, and the next call runs in a new process
// with the project read-only and says so; back in writing, writes land
// again in yet another process.
func TestGatewayFilesystemSandboxed(t *testing.T) {
	if a := sandbox.Detect(); !a.OK() {
		if os.Getenv("STATEWRIGHT_REQUIRE_SANDBOX") != "" {
			t.Fatalf("no sandbox, and STATEWRIGHT_REQUIRE_SANDBOX is set: %s", a.Why)
		}
		t.Skipf("SKIPPED, not passed: no OS sandbox here: %s", a.Why)
	}
	p := &gwProject{sw: statewrightBinary(t), session: "gwsb"}
	var err error
	if p.dir, err = filepath.EvalSymlinks(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	p.storePath, p.cfg = filepath.Join(state, "state.db"), filepath.Join(state, "config")
	if err := os.MkdirAll(filepath.Join(p.dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(state, "gw-sb.json")
	if err := os.WriteFile(wf, []byte(gwSandboxWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	p.cli(t, "start", wf, "--session", p.session)
	fs := MCPServerBinary(t, "mcp-server-filesystem")
	gc := p.connectWith(t, &testLog{t: t, prefix: "gateway: "}, []string{"--sandbox"}, "fs="+fs+" "+p.dir)

	a := filepath.Join(p.dir, "src", "a.txt")
	if res := gc.call(t, "fs__write_file", map[string]any{"path": a, "content": "a\n"}); res.IsError {
		t.Fatalf("write in writing: %s", resultText(res))
	}
	if b, _ := os.ReadFile(a); string(b) != "a\n" {
		t.Fatalf("a.txt holds %q", b)
	}
	procs := fsProcesses(t, p.dir)
	listing, writer := 0, 0
	for pid, mode := range procs {
		switch mode {
		case "ro":
			listing = pid
		case "rw":
			writer = pid
		}
	}
	if len(procs) != 2 || listing == 0 || writer == 0 {
		t.Fatalf("want the gateway's own process with the project read-only and the session's read-write, under a sandbox; got %v", procs)
	}

	p.cli(t, "transition", p.session, "DONE")
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, ok := fsProcesses(t, p.dir)[writer]; !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writing's process %d still runs after the run moved to reviewing", writer)
		}
	}
	res := gc.call(t, "fs__read_text_file", map[string]any{"path": a})
	if res.IsError || !strings.Contains(resultText(res), "a\n") {
		t.Fatalf("read in reviewing: %s", resultText(res))
	}
	if !strings.Contains(resultText(res), "OS sandbox of phase reviewing") {
		t.Errorf("the call does not say its upstream now runs under reviewing's sandbox: %s", resultText(res))
	}
	reviewer := 0
	for pid, mode := range fsProcesses(t, p.dir) {
		if pid != listing {
			if mode != "ro" || reviewer != 0 {
				t.Errorf("reviewing: process %d mounts the project %q", pid, mode)
			}
			reviewer = pid
		}
	}
	if reviewer == 0 || reviewer == writer {
		t.Fatalf("reviewing's process %d (writing's was %d)", reviewer, writer)
	}

	p.cli(t, "transition", p.session, "BACK")
	b := filepath.Join(p.dir, "src", "b.txt")
	// Decided on the store at once, whether or not the gateway has seen
	// BACK yet: a call decided in writing never runs in reviewing's process.
	res = gc.call(t, "fs__write_file", map[string]any{"path": b, "content": "b\n"})
	if res.IsError {
		t.Fatalf("write back in writing: %s", resultText(res))
	}
	if got, _ := os.ReadFile(b); string(got) != "b\n" {
		t.Fatalf("b.txt holds %q", got)
	}
	for pid, mode := range fsProcesses(t, p.dir) {
		if pid != listing && (pid == writer || pid == reviewer || mode != "rw") {
			t.Errorf("back in writing: process %d mounts the project %q (writing's was %d, reviewing's %d)", pid, mode, writer, reviewer)
		}
	}
}
