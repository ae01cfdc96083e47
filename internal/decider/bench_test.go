//go:build unix

package decider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/internal/cputime"
	"github.com/statewright-go/statewright/internal/hookwire"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	_ "github.com/statewright-go/statewright/store/backends"
)

// BenchmarkHook is one PreToolUse (an allowed Read) answered by the
// decider in process: what a hook costs the decider beyond the socket.
func BenchmarkHook(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	loc := filepath.Join(dir, "state.db")
	st, err := store.Open(ctx, loc, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	wf := filepath.Join(dir, "wf.json")
	os.WriteFile(wf, []byte(`{"id":"b","initial":"a","states":{"a":{"allowed_tools":["Read"],"on":{"X":"z"}},"z":{"type":"final"}}}`), 0o644)
	if _, err := runtime.New(st, runtime.Options{ProjectDir: dir}).Start(ctx, "claude-code:s", wf, runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli"}); err != nil {
		b.Fatal(err)
	}
	id := st.StoreID()
	st.Close()
	d := &Decider{o: Options{Dir: dir, Binary: "/nonexistent/statewright"}, sem: make(chan struct{}, 1),
		stores: map[string]store.Store{}, runtimes: map[string]*runtime.Service{}, quit: make(chan struct{})}
	defer d.closeStores()
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	env := []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	args := []string{"hook", "claude-code", "pre-tool-use", "--store", loc, "--store-id", id, "--deadline", "5s"}
	b.ReportAllocs()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	gcs := ms.NumGC
	cpu0 := cputime.Process()
	i := 0
	for b.Loop() {
		i++
		in := fmt.Sprintf(`{"session_id":"s","transcript_path":"/t","cwd":%q,"permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"t%d"}`,
			dir, filepath.Join(dir, "a.go"), i)
		a := d.hook(ctx, &hookwire.Request{Op: hookwire.OpHook, Args: args, Env: env, Dir: dir, Umask: 0o22, Budget: 5 * time.Second, Input: []byte(in)}, peer{})
		if a.Refused != "" || a.Exit != 0 || strings.Contains(string(a.Stdout), "deny") {
			b.Fatalf("%+v", a)
		}
	}
	goruntime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.NumGC-gcs)*1000/float64(b.N), "gc/1k-hooks")
	// CPU time of the whole process (the store's writer, the collector)
	// per hook: less distorted by a loaded machine than wall time.
	b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
}
