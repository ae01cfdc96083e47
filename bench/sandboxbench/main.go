// Command sandboxbench measures what the OS sandbox adds to one shell
// command, as a harness runs it: the command a hook rewrote (the harness's
// `bash -c`, the launcher `statewright sandbox exec`, bubblewrap, the inner
// bash) against a plain `bash -c` of the same command, in the same run.
//
//	go run ./bench/sandboxbench -n 300 > bench/sandbox.txt
//
// It builds statewright (go build, in a temporary directory), derives the
// profile of the bundled bugfix workflow's implementing phase for a
// temporary project (project writable, protected trees read-only, secrets
// and the store hidden, a per-session /tmp, no network), prepares one call
// directory, then alternates the commands n times each:
//
//	plain     bash -c 'true'
//	bwrap     bwrap <the profile's arguments> -- bash -c 'true'
//	launcher  bash -c "<the rewritten command>"  (what Claude Code runs), with
//	          the slim launcher statewright-sandbox next to the binary
//	launcher+net   the same with the phase granting Network (no network namespace)
//	launcher-full  the same through `statewright sandbox exec` (no slim launcher)
//
// and prints p50/p99 of wall time and of CPU time (user+sys of the process
// tree). Budget (docs/architecture.md): the launcher adds at most 5 ms at p50 over
// plain.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	stdruntime "runtime"
	"slices"
	"time"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/workflow"
)

func main() {
	n := flag.Int("n", 300, "runs per command")
	flag.Parse()
	if err := run(*n); err != nil {
		fmt.Fprintln(os.Stderr, "sandboxbench:", err)
		os.Exit(1)
	}
}

type sample struct{ wall, cpu time.Duration }

func run(n int) error {
	a := sandbox.Detect()
	if !a.OK() {
		return fmt.Errorf("no sandbox here: %s", a.Why)
	}
	dir, err := os.MkdirTemp("", "sandboxbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// full/statewright alone; slim/ also has statewright-sandbox, which
	// the rewritten command then runs (sandbox.LauncherFor).
	full, slim := filepath.Join(dir, "full", "statewright"), filepath.Join(dir, "slim", "statewright")
	for _, b := range []struct{ out, pkg string }{
		{full, "./cmd/statewright"}, {slim, "./cmd/statewright"}, {filepath.Join(dir, "slim", "statewright-sandbox"), "./cmd/statewright-sandbox"},
	} {
		if out, err := exec.Command("go", "build", "-o", b.out, "github.com/statewright-go/statewright/"+b.pkg[2:]).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	proj := filepath.Join(dir, "proj")
	home := filepath.Join(dir, "home")
	for _, d := range []string{proj + "/.claude", proj + "/.git/hooks", home + "/.ssh", home + "/.config/statewright"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	store := filepath.Join(proj, ".statewright", "state.db")
	os.MkdirAll(filepath.Dir(store), 0o755)
	os.WriteFile(store, []byte("x"), 0o600)

	def, err := workflow.LoadTemplate("bugfix")
	if err != nil {
		return err
	}
	law, err := policy.Compile(def, policy.Options{})
	if err != nil {
		return err
	}
	root := filepath.Join(dir, "sandboxes")
	profile := func(network bool, id string) (sandbox.Call, *sandbox.Profile, error) {
		sess := sandbox.SessionDir(root, "bench")
		env := policy.SandboxEnv{ProjectDir: proj, Home: home, Store: store, SessionDir: sess, CacheDir: sandbox.SharedCache(root),
			CallDir: sandbox.CallDir(sess, id).RW}
		p, err := law.SandboxProfile("implementing", env)
		if err != nil {
			return sandbox.Call{}, nil, err
		}
		p.Network = network
		c, err := sandbox.PrepareCall(sess, env.CacheDir, id, a, &p)
		return c, &p, err
	}
	c, p, err := profile(false, "call-1")
	if err != nil {
		return err
	}
	cNet, _, err := profile(true, "call-2")
	if err != nil {
		return err
	}
	bargs, err := sandbox.Args(p, proj, []string{"/bin/bash", "-c", "true"})
	if err != nil {
		return err
	}
	cmds := []struct {
		name string
		argv []string
	}{
		{"plain", []string{"/bin/bash", "-c", "true"}},
		{"bwrap", append([]string{a.Bwrap}, bargs...)},
		{"launcher", []string{"/bin/bash", "-c", sandbox.ShellCommand(slim, c, "true")}},
		{"launcher+net", []string{"/bin/bash", "-c", sandbox.ShellCommand(slim, cNet, "true")}},
		{"launcher-full", []string{"/bin/bash", "-c", sandbox.ShellCommand(full, c, "true")}},
	}
	res := make([][]sample, len(cmds))
	for i := 0; i < n+5; i++ {
		for j, c := range cmds {
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			cmd.Dir = proj
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %v\n%s", c.name, err, out)
			}
			wall := time.Since(start)
			cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			if i >= 5 { // warm-up
				res[j] = append(res[j], sample{wall, cpu})
			}
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("# go run ./bench/sandboxbench -n %d   (%s, %d CPUs, bubblewrap %s, load %s)\n", n, time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		stdruntime.NumCPU(), a.Bwrap, string(load[:min(len(load), 14)]))
	fmt.Printf("# each command alternated n times in the same run; CPU = user+sys of the command's process tree\n")
	fmt.Printf("%-14s %10s %10s %10s %10s\n", "command", "wall p50", "wall p99", "cpu p50", "cpu p99")
	var base sample
	for j, c := range cmds {
		w := pct(res[j], func(s sample) time.Duration { return s.wall })
		u := pct(res[j], func(s sample) time.Duration { return s.cpu })
		fmt.Printf("%-14s %10s %10s %10s %10s\n", c.name, ms(w[0]), ms(w[1]), ms(u[0]), ms(u[1]))
		if j == 0 {
			base = sample{w[0], u[0]}
		}
	}
	fmt.Printf("# added over plain at p50 (budget 5 ms):\n")
	for j, c := range cmds[1:] {
		w := pct(res[j+1], func(s sample) time.Duration { return s.wall })
		u := pct(res[j+1], func(s sample) time.Duration { return s.cpu })
		fmt.Printf("%-14s wall +%s  cpu +%s\n", c.name, ms(w[0]-base.wall), ms(u[0]-base.cpu))
	}
	return nil
}

func pct(s []sample, f func(sample) time.Duration) [2]time.Duration {
	v := make([]time.Duration, len(s))
	for i := range s {
		v[i] = f(s[i])
	}
	slices.Sort(v)
	return [2]time.Duration{v[len(v)*50/100], v[min(len(v)-1, len(v)*99/100)]}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
