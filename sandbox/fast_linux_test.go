package sandbox

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestParseExports: what a real bash prints for `export -p` (plain and in
// POSIX mode) parses back to the environment it was given.
func TestParseExports(t *testing.T) {
	vals := map[string]string{
		"SW_PLAIN": "plain", "SW_EMPTY": "", "SW_QUOTES": `a"b'c`, "SW_DOLLAR": "$HOME `x` \\n",
		"SW_NEWLINE": "a\nb", "SW_CTRL": "x\x01\x7f\ty", "SW_UTF8": "é—ü", "SW_EQ": "a=b=c", "SW_BS": `\`,
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range vals {
		env = append(env, k+"="+v)
	}
	for _, args := range [][]string{{"-c", "export -p"}, {"--posix", "-c", "export -p"}, {"-c", "declare -a SW_ARR=(1); export SW_ARR; declare -x SW_NOVAL; export -p"}} {
		cmd := exec.Command("/bin/bash", args...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseExports(string(out))
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		for k, v := range vals {
			if !slices.Contains(got, k+"="+v) {
				t.Errorf("%v: %s=%q missing from %q", args, k, v, got)
			}
		}
		for _, kv := range got {
			if strings.HasPrefix(kv, "SW_ARR") || strings.HasPrefix(kv, "SW_NOVAL") {
				t.Errorf("%v: %q is not in the environment", args, kv)
			}
		}
	}
	for _, bad := range []string{"declare -x A=\"x", "declare -x A=$'x", "rm -rf /\n", "declare -x =1\n"} {
		if _, err := ParseExports(bad); err == nil {
			t.Errorf("ParseExports(%q): no error", bad)
		}
	}
}

func FuzzParseExports(f *testing.F) {
	f.Add("declare -x A=\"b\"\ndeclare -x C=$'d\\n\\001'\nexport E='f'\n")
	f.Fuzz(func(t *testing.T, s string) {
		env, err := ParseExports(s)
		if err != nil {
			return
		}
		for _, kv := range env {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				t.Fatalf("%q from %q", kv, s)
			}
		}
	})
}

// TestFastPathRefuses: the keeper runs nothing for a request that names a
// process inside a sandbox (the server itself), or comes too late; and the
// request FIFO cannot be reached from inside.
func TestFastPathRefuses(t *testing.T) {
	f := newServerFixture(t)
	_, outer := f.call("implementing", true, "exit 0")
	if out, code := f.run(outer, ""); code != 0 {
		t.Fatalf("first command: exit %d: %s", code, out)
	}
	srv, sess := ServerDir(f.root), filepath.Base(f.sess)
	req := reqPath(srv, sess)
	marker := filepath.Join(f.proj, "ran")
	// From inside, the FIFO does not exist and cannot be made.
	c, outer := f.call("implementing", true, "printf 'r 1 1 x\\n' >> "+Quote(req)+" && echo REACHED; ls "+Quote(srv))
	out, _ := f.run(outer, "")
	if strings.Contains(out, "REACHED") {
		t.Errorf("the request FIFO is reachable inside:\n%s", out)
	}
	_ = c
	for name, tc := range map[string]struct {
		pid int
		ts  string
	}{
		"a sandboxed process": {f.record().PID, ""},
		"too old":             {os.Getpid(), strconv.FormatInt(time.Now().Add(-time.Minute).Unix(), 10)},
	} {
		c, _ := f.call("implementing", true, "touch "+Quote(marker))
		id := filepath.Base(c.Dir)
		rf, err := os.OpenFile(replyPath(srv, sess, id), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		ts := tc.ts
		if ts == "" {
			ts = strconv.FormatInt(time.Now().Unix(), 10) + ".5"
		}
		w, err := os.OpenFile(req, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteString("r " + strconv.Itoa(tc.pid) + " " + ts + " " + id + "\n"); err != nil {
			t.Fatal(err)
		}
		w.Close()
		_ = rf.SetReadDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(rf)
		var lines []string
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: %v after %q", name, err, lines)
			}
			lines = append(lines, strings.TrimSpace(l))
			if l != "a\n" {
				break
			}
		}
		rf.Close()
		if lines[len(lines)-1] != "x" {
			t.Errorf("%s: answers %q, want the command refused (x)", name, lines)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a refused request ran")
	}
}

// TestFastPathReplyMustBeFIFO: the keeper answers only on the call's reply
// FIFO; a regular file put in its place gets nothing written and the
// command does not run.
func TestFastPathReplyMustBeFIFO(t *testing.T) {
	f := newServerFixture(t)
	_, outer := f.call("implementing", true, "exit 0")
	if out, code := f.run(outer, ""); code != 0 {
		t.Fatalf("first command: exit %d: %s", code, out)
	}
	srv, sess := ServerDir(f.root), filepath.Base(f.sess)
	marker := filepath.Join(f.proj, "ran")
	c, _ := f.call("implementing", true, "touch "+Quote(marker))
	id := filepath.Base(c.Dir)
	reply := replyPath(srv, sess, id)
	if err := os.Remove(reply); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reply, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(reqPath(srv, sess), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10) + ".5"
	if _, err := w.WriteString("r " + strconv.Itoa(os.Getpid()) + " " + ts + " " + id + "\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// The keeper reads requests in order: a later request of a real
	// command, answered, means this one was handled.
	if out, code := f.run(outer, ""); code != 0 {
		t.Fatalf("later command: exit %d: %s", code, out)
	}
	if b, err := os.ReadFile(reply); err != nil || len(b) != 0 {
		t.Errorf("the keeper wrote %q into a regular file at the reply path (%v)", b, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a request whose reply path is not a FIFO ran")
	}
}
