package policy

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// classCase is one line of testdata/shellclasses/*.txt:
//
//	STATE | CLASS | COMMAND      (attacks.txt: must be denied in STATE)
//	STATE | COMMAND              (benign.txt: must be allowed in STATE)
//
// A COMMAND starting with q: is a Go-quoted string (for newlines).
type classCase struct {
	file  string
	line  int
	state string
	class string
	cmd   string
}

func loadClassCases(t *testing.T, name string, fields int) []classCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "shellclasses", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []classCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, " | ", fields)
		if len(parts) != fields {
			t.Fatalf("%s:%d: want %d fields separated by \" | \"", name, n, fields)
		}
		c := classCase{file: name, line: n, state: strings.TrimSpace(parts[0]), cmd: parts[fields-1]}
		if fields == 3 {
			c.class = strings.TrimSpace(parts[1])
		}
		if q, ok := strings.CutPrefix(c.cmd, "q:"); ok {
			u, err := strconv.Unquote(q)
			if err != nil {
				t.Fatalf("%s:%d: %v", name, n, err)
			}
			c.cmd = u
		}
		out = append(out, c)
	}
	return out
}

// TestShellClasses decides the attack corpus (every attack denied, by
// class) and the everyday corpus (at least 97 % allowed) in the phases of
// workflows/shellclasses.yaml.
func TestShellClasses(t *testing.T) {
	law := loadLaw(t, "workflows/shellclasses.yaml", corpusOptions)
	decide := func(c classCase) Decision {
		input, _ := json.Marshal(map[string]any{"command": c.cmd})
		return law.Decide(&RunState{Active: true, State: c.state}, &ToolCall{Tool: "Bash", Input: input, Cwd: "/repo", ProjectDir: "/repo"})
	}
	attacks := loadClassCases(t, "attacks.txt", 3)
	byClass := map[string]int{}
	for _, c := range attacks {
		byClass[c.class]++
		if d := decide(c); d.Verdict == Allow {
			t.Errorf("attacks.txt:%d [%s] allowed in %s: %q", c.line, c.class, c.state, c.cmd)
		}
	}
	benign := loadClassCases(t, "benign.txt", 2)
	allowed := 0
	for _, c := range benign {
		if d := decide(c); d.Verdict == Allow {
			allowed++
		} else {
			t.Logf("benign.txt:%d denied in %s: %q: %s", c.line, c.state, c.cmd, d.Reason)
		}
	}
	var classes []string
	for k := range byClass {
		classes = append(classes, k)
	}
	sort.Strings(classes)
	var sb strings.Builder
	for _, k := range classes {
		sb.WriteString(k + "=" + strconv.Itoa(byClass[k]) + " ")
	}
	pct := 100 * float64(allowed) / float64(max(len(benign), 1))
	t.Logf("attacks: %d (%s); everyday: %d, allowed %d (%.1f%%)", len(attacks), strings.TrimSpace(sb.String()), len(benign), allowed, pct)
	if len(attacks) < 300 || len(benign) < 300 {
		t.Errorf("corpus too small: %d attacks, %d everyday commands", len(attacks), len(benign))
	}
	if pct < 97 {
		t.Errorf("only %.1f%% of the everyday commands are allowed, want at least 97%%", pct)
	}
}
