package cmdutil

import "testing"

func TestSessionKey(t *testing.T) {
	tests := []struct {
		harness, id, want string
		wantErr           bool
	}{
		{"claude-code", "0b5c2e9a", "claude-code:0b5c2e9a", false},
		{"codex", "abc", "codex:abc", false},
		{"claude-code", "codex:abc", "codex:abc", false},         // a full key is taken as is
		{"claude-code", "demo:1796", "demo:1796", false},         // the demo's keys, as it prints them
		{"claude-code", "other:1", "claude-code:other:1", false}, // an unknown prefix is part of the id
		{"claude-code", "", "", true},
		{"nonesuch", "abc", "", true},
	}
	for _, tt := range tests {
		got, err := SessionKey(tt.harness, tt.id)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("sessionKey(%q, %q) = %q, %v; want %q (error %v)", tt.harness, tt.id, got, err, tt.want, tt.wantErr)
		}
	}
}
