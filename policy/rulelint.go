package policy

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/statewright-go/statewright/workflow"
)

// Diagnostic codes of the permission-rule checks.
const (
	// CodeBadRule: a permission rule that does not parse (an error: the
	// workflow does not load).
	CodeBadRule = "bad-rule"
	// CodeRuleNeverMatches: a rule that can never decide anything (an
	// unknown tool, a rule shadowed by a deny or ask rule, a path that
	// self-protection or the secrets always win over, a final phase).
	CodeRuleNeverMatches = "rule-never-matches"
	// CodeBadExample: an inline example that cannot be decided (an error).
	CodeBadExample = "bad-example"
	// CodeExampleFailed: an inline example the law answers differently (an
	// error: a failing example is a failing law).
	CodeExampleFailed = "example-failed"
	// CodeBadDomain: an allowed_domains entry that is not a host.
	CodeBadDomain = "bad-domain"
)

// exampleHost is the host inline examples are decided on: a project at
// /project and a home at /home/user, so that examples read the same on
// every machine.
var exampleHost = &Host{Home: "/home/user", ConfigHome: "/home/user/.config", ProjectDir: "/project"}

// ruleSource is one rules list of the workflow or a phase.
type ruleSource struct {
	origin string
	perms  *workflow.Permissions
	final  bool
}

func ruleSources(def *workflow.Definition) []ruleSource {
	out := []ruleSource{{origin: "the workflow", perms: def.Permissions}}
	for _, sn := range sortedStates(def) {
		st := def.States[sn]
		if st == nil {
			continue
		}
		out = append(out, ruleSource{origin: "phase '" + sn + "'", perms: st.Permissions, final: st.IsFinal()})
	}
	return out
}

