package runtime

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProjectSecrets: the walk finds the project's secret files at any
// depth, and leaves out dependency trees and what is not secret.
func TestProjectSecrets(t *testing.T) {
	root := t.TempDir()
	files := []string{".env", "svc/api/.env.local", ".env.example", "node_modules/x/.env", "a/b/c/d/e/.env", "services/api/config/prod/k8s/secrets/.env.prod", "main.go", ".git/.env"}
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	secret := func(p string) bool {
		b := filepath.Base(p)
		return strings.HasPrefix(b, ".env") && !strings.HasSuffix(b, ".example")
	}
	got := projectSecrets(root, secret)
	for _, f := range []string{".env", "svc/api/.env.local", "a/b/c/d/e/.env", "services/api/config/prod/k8s/secrets/.env.prod"} {
		if !slices.Contains(got, filepath.Join(root, f)) {
			t.Errorf("%s not found: %q", f, got)
		}
	}
	for _, f := range []string{".env.example", "node_modules/x/.env", "main.go", ".git/.env"} {
		if slices.Contains(got, filepath.Join(root, f)) {
			t.Errorf("%s listed: %q", f, got)
		}
	}
	if projectSecrets("", secret) != nil {
		t.Error("no project: secrets listed")
	}
}
