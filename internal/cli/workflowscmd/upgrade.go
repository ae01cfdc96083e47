package workflowscmd

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/testreport"
	"github.com/statewright-go/statewright/workflow"
)

// upgradeReport says what changed for a workflow written for an older
// statewright (the original, or statewright-go before strict workflows):
// strict keys, the privilege ladder's numbering, test evidence that must
// come from a whole-suite run, and the default secrets. It is empty for a
// file that needs nothing. The file is read again leniently, so that a
// file refused for unknown keys still gets the rest of its report.
func upgradeReport(nameOrPath string, diags workflow.Diagnostics) []string {
	var data []byte
	if cmdutil.LooksLikeTemplateName(nameOrPath) && workflow.IsTemplate(nameOrPath) {
		data, _ = workflow.TemplateSource(nameOrPath)
	} else {
		data, _ = os.ReadFile(nameOrPath)
	}
	def, _, err := workflow.Parse(data, workflow.ParseOptions{Source: nameOrPath, Lenient: true})
	if err != nil || def == nil {
		return nil
	}
	var out []string
	// Strict keys.
	keys := 0
	for _, d := range diags {
		if d.Code == workflow.CodeUnknownKey || d.Code == workflow.CodeDroppedField {
			keys++
		}
	}
	switch {
	case keys > 0 && def.Compat == workflow.CompatStatewright:
		out = append(out, fmt.Sprintf("strict keys: %d unknown keys or dropped fields are warnings only because the file says \"compat\": \"statewright\"; without it, loading refuses them", keys))
	case keys > 0:
		out = append(out, fmt.Sprintf("strict keys: %d unknown keys or dropped fields are errors: fix them (a typo such as allowed_tool leaves a phase unrestricted), or add \"compat\": \"statewright\" to read them as warnings, as the original did", keys))
	}
	// The ladder: escalations one numbering flags and the other does not.
	seed, rust := escalations(def, ""), escalations(def, workflow.CompatStatewright)
	if def.Compat == workflow.CompatStatewright {
		if d := missing(seed, rust); len(d) > 0 {
			out = append(out, "privilege ladder: the file uses the Rust project's numbering (read 1, write 2, execute 3, external 4); on the seed ladder (read 0, write 1, execute 2, git mutate 3, external 4) these would be flagged too: "+strings.Join(d, "; "))
		}
	} else if d := missing(seed, rust); len(d) > 0 {
		out = append(out, "privilege ladder: write 1 on the seed ladder, so a write phase that leads to an external one without approval is flagged now (the Rust project's numbering let it pass): "+strings.Join(d, "; "))
	}
	// Test evidence.
	for _, name := range keysOf(def.Guards) {
		g := def.Guards[name]
		passed, whole, ran := false, false, false
		for _, c := range append([]*workflow.Guard{g}, g.All...) {
			switch {
			case c == nil:
			case c.Field == workflow.EvidenceLastTestPassed && c.Op == workflow.OpEq && c.Value == true:
				passed = true
			case c.Field == workflow.EvidenceLastTestNarrowed:
				whole = true
			case c.Field == workflow.EvidenceLastTestTestsRun:
				ran = true
			}
		}
		if passed && (!whole || !ran) {
			out = append(out, fmt.Sprintf("narrowed tests: guard '%s' accepts any passed run; add {runtime.last_test.narrowed eq false} and {runtime.last_test.tests_run gte 1} under \"all\" to require the whole suite (a run counts as passed only with a structured report, see docs/workflow-format.md)", name))
		}
	}
	for _, sn := range keysOf(def.States) {
		for _, c := range def.States[sn].AllowedCommands {
			if p, ok := testreport.New(strings.Fields(c), nil, testreport.Project{}); ok && p.Narrowed && !strings.Contains(strings.Join(p.NarrowedBy, " "), "no package pattern") {
				out = append(out, fmt.Sprintf("narrowed tests: state '%s' allowed_commands entry %q runs part of the suite (%s): its runs never satisfy a whole-suite guard", sn, c, strings.Join(p.NarrowedBy, "; ")))
			}
		}
	}
	// Secrets.
	if def.Secrets == nil {
		out = append(out, "secrets: reads of the default secret set (.env*, *.pem, ~/.ssh, ~/.aws, cloud and harness credentials) are denied in every phase; a \"secrets\" block adds paths or switches the defaults off")
	}
	return out
}

// escalations are the escalation findings of def read with the given compat.
func escalations(def *workflow.Definition, compat string) []string {
	c := *def
	c.Compat = compat
	var out []string
	for _, d := range workflow.Validate(&c) {
		if d.Code == workflow.CodeSafetyEscalation {
			msg := d.Message
			if i := strings.Index(msg, " (privilege"); i > 0 {
				msg = msg[:i] + " → " + msg[strings.Index(msg, " to '")+4:]
			}
			out = append(out, d.Pos.String()+" "+msg)
		}
	}
	sort.Strings(out)
	return out
}

// missing returns the entries of a whose state pair b lacks.
func missing(a, b []string) []string {
	var out []string
	for _, x := range a {
		found := false
		for _, y := range b {
			if strings.SplitN(x, " ", 2)[0] == strings.SplitN(y, " ", 2)[0] {
				found = true
			}
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
