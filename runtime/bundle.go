package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/workflow"
)

// DefaultMaxDepth bounds how deep sub-workflows nest when Options.MaxDepth
// is zero: a run may be this many invokes and forks deep (the agent
// runner's default too).
const DefaultMaxDepth = 3

// A run whose workflow invokes sub-workflows or forks keeps, as its
// snapshot, a bundle: the workflow and every workflow its invokes reach,
// as their files read when the run started, plus the nesting bound. The
// bundle is what the run's snapshot digest covers, so the whole invoke
// closure is part of the run's workflow hash, and a child file edited
// later changes nothing for the run (docs/runtime.md). A workflow without
// invokes or forks is snapshotted as its own bytes, as before.
type bundle struct {
	// Version is bundleVersion; its key marks a snapshot as a bundle.
	Version int `json:"statewright_bundle"`
	// Root is the key of the workflow the run started.
	Root string `json:"root"`
	// MaxDepth bounds the stack of sub-workflows and forks.
	MaxDepth int `json:"max_depth"`
	// Workflows maps a key (the workflow's canonical source:
	// "template:NAME" or an absolute path) to the workflow.
	Workflows map[string]*bundleEntry `json:"workflows"`
}

// bundleEntry is one workflow of a bundle.
type bundleEntry struct {
	// Text is the workflow file's bytes.
	Text string `json:"text"`
	// Invokes maps each invoke name the workflow uses to the key of the
	// workflow it resolved to.
	Invokes map[string]string `json:"invokes,omitempty"`
}

const bundleVersion = 1

// parseBundle reads a run snapshot: a bundle, or (ok false) a single
// workflow's bytes.
func parseBundle(snap []byte) (b *bundle, ok bool, err error) {
	t := bytes.TrimLeft(snap, " \t\r\n")
	if len(t) == 0 || t[0] != '{' || !bytes.Contains(snap, []byte(`"statewright_bundle"`)) {
		return nil, false, nil
	}
	var probe struct {
		Version *int `json:"statewright_bundle"`
	}
	if json.Unmarshal(snap, &probe) != nil || probe.Version == nil {
		return nil, false, nil // a workflow file (JSON that is no bundle, or YAML)
	}
	b = &bundle{}
	if err := json.Unmarshal(snap, b); err != nil {
		return nil, true, fmt.Errorf("%w: decode the run's workflow bundle: %w", ErrWorkflow, err)
	}
	if b.Version != bundleVersion {
		return nil, true, fmt.Errorf("%w: workflow bundle version %d is not supported (this binary reads %d)", ErrWorkflow, b.Version, bundleVersion)
	}
	if b.Workflows[b.Root] == nil {
		return nil, true, fmt.Errorf("%w: the run's workflow bundle has no root workflow", ErrWorkflow)
	}
	return b, true, nil
}

