package runtime

import (
	"context"
	"errors"
	"fmt"

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
