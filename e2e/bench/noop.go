package bench

import (
	"context"
	"fmt"
	"time"
)

// noopPoll is how often a no-op converge is polled for.
const noopPoll = 100 * time.Millisecond

// Noop is a converge in which no release changes: every module runs, its
// hooks run, and Helm finds its release up to date.
type Noop struct {
	Wall time.Duration
	API  APIRequests
}

// noopConverge changes the ConfigMap's global section, which starts a
// converge of every module without changing any rendered object, and
// waits for the operator to count the converge done.
func (s *session) noopConverge(ctx context.Context, token string) (Noop, error) {
	before, err := s.metrics.scrape(ctx)
	if err != nil {
		return Noop{}, err
	}
	start := time.Now()
	if err := s.setConfigKey(ctx, "global", "benchNoop: "+token+"\n"); err != nil {
		return Noop{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, convergeTimeout)
	defer cancel()
	tick := time.NewTicker(noopPoll)
	defer tick.Stop()
	for {
		after, err := s.metrics.scrape(wctx)
		if err != nil {
			return Noop{}, fmt.Errorf("no-op converge: %w", err)
		}
		if d := after.Sub(before); d.Converges > 0 {
			return Noop{Wall: time.Since(start), API: d}, nil
		}
		select {
		case <-wctx.Done():
			return Noop{}, fmt.Errorf("no-op converge: %w", wctx.Err())
		case <-tick.C:
		}
	}
}
