package release

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/helm/kubeclient"
	"github.com/addon-operator/addon-operator/pkg/kube/drift"
	"github.com/addon-operator/addon-operator/pkg/kube/heal"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// deployed is what the Manager remembers of a module's deployed release
// for drift checks between module runs.
type deployed struct {
	// manifest is the release's manifest as last deployed, and namespace
	// where its namespaced objects without a namespace live; guarded by
	// the Manager's mu.
	manifest, namespace string
	// reported is the drift last reported (see driftKey); guarded by busy.
	reported string
	// seen are the resourceVersions of the objects the last check read,
	// by driftRef; guarded by the Manager's mu. A change to one of them
	// is no reason to check again.
	seen map[string]string
	// weightsReady has the groups (by Group.String) seen ready while
	// their release is created group by group (see ahead); guarded by the
	// Manager's mu.
	weightsReady map[string]bool
	// busy is held by Deploy and by a drift check of the module, so a
	// check never compares, or reverts, in the middle of an upgrade.
	busy sync.Mutex
	// last is the last drift check's outcome, for the status page;
	// guarded by the Manager's mu.
	last *LastDrift
}

// module returns the module's record, creating it.
func (r *Manager) module(name string) *deployed {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.deployed[name]
	if d == nil {
		d = &deployed{}
		r.deployed[name] = d
	}
	return d
}

// SetMaintenance puts a module in maintenance or takes it out: in
// maintenance its drift is reported but never reverted. The operator also
// stops deploying it; leaving maintenance is followed by a module run.
func (r *Manager) SetMaintenance(name string, on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if on {
		r.maintenance[name] = true
	} else {
		delete(r.maintenance, name)
	}
}

func (r *Manager) inMaintenance(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.maintenance[name]
}

// RunDrift checks the drift of deployed releases between module runs
// until ctx ends: a module is checked Options.DriftDebounce after the
// first change of one of its objects that changes sends (the heal watch's
// updates; later changes in that window join the same check), and every
// module with a deployed release each Options.DriftResync (0: never).
// A module whose Deploy is in progress is checked once it is done.
// Without changes, it only waits for ctx.
//
// Each change also tells the module's readiness wait, if one runs, to look
// again: a Deployment's status update ends the wait for it.
func (r *Manager) RunDrift(ctx context.Context, changes <-chan heal.Change) error {
	s := &driftSchedule{due: map[string]time.Time{}, nudge: make(chan struct{}, 1)}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case ch := <-changes:
				r.objectChanged(ch.Module)
				if r.opts.Drift != nil && !r.seenAlready(ch) {
					s.add(ch.Module, r.opts.Clock.Now().Add(r.opts.DriftDebounce))
				}
			}
		}
	})
	if r.opts.Drift != nil {
		g.Go(func() error { return r.checkLoop(ctx, s) })
	}
	return g.Wait() //nolint:wrapcheck // both goroutines return nil
}

// seenAlready reports whether the last check of ch's module read ch's
// object at ch's resourceVersion: then the change, usually the module's own
// deploy, is compared already.
func (r *Manager) seenAlready(ch heal.Change) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.deployed[ch.Module]
	if d == nil || ch.ResourceVersion == "" {
		return false
	}
	o := ch.Object
	return d.seen[driftRef(o.APIVersion, o.Kind, o.Namespace, o.Name)] == ch.ResourceVersion
}

// driftRef names an object the same way for the heal watch's changes and
// the drift checker's results.
func driftRef(apiVersion, kind, namespace, name string) string {
	return apiVersion + "/" + kind + "/" + namespace + "/" + name
}

// checkerOf is the drift checker for the module's release namespace.
func (r *Manager) checkerOf(d *deployed) DriftChecker {
	r.mu.Lock()
	namespace := d.namespace
	r.mu.Unlock()
	return r.driftIn(namespace)
}

// seeder is a DriftChecker that can be told which objects an install
// created, at which versions; *drift.Checker is one.
type seeder interface {
	Seed(ctx context.Context, manifest string, created map[drift.Object]string) error
}

// seedDrift tells the drift checker that the objects an install created
// from manifest are clean at the versions they were created with, and
// remembers those versions as seen, so that the watch's reports of the
// creates start no check. A failure only costs the next check its reads:
// it is logged at debug level.
func (r *Manager) seedDrift(ctx context.Context, name string, d *deployed, manifest string, created []kubeclient.CreatedObject) {
	if len(created) == 0 {
		return
	}
	s, ok := r.checkerOf(d).(seeder)
	if !ok {
		return
	}
	objs := make(map[drift.Object]string, len(created))
	refs := make(map[string]string, len(created))
	for _, c := range created {
		objs[drift.Object{APIVersion: c.APIVersion, Kind: c.Kind, Namespace: c.Namespace, Name: c.Name}] = c.ResourceVersion
		refs[driftRef(c.APIVersion, c.Kind, c.Namespace, c.Name)] = c.ResourceVersion
	}
	if err := s.Seed(ctx, manifest, objs); err != nil {
		r.opts.Logger.Debug("drift checker not told of the created objects", slog.String(logkey.Module, name), logkey.Err(err))
		return
	}
	r.mu.Lock()
	d.seen = refs
	r.mu.Unlock()
}

// seenChecker is a DriftChecker that tells which resourceVersions it
// compared; *drift.Checker is one.
type seenChecker interface {
	CheckSeen(ctx context.Context, manifest string) ([]drift.Drift, map[drift.Object]string, error)
}

