package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
)

// SandboxLesson teaches what to do about a path the OS sandbox kept from a
// command of session (docs/sandbox.md, "Lessons"): the phase, the path, and the events
// that lead to a phase where it is writable (policy.Law.SandboxLesson).
// p is absolute. A session without a run is taught from the dormant law.
func (s *Service) SandboxLesson(ctx context.Context, session, p string, env policy.SandboxEnv) (string, error) {
	run, err := s.st.LiveRun(ctx, session)
	switch {
	case errors.Is(err, store.ErrNotFound):
		law, err := s.dormantLaw()
		if err != nil {
			return "", err
		}
		return law.SandboxLesson("", p, env), nil
	case err != nil:
		return "", fmt.Errorf("runtime: sandbox lesson %s: %w", session, err)
	}
	c, err := s.compiledFor(run)
	if err != nil {
		return "", fmt.Errorf("runtime: sandbox lesson %s: %w", session, err)
	}
	return c.Law.SandboxLesson(run.State, p, env), nil
}

// Bounds of projectSecrets' walk.
const (
	secretWalkDepth   = 4
	secretWalkEntries = 20_000
)

// secretWalkSkip are trees projectSecrets does not enter: the repository
// and dependency and build trees (their .env files are packages' own).
var secretWalkSkip = map[string]bool{
	".git": true, "node_modules": true, "vendor": true, "target": true, ".venv": true, "venv": true,
	"__pycache__": true, ".tox": true, ".mypy_cache": true, ".cache": true, "dist": true, "build": true,
}

// projectSecrets lists the files of the project that secret reports (.env
// files, PEM keys, a workflow's secret paths), for the OS sandbox to hide:
// the static law denies reading them, but it cannot see what code run in
// the sandbox (python3 -c, a test) opens. The walk is bounded (depth 4,
// 20,000 entries) and skips the repository and dependency and build
// trees; a secret beyond it stays readable inside the sandbox
// (docs/threat-model.md). Links are listed by their own name; the sandbox
// hides what they point to.
func projectSecrets(root string, secret func(string) bool) []string {
	if root == "" {
		return nil
	}
	var out []string
	n := 0
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if n++; n > secretWalkEntries {
				return
			}
			p := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir():
				if depth < secretWalkDepth && !secretWalkSkip[e.Name()] {
					walk(p, depth+1)
				}
			case secret(p):
				out = append(out, p)
			}
		}
	}
	walk(root, 1)
	return out
}
