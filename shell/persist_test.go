package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPersistentShellState covers state one shell call leaves for a later
// one where the harness keeps one shell for the session (Codex's exec
// sessions, any harness that reuses a shell): a function named after a
// program, a trap, a variable whose value is evaluated as arithmetic, a
// variable exported by name. The later call looks read-only on its own, so
// one of the two calls must be exec (fail closed). Each pair is also run in
// one real bash process, the way a persistent shell runs them, to show the
// later call really runs the hidden code.
func TestPersistentShellState(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is needed: %v", err)
	}
	cases := []struct {
		define, later string
		defineExec    bool // the definition itself is exec (else the later call is)
	}{
		// a descriptor left open: the later call writes through it (a
		// write to an unknown target, not exec)
		{"exec 3>pwned", "echo x >&3", false},
		{"ls() { touch pwned; }", "ls", true},
		{"function cat { touch pwned; }", "cat README", true},
		{"grep() { touch pwned; }", "grep -r TODO .", true},
		{"trap 'touch pwned' DEBUG", "ls", true},
		{"trap 'touch pwned' EXIT", "ls", true},
		{"X='a[$(touch pwned)]'", "echo $((X))", false},
		{"X='a[$(touch pwned)]'", "echo $(( $X + 1 ))", false},
		{"X='a[$(touch pwned)]'", "[[ $X -eq 1 ]]", false},
		{"i='a[$(touch pwned)]'", "echo ${arr[i]}", false},
		{"c='a[$(touch pwned)]'", "(( c++ ))", false},
		{"c='a[$(touch pwned)]'", "let c+=1", false},
		{"BASH_ENV=./evil.sh", "export BASH_ENV; bash -c true", true},
	}
	for _, tc := range cases {
		t.Run(tc.define+" / "+tc.later, func(t *testing.T) {
			d, err := Analyze(tc.define)
			if err != nil {
				t.Fatal(err)
			}
			l, err := Analyze(tc.later)
			if err != nil {
				t.Fatal(err)
			}
			if tc.defineExec && d.Classes&ClassExec == 0 {
				t.Errorf("%q is %s, want exec: it changes what a later call runs", tc.define, d.Classes)
			}
			fd := strings.Contains(tc.later, ">&3")
			if fd {
				if l.Classes&ClassWrite == 0 || len(l.Writes) == 0 || !l.Writes[0].Dynamic {
					t.Errorf("%q is %s with writes %v, want a write to an unknown target", tc.later, l.Classes, l.Writes)
				}
			} else if !tc.defineExec && l.Classes&ClassExec == 0 {
				t.Errorf("%q is %s, want exec: it evaluates a value an earlier call may have set", tc.later, l.Classes)
			}

			// the threat is real: in one bash process the later call runs it
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "README"), []byte("x\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "evil.sh"), []byte("touch pwned\n"), 0o644)
			cmd := exec.Command(bash, "--norc", "--noprofile")
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
			between := "rm -f pwned\n"
			if fd {
				between = ""
			}
			cmd.Stdin = strings.NewReader(tc.define + "\n" + between + tc.later + "\n")
			cmd.Run() // the later call may fail; what it ran is what counts
			b, err := os.ReadFile(filepath.Join(dir, "pwned"))
			if err != nil || fd && string(b) != "x\n" {
				t.Errorf("bash did not run the hidden code of %q then %q: the case shows nothing", tc.define, tc.later)
			}
		})
	}
}
