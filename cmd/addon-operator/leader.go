package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// errLeadershipLost is returned by runLeading when this replica stopped
// holding the Lease while it was working.
var errLeadershipLost = errors.New("leadership lost")

// leaderOptions configure leader election between replicas (--ha).
// Defaults come from newLeaderOptions, flags from bindFlags; environment
// fallbacks are applied by the start command.
type leaderOptions struct {
	// Enabled turns leader election on; without it the operator works at once.
	Enabled bool
	// LeaseName names the coordination.k8s.io Lease in the operator's namespace.
	LeaseName string
	// Identity is this replica's holder name in the Lease and must be unique
	// among replicas; empty means host name and process id.
	Identity string
	// LeaseDuration is how long standbys wait after the last renewal they saw
	// before taking over. It is stored in the Lease in whole seconds.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader retries a failing renewal before
	// it stops working.
	RenewDeadline time.Duration
	// RetryPeriod is the pause between attempts to acquire or renew.
	RetryPeriod time.Duration
}

// newLeaderOptions returns the defaults documented in --help; they are
// those of Kubernetes' own controllers.
func newLeaderOptions() leaderOptions {
	return leaderOptions{
		LeaseName:     "addon-operator-leader-election",
		LeaseDuration: 15 * time.Second,
		RenewDeadline: 10 * time.Second,
		RetryPeriod:   2 * time.Second,
	}
}

// bindFlags registers a flag for every option.
func (o *leaderOptions) bindFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "ha", o.Enabled,
		"run as one of several replicas: only the holder of the Lease --ha-lease-name works, the others wait to take over (env ADDON_OPERATOR_HA)")
	fs.StringVar(&o.LeaseName, "ha-lease-name", o.LeaseName,
		"name of the coordination.k8s.io Lease in --namespace that elects the working replica (env ADDON_OPERATOR_HA_LEASE_NAME)")
	fs.StringVar(&o.Identity, "ha-identity", o.Identity,
		"this replica's name in the Lease, unique among replicas; host name and process id when empty (env ADDON_OPERATOR_POD, POD_NAME)")
	fs.DurationVar(&o.LeaseDuration, "ha-lease-duration", o.LeaseDuration,
		"how long standbys wait after the leader's last renewal before taking over; whole seconds (env ADDON_OPERATOR_HA_LEASE_DURATION)")
	fs.DurationVar(&o.RenewDeadline, "ha-renew-deadline", o.RenewDeadline,
		"how long the leader retries renewing the Lease before it exits (env ADDON_OPERATOR_HA_RENEW_DEADLINE)")
	fs.DurationVar(&o.RetryPeriod, "ha-retry-period", o.RetryPeriod,
		"pause between attempts to acquire or renew the Lease (env ADDON_OPERATOR_HA_RETRY_PERIOD)")
}

// validate reports options that cannot work. Without --ha the other
// options are unused and not checked.
func (o *leaderOptions) validate() error {
	if !o.Enabled {
		return nil
	}
	var errs []error
	for _, msg := range validation.IsDNS1123Subdomain(o.LeaseName) {
		errs = append(errs, fmt.Errorf("--ha-lease-name %q: %s", o.LeaseName, msg))
	}
	if o.LeaseDuration < time.Second || o.LeaseDuration%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--ha-lease-duration must be a whole number of seconds, got %s", o.LeaseDuration))
	}
	if o.RenewDeadline <= 0 || o.RenewDeadline >= o.LeaseDuration {
		errs = append(errs, fmt.Errorf("--ha-renew-deadline %s must be positive and shorter than --ha-lease-duration %s", o.RenewDeadline, o.LeaseDuration))
	}
	// client-go's own check: a retry with its jitter factor must fit into
	// the renew deadline.
	if o.RetryPeriod <= 0 || o.RenewDeadline <= time.Duration(leaderelection.JitterFactor*float64(o.RetryPeriod)) {
		errs = append(errs, fmt.Errorf("--ha-retry-period %s must be positive and at most --ha-renew-deadline %s / %.1f", o.RetryPeriod, o.RenewDeadline, leaderelection.JitterFactor))
	}
	return errors.Join(errs...)
}

// identity returns the holder name this replica writes into the Lease.
func (o *leaderOptions) identity() string {
	if o.Identity != "" {
		return o.Identity
	}
	host, err := os.Hostname()
	if err != nil || strings.TrimSpace(host) == "" {
		host = "addon-operator"
	}
	return fmt.Sprintf("%s_%d", host, os.Getpid())
}

