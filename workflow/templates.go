package workflow

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// templateFS holds the bundled workflow templates, one JSON file per template.
//
//go:embed templates/*.json
var templateFS embed.FS

// templateDir is the directory of templateFS that holds the templates.
const templateDir = "templates"

// TemplateNotFoundError is returned when no bundled template has the
// requested name. It lists the names that do exist.
type TemplateNotFoundError struct {
	// Name is the name that was asked for.
	Name string
	// Available lists the bundled template names, sorted.
	Available []string
}

// Error names the missing template and the available ones.
func (e *TemplateNotFoundError) Error() string {
	return fmt.Sprintf("no bundled workflow template %q (available: %s)", e.Name, strings.Join(e.Available, ", "))
}

// TemplateNames returns the names of the bundled workflow templates, sorted.
func TemplateNames() []string {
	entries, err := fs.ReadDir(templateFS, templateDir)
	if err != nil {
		// The directory is embedded at build time; it cannot be missing.
		panic(fmt.Sprintf("workflow: read embedded templates: %v", err))
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok && !e.IsDir() {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// IsTemplate reports whether name is a bundled template's name.
func IsTemplate(name string) bool {
	names := TemplateNames()
	i := sort.SearchStrings(names, name)
	return i < len(names) && names[i] == name
}

// TemplateSource returns the JSON source of the bundled template name. An
// unknown name yields a *TemplateNotFoundError.
func TemplateSource(name string) ([]byte, error) {
	if !IsTemplate(name) {
		return nil, &TemplateNotFoundError{Name: name, Available: TemplateNames()}
	}
	data, err := templateFS.ReadFile(path.Join(templateDir, name+".json"))
	if err != nil {
		return nil, fmt.Errorf("read template %q: %w", name, err)
	}
	return data, nil
}

// TemplateSourceName is the Source a template's definition and diagnostics
// carry: "template:NAME".
func TemplateSourceName(name string) string { return "template:" + name }

// LoadTemplate parses the bundled template name. Its diagnostics name the
// source "template:NAME". An unknown name yields a *TemplateNotFoundError;
// a template that does not parse yields the *ParseError from Parse.
func LoadTemplate(name string) (*Definition, error) {
	data, err := TemplateSource(name)
	if err != nil {
		return nil, err
	}
	def, _, err := Parse(data, ParseOptions{Source: TemplateSourceName(name)})
	if err != nil {
		return nil, fmt.Errorf("parse template %q: %w", name, err)
	}
	if def == nil {
		return nil, fmt.Errorf("parse template %q: no definition", name)
	}
	return def, nil
}
