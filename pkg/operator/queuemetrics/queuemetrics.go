// Package queuemetrics is the owner of the queues' metrics: every
// Interval it publishes each queue's length and how long its head task
// has waited.
package queuemetrics

import (
	"context"
	"time"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/queue"
)

// Interval is how often queue lengths are published.
const Interval = 5 * time.Second

// Recorder keeps the queue metrics; *metrics.Recorder is the real one.
type Recorder interface {
	QueueLength(queue string, n int)
	QueueWait(queue string, d time.Duration)
}

// Publisher publishes the metrics of the queues its snapshots func
// returns.
type Publisher[T any] struct {
	snapshots func() []queue.Snapshot[T]
	rec       Recorder
	clock     clock.Clock
}

// New returns the Publisher of the queues snapshots returns (a
// queue.Set's Snapshots) into rec; with a nil rec it publishes nothing.
func New[T any](snapshots func() []queue.Snapshot[T], rec Recorder, clk clock.Clock) *Publisher[T] {
	return &Publisher[T]{snapshots: snapshots, rec: rec, clock: clk}
}

// Run publishes at once and then every Interval until ctx ends.
func (p *Publisher[T]) Run(ctx context.Context) error {
	if p.rec == nil {
		return nil
	}
	tick := p.clock.NewTimer(Interval)
	defer tick.Stop()
	for {
		p.publish()
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C():
			tick.Reset(Interval)
		}
	}
}

func (p *Publisher[T]) publish() {
	for _, s := range p.snapshots() {
		p.rec.QueueLength(s.Name, len(s.Items))
		if len(s.Items) > 0 {
			p.rec.QueueWait(s.Name, p.clock.Since(s.Items[0].Queued))
		}
	}
}
