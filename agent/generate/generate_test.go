package generate

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		wantErr   string // "" for valid
	}{
		{"valid in a fence", "```json\n{\"id\":\"x\",\"initial\":\"a\",\"states\":{\"a\":{\"on\":{\"GO\":\"done\",\"FAIL\":\"failed\"}},\"done\":{\"type\":\"final\"},\"failed\":{\"type\":\"final\"}}}\n```", ""},
		{"no json", "I would plan first.", "no JSON object"},
		{"no failed state", `{"id":"t","initial":"a","states":{"a":{"on":{"GO":"done"}},"done":{"type":"final"}}}`, `named "failed"`},
		{"dead end", `{"id":"t","initial":"a","states":{"a":{"on":{"GO":"b","FAIL":"failed"}},"b":{},"failed":{"type":"final"}}}`, `"b" is not final and has no events`},
		{"bad initial", `{"id":"t","initial":"zz","states":{"failed":{"type":"final"}}}`, "initial state 'zz'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, _, _ := Check(tc.raw)
			joined := strings.Join(errs, "\n")
			if tc.wantErr == "" && len(errs) > 0 || tc.wantErr != "" && !strings.Contains(joined, tc.wantErr) {
				t.Fatalf("errors %q, want %q", joined, tc.wantErr)
			}
		})
	}
}

func FuzzCheck(f *testing.F) {
	f.Add(`{"id":"t","initial":"a","states":{"a":{"on":{"GO":"done"}},"done":{"type":"final"}}}`)
	f.Add("```json\n{}\n```")
	f.Fuzz(func(t *testing.T, raw string) {
		_, errs, _, def := Check(raw)
		if len(errs) == 0 && def == nil {
			t.Fatal("valid without a definition")
		}
	})
}
