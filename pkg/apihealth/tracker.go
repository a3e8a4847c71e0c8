// Package apihealth tracks whether the Kubernetes API server (and the etcd
// behind it) answers: it owns the outage state, its log lines, its metrics
// and the notification that an outage ended.
//
// It learns from the outcomes of the requests the operator sends anyway
// (client-go's request-result hook), probes the server's /readyz at once
// when one of them fails, and every Heartbeat besides: an idle operator
// sends no request that could fail, and its watches stay open through an
// etcd outage, so without the heartbeat such an outage would show only
// when some request next failed. The heartbeat costs one GET /readyz every
// 3 s (a few hundred bytes each way).
package apihealth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// Defaults of Options.
const (
	// DefaultInterval is the least time between two probes: while an
	// outage lasts, the server is probed this often, so its end is noticed
	// within about this time.
	DefaultInterval = 2 * time.Second
	// DefaultHeartbeat is the time between two probes while nothing
	// suggests an outage: with DefaultProbeTimeout, a server that stops
	// answering is noticed within 8 s, one that refuses connections or
	// whose etcd is down (its /readyz fails at once) within 3 s.
	DefaultHeartbeat = 3 * time.Second
	// DefaultProbeTimeout bounds one probe.
	DefaultProbeTimeout = 5 * time.Second
)

// Transition is the start or the end of an outage.
type Transition struct {
	// Up is false when an outage starts and true when it ends.
	Up bool
	// Since is when the outage started.
	Since time.Time
	// Duration is how long the outage lasted; zero when it starts.
	Duration time.Duration
	// Err is the probe error that started the outage.
	Err error
}

// Metrics receive the API server's state; *metrics.Recorder is the real one.
type Metrics interface {
	KubeAPIUp(up bool)
	KubeAPIOutage()
}

// Options configure a Tracker.
type Options struct {
	// Probe asks the API server whether it serves; nil means GET /readyz
	// with Client.
	Probe func(ctx context.Context) error
	// Client serves the default Probe: the operator's own REST client, so
	// the probe goes where its requests go, with its credentials.
	Client rest.Interface
	// Interval is the least time between probes; DefaultInterval when 0.
	Interval time.Duration
	// Heartbeat is the time between probes while the server is up and
	// no request failed; DefaultHeartbeat when 0, no heartbeat when
	// negative (probes only after failing requests). At least Interval.
	Heartbeat time.Duration
	// OnChange is called, from Run's goroutine, at every transition;
	// it must not block for long. May be nil.
	OnChange func(Transition)
	Metrics  Metrics // may be nil
	Clock    clock.Clock
	Logger   *slog.Logger
}

// Tracker holds the API server's state. Run owns the probing; Observe and
// Outage are safe for concurrent use.
type Tracker struct {
	opts    Options
	suspect chan struct{} // a request failed as if the server were down

	mu    sync.Mutex
	down  bool
	since time.Time
	err   error
}

