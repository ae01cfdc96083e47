package agent

import (
	"strings"
	"testing"

	"github.com/statewright-go/statewright/agent/model"
)

func TestTruncateContext(t *testing.T) {
	big := strings.Repeat("x", 1000)
	var msgs []model.Message
	msgs = append(msgs, model.Message{Role: "system", Content: "sys"}, model.Message{Role: "user", Content: "task"})
	for range 8 {
		msgs = append(msgs, model.Message{Role: "assistant", ToolCalls: []model.ToolCall{{ID: "c", Name: "read_file", Arguments: []byte(`{}`)}}},
			model.Message{Role: "tool", Content: big})
	}
	before := contextBytes(msgs)
	cut := truncateContext(msgs, 5000)
	after := contextBytes(msgs)
	if cut == 0 || after > 5000 || after >= before {
		t.Fatalf("cut %d, %d → %d bytes", cut, before, after)
	}
	// The newest outputs are intact; the cut ones say so.
	var tools []string
	for _, m := range msgs {
		if m.Role == "tool" {
			tools = append(tools, m.Content)
		}
	}
	for i, c := range tools {
		recent := i >= len(tools)-keepRecent
		if recent && c != big || !recent && c != big && !strings.HasSuffix(c, truncMark) {
			t.Fatalf("tool output %d: %.60q", i, c)
		}
	}
	if truncateContext(msgs, 1<<20) != 0 {
		t.Fatal("cut under budget")
	}
}
