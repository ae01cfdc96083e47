package main

import (
	"os"
	"slices"
	"testing"
	"time"
)

func TestReplicaEnv(t *testing.T) {
	for _, tc := range []struct {
		name       string
		c          config
		cpus, reps int
		want       []string
	}{
		{"default", config{}, 2, 2, nil},
		{"share of 2 cores, 1 replica", config{cpuShare: true}, 2, 1, []string{"GOMAXPROCS=2"}},
		{"share of 2 cores, 2 replicas", config{cpuShare: true}, 2, 2, []string{"GOMAXPROCS=1"}},
		{"share of 2 cores, 3 replicas", config{cpuShare: true}, 2, 3, []string{"GOMAXPROCS=1"}},
		{"share of 8 cores, 3 replicas", config{cpuShare: true}, 8, 3, []string{"GOMAXPROCS=2"}},
		{"serve-env after the share", config{cpuShare: true, serveEnv: []string{"GOMAXPROCS=4", "GOGC=100"}}, 2, 2,
			[]string{"GOMAXPROCS=1", "GOMAXPROCS=4", "GOGC=100"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := replicaEnv(tc.c, tc.cpus, tc.reps); !slices.Equal(got, tc.want) {
				t.Errorf("replicaEnv = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEnvs(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    config
		want [][]string
	}{
		{"none", config{}, [][]string{nil}},
		{"serve-env", config{serveEnv: envList("GOGC=200")}, [][]string{{"GOGC=200"}}},
		{"alt", config{serveEnv: envList("GOGC=200"), altEnv: envList("GODEBUG=x=1,GOGC=100"), hasAltEnv: true},
			[][]string{{"GOGC=200"}, {"GODEBUG=x=1", "GOGC=100"}}},
		{"empty alt", config{serveEnv: envList("GODEBUG=x=1"), hasAltEnv: true}, [][]string{{"GODEBUG=x=1"}, nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := envs(tc.c)
			if !slices.EqualFunc(got, tc.want, func(a, b []string) bool { return slices.Equal(a, b) }) {
				t.Errorf("envs = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestProcSwitches reads this process's own context switches: a thread
// that sleeps blocks, so the voluntary count grows.
func TestProcSwitches(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc here")
	}
	before := procSwitches(os.Getpid())
	for range 3 {
		time.Sleep(10 * time.Millisecond)
	}
	after := procSwitches(os.Getpid())
	if after.vol <= before.vol {
		t.Errorf("voluntary context switches %d -> %d after sleeping", before.vol, after.vol)
	}
}

func TestDetailLine(t *testing.T) {
	a := detail{gen: 10 * time.Millisecond, serve: []time.Duration{0, time.Second}, serveSw: []switches{{1, 1}, {0, 0}}}
	b := detail{gen: 30 * time.Millisecond, genSw: switches{200, 100}, serve: []time.Duration{100 * time.Millisecond, 2 * time.Second},
		serveSw: []switches{{101, 51}, {300, 0}}, pg: switches{50, 20}}
	const want = "# detail per decision (cpu; context switches voluntary+involuntary): generator 20us 0.20+0.10; serve0 100us 0.10+0.05; serve1 1000us 0.30+0.00; postgres backends 0.05+0.02"
	if got := detailLine(a, b, 1000); got != want {
		t.Errorf("detailLine:\n got %s\nwant %s", got, want)
	}
}