// New returns a Tracker that assumes the API server is up.
func New(opts Options) *Tracker {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Heartbeat == 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.Heartbeat > 0 && opts.Heartbeat < opts.Interval {
		opts.Heartbeat = opts.Interval
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Probe == nil {
		opts.Probe = readyzProbe(opts.Client)
	}
	if opts.Metrics != nil {
		opts.Metrics.KubeAPIUp(true)
	}
	return &Tracker{opts: opts, suspect: make(chan struct{}, 1)}
}

// Increment is client-go's request-result hook (see
// k8s.io/client-go/tools/metrics.ResultMetric): a request that got no
// answer, or an answer saying the server cannot serve, makes Run probe.
// Requests cancelled by their caller say nothing about the server.
func (t *Tracker) Increment(ctx context.Context, code, _, _ string) {
	if ctx.Err() != nil || !suspicious(code) {
		return
	}
	select {
	case t.suspect <- struct{}{}:
	default:
	}
}

// suspicious tells whether a request's result code (an HTTP status, or
// "<error>" when no response came) hints that the server is down: no
// response, 500 (etcd failing), 502, 503 or 504.
func suspicious(code string) bool {
	if code == "<error>" {
		return true
	}
	n, err := strconv.Atoi(code)
	return err == nil && (n == http.StatusInternalServerError || n == http.StatusBadGateway ||
		n == http.StatusServiceUnavailable || n == http.StatusGatewayTimeout)
}

// Outage returns whether an outage is under way, when it started and the
// error that started it.
func (t *Tracker) Outage() (since time.Time, down bool, cause error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.since, t.down, t.err
}

// Down reports whether an outage is under way.
func (t *Tracker) Down() bool {
	_, down, _ := t.Outage()
	return down
}

// Problem describes the current outage for /readyz and the status page;
// "" while the API server is up.
func (t *Tracker) Problem() string {
	since, down, cause := t.Outage()
	if !down {
		return ""
	}
	return fmt.Sprintf("the Kubernetes API server is unreachable since %s: %v", since.UTC().Format(time.RFC3339), cause)
}

// Run probes the API server until ctx ends: every Heartbeat, at once
// (though not twice within Interval) when a request fails as if the server
// were down, and every Interval while an outage lasts.
func (t *Tracker) Run(ctx context.Context) error {
	// The first heartbeat comes one Heartbeat after the start: the
	// operator's first requests probe the server already.
	wait := t.opts.Heartbeat
	for {
		if !t.idle(ctx, wait) {
			return nil
		}
		for {
			err := t.probe(ctx)
			select {
			case <-ctx.Done(): // the probe was cut short: it says nothing
				return nil
			default:
			}
			t.record(err)
			// Wait even after a good probe: a burst of failing requests
			// probes at most once an interval.
			select {
			case <-ctx.Done():
				return nil
			case <-t.opts.Clock.After(t.opts.Interval):
			}
			if err == nil {
				break
			}
		}
		// Requests that failed during the outage, the probes' own
		// among them, say nothing about the server now.
		select {
		case <-t.suspect:
		default:
		}
		// The probe and the Interval after it are part of the heartbeat.
		wait = t.opts.Heartbeat - t.opts.Interval
	}
}

// idle waits until a request fails as if the server were down, or wait
// has passed when the heartbeat is on; false when ctx ended.
func (t *Tracker) idle(ctx context.Context, wait time.Duration) bool {
	var heartbeat <-chan time.Time
	if t.opts.Heartbeat > 0 {
		heartbeat = t.opts.Clock.After(wait)
	}
	select {
	case <-ctx.Done():
		return false
	case <-t.suspect:
	case <-heartbeat:
	}
	return true
}

func (t *Tracker) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultProbeTimeout)
	defer cancel()
	return t.opts.Probe(ctx)
}

// record applies a probe's result: the first failure starts an outage, the
// first success after failures ends it. Each transition is logged once.
func (t *Tracker) record(err error) {
	t.mu.Lock()
	var tr *Transition
	now := t.opts.Clock.Now()
	switch {
	case err != nil && !t.down:
		t.down, t.since, t.err = true, now, err
		tr = &Transition{Up: false, Since: now, Err: err}
	case err == nil && t.down:
		tr = &Transition{Up: true, Since: t.since, Duration: now.Sub(t.since), Err: t.err}
		t.down, t.since, t.err = false, time.Time{}, nil
	}
	t.mu.Unlock()
	if tr == nil {
		return
	}
	if tr.Up {
		t.opts.Logger.Info("kubernetes api server reachable again", slog.Duration(logkey.Duration, tr.Duration))
	} else {
		t.opts.Logger.Warn("kubernetes api server unreachable", logkey.Err(tr.Err))
	}
	if t.opts.Metrics != nil {
		t.opts.Metrics.KubeAPIUp(tr.Up)
		if !tr.Up {
			t.opts.Metrics.KubeAPIOutage()
		}
	}
	if t.opts.OnChange != nil {
		t.opts.OnChange(*tr)
	}
}

// ErrNoClient is what the default probe returns without Options.Client.
var ErrNoClient = errors.New("no client to probe the API server with")

// readyzProbe asks the API server's /readyz, which fails while etcd does.
// A server that answers but refuses the path (401, 403, 404) is up: it
// answered, and the operator's own requests will tell the rest.
func readyzProbe(c rest.Interface) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if c == nil {
			return ErrNoClient
		}
		err := c.Get().AbsPath("/readyz").Do(ctx).Error()
		if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("probe /readyz: %w", compact(err))
		}
		return nil
	}
}

// compact shortens the error of a failing /readyz, whose message holds the
// whole check list, to the failing checks ("[-]etcd failed: ...").
func compact(err error) error {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return err
	}
	var failed []string
	// The body is quoted in the message: its line breaks are escaped.
	msg := strings.ReplaceAll(err.Error(), `\n`, "\n")
	for line := range strings.SplitSeq(msg, "\n") {
		if i := strings.Index(line, "[-]"); i >= 0 {
			failed = append(failed, strings.TrimSpace(line[i+3:]))
		}
	}
	if len(failed) == 0 {
		return err
	}
	return fmt.Errorf("%w: the server answered %d, failing: %s", errReadyz, status.Status().Code, strings.Join(failed, "; "))
}

// errReadyz marks an API server that answered /readyz with a failure.
var errReadyz = errors.New("api server not ready")
