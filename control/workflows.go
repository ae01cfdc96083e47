package control

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/workflow"
)

// WorkflowEntry is one workflow the listing reports.
type WorkflowEntry struct {
	// Name is what Start takes.
	Name string `json:"name"`
	// Source is "template" or "project".
	Source string `json:"source"`
	// Path is the project file (project workflows only).
	Path string `json:"path,omitempty"`
	// AgentMayStart reports whether the agent may start it.
	AgentMayStart bool `json:"agent_may_start"`
}

// projectWorkflowDir is where project workflows live, below ProjectDir.
var projectWorkflowDir = filepath.Join(".statewright", "workflows")

// workflowExts are the extensions of project workflow files, in lookup order.
var workflowExts = []string{".json", ".yaml", ".yml"}

// Workflows lists bundled templates, then the project's workflows (bare
// names, sorted; a project file named like a template is shadowed by it).
func (c *Control) Workflows() ([]WorkflowEntry, error) {
	var out []WorkflowEntry
	for _, name := range workflow.TemplateNames() {
		out = append(out, WorkflowEntry{Name: name, Source: "template", AgentMayStart: c.mayStart(name)})
	}
	if c.opts.ProjectDir == "" {
		return out, nil
	}
	dir := filepath.Join(c.opts.ProjectDir, projectWorkflowDir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return out, nil
		}
		return out, fmt.Errorf("list project workflows in %s: %w", dir, err)
	}
	seen := map[string]bool{}
	for _, e := range ents {
		ext := filepath.Ext(e.Name())
		name := strings.TrimSuffix(e.Name(), ext)
		if e.IsDir() || !slices.Contains(workflowExts, ext) || name == "" || seen[name] || workflow.IsTemplate(name) {
			continue
		}
		seen[name] = true
		path := filepath.Join(dir, e.Name())
		out = append(out, WorkflowEntry{Name: name, Source: "project", Path: path, AgentMayStart: c.mayStart(path)})
	}
	return out, nil
}

// mayStart asks the workflow source whether an agent may start name.
func (c *Control) mayStart(name string) bool {
	if c.opts.Workflows == nil {
		return true // the runtime decides at start
	}
	return c.opts.Workflows.AgentMayStart(name)
}

// ResolveWorkflow maps what the agent named to what the runtime loads: a
// template name stays; a bare name of a project workflow becomes its
// absolute path; anything else is passed through (the runtime decides
// whether the agent may start it).
func (c *Control) ResolveWorkflow(name string) string {
	if name == "" || workflow.IsTemplate(name) || c.opts.ProjectDir == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return name
	}
	dir := filepath.Join(c.opts.ProjectDir, projectWorkflowDir)
	for _, ext := range workflowExts {
		p := filepath.Join(dir, name+ext)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return name
}

// known reports whether name is a listed workflow (by name or path) or an
// existing file.
func (c *Control) known(name string) bool {
	ws, _ := c.Workflows()
	for _, w := range ws {
		if w.Name == name || (w.Path != "" && w.Path == name) {
			return true
		}
	}
	_, err := os.Stat(name)
	return err == nil
}

// startable renders the workflows an agent may start.
func (c *Control) startable() string {
	ws, _ := c.Workflows()
	names := make([]string, 0, len(ws))
	for _, w := range ws {
		if w.AgentMayStart {
			names = append(names, w.Name)
		}
	}
	return strings.Join(names, ", ")
}
