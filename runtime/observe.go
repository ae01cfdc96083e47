package runtime

import "context"

// Observer watches decisions for telemetry (metrics, traces): the one place
// they are instrumented, for every adapter, outside the pure decision core
// (docs/telemetry.md). Decision is called as Decide starts and returns the
// context the decision runs in (a span's) and a function Decide calls with
// the outcome. Implementations must not block and must not fail the
// decision; they must not keep call or its input past done.
type Observer interface {
	Decision(ctx context.Context, call *ToolCall) (context.Context, func(DecideResult, error))
}

// Decide decides one tool call (see decide), telling Options.Observer.
// Without an observer it costs nothing more than decide: the observed path
// is a function of its own, so the call does not escape here.
func (s *Service) Decide(ctx context.Context, call ToolCall) (DecideResult, error) {
	if s.opts.Observer == nil {
		return s.decide(ctx, call)
	}
	return s.decideObserved(ctx, call)
}

func (s *Service) decideObserved(ctx context.Context, call ToolCall) (DecideResult, error) {
	ctx, done := s.opts.Observer.Decision(ctx, &call)
	res, err := s.decide(ctx, call)
	done(res, err)
	return res, err
}
