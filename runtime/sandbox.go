package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/sandbox"
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

// SandboxProfile derives the OS profile of session's current phase, as
// an allowed call's DecideResult.Sandbox would carry it, without a
// decision: the dormant profile when the session has no live run. The
// gateway spawns a session's stdio upstream servers under it
// (docs/sandbox.md, "Per harness").
func (s *Service) SandboxProfile(ctx context.Context, session string, env policy.SandboxEnv) (*sandbox.Profile, error) {
	run, err := s.st.LiveRun(ctx, session)
	switch {
	case errors.Is(err, store.ErrNotFound):
		run = nil
	case err != nil:
		return nil, fmt.Errorf("runtime: sandbox profile %s: %w", session, err)
	}
	return s.sandboxProfile(run, nil, &env)
}

// Bounds of projectSecrets' walk: entries read, and a depth no real tree
// reaches (a loop of bind mounts would).
const (
	secretWalkEntries = 20_000
	secretWalkDepth   = 64
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
// the sandbox (python3 -c, a test) opens. The walk goes breadth first, so
// that the shallower files are found first, to any depth, and reads at
// most 20,000 entries; it skips the repository and dependency and build
// trees. A secret beyond the budget stays readable inside the sandbox
// (docs/threat-model.md). Links are listed by their own name; the sandbox
// hides what they point to.
func projectSecrets(root string, secret func(string) bool) []string {
	if root == "" {
		return nil
	}
	var out []string
	n := 0
	level := []string{root}
	for depth := 0; len(level) > 0 && depth < secretWalkDepth; depth++ {
		var next []string
		for _, dir := range level {
			ents, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range ents {
				if n++; n > secretWalkEntries {
					return out
				}
				p := filepath.Join(dir, e.Name())
				switch {
				case e.IsDir():
					if !secretWalkSkip[e.Name()] {
						next = append(next, p)
					}
				case secret(p):
					out = append(out, p)
				}
			}
		}
		level = next
	}
	return out
}