// sources lists the bundle's file sources (not templates), sorted: the
// law protects them all.
func (b *bundle) sources() []string {
	var out []string
	for k := range b.Workflows {
		if !strings.HasPrefix(k, templatePrefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// templatePrefix starts the canonical source of a bundled template.
const templatePrefix = "template:"

// needsBundle reports whether def invokes sub-workflows or forks.
func needsBundle(def *workflow.Definition) bool {
	for _, st := range def.States {
		for _, t := range st.On {
			if t != nil && (t.Kind == workflow.TransitionInvoke && t.Invoke != nil || t.Kind == workflow.TransitionFork && t.Fork != nil) {
				return true
			}
		}
	}
	return false
}

// invokeNames lists the workflow names def's invoke transitions name, sorted.
func invokeNames(def *workflow.Definition) []string {
	var out []string
	for _, st := range def.States {
		for _, t := range st.On {
			if t != nil && t.Kind == workflow.TransitionInvoke && t.Invoke != nil && !slices.Contains(out, t.Invoke.Machine) {
				out = append(out, t.Invoke.Machine)
			}
		}
	}
	slices.Sort(out)
	return out
}

// SubWorkflowName returns what a WorkflowSource loads for the workflow an
// invoke in the workflow from parent (its canonical source) names, by the
// registry rules of statewright's gateway: a bare name (no path separator,
// no extension) is a bundled template, or else NAME.json, NAME.yaml or
// NAME.yml next to the parent file; a relative path is read from the
// parent's directory. A bundled workflow can invoke bundled ones only.
func SubWorkflowName(parent, name string) (string, error) {
	if strings.TrimSpace(name) == "" {
		return "", errors.New("an invoke names no workflow")
	}
	bare := !strings.ContainsAny(name, `/\`) && filepath.Ext(name) == ""
	if bare && workflow.IsTemplate(name) {
		return name, nil
	}
	if parent == "" || strings.HasPrefix(parent, templatePrefix) {
		return "", fmt.Errorf("no bundled workflow named %q (a bundled workflow invokes bundled ones only; bundled: %s)",
			name, strings.Join(workflow.TemplateNames(), ", "))
	}
	if filepath.IsAbs(name) {
		return "", fmt.Errorf("invoke %q: name a sub-workflow by name or by a path relative to %s", name, parent)
	}
	dir := filepath.Dir(parent)
	if !bare {
		return filepath.Join(dir, name), nil
	}
	for _, ext := range []string{".json", ".yaml", ".yml"} {
		p := filepath.Join(dir, name+ext)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("invoke %q: %w", name, err)
		}
	}
	return "", fmt.Errorf("no bundled workflow named %q and no %s.json, %s.yaml or %s.yml next to %s",
		name, name, name, name, parent)
}

// buildBundle resolves the invoke closure of the workflow (src, from
// source, parsed as root) through ws and returns the run's snapshot: root's
// bytes when it neither invokes nor forks, else a bundle. agent reports
// that an agent starts the run: every sub-workflow must then be one the
// source lets agents start, like the root. Every workflow must validate.
func (s *Service) buildBundle(root *workflow.Definition, src []byte, source string, agent bool) ([]byte, error) {
	if !needsBundle(root) {
		return src, nil
	}
	maxDepth := s.opts.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	b := &bundle{Version: bundleVersion, Root: source, MaxDepth: maxDepth, Workflows: map[string]*bundleEntry{}}
	type item struct {
		key string
		def *workflow.Definition
	}
	b.Workflows[source] = &bundleEntry{Text: string(src)}
	queue := []item{{source, root}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		for _, name := range invokeNames(it.def) {
			load, err := SubWorkflowName(it.key, name)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrWorkflow, it.key, err)
			}
			if agent && !s.opts.Workflows.AgentMayStart(load) {
				return nil, fmt.Errorf("%w: %s invokes %s, which the project does not let agents start (bundled templates and .statewright/workflows/ only)", ErrNotAllowed, it.key, load)
			}
			csrc, key, err := s.opts.Workflows.Load(load)
			if err != nil {
				return nil, fmt.Errorf("%w: %s invokes %q: %w", ErrWorkflow, it.key, name, err)
			}
			e := b.Workflows[it.key]
			if e.Invokes == nil {
				e.Invokes = map[string]string{}
			}
			e.Invokes[name] = key
			if b.Workflows[key] != nil {
				continue
			}
			c, err := s.compile(csrc, key, nil)
			if err != nil {
				return nil, fmt.Errorf("sub-workflow %q of %s: %w", name, it.key, err)
			}
			b.Workflows[key] = &bundleEntry{Text: string(csrc)}
			queue = append(queue, item{key, c.Def})
		}
	}
	out, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encode the workflow bundle: %w", err)
	}
	return out, nil
}

// Diagnostic codes of CheckSubWorkflows.
const (
	// CodeUnknownSubWorkflow: an invoke names no bundled workflow and no
	// file next to its parent.
	CodeUnknownSubWorkflow = "unknown-sub-workflow"
	// CodeInvalidSubWorkflow: an invoked workflow does not parse or validate.
	CodeInvalidSubWorkflow = "invalid-sub-workflow"
)

// CheckSubWorkflows resolves the invoke closure of def (parsed from
// def.Source) as Start would, and reports at each invoke a name that
// resolves to no workflow and a sub-workflow that does not parse or
// validate ('workflows validate' prints them next to def's own findings).
func CheckSubWorkflows(def *workflow.Definition) workflow.Diagnostics {
	var out workflow.Diagnostics
	ws := DefaultWorkflows("")
	seen := map[string]bool{def.Source: true}
	type item struct {
		source string
		def    *workflow.Definition
	}
	queue := []item{{def.Source, def}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		for _, sn := range slices.Sorted(maps.Keys(it.def.States)) {
			for _, ev := range slices.Sorted(maps.Keys(it.def.States[sn].On)) {
				t := it.def.States[sn].On[ev]
				if t == nil || t.Kind != workflow.TransitionInvoke || t.Invoke == nil {
					continue
				}
				diag := func(code, format string, args ...any) {
					d := workflow.Diagnostic{Severity: workflow.SeverityError, Code: code, Source: it.source, Pos: t.Invoke.Pos,
						Message: fmt.Sprintf("state '%s' event '%s' invokes '%s': ", sn, ev, t.Invoke.Machine) + fmt.Sprintf(format, args...)}
					if !d.Pos.IsValid() {
						d.Pos = t.Pos
					}
					out = append(out, d)
				}
				load, err := SubWorkflowName(it.source, t.Invoke.Machine)
				if err != nil {
					diag(CodeUnknownSubWorkflow, "%v", err)
					continue
				}
				src, key, err := ws.Load(load)
				if err != nil {
					diag(CodeUnknownSubWorkflow, "%v", err)
					continue
				}
				if seen[key] {
					continue
				}
				seen[key] = true
				child, diags, err := workflow.Parse(src, workflow.ParseOptions{Source: key})
				if err == nil {
					diags = append(diags, workflow.Validate(child)...)
				}
				if err != nil || diags.HasErrors() {
					why := firstError(diags)
					if err != nil && len(diags) == 0 {
						why = err.Error()
					}
					diag(CodeInvalidSubWorkflow, "%s does not validate: %s", key, why)
					continue
				}
				queue = append(queue, item{key, child})
			}
		}
	}
	return out
}
