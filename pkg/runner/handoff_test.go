package runner

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/queue"
)

// processRuns is a RunFunc whose attempt of module "hung" waits in Park
// (as a hook's process does) until release is closed, then records
// "hung:after"; other modules' attempts record their name. Each records
// how many steps held a worker at once.
type processRuns struct {
	release chan struct{}
	parked  chan struct{} // closed once hung first waits in Park
	once    sync.Once
	mu      sync.Mutex
	order   []string
	active  int
	most    int
	// block, when set, holds module "slow" on its worker until closed.
	block chan struct{}
}

func newProcessRuns() *processRuns {
	return &processRuns{release: make(chan struct{}), parked: make(chan struct{})}
}

func (p *processRuns) enter(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active++
	p.most = max(p.most, p.active)
	p.order = append(p.order, name)
}

func (p *processRuns) leave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active--
}

func (p *processRuns) run(ctx context.Context, name string) (Result, error) {
	p.enter(name)
	defer p.leave()
	switch name {
	case "hung":
		p.leave() // no worker held in Park
		err := Park(ctx, func(ctx context.Context) error {
			p.once.Do(func() { close(p.parked) })
			select {
			case <-p.release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		p.enter("hung:after")
		return Result{}, err
	case "slow":
		<-p.block
	}
	return Result{}, nil
}

func (p *processRuns) seen() (order []string, most int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.order), p.most
}

func startProcessRuns(t *testing.T, p *processRuns) (*Pool, context.CancelFunc, <-chan struct{}) {
	t.Helper()
	r := New(1, p.run, queue.ExponentialBackoff(time.Hour, time.Hour), clock.RealClock{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r, cancel, done
}

// A module whose step waits in Park (its hook's process runs) holds no
// worker: with one worker, other modules' attempts run to their end while
// it waits, one at a time; once the wait ends the step goes on and ends
// its attempt.
func TestParkedProcessHoldsNoWorker(t *testing.T) {
	p := newProcessRuns()
	r, _, _ := startProcessRuns(t, p)
	hung := make(chan error, 1)
	r.Request("hung", func(err error) { hung <- err })
	<-p.parked
	const n = 5
	others := make(chan error, n)
	for i := range n {
		r.Request("m"+strconv.Itoa(i), func(err error) { others <- err })
	}
	for range n {
		if err := resultOf(t, others, "another module's attempt"); err != nil {
			t.Fatalf("another module's attempt: %v", err)
		}
	}
	select {
	case err := <-hung:
		t.Fatalf("hung's attempt ended (%v) before its process did", err)
	default:
	}
	// A request made while hung waits runs after its attempt, not beside.
	again := make(chan error, 1)
	r.Request("hung", func(err error) { again <- err })
	close(p.release)
	if err := resultOf(t, hung, "hung's attempt"); err != nil {
		t.Fatalf("hung's attempt: %v", err)
	}
	if err := resultOf(t, again, "hung's second attempt"); err != nil {
		t.Fatalf("hung's second attempt: %v", err)
	}
	order, most := p.seen()
	if most != 1 {
		t.Errorf("%d steps held a worker at once, want 1 (one worker): %v", most, order)
	}
	if i := slices.Index(order, "hung:after"); i != 1+n {
		t.Errorf("steps ran in order %v, want hung's wait to end after the others", order)
	}
}

// A step whose wait ended goes on ahead of attempts that have not started.
func TestParkedStepResumesAheadOfNewAttempts(t *testing.T) {
	p := newProcessRuns()
	p.block = make(chan struct{})
	r, _, _ := startProcessRuns(t, p)
	r.Request("hung", nil)
	<-p.parked
	slow := make(chan error, 1)
	r.Request("slow", func(err error) { slow <- err })
	waitFor(t, "slow to hold the worker", func() bool { order, _ := p.seen(); return slices.Contains(order, "slow") })
	later := make(chan error, 1)
	r.Request("later", func(err error) { later <- err })
	close(p.release) // hung's step now waits for the worker, as later does
	waitFor(t, "hung to wait for a worker", func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.mods["hung"].resumer != nil })
	close(p.block)
	if err := resultOf(t, later, "later's attempt"); err != nil {
		t.Fatal(err)
	}
	order, _ := p.seen()
	if want := []string{"hung", "slow", "hung:after", "later"}; !slices.Equal(order, want) {
		t.Errorf("steps ran in order %v, want %v", order, want)
	}
}

// Cancelling a module whose step waits in Park ends the wait; the step
// goes on without a worker and the pool keeps its one worker for others.
func TestCancelWhileParkedInProcess(t *testing.T) {
	p := newProcessRuns()
	r, _, _ := startProcessRuns(t, p)
	hung := make(chan error, 1)
	r.Request("hung", func(err error) { hung <- err })
	<-p.parked
	r.Cancel("hung") // returns once the attempt ended
	if err := resultOf(t, hung, "hung's attempt"); !errors.Is(err, ErrCancelled) {
		t.Errorf("hung's waiter got %v, want ErrCancelled", err)
	}
	others := make(chan error, 2)
	r.Request("a", func(err error) { others <- err })
	r.Request("b", func(err error) { others <- err })
	for range 2 {
		if err := resultOf(t, others, "another module's attempt"); err != nil {
			t.Fatal(err)
		}
	}
	if _, most := p.seen(); most != 1 {
		t.Errorf("%d steps held a worker at once after the cancel, want 1", most)
	}
}

// The pool stops while a step waits in Park, or waits for a worker after
// it: Run returns.
func TestPoolStopsWhileParkedInProcess(t *testing.T) {
	p := newProcessRuns()
	r, cancel, done := startProcessRuns(t, p)
	r.Request("hung", nil)
	<-p.parked
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the pool did not stop while a step waited in Park")
	}
}

// Park outside a step of the pool runs the wait in place.
func TestParkOutsideThePoolRunsInPlace(t *testing.T) {
	ran := false
	err := Park(t.Context(), func(context.Context) error { ran = true; return errors.New("boom") })
	if !ran || err == nil || err.Error() != "boom" {
		t.Errorf("Park ran=%v err=%v, want the wait run in place and its error", ran, err)
	}
}

// Steps waiting in Park with their worker handed back are bounded
// (ParkedStepsPerWorker a worker): past the bound, a step waits on its
// worker, so a converge cannot start a process for every module at once.
func TestParkedStepsAreBounded(t *testing.T) {
	release := make(chan struct{})
	inWait := make(chan string)
	run := func(ctx context.Context, name string) (Result, error) {
		if name == "other" {
			return Result{}, nil
		}
		err := Park(ctx, func(ctx context.Context) error {
			select {
			case inWait <- name:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		return Result{}, err
	}
	r := New(1, run, queue.ExponentialBackoff(time.Hour, time.Hour), clock.RealClock{})
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	go func() { _ = r.Run(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })

	const n = ParkedStepsPerWorker + 1
	results := make(chan error, n+1)
	for i := range n {
		r.Request("p"+strconv.Itoa(i), func(err error) { results <- err })
	}
	for range n {
		select {
		case <-inWait:
		case <-t.Context().Done():
			t.Fatal("the test ended before every step waited")
		}
	}
	r.mu.Lock()
	away := r.stepsAway
	r.mu.Unlock()
	if away != ParkedStepsPerWorker {
		t.Errorf("%d steps wait with their worker handed back, want %d (one worker)", away, ParkedStepsPerWorker)
	}
	r.Request("other", func(err error) { results <- err })
	close(release)
	for range n + 1 {
		if err := resultOf(t, results, "an attempt"); err != nil {
			t.Fatalf("attempt: %v", err)
		}
	}
	r.mu.Lock()
	away = r.stepsAway
	r.mu.Unlock()
	if away != 0 {
		t.Errorf("%d steps still counted away after every wait ended", away)
	}
}
