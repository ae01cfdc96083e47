package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/install"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// fake is an adapter whose Respond runs respond; its failures deny with
// exit 2 and the reason on stderr.
type fake struct {
	respond func(ctx context.Context, h *harness.Hook, event string, input []byte) harness.Answer
}

func (fake) Info() harness.Info { return harness.Info{Name: "fake", Events: []string{"gate"}} }
func (f fake) Respond(ctx context.Context, h *harness.Hook, event string, input []byte) harness.Answer {
	return f.respond(ctx, h, event, input)
}
func (fake) Failure(event, reason string) harness.Answer {
	return harness.Answer{Exit: 2, Stderr: event + ": " + reason + "\n"}
}
func (fake) Install(*install.Plan) error { return nil }
func (fake) Inspect(context.Context, harness.InspectQuery) ([]*harness.Install, error) {
	return nil, nil
}

func run(t *testing.T, a harness.Adapter, args []string, stdin string, env Env) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), a, args, strings.NewReader(stdin), &out, &errb, env)
	return code, out.String(), errb.String()
}

func TestRunAnswersEveryFailureAsTheEvent(t *testing.T) {
	ok := fake{func(context.Context, *harness.Hook, string, []byte) harness.Answer {
		return harness.Answer{Stdout: []byte("ok\n")}
	}}
	if code, out, _ := run(t, ok, []string{"gate"}, "{}", Env{}); code != 0 || out != "ok\n" {
		t.Errorf("a good hook: %d %q", code, out)
	}
	if code, _, errs := run(t, ok, []string{"gate", "--bogus"}, "{}", Env{}); code != 2 || !strings.Contains(errs, "gate: hook fake: unknown flag: --bogus") {
		t.Errorf("a bad flag: %d %q", code, errs)
	}
	if code, _, errs := run(t, ok, nil, "{}", Env{}); code != 2 || !strings.Contains(errs, "usage: statewright hook fake EVENT") {
		t.Errorf("no event: %d %q", code, errs)
	}
	// A hook that blocks past its deadline is answered by the watchdog.
	stuck := fake{func(ctx context.Context, _ *harness.Hook, _ string, _ []byte) harness.Answer {
		select {} // ignores its context, as a hook blocked in a system call would
	}}
	if code, _, errs := run(t, stuck, []string{"gate", "--deadline", "50ms"}, "{}", Env{}); code != 2 || !strings.Contains(errs, "did not finish within its 50ms deadline") {
		t.Errorf("a stuck hook: %d %q", code, errs)
	}
}

func TestReadInputIsBounded(t *testing.T) {
	var got int
	h := Chain(func(_ context.Context, r *Request) harness.Answer { got = len(r.Input); return harness.Answer{} }, ReadInput(10))
	h(context.Background(), &Request{Adapter: fake{}, Stdin: strings.NewReader(strings.Repeat("x", 100))})
	if got != 11 {
		t.Errorf("read %d bytes; want the limit and one more, so the decoder refuses it", got)
	}
}

