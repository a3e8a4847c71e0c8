package apihealth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// fakeServer is an API server the test switches off and on: probe answers
// with err while it is set.
type fakeServer struct {
	mu     sync.Mutex
	err    error
	probes atomic.Int32
}

func (f *fakeServer) set(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

func (f *fakeServer) probe(context.Context) error {
	f.probes.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

type fakeMetrics struct {
	mu      sync.Mutex
	up      []bool
	outages int
}

func (m *fakeMetrics) KubeAPIUp(up bool) { m.mu.Lock(); m.up = append(m.up, up); m.mu.Unlock() }
func (m *fakeMetrics) KubeAPIOutage()    { m.mu.Lock(); m.outages++; m.mu.Unlock() }

// logLines returns "LEVEL message" of every line a text handler wrote.
func logLines(buf *bytes.Buffer) []string {
	var out []string
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		_, after, _ := strings.Cut(line, "level=")
		level, after, _ := strings.Cut(after, " ")
		_, msg, _ := strings.Cut(after, "msg=")
		msg, _, _ = strings.Cut(msg, "\" ")
		out = append(out, level+" "+strings.Trim(msg, "\""))
	}
	return out
}

// advance lets d pass on the bubble's clock and waits until every
// goroutine of the bubble is blocked again.
func advance(d time.Duration) {
	<-time.After(d)
	synctest.Wait()
}

// trackerTest is a Tracker running over a fake server, with what it reports.
type trackerTest struct {
	srv     *fakeServer
	tracker *Tracker
	log     bytes.Buffer
	metrics fakeMetrics
	mu      sync.Mutex
	changes []Transition
}

// startTracker runs a Tracker with the given heartbeat (Options.Heartbeat).
func startTracker(t *testing.T, heartbeat time.Duration) *trackerTest {
	t.Helper()
	tt := &trackerTest{srv: &fakeServer{}}
	tt.tracker = New(Options{
		Heartbeat: heartbeat,
		// A failing probe is a failing request too, as with a real client.
		Probe: func(ctx context.Context) error {
			err := tt.srv.probe(ctx)
			if err != nil {
				tt.tracker.Increment(ctx, "<error>", "GET", "h")
			}
			return err
		},
		Metrics: &tt.metrics,
		Logger:  slog.New(slog.NewTextHandler(&tt.log, nil)),
		OnChange: func(x Transition) {
			tt.mu.Lock()
			defer tt.mu.Unlock()
			tt.changes = append(tt.changes, x)
		},
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- tt.tracker.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
	return tt
}

func TestTrackerWithoutHeartbeatProbesOnlyWhenSuspicious(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tt := startTracker(t, -1)
		advance(time.Hour)
		if n := tt.srv.probes.Load(); n != 0 {
			t.Fatalf("idle tracker probed %d times, want 0", n)
		}
		// A failed request when the server is fine: one probe, no outage.
		tt.tracker.Increment(t.Context(), "<error>", "GET", "h")
		synctest.Wait()
		if _, down, _ := tt.tracker.Outage(); down || tt.srv.probes.Load() != 1 {
			t.Fatalf("after a stray error: down %v, probes %d; want up after 1 probe", down, tt.srv.probes.Load())
		}
		// A burst of them: at most one probe an interval.
		for range 100 {
			tt.tracker.Increment(t.Context(), "500", "GET", "h")
		}
		advance(DefaultInterval / 2)
		if n := tt.srv.probes.Load(); n != 1 {
			t.Errorf("probes within an interval of the first = %d, want 1", n)
		}
		advance(time.Minute)
		// Answers that are not the server's failure are not suspicious.
		before := tt.srv.probes.Load()
		for _, code := range []string{"200", "404", "409", "403"} {
			tt.tracker.Increment(t.Context(), code, "GET", "h")
		}
		advance(time.Minute)
		if n := tt.srv.probes.Load() - before; n != 0 {
			t.Errorf("probes after ordinary answers = %d, want 0", n)
		}
		if len(tt.changes) != 0 || tt.log.Len() != 0 {
			t.Errorf("transitions %v, log %q; want none without an outage", tt.changes, tt.log.String())
		}
	})
}

func TestTrackerOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tt := startTracker(t, -1)
		down := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
		tt.srv.set(down)
		tt.tracker.Increment(t.Context(), "503", "LIST", "h")
		synctest.Wait()
		if since, isDown, cause := tt.tracker.Outage(); !isDown || !errors.Is(cause, down) || since.IsZero() {
			t.Fatalf("Outage() = %v, %v, %v; want down with the probe error", since, isDown, cause)
		}
		if p := tt.tracker.Problem(); !strings.Contains(p, "connection refused") {
			t.Errorf("Problem() = %q, want the error named", p)
		}
		// While it lasts, the tracker probes every interval by itself.
		before := tt.srv.probes.Load()
		advance(10 * DefaultInterval)
		if n := tt.srv.probes.Load() - before; n < 9 || n > 11 {
			t.Errorf("probes during %s of outage = %d, want about 10", 10*DefaultInterval, n)
		}
		tt.srv.set(nil)
		advance(DefaultInterval)
		if tt.tracker.Problem() != "" {
			t.Fatal("still down one interval after the server came back")
		}
		before = tt.srv.probes.Load()
		advance(time.Hour)
		if n := tt.srv.probes.Load() - before; n != 0 {
			t.Errorf("probes in the hour after recovery = %d, want 0", n)
		}

		if len(tt.changes) != 2 || tt.changes[0].Up || !tt.changes[1].Up || tt.changes[1].Duration < 10*DefaultInterval {
			t.Errorf("transitions = %+v, want down then up after at least %s", tt.changes, 10*DefaultInterval)
		}
		wantLog := []string{"WARN kubernetes api server unreachable", "INFO kubernetes api server reachable again"}
		if diff := cmp.Diff(wantLog, logLines(&tt.log)); diff != "" {
			t.Errorf("log lines (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]bool{true, false, true}, tt.metrics.up); diff != "" || tt.metrics.outages != 1 {
			t.Errorf("kube_api_up (-want +got):\n%s\noutages %d, want 1", diff, tt.metrics.outages)
		}
	})
}