// check runs the drift checker, recording what it saw when it can tell.
func (r *Manager) check(ctx context.Context, d *deployed, manifest string) ([]drift.Drift, error) {
	checker := r.checkerOf(d)
	sc, ok := checker.(seenChecker)
	if !ok {
		return checker.Check(ctx, manifest)
	}
	drifts, seen, err := sc.CheckSeen(ctx, manifest)
	if err != nil {
		return nil, err
	}
	refs := make(map[string]string, len(seen))
	for o, rv := range seen {
		refs[driftRef(o.APIVersion, o.Kind, o.Namespace, o.Name)] = rv
	}
	r.mu.Lock()
	d.seen = refs
	r.mu.Unlock()
	return drifts, nil
}

// driftSchedule holds when each module is due for a check. The collector
// adds to it, the check loop takes from it.
type driftSchedule struct {
	mu  sync.Mutex
	due map[string]time.Time
	// nudge tells the check loop that due changed; it holds at most one
	// pending signal.
	nudge chan struct{}
}

// add makes the module due at t, unless it is due earlier already.
func (s *driftSchedule) add(module string, t time.Time) {
	s.mu.Lock()
	if old, ok := s.due[module]; !ok || t.Before(old) {
		s.due[module] = t
	}
	s.mu.Unlock()
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

// take removes and returns the modules due at now, sorted, and the
// earliest due time of the others (zero when there are none).
func (s *driftSchedule) take(now time.Time) ([]string, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ready []string
	var next time.Time
	for module, t := range s.due {
		if !t.After(now) {
			ready = append(ready, module)
			delete(s.due, module)
		} else if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	slices.Sort(ready)
	return ready, next
}

// checkLoop runs the checks of the modules in s as they fall due, and
// makes every deployed module due each resync.
func (r *Manager) checkLoop(ctx context.Context, s *driftSchedule) error {
	clk := r.opts.Clock
	var resync <-chan time.Time
	var resyncTimer clock.Timer
	if r.opts.DriftResync > 0 {
		resyncTimer = clk.NewTimer(r.opts.DriftResync)
		defer resyncTimer.Stop()
		resync = resyncTimer.C()
	}
	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		ready, next := s.take(clk.Now())
		for _, module := range ready {
			if !r.checkBetweenRuns(ctx, module) {
				s.add(module, clk.Now().Add(r.opts.DriftDebounce))
			}
		}
		if timer != nil {
			timer.Stop()
		}
		var wake <-chan time.Time
		if !next.IsZero() {
			timer = clk.NewTimer(max(next.Sub(clk.Now()), 0))
			wake = timer.C()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.nudge:
		case <-wake:
		case <-resync:
			resyncTimer.Reset(r.opts.DriftResync)
			r.mu.Lock()
			modules := slices.Sorted(maps.Keys(r.deployed))
			r.mu.Unlock()
			for _, module := range modules {
				s.add(module, clk.Now())
			}
		}
	}
}

// checkBetweenRuns checks a module's drift unless its Deploy is in
// progress; it reports false then, so the check is tried again later.
// Failures are logged: the next change or resync checks again.
func (r *Manager) checkBetweenRuns(ctx context.Context, name string) bool {
	r.mu.Lock()
	d := r.deployed[name]
	r.mu.Unlock()
	if d == nil {
		return true // uninstalled since
	}
	if !d.busy.TryLock() {
		return false
	}
	defer d.busy.Unlock()
	r.mu.Lock()
	manifest := d.manifest
	r.mu.Unlock()
	if err := r.checkDrift(ctx, name, d, manifest); err != nil && ctx.Err() == nil {
		r.opts.Logger.Warn("drift check failed", slog.String(logkey.Module, name), logkey.Err(err))
	}
	return true
}

// checkDrift compares the module's objects with manifest, reports the
// drift (a log line and an Event when it differs from the last report),
// and with HealDrift reverts it unless the module is in maintenance.
// d.busy is held.
func (r *Manager) checkDrift(ctx context.Context, name string, d *deployed, manifest string) error {
	drifts, err := r.check(ctx, d, manifest)
	r.keepDrift(d, drifts, false, err)
	if err != nil {
		return err
	}
	if r.opts.Recorder != nil {
		r.opts.Recorder.DriftedObjects(name, len(drifts))
	}
	revert := r.opts.HealDrift && !r.inMaintenance(name)
	key := driftKey(drifts)
	fresh := key != d.reported
	d.reported = key
	for _, dr := range drifts {
		attrs := []any{
			slog.String(logkey.Module, name), slog.String(logkey.Kind, dr.Object.Kind),
			slog.String(logkey.Namespace, dr.Object.Namespace), slog.String(logkey.Name, dr.Object.Name), slog.String(logkey.Fields, strings.Join(dr.Fields, ",")),
		}
		if !fresh {
			r.opts.Logger.Debug("release object still drifted from its manifest", attrs...)
			continue
		}
		r.opts.Logger.Warn("release object drifted from its manifest", attrs...)
		if r.opts.Events != nil {
			r.opts.Events.ObjectDrifted(name, dr.Object.String(), dr.Fields, revert)
		}
	}
	if len(drifts) == 0 || !revert {
		return nil
	}
	if err := r.checkerOf(d).Revert(ctx, manifest, drifts); err != nil {
		r.keepDrift(d, drifts, false, err)
		return err
	}
	r.keepDrift(d, drifts, true, nil)
	d.reported = ""
	r.opts.Logger.Info("drift reverted", slog.String(logkey.Module, name), slog.Int(logkey.Count, len(drifts)))
	return nil
}

// driftKey is a canonical spelling of drifts, to tell a new drift from
// one already reported.
func driftKey(drifts []drift.Drift) string {
	var b strings.Builder
	for _, d := range drifts {
		b.WriteString(d.Object.String() + ":" + strings.Join(d.Fields, ",") + ";")
	}
	return b.String()
}
