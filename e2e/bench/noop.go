package bench

import (
	"context"
	"fmt"
	"time"
)

// Noop is a converge in which no release changes: every module runs, its
// hooks run, and Helm finds its release up to date.
type Noop struct {
	Wall time.Duration
	API  APIRequests
}

// noopConverge changes the ConfigMap's global section, which starts a
// converge of every module without changing any rendered object, and
// waits for the operator's log line "converge done". The request counts
// come from a scrape of /metrics before and after; polling /metrics for the
// converge's end instead would measure the polling: at N=1000 one scrape
// builds some 20 MB of samples.
func (s *session) noopConverge(ctx context.Context, token string) (Noop, error) {
	before, err := s.metrics.scrape(ctx)
	if err != nil {
		return Noop{}, err
	}
	mark := s.op.Logs.Mark()
	start := time.Now()
	if err := s.setConfigKey(ctx, "global", "benchNoop: "+token+"\n"); err != nil {
		return Noop{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, convergeTimeout)
	defer cancel()
	e, err := s.op.Logs.Wait(wctx, mark, Message(msgConvergeDone))
	if err != nil {
		return Noop{}, fmt.Errorf("no-op converge (log %s): %w", s.op.LogPath(), err)
	}
	after, err := s.metrics.scrape(ctx)
	if err != nil {
		return Noop{}, fmt.Errorf("no-op converge: %w", err)
	}
	return Noop{Wall: e.Seen.Sub(start), API: after.Sub(before)}, nil
}
