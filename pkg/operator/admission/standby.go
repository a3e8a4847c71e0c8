package admission

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// SnapshotMonitors keep the objects of kubernetes bindings without
// running their hooks; *monitor.Monitors is the real one.
type SnapshotMonitors interface {
	// StartSnapshot starts a monitor that keeps objects and sends no
	// events; a later Start of the same id adopts it.
	StartSnapshot(ctx context.Context, id string, b hook.KubernetesBinding) error
	// StopSnapshot stops the monitor id unless Start adopted it.
	StopSnapshot(id string)
}

// ConfigWatch reads the configuration (the ConfigMap, or ModuleConfig
// objects) and, while Run runs, sends its states on the channel Events
// returns, which it makes; it never writes. *config.Source is the real
// one.
type ConfigWatch interface {
	Run(ctx context.Context) error
	Events() <-chan config.Event
}

// standby is what a replica that does not lead knows, so that its webhook
// answers equal the leader's: the configuration in force (in the store)
// and the snapshots webhook bindings include (in snapshot-only monitors).
// mu guards the fields; leading is set once, when the leader's Run starts.
type standby struct {
	mu sync.Mutex
	// leading is set when the leader's Run started: from then on the
	// standby changes nothing.
	leading bool
	// monitorsRun is set when RunStandby runs the monitors, which the
	// leader then leaves running.
	monitorsRun bool
	// lead is closed when leading is set.
	lead chan struct{}
	// ids are the snapshot-only monitors started, by owner (a module's
	// name, or binding.GlobalOwner).
	ids map[string][]string
}

func newStandby() *standby {
	return &standby{lead: make(chan struct{}), ids: map[string][]string{}}
}

// begin reports whether the standby may start: not leading yet. It then
// owns the monitors' Run.
func (s *standby) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leading {
		return false
	}
	s.monitorsRun = true
	return true
}

// BecomeLeader ends the standby's work and reports whether the leader must
// run the monitors itself; reset runs under the lock, so no standby change
// follows it. The leader's Run calls it first.
func (w *Webhooks) BecomeLeader(reset func()) (runMonitors bool) {
	s := w.standby
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.leading {
		s.leading = true
		close(s.lead)
		reset()
	}
	return !s.monitorsRun
}

// leads reports whether the leader's Run has started.
func (w *Webhooks) leads() bool {
	select {
	case <-w.standby.lead:
		return true
	default:
		return false
	}
}

// while runs f, under the lock, unless the replica leads.
func (s *standby) while(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.leading {
		f()
	}
}

// RunStandby serves the webhook bindings of every hook, global and of every
// module, without writing any configuration, until ctx is done: a standby
// replica (--ha) answers what the API server sends it through the
// Service, exactly as the leader would. It reads the configuration (never
// writing it) into the store, and keeps the objects of the kubernetes
// bindings that webhook bindings include in their snapshots, in monitors
// that run no hook and that the leader adopts when this replica leads. A
// binding that cannot be watched yet (its CRD is missing) is retried with
// backoff. The configuration watch ends when the leader's Run starts;
// unadopted monitors end with the first converge. Run calls it; call it at
// most once, before or while the leader's Run.
func (w *Webhooks) RunStandby(ctx context.Context) error {
	if w.opts.Server == nil || !w.standby.begin() {
		return nil
	}
	// The monitors run until ctx ends whatever becomes of the rest: the
	// leader uses them once this replica leads.
	var wg sync.WaitGroup
	defer wg.Wait()
	configured := make(chan struct{})
	if w.opts.Standby.Config != nil {
		wg.Go(func() {
			if err := w.watchConfig(ctx, configured); err != nil {
				w.log.Error("configuration not read on this standby", logkey.Err(err))
			}
		})
	} else {
		close(configured)
	}
	wg.Go(func() {
		select {
		case <-configured: // answers are made with the configuration
		case <-ctx.Done():
			return
		case <-w.standby.lead:
			return // the leader serves what it enables
		}
		w.serveStandby(ctx)
	})
	if w.opts.Monitors == nil {
		<-ctx.Done()
		return nil
	}
	return w.opts.Monitors.Run(ctx)
}

