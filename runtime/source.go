package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/statewright-go/statewright/workflow"
)

// DefaultWorkflows returns the default WorkflowSource: a bare name (no path
// separator, no extension) naming a bundled template loads the template
// ("template:NAME"); anything else is read as a file, relative to the
// working directory, and named by its absolute path. Agents may start
// bundled templates and files under projectDir/.statewright/workflows/
// (which self-protection keeps the agent from writing).
func DefaultWorkflows(projectDir string) WorkflowSource {
	return defaultSource{projectDir: projectDir}
}

type defaultSource struct{ projectDir string }

func isTemplateName(name string) bool {
	return name != "" && !strings.ContainsAny(name, `/\.`) && workflow.IsTemplate(name)
}

// Load implements WorkflowSource.
func (d defaultSource) Load(name string) ([]byte, string, error) {
	if isTemplateName(name) {
		src, err := workflow.TemplateSource(name)
		if err != nil {
			return nil, "", fmt.Errorf("load template %s: %w", name, err)
		}
		return src, workflow.TemplateSourceName(name), nil
	}
	if name == "" {
		return nil, "", errors.New("no workflow named")
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, "", fmt.Errorf("load workflow %s: %w", name, err)
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(name, `/\.`) {
			msg := fmt.Sprintf("no bundled workflow or file named %q", name)
			if s := workflow.Suggest(name, workflow.TemplateNames()); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return nil, "", fmt.Errorf("%s (bundled: %s)", msg, strings.Join(workflow.TemplateNames(), ", "))
		}
		return nil, "", fmt.Errorf("load workflow: %w", err)
	}
	return src, abs, nil
}

// AgentMayStart implements WorkflowSource.
func (d defaultSource) AgentMayStart(name string) bool {
	if isTemplateName(name) {
		return true
	}
	if d.projectDir == "" || name == "" {
		return false
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return false
	}
	// Resolve symlinks on both sides so a link out of the directory does
	// not pass; a file that cannot be resolved is refused.
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(d.projectDir, ".statewright", "workflows"))
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(dir, real)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel)
}
