package bench

import (
	"context"
	"sync"
	"time"
)

// memInterval is how often the operator's resident memory is sampled.
const memInterval = 100 * time.Millisecond

// MemPeak is the sample with the most anonymous memory, which is what the
// operator's own allocations cost; VmHWM also counts the file-backed pages
// of the binary, which the kernel may drop and share.
type MemPeak struct {
	// Anon is the peak RssAnon; File the RssFile of the same sample. In
	// bytes.
	Anon, File int64
	// Samples is how many samples were taken; zero leaves the rest zero.
	Samples int
}

// add takes one sample. The peak moves to it when it holds more anonymous
// memory; a tie keeps the earlier sample.
func (p *MemPeak) add(s memSample) {
	p.Samples++
	if p.Samples == 1 || s.Anon > p.Anon {
		p.Anon, p.File = s.Anon, s.File
	}
}

// memSampler samples a process's resident memory every interval, from
// its start until Stop or until the process is gone.
type memSampler struct {
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu   sync.Mutex
	peak MemPeak
}

// startMemSampler takes the first sample of pid at once, then one every
// interval; the caller owns the sampler and must Stop it.
func startMemSampler(ctx context.Context, pid int, interval time.Duration) *memSampler {
	ctx, cancel := context.WithCancel(ctx)
	m := &memSampler{stop: cancel}
	m.wg.Go(func() { m.run(ctx, pid, interval) })
	return m
}

func (m *memSampler) run(ctx context.Context, pid int, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s, err := readMem(pid)
		if err != nil {
			return // the process exited; the samples so far stand
		}
		m.mu.Lock()
		m.peak.add(s)
		m.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Peak returns the peak so far.
func (m *memSampler) Peak() MemPeak {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak
}

// Stop ends the sampling and returns the peak. It may be called again.
func (m *memSampler) Stop() MemPeak {
	m.stop()
	m.wg.Wait()
	return m.Peak()
}
