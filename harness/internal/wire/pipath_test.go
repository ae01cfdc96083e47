package wire

import (
	"encoding/json"
	"testing"

	"github.com/statewright-go/statewright/policy"
)

// TestPiPathAsPiReads: Pi's file tools read their "path" after dropping a
// leading "@" (its file-mention syntax) and turning Unicode spaces into
// spaces (path-utils.js, expandPath), so {"path":"@~/.ssh/id_rsa"} reads
// ~/.ssh/id_rsa and {"path":"@.env"} the project's .env, where the law saw
// a relative path "@~/.ssh/id_rsa" under the project. The call the
// runtime decides carries the path as Pi reads it; other harnesses' and
// other keys' values are left alone.
func TestPiPathAsPiReads(t *testing.T) {
	for _, c := range []struct {
		harness  policy.Harness
		tool, in string
		want     string // the decided input's path; "" when the input is unchanged
	}{
		{policy.Pi, "read", `{"path":"@~/.ssh/id_rsa"}`, "~/.ssh/id_rsa"},
		{policy.Pi, "read", `{"path":"@/home/u/.ssh/id_rsa","offset":2}`, "/home/u/.ssh/id_rsa"},
		{policy.Pi, "write", `{"path":"@config/prod.yaml","content":"x"}`, "config/prod.yaml"},
		{policy.Pi, "edit", `{"path":"my\u00a0dir/a.go","edits":[]}`, "my dir/a.go"},
		{policy.Pi, "read", `{"path":"src/a.go"}`, ""},
		{policy.Pi, "read", `{"path":"@@x"}`, "@x"},
		{policy.Pi, "bash", `{"command":"@x"}`, ""},
		{policy.OpenCode, "read", `{"filePath":"@.env"}`, ""},
	} {
		p := &Plugin{Harness: c.harness}
		tc := p.ToolCall(&PluginInput{Tool: c.tool, Args: json.RawMessage(c.in), Session: "s"}, "/repo")
		if c.want == "" {
			if string(tc.Call.Input) != c.in {
				t.Errorf("%s %s %s: decided %s; want it unchanged", c.harness, c.tool, c.in, tc.Call.Input)
			}
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(tc.Call.Input, &m); err != nil || m["path"] != c.want {
			t.Errorf("%s %s %s: decided %s (%v); want path %q", c.harness, c.tool, c.in, tc.Call.Input, err, c.want)
		}
	}
}