func sortedStates(def *workflow.Definition) []string {
	out := make([]string, 0, len(def.States))
	for n := range def.States {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LintRules reports permission rules that do not parse (errors, with
// line:column) and rules that can never match (warnings): a tool no
// harness names, a rule a deny (or, for allow, an ask) rule of the same
// phase always wins over, an allow rule for a path self-protection or the
// secret set always wins over, rules of a final phase. It also checks
// allowed_domains entries.
func LintRules(def *workflow.Definition) workflow.Diagnostics {
	if def == nil {
		return nil
	}
	var out workflow.Diagnostics
	add := func(sev workflow.Severity, code string, pos workflow.Pos, format string, args ...any) {
		out = append(out, workflow.Diagnostic{Severity: sev, Code: code, Message: fmt.Sprintf(format, args...), Pos: pos, Source: def.Source})
	}
	// Parse every rule once.
	parsed := map[*workflow.Permissions][]*permRule{}
	for _, src := range ruleSources(def) {
		p := src.perms
		if p == nil {
			continue
		}
		for _, l := range []struct {
			key   string
			v     Verdict
			items []string
		}{{"deny", Deny, p.Deny}, {"ask", Ask, p.Ask}, {"allow", Allow, p.Allow}} {
			for i, text := range l.items {
				pos := p.FieldPos(fmt.Sprintf("%s[%d]", l.key, i))
				r, err := parseRule(text, l.v, src.origin)
				if err != nil {
					add(workflow.SeverityError, CodeBadRule, pos, "%s: permissions.%s[%d]: %v", src.origin, l.key, i, err)
					continue
				}
				r.pos = pos
				parsed[p] = append(parsed[p], r)
				if src.final {
					add(workflow.SeverityWarning, CodeRuleNeverMatches, pos, "%s is a final phase, where every tool is denied: the %s rule %s never matches", src.origin, l.key, text)
					continue
				}
				if r.target == rtTool && !KnownTool(strings.TrimSuffix(strings.SplitN(text, "(", 2)[0], "*")) {
					msg := fmt.Sprintf("the %s rule %s of %s names a tool no harness has, so it never matches", l.key, text, src.origin)
					if sg := SuggestTool(text); sg != "" {
						msg += fmt.Sprintf(" (did you mean %q?)", sg)
					}
					add(workflow.SeverityWarning, CodeRuleNeverMatches, pos, "%s", msg)
				}
				if r.verdict == Allow {
					if why := lawWins(r); why != "" {
						add(workflow.SeverityWarning, CodeRuleNeverMatches, pos, "the allow rule %s of %s never takes effect: %s", text, src.origin, why)
					}
				}
			}
		}
	}
	// Shadowing, phase by phase: the workflow's rules and the phase's own.
	wf := parsed[def.Permissions]
	seen := map[string]bool{}
	for _, sn := range sortedStates(def) {
		st := def.States[sn]
		if st == nil || st.IsFinal() {
			continue
		}
		all := append(append([]*permRule(nil), wf...), parsed[st.Permissions]...)
		for _, r := range all {
			if r.verdict == Deny {
				continue
			}
			for _, w := range all {
				if w == r || !(w.verdict == Deny || w.verdict == Ask && r.verdict == Allow) {
					continue
				}
				if covers(w, r) {
					key := r.origin + "\x00" + r.text + "\x00" + w.text
					if !seen[key] {
						seen[key] = true
						add(workflow.SeverityWarning, CodeRuleNeverMatches, r.pos, "the %s rule %s of %s never matches in phase '%s': %s wins over it", r.verdict.ruleWord(), r.text, r.origin, sn, w.describe())
					}
					break
				}
			}
		}
	}
	// Domains.
	check := func(list []string, pos func(int) workflow.Pos, where string) {
		for i, d := range list {
			if err := checkDomain(strings.ToLower(strings.TrimSpace(d))); err != nil {
				add(workflow.SeverityError, CodeBadDomain, pos(i), "%s allowed_domains entry %q: %v", where, d, err)
			}
		}
	}
	check(def.AllowedDomains, func(i int) workflow.Pos { return def.FieldPos(fmt.Sprintf("allowed_domains[%d]", i)) }, "the workflow's")
	for _, sn := range sortedStates(def) {
		if st := def.States[sn]; st != nil {
			check(st.AllowedDomains, func(i int) workflow.Pos { return st.FieldPos(fmt.Sprintf("allowed_domains[%d]", i)) }, "phase '"+sn+"'")
		}
	}
	return out
}

// covers reports whether every call rule r matches, w matches too (an
// approximation that errs on the side of saying nothing).
func covers(w, r *permRule) bool {
	switch w.target {
	case rtTool:
		switch r.target {
		case rtTool:
			return strings.EqualFold(w.text, r.text)
		case rtBash:
			return w.tools.tools&bit(kBash) != 0
		case rtRead:
			return w.tools.tools&bit(kRead) != 0
		case rtEdit:
			return w.tools.tools&r.kinds == r.kinds && r.kinds != 0
		case rtFetch:
			return w.tools.tools&bit(kWebFetch) != 0
		}
	case rtPrefix:
		return (r.target == rtTool || r.target == rtPrefix) && strings.HasPrefix(strings.TrimSuffix(strings.SplitN(r.text, "(", 2)[0], "*"), w.prefix)
	case rtBash:
		if r.target != rtBash {
			return false
		}
		if w.bashPat == "" {
			return true
		}
		if r.bashPat == "" {
			return false
		}
		// The narrower pattern's text, its "*" taken literally.
		words := []subjWord{{r.bashPat, true}}
		return matchBash(w.bashPat, words, false)
	case rtRead, rtEdit:
		if r.target != w.target || w.path.mode != r.path.mode || w.target == rtEdit && w.kinds&r.kinds != r.kinds {
			return false
		}
		for q := r.path.pat; ; q = path.Dir(q) {
			if ok, _ := doublestar.Match(w.path.pat, q); ok {
				return true
			}
			if q == "." || q == "/" || !strings.Contains(q, "/") {
				return false
			}
		}
	case rtFetch:
		return r.target == rtFetch && (w.domain == "" || r.domain != "" && (w.domain == r.domain || hostMatches(w.domain, strings.TrimPrefix(r.domain, "*."))))
	}
	return false
}

// lawWins says why self-protection or the secret set always beats an allow
// rule ("" when it does not): reading only secrets, or editing only the law.
func lawWins(r *permRule) string {
	if r.target != rtRead && r.target != rtEdit {
		return ""
	}
	lit := literalDir(r.path.pat)
	if lit == "" {
		return ""
	}
	var abs string
	switch r.path.mode {
	case pmAbsolute:
		abs = lit
	case pmHome:
		abs = path.Join(exampleHost.Home, lit)
	case pmProject:
		abs = path.Join(exampleHost.ProjectDir, lit)
	default:
		return ""
	}
	f := HostFences(exampleHost, SecretRules{})
	if r.target == rtRead {
		s := compileFences(f.Secret, f.NotSecret)
		if what, ok := s.match(abs); ok {
			return "it names only a secret (" + what + "), and secrets are never read"
		}
		return ""
	}
	p := compileFences(f.Protected, nil)
	if what, ok := p.match(abs); ok {
		return "it names only a protected path (" + what + "), which self-protection keeps from every tool"
	}
	return ""
}

// exampleInputs turns an example's argument into the input of its tool.
func exampleInput(k kind, arg string) (map[string]any, error) {
	switch k {
	case kBash:
		return map[string]any{"command": arg}, nil
	case kRead:
		return map[string]any{"file_path": arg}, nil
	case kWrite:
		return map[string]any{"file_path": arg, "content": "example\n"}, nil
	case kEdit:
		return map[string]any{"file_path": arg, "old_string": "a", "new_string": "b"}, nil
	case kMultiEdit:
		return map[string]any{"file_path": arg, "edits": []any{map[string]any{"old_string": "a", "new_string": "b"}}}, nil
	case kNotebookEdit:
		return map[string]any{"notebook_path": arg, "new_source": "x"}, nil
	case kGrep:
		return map[string]any{"pattern": "example", "path": arg}, nil
	case kGlob:
		return map[string]any{"pattern": "*", "path": arg}, nil
	case kLS:
		return map[string]any{"path": arg}, nil
	case kWebFetch:
		return map[string]any{"url": arg, "prompt": "example"}, nil
	case kWebSearch:
		return map[string]any{"query": arg}, nil
	case kTask:
		return map[string]any{"subagent_type": arg, "prompt": "example", "description": "example"}, nil
	}
	return nil, fmt.Errorf("this tool takes no argument in an example; write {tool, input}")
}

// ExampleCase is one inline example as a case, with where it was written.
type ExampleCase struct {
	Case
	// Pos is where the example was written.
	Pos workflow.Pos
	// Text is the example as written.
	Text string
}

// ExampleCases turns a workflow's inline examples into cases: a phase's
// examples are decided in that phase; the workflow's in the phase they name,
// else in every non-final phase. Examples are decided in a project at
// /project (the working directory) with a home at /home/user. Examples
// that cannot be turned into a call are reported.
func ExampleCases(def *workflow.Definition) ([]ExampleCase, workflow.Diagnostics) {
	if def == nil {
		return nil, nil
	}
	var out []ExampleCase
	var diags workflow.Diagnostics
	bad := func(e *workflow.Example, format string, args ...any) {
		diags = append(diags, workflow.Diagnostic{Severity: workflow.SeverityError, Code: CodeBadExample,
			Message: fmt.Sprintf(format, args...), Pos: e.Pos, Source: def.Source})
	}
	var nonFinal []string
	for _, sn := range sortedStates(def) {
		if st := def.States[sn]; st != nil && !st.IsFinal() {
			nonFinal = append(nonFinal, sn)
		}
	}
	emit := func(ex *workflow.Examples, state, origin string) {
		if ex == nil {
			return
		}
		for _, l := range []struct {
			expect string
			items  []*workflow.Example
		}{{"allow", ex.Allow}, {"ask", ex.Ask}, {"deny", ex.Deny}} {
			for _, e := range l.items {
				c := Case{Expect: l.expect, Harness: e.Harness, Cwd: exampleHost.ProjectDir, ProjectDir: exampleHost.ProjectDir}
				text := e.Text
				if text != "" {
					name, arg, hasArg := strings.Cut(text, "(")
					name = strings.TrimSpace(name)
					c.Tool = name
					if hasArg {
						if !strings.HasSuffix(text, ")") {
							bad(e, "example %q of %s: a call is written Tool(argument)", text, origin)
							continue
						}
						arg = arg[:len(arg)-1]
						h, _ := ParseHarness(e.Harness)
						in, err := exampleInput(lookupTool(h, name).kind, arg)
						if err != nil {
							bad(e, "example %q of %s: %v", text, origin, err)
							continue
						}
						c.Input = in
					} else {
						c.Input = map[string]any{}
					}
				} else {
					c.Tool = e.Tool
					c.Input = e.Input
					if e.Input == nil {
						c.Input = map[string]any{}
					}
					text = e.Tool
					if e.Input != nil {
						text += fmt.Sprintf(" %v", e.Input)
					}
				}
				if _, err := ParseHarness(e.Harness); err != nil {
					bad(e, "example %q of %s: %v", text, origin, err)
					continue
				}
				states := []string{state}
				switch {
				case e.State != "" && state != "" && e.State != state:
					bad(e, "example %q of %s names state %q; it belongs to the workflow's examples", text, origin, e.State)
					continue
				case e.State != "":
					if def.States[e.State] == nil {
						bad(e, "example %q of %s names state %q, which the workflow does not define", text, origin, e.State)
						continue
					}
					states = []string{e.State}
				case state == "":
					states = nonFinal
				}
				for _, sn := range states {
					cc := c
					cc.State = sn
					cc.Name = fmt.Sprintf("%s example %s in phase '%s'", l.expect, text, sn)
					out = append(out, ExampleCase{Case: cc, Pos: e.Pos, Text: text})
				}
			}
		}
	}
	emit(def.Examples, "", "the workflow")
	for _, sn := range sortedStates(def) {
		if st := def.States[sn]; st != nil {
			emit(st.Examples, sn, "phase '"+sn+"'")
		}
	}
	return out, diags
}

// CheckExamples decides every inline example of the workflow (on the
// examples' host, ExampleCases) and reports each one the law answers
// differently as an error at the example's line:column. A workflow whose
// rules do not compile gets the compile error instead.
func CheckExamples(def *workflow.Definition) workflow.Diagnostics {
	cases, diags := ExampleCases(def)
	if len(cases) == 0 {
		return diags
	}
	law, err := Compile(def, Options{Host: exampleHost})
	if err != nil {
		return append(diags, workflow.Diagnostic{Severity: workflow.SeverityError, Code: CodeBadExample,
			Message: fmt.Sprintf("the examples cannot be checked: %v", err), Source: def.Source})
	}
	for _, ec := range cases {
		d, mismatch := law.RunCase(&ec.Case)
		if len(mismatch) == 0 {
			continue
		}
		diags = append(diags, workflow.Diagnostic{Severity: workflow.SeverityError, Code: CodeExampleFailed, Pos: ec.Pos, Source: def.Source,
			Message: fmt.Sprintf("example %s expects %s in phase '%s', but the law answers %s (rule %s): %s", ec.Text, ec.Expect, ec.State, d.Verdict, d.Rule, d.Reason)})
	}
	return diags
}

// ExampleLaw compiles def on the host inline examples are decided on, for
// `statewright test`.
func ExampleLaw(def *workflow.Definition) (*Law, error) {
	return Compile(def, Options{Host: exampleHost})
}
