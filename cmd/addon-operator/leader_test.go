package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

const testNamespace = "ops"

var errTest = errors.New("test error")

func TestLeaderOptionsFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want leaderOptions
	}{
		{
			name: "defaults",
			want: leaderOptions{LeaseName: "addon-operator-leader-election", LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second},
		},
		{
			name: "every flag",
			args: []string{"--ha", "--ha-lease-name=l", "--ha-identity=pod-0", "--ha-lease-duration=4s", "--ha-renew-deadline=3s", "--ha-retry-period=1s"},
			want: leaderOptions{Enabled: true, LeaseName: "l", Identity: "pod-0", LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newLeaderOptions()
			fs := pflag.NewFlagSet("start", pflag.ContinueOnError)
			o.bindFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, o); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
			if err := o.validate(); err != nil {
				t.Errorf("validate() = %v, want nil", err)
			}
		})
	}
}

func TestLeaderOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(o *leaderOptions)
		wantErr []string
	}{
		{name: "defaults with --ha", edit: func(*leaderOptions) {}},
		{
			name: "without --ha nothing is checked",
			edit: func(o *leaderOptions) { o.Enabled, o.LeaseName, o.LeaseDuration = false, "", 0 },
		},
		{
			name:    "lease name must be a resource name",
			edit:    func(o *leaderOptions) { o.LeaseName = "Not_A_Name" },
			wantErr: []string{`--ha-lease-name "Not_A_Name"`},
		},
		{
			name:    "lease duration in whole seconds",
			edit:    func(o *leaderOptions) { o.LeaseDuration = 1500 * time.Millisecond },
			wantErr: []string{"--ha-lease-duration must be a whole number of seconds, got 1.5s", "--ha-renew-deadline"},
		},
		{
			name:    "renew deadline shorter than the lease",
			edit:    func(o *leaderOptions) { o.RenewDeadline = o.LeaseDuration },
			wantErr: []string{"--ha-renew-deadline 15s must be positive and shorter than --ha-lease-duration 15s"},
		},
		{
			name:    "retry with jitter fits into the renew deadline",
			edit:    func(o *leaderOptions) { o.RetryPeriod = 9 * time.Second },
			wantErr: []string{"--ha-retry-period 9s must be positive and at most --ha-renew-deadline 10s / 1.2"},
		},
		{
			name:    "retry period positive",
			edit:    func(o *leaderOptions) { o.RetryPeriod = 0 },
			wantErr: []string{"--ha-retry-period 0s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newLeaderOptions()
			o.Enabled = true
			tt.edit(&o)
			err := o.validate()
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("validate() = nil, want errors %q", tt.wantErr)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.wantErr) {
				t.Errorf("validate() = %q, want %d errors", lines, len(tt.wantErr))
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("validate() = %v, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestLeaderIdentity(t *testing.T) {
	o := leaderOptions{Identity: "pod-0"}
	if got := o.identity(); got != "pod-0" {
		t.Errorf("identity() = %q, want the flag's value", got)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	o.Identity = ""
	if got, want := o.identity(), fmt.Sprintf("%s_%d", host, os.Getpid()); got != want {
		t.Errorf("identity() = %q, want %q", got, want)
	}
}

func TestRunLeadingWithoutHA(t *testing.T) {
	type key struct{}
	for _, want := range []error{nil, errTest} {
		t.Run(fmt.Sprint(want), func(t *testing.T) {
			ctx := context.WithValue(t.Context(), key{}, "caller")
			calls := 0
			err := runLeading(ctx, newLeaderOptions(), nil, "unused", slog.New(slog.DiscardHandler), func(ctx context.Context) error {
				calls++
				if ctx.Value(key{}) != "caller" {
					t.Error("run did not get the caller's context")
				}
				return want
			})
			if !errors.Is(err, want) {
				t.Errorf("runLeading() = %v, want %v", err, want)
			}
			if calls != 1 {
				t.Errorf("run called %d times, want 1", calls)
			}
		})
	}
}

// haOptions are the defaults with --ha and a fixed identity.
func haOptions() leaderOptions {
	o := newLeaderOptions()
	o.Enabled, o.Identity = true, "me"
	return o
}

// getLease returns the election Lease of haOptions.
func getLease(t *testing.T, client *fake.Clientset) *coordinationv1.Lease {
	t.Helper()
	l, err := fetchLease(t.Context(), client)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// fetchLease is getLease for goroutines other than the test's.
func fetchLease(ctx context.Context, client *fake.Clientset) (*coordinationv1.Lease, error) {
	l, err := client.CoordinationV1().Leases(testNamespace).Get(ctx, haOptions().LeaseName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get lease: %w", err)
	}
	return l, nil
}

// heldLease is a Lease that another replica renewed just now.
func heldLease() *coordinationv1.Lease {
	now := metav1.NewMicroTime(time.Now())
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: haOptions().LeaseName},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("other"), LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime: &now, RenewTime: &now,
		},
	}
}

// holder returns the Lease's holder identity, "" when released.
func holder(l *coordinationv1.Lease) string { return ptr.Deref(l.Spec.HolderIdentity, "") }

// leading runs runLeading in the background; run signals on started and
// blocks until its context ends, then returns stopErr.
type leading struct {
	started chan time.Time
	done    chan error
	runs    atomic.Int32
}

func startLeading(ctx context.Context, opts leaderOptions, client *fake.Clientset, log *slog.Logger, onStop func() error) *leading {
	l := &leading{started: make(chan time.Time, 1), done: make(chan error, 1)}
	go func() {
		l.done <- runLeading(ctx, opts, client, testNamespace, log, func(ctx context.Context) error {
			l.runs.Add(1)
			l.started <- time.Now()
			<-ctx.Done()
			return onStop()
		})
	}()
	return l
}

func TestRunLeadingHAReleasesAfterRunStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset()
		ctx, cancel := context.WithCancel(t.Context())
		var stopping, stopped *coordinationv1.Lease
		l := startLeading(ctx, haOptions(), client, slog.New(slog.DiscardHandler), func() error {
			// A slow shutdown: the lease must stay held and renewed.
			var err error
			if stopping, err = fetchLease(context.WithoutCancel(ctx), client); err != nil {
				return err
			}
			<-time.After(5 * time.Second)
			synctest.Wait()
			if stopped, err = fetchLease(context.WithoutCancel(ctx), client); err != nil {
				return err
			}
			return errTest
		})
		<-l.started
		if got := holder(getLease(t, client)); got != "me" {
			t.Errorf("holder while leading = %q, want me", got)
		}
		cancel()
		if err := <-l.done; !errors.Is(err, errTest) || errors.Is(err, errLeadershipLost) {
			t.Fatalf("runLeading() = %v, want run's error", err)
		}
		if got := holder(stopped); got != "me" {
			t.Errorf("holder while run was stopping = %q, want me: released too early", got)
		}
		if !stopped.Spec.RenewTime.After(stopping.Spec.RenewTime.Time) {
			t.Errorf("lease renewed at %s while run was stopping, want later than %s", stopped.Spec.RenewTime, stopping.Spec.RenewTime)
		}
		if got := holder(getLease(t, client)); got != "" {
			t.Errorf("holder after shutdown = %q, want the lease released", got)
		}
	})
}

func TestRunLeadingHARunReturnsByItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset()
		err := runLeading(t.Context(), haOptions(), client, testNamespace, slog.New(slog.DiscardHandler), func(context.Context) error {
			return errTest
		})
		if !errors.Is(err, errTest) || errors.Is(err, errLeadershipLost) {
			t.Errorf("runLeading() = %v, want run's error", err)
		}
		if got := holder(getLease(t, client)); got != "" {
			t.Errorf("holder after run returned = %q, want the lease released", got)
		}
	})
}

func TestRunLeadingHAStandbyWhileLeaseHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset(heldLease())
		ctx, cancel := context.WithCancel(t.Context())
		l := startLeading(ctx, haOptions(), client, slog.New(slog.DiscardHandler), func() error { return nil })
		// In the bubble this advances the fake clock; the lease stays valid.
		<-time.After(10 * time.Second)
		synctest.Wait()
		if n := l.runs.Load(); n != 0 {
			t.Fatalf("run called %d times while another replica held the lease", n)
		}
		cancel()
		if err := <-l.done; err != nil {
			t.Errorf("runLeading() = %v, want nil when cancelled as standby", err)
		}
		if n := l.runs.Load(); n != 0 {
			t.Errorf("run called %d times, want 0", n)
		}
		if got := holder(getLease(t, client)); got != "other" {
			t.Errorf("holder = %q, want other's lease left alone", got)
		}
	})
}

func TestRunLeadingHATakesOverExpiredLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset(heldLease())
		logs := &syncBuffer{}
		opts := haOptions()
		start := time.Now()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		l := startLeading(ctx, opts, client, slog.New(slog.NewJSONHandler(logs, nil)), func() error { return nil })
		took := (<-l.started).Sub(start)
		// The standby waits a full lease duration from its first look at the
		// lease; it tries every retry period plus up to 1.2 periods of jitter.
		if maxWait := opts.LeaseDuration + opts.RetryPeriod*22/10; took < opts.LeaseDuration || took > maxWait {
			t.Errorf("took over after %s, want between %s and %s", took, opts.LeaseDuration, maxWait)
		}
		lease := getLease(t, client)
		if got := holder(lease); got != "me" {
			t.Errorf("holder = %q, want me", got)
		}
		if got := ptr.Deref(lease.Spec.LeaseTransitions, 0); got != 1 {
			t.Errorf("lease transitions = %d, want 1", got)
		}
		cancel()
		if err := <-l.done; err != nil {
			t.Errorf("runLeading() = %v, want nil", err)
		}
		synctest.Wait()
		want := []map[string]string{
			{"msg": "waiting for leadership", "name": opts.LeaseName, "namespace": testNamespace, "identity": "me"},
			{"msg": "new leader", "name": opts.LeaseName, "namespace": testNamespace, "identity": "other"},
			{"msg": "new leader", "name": opts.LeaseName, "namespace": testNamespace, "identity": "me"},
			{"msg": "started leading", "name": opts.LeaseName, "namespace": testNamespace},
			{"msg": "stopped leading", "name": opts.LeaseName, "namespace": testNamespace},
		}
		// Leader changes are reported from goroutines of their own.
		byMsg := cmpopts.SortSlices(func(a, b map[string]string) bool { return a["msg"]+a["identity"] < b["msg"]+b["identity"] })
		if diff := cmp.Diff(want, logs.lines(t), byMsg); diff != "" {
			t.Errorf("log lines (-want +got):\n%s", diff)
		}
	})
}

func TestRunLeadingHALosesLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset()
		// A partition from the API server: every write of the lease fails.
		var partitioned atomic.Bool
		client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
			return partitioned.Load(), nil, errTest
		})
		opts := haOptions()
		var cut, stopped time.Time
		l := startLeading(t.Context(), opts, client, slog.New(slog.DiscardHandler), func() error {
			stopped = time.Now()
			return nil
		})
		<-l.started
		// Let one renewal pass, then cut the replica off.
		<-time.After(opts.RetryPeriod * 3 / 2)
		cut = time.Now()
		partitioned.Store(true)
		err := <-l.done
		if !errors.Is(err, errLeadershipLost) {
			t.Fatalf("runLeading() = %v, want errLeadershipLost", err)
		}
		if want := fmt.Sprintf("lease %s/%s: leadership lost", testNamespace, opts.LeaseName); err.Error() != want {
			t.Errorf("runLeading() = %q, want %q", err, want)
		}
		// The leader keeps retrying for the renew deadline, starting at most
		// one retry period after the last renewal.
		if took := stopped.Sub(cut); took < opts.RenewDeadline-opts.RetryPeriod || took > opts.RenewDeadline+opts.RetryPeriod {
			t.Errorf("stopped working %s after the partition, want about --ha-renew-deadline %s", took, opts.RenewDeadline)
		}
		if n := l.runs.Load(); n != 1 {
			t.Errorf("run called %d times, want 1", n)
		}
	})
}

func TestRunLeadingHAInvalidOptions(t *testing.T) {
	opts := haOptions()
	opts.RenewDeadline = opts.LeaseDuration
	err := runLeading(t.Context(), opts, fake.NewClientset(), testNamespace, slog.New(slog.DiscardHandler), func(context.Context) error {
		t.Error("run called with invalid options")
		return nil
	})
	if err == nil {
		t.Fatal("runLeading() = nil, want an error")
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a
// slog handler.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the message and string attributes of each JSON log line.
func (b *syncBuffer) lines(t *testing.T) []map[string]string {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]string
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	for sc.Scan() {
		var raw map[string]any
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		line := map[string]string{}
		for k, v := range raw {
			if s, ok := v.(string); ok && k != "time" && k != "level" {
				line[k] = s
			}
		}
		out = append(out, line)
	}
	return out
}
