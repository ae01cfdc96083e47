package workflow

// ParseOptions controls Parse.
type ParseOptions struct {
	// Source is the file name used in diagnostics.
	Source string
	// Strict turns unknown-key warnings into errors.
	Strict bool
}

// Parse decodes a workflow from JSON or YAML (detected from content). It
// accepts statewright's wrapper form {"definition": {...}, ...} too.
// Warnings (unknown keys, dropped fields) are returned alongside a usable
// definition; a definition that cannot be decoded yields a *ParseError whose
// diagnostics carry line:column positions.
//
// Parse does not run structural validation; see Validate.
func Parse(data []byte, opts ParseOptions) (*Definition, Diagnostics, error) {
	panic("workflow.Parse: not implemented yet")
}
