package telemetry_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/telemetry"
)

// TestLoggerJSONRedacted: serve's logger writes one JSON object per record
// when its writer is not a terminal, and keeps inputs and paths out.
func TestLoggerJSONRedacted(t *testing.T) {
	var buf bytes.Buffer
	log := telemetry.NewLogger(telemetry.LogOptions{W: &buf})
	log.Info("decided /home/me/proj/.env", "tool_input", `{"file_path":"/home/me/.ssh/id_rsa"}`, "rule", "self-protect",
		"err", errors.New(`open C:\Users\me\secret.txt: denied`), slog.Group("call", "cwd", "/home/me/proj", "tool", "Read"))
	log.Debug("not at the default level")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d records, want 1:\n%s", len(lines), buf.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, lines[0])
	}
	if rec["rule"] != "self-protect" || rec["level"] != "INFO" || rec["tool_input"] != "[redacted]" {
		t.Errorf("record %v", rec)
	}
	for _, leak := range []string{"/home/me", `C:\\Users`, "id_rsa", "secret.txt"} {
		if strings.Contains(lines[0], leak) {
			t.Errorf("the record carries %q: %s", leak, lines[0])
		}
	}
	if call, _ := rec["call"].(map[string]any); call["tool"] != "Read" || call["cwd"] != "[redacted]" {
		t.Errorf("group %v", rec["call"])
	}
}
