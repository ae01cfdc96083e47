package workflow

import (
	"bytes"
	_ "embed"
)

//go:embed schema/workflow.schema.json
var schemaJSON []byte

// SchemaURL is the $id of the workflow JSON Schema.
const SchemaURL = "https://github.com/statewright-go/statewright/workflow/schema/workflow.schema.json"

// JSONSchema returns the JSON Schema (draft 2020-12) of workflow files. It
// accepts exactly the JSON files Parse accepts in non-strict mode, except
// for what JSON Schema cannot see: duplicate keys and numbers too large for
// a float64 are parse errors but pass the schema. Unknown keys pass both
// (Parse warns about them).
func JSONSchema() []byte { return bytes.Clone(schemaJSON) }