// TestTrackerHeartbeatFindsIdleOutage: with no request failing, the
// heartbeat alone notices an outage within DefaultHeartbeat, or within
// DefaultHeartbeat and DefaultProbeTimeout when the server hangs.
func TestTrackerHeartbeatFindsIdleOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tt := startTracker(t, 0)
		advance(time.Hour)
		if n, want := tt.srv.probes.Load(), int32(time.Hour/DefaultHeartbeat); n < want-1 || n > want {
			t.Errorf("probes in an idle hour = %d, want %d (one a heartbeat)", n, want)
		}
		if len(tt.changes) != 0 {
			t.Fatalf("transitions %v while the server was up", tt.changes)
		}
		tt.srv.set(errors.New("connect: connection refused"))
		start := time.Now()
		for !tt.tracker.Down() {
			advance(100 * time.Millisecond)
		}
		if took := time.Since(start); took > DefaultHeartbeat {
			t.Errorf("outage noticed after %s, want within the heartbeat %s", took, DefaultHeartbeat)
		}
		tt.srv.set(nil)
		advance(DefaultInterval)
		if tt.tracker.Down() {
			t.Fatal("still down one interval after the server came back")
		}
	})
}

func TestTrackerHeartbeatFindsHungServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var hung atomic.Bool
		tr := New(Options{Probe: func(ctx context.Context) error {
			if hung.Load() {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- tr.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run = %v", err)
			}
		}()
		advance(time.Minute)
		hung.Store(true)
		start := time.Now()
		for !tr.Down() {
			advance(100 * time.Millisecond)
		}
		if took, most := time.Since(start), DefaultHeartbeat+DefaultProbeTimeout; took > most {
			t.Errorf("hung server noticed after %s, want within %s", took, most)
		}
	})
}

func TestIncrementIgnoresCancelledRequests(t *testing.T) {
	tr := New(Options{Probe: func(context.Context) error { return nil }})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	tr.Increment(ctx, "<error>", "GET", "h")
	select {
	case <-tr.suspect:
		t.Error("a request its caller cancelled made the tracker suspect an outage")
	default:
	}
}

func TestSuspicious(t *testing.T) {
	tests := []struct {
		code string
		want bool
	}{
		{"<error>", true}, {"500", true}, {"502", true}, {"503", true}, {"504", true},
		{"200", false}, {"201", false}, {"401", false}, {"403", false}, {"404", false}, {"409", false}, {"429", false}, {"", false},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			if got := suspicious(tt.code); got != tt.want {
				t.Errorf("suspicious(%q) = %v, want %v", tt.code, got, tt.want)
			}
		})
	}
}

// TestReadyzProbe runs the default probe against an HTTP server answering
// /readyz as kube-apiserver does.
func TestReadyzProbe(t *testing.T) {
	failing := "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n[+]informer-sync ok\nreadyz check failed\n"
	tests := []struct {
		name    string
		code    int
		body    string
		wantErr string // "" for up
	}{
		{name: "ready", code: http.StatusOK, body: "ok"},
		{name: "etcd down", code: http.StatusInternalServerError, body: failing, wantErr: "failing: etcd failed: reason withheld"},
		{name: "path forbidden", code: http.StatusForbidden, body: `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`},
		{name: "unavailable", code: http.StatusServiceUnavailable, body: "shutting down", wantErr: "probe /readyz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/readyz" {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(tt.code)
				_, _ = fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			err = readyzProbe(client.Discovery().RESTClient())(t.Context())
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("probe = %v, want up", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("probe = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
	t.Run("no answer", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		client, err := kubernetes.NewForConfig(&rest.Config{Host: url})
		if err != nil {
			t.Fatal(err)
		}
		if err := readyzProbe(client.Discovery().RESTClient())(t.Context()); err == nil {
			t.Error("probe of a closed server succeeded")
		}
	})
}
