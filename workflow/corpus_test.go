package workflow

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expectations of the conformance corpus")

// corpusCase is one workflow file of the conformance corpus with its
// expectation. A case is a pair of files in a txtar archive under
// testdata/corpus: NAME.json or NAME.yaml, and NAME.want. The want file
// starts with optional directives ("# strict", "# lenient" (a run's
// snapshot), "# schema-skip: why") and
// "parse: ok" or "parse: error", followed by every diagnostic Parse and then
// Validate report, one per line as "line:col: severity code: message".
type corpusCase struct {
	archive    string
	name       string
	input      string // file name inside the archive
	data       []byte
	want       string
	directives []string
}

func (c *corpusCase) strict() bool { return c.has("# strict") }

func (c *corpusCase) lenient() bool { return c.has("# lenient") }

func (c *corpusCase) has(prefix string) bool {
	for _, d := range c.directives {
		if strings.HasPrefix(d, prefix) {
			return true
		}
	}
	return false
}

func (c *corpusCase) isJSON() bool { return strings.HasSuffix(c.input, ".json") }

func loadCorpus(t testing.TB) []*corpusCase {
	t.Helper()
	files, err := filepath.Glob("testdata/corpus/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var out []*corpusCase
	for _, f := range files {
		ar, err := readArchive(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		wants := map[string]string{}
		for _, af := range ar.Files {
			if name, ok := strings.CutSuffix(af.Name, ".want"); ok {
				wants[name] = string(af.Data)
			}
		}
		for _, af := range ar.Files {
			ext := filepath.Ext(af.Name)
			if ext != ".json" && ext != ".yaml" {
				continue
			}
			name := strings.TrimSuffix(af.Name, ext)
			c := &corpusCase{archive: f, name: name, input: af.Name, data: af.Data, want: wants[name]}
			for _, line := range strings.Split(c.want, "\n") {
				if strings.HasPrefix(line, "# ") {
					c.directives = append(c.directives, line)
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// run parses and validates a case and renders the result like a want file.
func (c *corpusCase) run() (string, bool) {
	def, diags, err := Parse(c.data, ParseOptions{Strict: c.strict(), Lenient: c.lenient()})
	var b strings.Builder
	for _, d := range c.directives {
		b.WriteString(d + "\n")
	}
	if err != nil {
		b.WriteString("parse: error\n")
	} else {
		b.WriteString("parse: ok\n")
		diags = append(diags, Validate(def)...)
	}
	for _, d := range diags {
		fmt.Fprintf(&b, "%s: %s %s: %s\n", d.Pos, d.Severity, d.Code, d.Message)
	}
	return b.String(), err == nil
}

func TestConformanceCorpus(t *testing.T) {
	cases := loadCorpus(t)
	if len(cases) < 90 {
		t.Errorf("corpus has %d cases, want at least 90", len(cases))
	}
	seen := map[string]bool{}
	updated := map[string]map[string]string{}
	for _, c := range cases {
		key := filepath.Base(c.archive) + "/" + c.name
		if seen[key] {
			t.Errorf("%s: duplicate case", key)
		}
		seen[key] = true
		t.Run(key, func(t *testing.T) {
			got, _ := c.run()
			if *update {
				if updated[c.archive] == nil {
					updated[c.archive] = map[string]string{}
				}
				updated[c.archive][c.name+".want"] = got
				return
			}
			if c.want == "" {
				t.Fatalf("no %s.want in %s", c.name, c.archive)
			}
			if got != c.want {
				t.Errorf("%s in %s:\n--- got\n%s--- want\n%s", c.input, c.archive, got, c.want)
			}
		})
	}
	for archive, wants := range updated {
		ar, err := readArchive(archive)
		if err != nil {
			t.Fatal(err)
		}
		var files []archiveFile
		for _, f := range ar.Files {
			if strings.HasSuffix(f.Name, ".want") {
				continue
			}
			files = append(files, f)
			name := strings.TrimSuffix(f.Name, filepath.Ext(f.Name))
			if w, ok := wants[name+".want"]; ok {
				files = append(files, archiveFile{Name: name + ".want", Data: []byte(w)})
			}
		}
		ar.Files = files
		if err := os.WriteFile(archive, ar.format(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCorpusCoversEveryCode checks that each diagnostic code the package
// defines is exercised by at least one corpus case.
func TestCorpusCoversEveryCode(t *testing.T) {
	codes := []string{
		CodeSyntax, CodeUnknownKey, CodeDroppedField, CodeDuplicateKey, CodeTypeMismatch, CodeInvalidValue,
		CodeMissingKey, CodeBadShape, CodeBadGuard,
		CodeInitialNotFound, CodeNoFinalState, CodeUnknownTarget, CodeUndefinedGuard, CodeUnknownInterruptTarget,
		CodeUnknownForkState, CodeUnreachableState, CodePolicyVersion, CodePolicyState, CodePolicyParent,
		CodeUnknownSafeNext, CodeUnknownInvokeState, CodeReturnOutside, CodeCannotReachFinal, CodeFinalTransitions,
		CodeMaxIterationsZero, CodeGuardValue, CodeGuardCycle, CodeUnknownEvidence, CodeEvidenceType, CodeInvalidGlob,
		CodeParallelState, CodeDeadlock, CodeReservedEvent, CodeSandboxExecLimits, CodeSandboxPath,
		CodeSafetyFailedState, CodeSafetyFailPath, CodeSafetyInitialPrivilege, CodeSafetyNoApproval, CodeSafetyEscalation,
		CodeCompatEventData, CodeCompatMaxIterations, CodeCompatAllowedCommands, CodeCompatDisallowedTools, CodeCompatBlockedEnv,
	}
	var all bytes.Buffer
	for _, c := range loadCorpus(t) {
		all.WriteString(c.want)
	}
	var missing []string
	for _, code := range codes {
		if !bytes.Contains(all.Bytes(), []byte(" "+code+": ")) {
			missing = append(missing, code)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("codes without a corpus case: %s", strings.Join(missing, ", "))
	}
}

// archive is a txtar archive: a comment, then files introduced by
// "-- name --" lines. (A local reader keeps the package's tests free of
// dependencies.)
type archive struct {
	Comment []byte
	Files   []archiveFile
}

type archiveFile struct {
	Name string
	Data []byte
}

func readArchive(path string) (*archive, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ar := &archive{}
	cur := &ar.Comment
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		trimmed := strings.TrimRight(string(line), "\r\n")
		if name, ok := strings.CutPrefix(trimmed, "-- "); ok && strings.HasSuffix(name, " --") {
			ar.Files = append(ar.Files, archiveFile{Name: strings.TrimSpace(strings.TrimSuffix(name, " --"))})
			cur = &ar.Files[len(ar.Files)-1].Data
			continue
		}
		*cur = append(*cur, line...)
	}
	return ar, nil
}

func (ar *archive) format() []byte {
	var b bytes.Buffer
	b.Write(ar.Comment)
	for _, f := range ar.Files {
		fmt.Fprintf(&b, "-- %s --\n", f.Name)
		b.Write(f.Data)
		if len(f.Data) > 0 && f.Data[len(f.Data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
