package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/statewright-go/statewright/"

// tiers puts every package of the module in a tier, by path prefix (the
// longest prefix wins). A package may import its own tier and the tiers
// below it, never one above: cmd → internal/cli → serve → harness, MCP,
// agent and human surfaces → control → runtime → policy → engine →
// workflow, shell, store and the other foundations.
var tiers = []struct {
	tier     int
	prefixes []string
}{
	{0, []string{"workflow", "shell", "sandbox", "store", "plugins", "testreport", "gateway/tokens",
		"agent/model", "agent/events", "internal/fakemodel", "internal/person", "internal/archtest", "internal/buildinfo", "internal/cputime",
		"internal/hookwire", "internal/rawfile", "internal/mcpio"}},
	{1, []string{"engine", "internal/wfgraph", "internal/eventtext"}},
	{2, []string{"policy"}},
	{3, []string{"runtime"}},
	{4, []string{"control", "agent/tools", "agent/generate"}},
	{5, []string{"harness", "mcpserver", "gateway", "agent", "tui", "dashboard", "internal/decider"}},
	{6, []string{"serve", "internal/telemetry"}},
	{7, []string{"internal/cli"}},
	{8, []string{"cmd", "bench", "e2e", "internal/outcome", "internal/release"}},
}

// tierOf returns pkg's tier (-1 when no prefix claims it).
func tierOf(pkg string) int {
	best, tier := -1, -1
	for _, t := range tiers {
		for _, p := range t.prefixes {
			if (pkg == p || strings.HasPrefix(pkg, p+"/")) && len(p) > best {
				best, tier = len(p), t.tier
			}
		}
	}
	return tier
}

// harnessShared are the harness packages every adapter may import; an
// adapter (harness/claudecode, ...) imports no other adapter. The list of
// adapters and the matrix test import them all.
var harnessShared = map[string]bool{"harness": true, "harness/install": true, "harness/internal/wire": true, "harness/hook": true}

func TestNoImportRunsBackUp(t *testing.T) {
	cmd := exec.Command("go", "list", "-e", "-tags", "e2e", "-json=ImportPath,Imports,TestImports,XTestImports", module+"...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		from := strings.TrimPrefix(p.ImportPath, module)
		ft := tierOf(from)
		if ft < 0 {
			t.Errorf("package %s has no tier: add it to the tiers in this test and to docs/architecture.md", from)
			continue
		}
		imports := p.Imports
		if ft < 8 {
			// Tests may use anything at or below their package's tier too.
			imports = append(append(imports, p.TestImports...), p.XTestImports...)
		}
		for _, imp := range imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			to := strings.TrimPrefix(imp, module)
			if to == from {
				continue
			}
			checked++
			if tt := tierOf(to); tt > ft {
				t.Errorf("%s (tier %d) imports %s (tier %d): an import runs back up", from, ft, to, tt)
			}
			if adapter(from) && adapter(to) {
				t.Errorf("%s imports %s: no harness adapter imports another (share code through harness/internal/wire)", from, to)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d imports checked: go list found too little", checked)
	}
}

// adapter reports whether pkg is (in) one harness's adapter package.
func adapter(pkg string) bool {
	if !strings.HasPrefix(pkg, "harness/") || harnessShared[pkg] || pkg == "harness/adapters" || pkg == "harness/matrix" {
		return false
	}
	return !strings.HasPrefix(pkg, "harness/internal/")
}

func TestTierOf(t *testing.T) {
	for pkg, want := range map[string]int{"store/sqlite": 0, "harness/claudecode": 5, "internal/cli/cmdutil": 7, "internal/clinic": -1, "cmd/statewright": 8, "runtime": 3} {
		if got := tierOf(pkg); got != want {
			t.Errorf("tierOf(%s) = %d, want %d", pkg, got, want)
		}
	}
}