// ownedHooks are the hooks of one owner: a module, or the global hooks
// (m nil).
type ownedHooks struct {
	m     *module.Module
	hooks []*binding.Hook
}

func (h ownedHooks) owner() string {
	if h.m == nil {
		return binding.GlobalOwner
	}
	return h.m.Name()
}

// loadAll loads the configuration of every hook, global and of every
// module; an owner whose hooks fail to load is left out, with its error.
func (w *Webhooks) loadAll(ctx context.Context) ([]ownedHooks, []error) {
	var all []ownedHooks
	var errs []error
	g := w.opts.Modules.Global()
	if hooks, err := binding.Load(ctx, w.opts.Hooks, g.HooksDir(), g.Hooks(), hook.Global); err != nil {
		errs = append(errs, err)
	} else {
		all = append(all, ownedHooks{hooks: hooks})
	}
	for _, m := range w.opts.Modules.Modules() {
		if hooks, err := binding.Load(ctx, w.opts.Hooks, m.Path(), m.Hooks(), hook.Module); err != nil {
			errs = append(errs, fmt.Errorf("module %s: %w", m.Name(), err))
		} else {
			all = append(all, ownedHooks{m: m, hooks: hooks})
		}
	}
	return all, errs
}

// serveLoaded serves the webhook bindings of hooks loaded before.
func (w *Webhooks) serveLoaded(all []ownedHooks, errs []error) error {
	for _, h := range all {
		owner := ""
		if h.m != nil {
			owner = h.m.Name()
		}
		if err := w.opts.Server.Serve(owner, w.entries(h.m, h.hooks)); err != nil {
			if h.m != nil {
				err = fmt.Errorf("module %s: %w", h.m.Name(), err)
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// serveStandby loads every hook, starts the snapshot monitors webhook
// bindings need, serves the bindings, then retries the monitors that
// failed until they run, this replica leads or ctx is done.
func (w *Webhooks) serveStandby(ctx context.Context) {
	all, errs := w.loadAll(ctx)
	sm, _ := w.opts.Monitors.(SnapshotMonitors)
	var pending []snapshotBinding
	if sm != nil {
		pending = w.startSnapshots(ctx, sm, snapshotBindings(all))
	}
	if err := w.serveLoaded(all, errs); err != nil {
		// Reported once: the leader reports (and retries) the same hooks.
		w.log.Error("webhooks of some hooks not served on this standby", logkey.Err(err))
	}
	delay := w.opts.Standby.RetryDelay
	for len(pending) > 0 {
		timer := w.opts.Clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-w.standby.lead:
			timer.Stop()
			return
		case <-timer.C():
		}
		delay = min(2*delay, w.opts.Standby.RetryMaxDelay)
		pending = w.startSnapshots(ctx, sm, pending)
	}
}

// snapshotBinding is a kubernetes binding some webhook binding of its hook
// includes in its snapshots.
type snapshotBinding struct {
	owner, id string
	binding   hook.KubernetesBinding
}

// snapshotBindings lists, in hook order, the kubernetes bindings that the
// webhook bindings of the hooks include in their snapshots (groups are
// expanded when hooks are loaded): only those, never all bindings.
func snapshotBindings(all []ownedHooks) []snapshotBinding {
	var out []snapshotBinding
	for _, oh := range all {
		for _, h := range oh.hooks {
			var names []string
			for i := range h.Config.Validating {
				names = append(names, h.Config.Validating[i].IncludeSnapshotsFrom...)
			}
			for i := range h.Config.Mutating {
				names = append(names, h.Config.Mutating[i].IncludeSnapshotsFrom...)
			}
			for i := range h.Config.Conversions {
				names = append(names, h.Config.Conversions[i].IncludeSnapshotsFrom...)
			}
			for j := range h.Config.Kubernetes {
				if b := h.Config.Kubernetes[j]; slices.Contains(names, b.Name) {
					out = append(out, snapshotBinding{owner: oh.owner(), id: binding.ID(oh.owner(), h, hook.Kubernetes, j), binding: b})
				}
			}
		}
	}
	return out
}

// snapshotStartTimeout bounds one snapshot monitor's initial list, so a
// watch that cannot list does not hold up the others.
const snapshotStartTimeout = 30 * time.Second

// startSnapshots starts snapshot-only monitors for bs and returns those
// that failed. It stops early when this replica leads: the leader starts
// the bindings then.
func (w *Webhooks) startSnapshots(ctx context.Context, sm SnapshotMonitors, bs []snapshotBinding) []snapshotBinding {
	var failed []snapshotBinding
	for i := range bs {
		b := &bs[i]
		select {
		case <-w.standby.lead:
			return nil
		default:
		}
		sctx, cancel := context.WithTimeout(ctx, snapshotStartTimeout)
		err := sm.StartSnapshot(sctx, b.id, b.binding)
		cancel()
		if ctx.Err() != nil {
			return bs[i:]
		}
		if err != nil && w.leads() {
			return nil // the leader's Start stopped it, to start the binding afresh
		}
		if err != nil {
			w.log.Warn("webhook snapshot not kept on this standby, will retry", slog.String(logkey.Module, b.owner),
				slog.String(logkey.Binding, b.binding.Name), logkey.Err(err))
			failed = append(failed, *b)
			continue
		}
		w.standby.while(func() { w.standby.ids[b.owner] = append(w.standby.ids[b.owner], b.id) })
	}
	return failed
}

// DropSnapshots stops the snapshot-only monitors that no binding of the
// leader adopted: those of modules enabled does not report. The main queue
// worker calls it once, when the first converge is done.
func (w *Webhooks) DropSnapshots(enabled func(module string) bool) {
	sm, ok := w.opts.Monitors.(SnapshotMonitors)
	if !ok {
		return
	}
	w.standby.mu.Lock()
	ids := w.standby.ids
	w.standby.ids = map[string][]string{}
	w.standby.mu.Unlock()
	for owner, list := range ids {
		if owner != binding.GlobalOwner && enabled(owner) {
			continue // its runs adopt them, or already did
		}
		for _, id := range list {
			sm.StopSnapshot(id)
		}
	}
}

// watchConfig takes the configuration's states into the store, as the
// leader's configuration reactions do, until this replica leads. It
// closes configured once the first state was taken.
func (w *Webhooks) watchConfig(ctx context.Context, configured chan<- struct{}) error {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- w.opts.Standby.Config.Run(wctx) }()
	events := w.opts.Standby.Config.Events()
	first, seen := true, false
	for {
		select {
		case ev := <-events:
			seen = w.takeConfig(ev, seen)
			if first {
				first = false
				close(configured)
			}
		case <-w.standby.lead:
			stop()
			return <-done
		case <-ctx.Done():
			return <-done
		case err := <-done:
			return err
		}
	}
}

// takeConfig applies one configuration state to the store as the leader
// would keep it in force: an invalid content keeps the last valid one, an
// absent ConfigMap is empty until one was seen and then keeps the last
// (or, with --config-map-deleted=empty, is empty). It reports whether a
// ConfigMap has been seen.
func (w *Webhooks) takeConfig(ev config.Event, seen bool) bool {
	switch {
	case ev.Absent && seen && !w.opts.Standby.EmptyWhenMissing:
		return true
	case ev.Err != nil:
		w.log.Warn("configuration not taken on this standby: the last valid one stays in force", logkey.Err(ev.Err))
		return seen || !ev.Absent
	}
	w.standby.while(func() {
		moduleErrs, globalErr := w.opts.Checks.Validate(ev.Config, Own)
		if !Acceptable(w.opts.Store.Config() != nil, len(moduleErrs) > 0, globalErr) {
			w.log.Warn("configuration not taken on this standby: the last valid one stays in force",
				slog.Int(logkey.Count, len(moduleErrs)), logkey.Err(globalErr))
			return
		}
		w.opts.Store.SetConfig(ev.Config)
	})
	return seen || !ev.Absent
}