// TestOpenStore opens the store only for an event that uses it, with the
// id the flags name, and protects the id file and the binary.
func TestOpenStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := st.StoreID()
	st.Close()
	idFile := filepath.Join(dir, "id")
	if err := os.WriteFile(idFile, []byte(id+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opened, lastBusy := 0, time.Duration(0)
	env := Env{Executable: "/opt/bin/statewright", OpenStore: func(ctx context.Context, loc, expect string, busy time.Duration) (store.Store, error) {
		opened++
		lastBusy = busy
		return sqlite.Open(ctx, loc, sqlite.Options{MustExist: true, ExpectID: expect, BusyTimeout: busy})
	}}
	idle := fake{func(context.Context, *harness.Hook, string, []byte) harness.Answer { return harness.Answer{} }}
	if code, _, errs := run(t, idle, []string{"gate", "--store", path, "--store-id-file", idFile}, "", env); code != 0 || opened != 0 {
		t.Fatalf("an event that decides nothing opened the store: %d %q", code, errs)
	}
	decide := fake{func(ctx context.Context, h *harness.Hook, _ string, _ []byte) harness.Answer {
		svc, err := h.Runtime(ctx, dir)
		if err != nil {
			return harness.Answer{Exit: 2, Stderr: err.Error()}
		}
		res, err := svc.Decide(ctx, runtime.ToolCall{Session: "fake:s", Call: toolCall("Write", `{"file_path":"`+idFile+`","content":"x"}`, dir)})
		if err != nil {
			return harness.Answer{Exit: 2, Stderr: err.Error()}
		}
		return harness.Answer{Stdout: []byte(res.Verdict.String() + " " + string(res.Rule))}
	}}
	code, out, errs := run(t, decide, []string{"gate", "--store", path, "--store-id-file", idFile, "--deadline", "1s"}, "", env)
	if code != 0 || opened != 1 || out != "deny self-protect" {
		t.Fatalf("writing the store id file: %d %q %q (opened %d); want a self-protect deny", code, out, errs, opened)
	}
	if lastBusy != BusyTimeout(time.Second) {
		t.Errorf("busy timeout %v for a 1s deadline", lastBusy)
	}
	if code, _, errs := run(t, decide, []string{"gate", "--store", path, "--store-id", "st_0000"}, "", env); code != 2 || !strings.Contains(errs, "store id mismatch") {
		t.Errorf("a foreign store: %d %q", code, errs)
	}
	if code, _, errs := run(t, decide, []string{"gate", "--store", path}, "", env); code != 2 || !strings.Contains(errs, "names no store id") {
		t.Errorf("no store id: %d %q", code, errs)
	}
}

func toolCall(tool, input, dir string) policy.ToolCall {
	return policy.ToolCall{Harness: policy.ClaudeCode, Tool: tool, Input: json.RawMessage(input), Cwd: dir, ProjectDir: dir, ToolUseID: "t1"}
}

func TestBusyTimeout(t *testing.T) {
	for d, want := range map[time.Duration]time.Duration{
		5 * time.Second: 2 * time.Second, time.Second: 400 * time.Millisecond, time.Millisecond: 10 * time.Millisecond,
	} {
		if got := BusyTimeout(d); got != want {
			t.Errorf("BusyTimeout(%v) = %v, want %v", d, got, want)
		}
	}
}

// goid is the running goroutine's id, from its stack trace's first line.
func goid() string {
	b := make([]byte, 64)
	b = b[:goruntime.Stack(b, false)]
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// TestDeadlineReusesItsGoroutine: in a process that answers many hooks
// (serve), the deadline's goroutine of one request runs the next one, so
// a decision does not start on a fresh stack; a request stuck past its
// deadline is answered by the failure and keeps its goroutine, and the
// next request gets another.
func TestDeadlineReusesItsGoroutine(t *testing.T) {
	// Start from an empty pool: goroutines parked by earlier tests would
	// otherwise run these requests (they stay blocked, unused).
	parked.Lock()
	parked.idle = nil
	parked.Unlock()
	// parkedOne waits until one goroutine is parked: the one that ran the
	// last request, after it answered (no sleep: a loaded machine may take
	// long to get there).
	parkedOne := func() {
		t.Helper()
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
			parked.Lock()
			n := len(parked.idle)
			parked.Unlock()
			if n == 1 {
				return
			}
		}
		t.Fatal("the goroutine that answered never parked")
	}
	ran := make(chan string, 4)
	release := make(chan struct{})
	defer close(release)
	h := Chain(func(ctx context.Context, r *Request) harness.Answer {
		ran <- goid()
		if r.Event == "stuck" {
			<-release
		}
		return harness.Answer{Stdout: []byte("ok")}
	}, Deadline(100*time.Millisecond))
	ask := func(event string) string {
		t.Helper()
		a := h(context.Background(), &Request{Adapter: fake{}, Event: event})
		if want := event != "stuck"; want != (string(a.Stdout) == "ok") {
			t.Fatalf("%s: answered %+v", event, a)
		}
		if event == "stuck" && (a.Exit != 2 || !strings.Contains(a.Stderr, "deadline")) {
			t.Fatalf("a stuck request was answered %+v, want the deadline's failure", a)
		}
		if event != "stuck" {
			parkedOne()
		}
		return <-ran
	}
	first, second := ask("gate"), ask("gate")
	if first == "" || first != second {
		t.Fatalf("the second request ran on goroutine %q, the first on %q: not reused", second, first)
	}
	stuck, after := ask("stuck"), ask("gate")
	if after == stuck {
		t.Fatalf("the request after a stuck one ran on the stuck goroutine %s", stuck)
	}
}
