package testreport

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// seedReports adds every report in testdata to f's corpus.
func seedReports(f *testing.F, pattern string) {
	names, _ := filepath.Glob(filepath.Join("testdata", pattern))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(b)
		}
	}
}

// checkCounts holds for every report Parse accepts.
func checkCounts(t *testing.T, c Counts) {
	if c.Run != c.Passed+c.Failed || c.Passed < 0 || c.Failed < 0 || c.Skipped < 0 || c.Errors < 0 || c.FilteredOut < 0 {
		t.Fatalf("inconsistent counts %+v", c)
	}
}

func FuzzParseGoJSON(f *testing.F) {
	seedReports(f, "go-*.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(FormatGoJSON, b)
		if err == nil {
			checkCounts(t, c)
		}
		// The renderer takes anything and never loses a non-event line.
		var out bytes.Buffer
		w := NewRenderer(FormatGoJSON, &out, false)
		w.Write(b)
		w.Close()
	})
}

func FuzzParseJUnit(f *testing.F) {
	seedReports(f, "*.xml")
	f.Add([]byte(`<testsuite><testcase><failure/><skipped/></testcase></testsuite>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := Parse(FormatJUnit, b); err == nil {
			checkCounts(t, c)
		}
	})
}

func FuzzParseJestJSON(f *testing.F) {
	f.Add([]byte(`{"numTotalTests":5,"numPassedTests":3,"numFailedTests":1,"numPendingTests":1}`))
	f.Add([]byte(`{"numTotalTests":0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := Parse(FormatJestJSON, b); err == nil {
			checkCounts(t, c)
		}
	})
}

func FuzzParseUnittestJSON(f *testing.F) {
	f.Add([]byte(`{"tests_run":5,"failures":1,"errors":1,"skipped":9}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := Parse(FormatUnittestJSON, b); err == nil {
			checkCounts(t, c)
		}
	})
}

func FuzzParseLibtestJSON(f *testing.F) {
	seedReports(f, "cargo-*.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := Parse(FormatLibtestJSON, b); err == nil {
			checkCounts(t, c)
		}
		w := NewRenderer(FormatLibtestJSON, io.Discard, false)
		w.Write(b)
		w.Close()
	})
}

func FuzzParseINI(f *testing.F) {
	f.Add([]byte("[pytest]\naddopts = -q\n    -k x\n"))
	f.Add([]byte("[tool:pytest]\naddopts: --lf\n[x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, kv := range ParseINI(b) {
			for k := range kv {
				if k == "" || strings.ContainsAny(k, "\n") {
					t.Fatalf("bad key %q", k)
				}
			}
		}
	})
}

func FuzzPyprojectPytestOptions(f *testing.F) {
	f.Add([]byte("[tool.pytest.ini_options]\naddopts = [\"-k\", \"x\"]\n"))
	f.Add([]byte("[tool.pytest]\naddopts = \"-m fast\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		PyprojectPytestOptions(b)
	})
}

// FuzzPlan feeds arbitrary command lines and config files to New and
// Instrument: they never panic, and a narrowed plan always says why.
func FuzzPlan(f *testing.F) {
	f.Add("go test -run X ./...", "GOFLAGS=-short", "[pytest]\naddopts = -k x\n", `{"scripts":{"test":"jest"}}`)
	f.Add("pytest -o addopts= -c pytest.ini tests", "PYTEST_ADDOPTS=-m 'a b'", "[pytest]\n", `{}`)
	f.Add("npm test -- -t x", "", "", `{"scripts":{"test":"vitest run && jest"}}`)
	f.Add("cargo +nightly test x -- --skip y", "RUSTC_BOOTSTRAP=1", "", "")
	f.Fuzz(func(t *testing.T, cmd, env, ini, pkg string) {
		fsys := fstest.MapFS{
			"pytest.ini":   {Data: []byte(ini)},
			"package.json": {Data: []byte(pkg)},
		}
		p, ok := New(splitShellWords(cmd), strings.Split(env, "\n"), Project{FS: fsys})
		if !ok {
			return
		}
		if p.Narrowed != (len(p.NarrowedBy) > 0) {
			t.Fatalf("Narrowed %v with causes %q", p.Narrowed, p.NarrowedBy)
		}
		if in, err := p.Instrument("/tmp/r"); err == nil && len(in.Argv) == 0 {
			t.Fatalf("empty instrumented argv")
		}
	})
}