// runLeading calls run(ctx) and returns its error. With opts.Enabled it
// first waits to hold the Lease opts.LeaseName in namespace and calls run
// only while it does:
//
//   - ctx cancelled while waiting: returns nil without calling run.
//   - ctx cancelled while leading: run's context is cancelled; the Lease is
//     renewed until run returns and released right after, so a standby takes
//     over at once and never works alongside this replica.
//   - run returns by itself: the Lease is released and run's error returned.
//   - the Lease could not be renewed within opts.RenewDeadline, or another
//     replica took it: run's context is cancelled and, once run returned, an
//     error wrapping errLeadershipLost is returned. The process must then
//     exit; a standby takes over, and restarting this one is the job of the
//     orchestrator (kubelet). run is never called twice.
//
// The leader stops working after RenewDeadline without a renewal while a
// standby takes over only after LeaseDuration; when run needs longer than
// that difference to stop, the two overlap.
func runLeading(ctx context.Context, opts leaderOptions, client kubernetes.Interface, namespace string, log *slog.Logger, run func(ctx context.Context) error) error {
	if !opts.Enabled {
		return run(ctx)
	}
	identity := opts.identity()
	log = log.With(slog.String(logkey.Name, opts.LeaseName), slog.String(logkey.Namespace, namespace))
	leading := make(chan context.Context, 1)
	elector, err := newElector(opts, newLeaseLock(opts, client, namespace, identity), log, leading)
	if err != nil {
		return err
	}
	// The elector does not stop with ctx: a leader keeps renewing until run
	// has returned, and only then gives the Lease up.
	electCtx, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElecting()
	electorDone := make(chan struct{})
	go func() {
		defer close(electorDone)
		elector.Run(electCtx)
	}()
	log.Info("waiting for leadership", slog.String(logkey.Identity, identity))
	select {
	case <-ctx.Done():
	case leadCtx := <-leading:
		err = lead(ctx, leadCtx, log, run)
	case <-electorDone:
		// Acquired and lost again before leading was reported.
		err = errLeadershipLost
	}
	stopElecting()
	<-electorDone
	if errors.Is(err, errLeadershipLost) {
		return fmt.Errorf("lease %s/%s: %w", namespace, opts.LeaseName, err)
	}
	return err
}

// lead runs run until it returns, ctx is cancelled or leadCtx ends because
// the Lease was lost; it returns run's error, joined with errLeadershipLost
// in the last case.
func lead(ctx, leadCtx context.Context, log *slog.Logger, run func(ctx context.Context) error) error {
	if ctx.Err() != nil {
		return nil
	}
	log.Info("started leading")
	runCtx, cancel := context.WithCancel(leadCtx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	err := run(runCtx)
	// Until the caller stops the elector, leadCtx ends only when the Lease
	// was lost.
	if ctx.Err() == nil && leadCtx.Err() != nil {
		log.Warn("leadership lost")
		return errors.Join(errLeadershipLost, err)
	}
	log.Info("stopped leading")
	return err
}

// newLeaseLock returns the lock on the Lease opts.LeaseName in namespace,
// held as identity.
func newLeaseLock(opts leaderOptions, client kubernetes.Interface, namespace, identity string) *resourcelock.LeaseLock {
	return &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: opts.LeaseName},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
}

// newElector builds a client-go leader elector on lock. It sends the
// leader's context on leading when it starts leading and logs every change
// of leader it observes.
func newElector(opts leaderOptions, lock *resourcelock.LeaseLock, log *slog.Logger, leading chan<- context.Context) (*leaderelection.LeaderElector, error) {
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            opts.LeaseName,
		LeaseDuration:   opts.LeaseDuration,
		RenewDeadline:   opts.RenewDeadline,
		RetryPeriod:     opts.RetryPeriod,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			// Called at most once per Run; leading has room for it.
			OnStartedLeading: func(leadCtx context.Context) { leading <- leadCtx },
			OnStoppedLeading: func() {},
			OnNewLeader: func(holder string) {
				if holder == "" {
					log.Info("no leader")
					return
				}
				log.Info("new leader", slog.String(logkey.Identity, holder))
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("leader election on lease %s: %w", lock.Describe(), err)
	}
	return elector, nil
}
