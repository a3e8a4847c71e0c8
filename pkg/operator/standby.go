package operator

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

// snapshotMonitors keeps the objects of kubernetes bindings without
// running their hooks; *monitor.Monitors is the real one.
type snapshotMonitors interface {
	// StartSnapshot starts a monitor that keeps objects and sends no
	// events; a later Start of the same id adopts it.
	StartSnapshot(ctx context.Context, id string, b hook.KubernetesBinding) error
	// StopSnapshot stops the monitor id unless Start adopted it.
	StopSnapshot(id string)
}

// configWatch reads the configuration (the ConfigMap, or ModuleConfig
// objects) and sends its states on the channel it was made with; it never
// writes. *config.Source is the real one.
type configWatch interface {
	Run(ctx context.Context) error
}

// standby is what a replica that does not lead knows, so that its webhook
// answers equal the leader's: the configuration in force (in the store)
// and the snapshots webhook bindings include (in snapshot-only monitors).
// mu guards the fields but config and events, which newStandby sets;
// leading is set once, when Run starts.
type standby struct {
	mu sync.Mutex
	// leading is set when Run started: from then on the standby changes
	// nothing.
	leading bool
	// monitorsRun is set when RunStandby runs the monitors, which Run
	// then leaves running.
	monitorsRun bool
	// lead is closed when leading is set.
	lead chan struct{}
	// ids are the snapshot-only monitors started, by owner (a module's
	// name, or binding.GlobalOwner).
	ids map[string][]string
	// config reads the configuration, without writing it, onto events
	// while this replica does not lead; nil reads none.
	config configWatch
	events <-chan config.Event
}

// newStandby returns the standby of a replica that reads the
// configuration with watch (nil: none) onto events.
func newStandby(watch configWatch, events <-chan config.Event) *standby {
	return &standby{lead: make(chan struct{}), ids: map[string][]string{}, config: watch, events: events}
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

// becomeLeader ends the standby's work and reports whether Run must run
// the monitors itself; reset runs under the lock, so no standby change
// follows it.
func (s *standby) becomeLeader(reset func()) (runMonitors bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.leading {
		s.leading = true
		close(s.lead)
		reset()
	}
	return !s.monitorsRun
}

// leads reports whether Run has started.
func (o *Operator) leads() bool {
	select {
	case <-o.standby.lead:
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
// that run no hook and that Run adopts when this replica leads. A binding
// that cannot be watched yet (its CRD is missing) is retried with backoff.
// The configuration watch ends when Run starts; unadopted monitors end
// with the first converge. Call it at most once, before or while Run.
func (o *Operator) RunStandby(ctx context.Context) error {
	if o.webhooks == nil || !o.standby.begin() {
		return nil
	}
	// The monitors run until ctx ends whatever becomes of the rest: Run
	// uses them once this replica leads.
	var wg sync.WaitGroup
	defer wg.Wait()
	configured := make(chan struct{})
	if o.standby.config != nil {
		wg.Go(func() {
			if err := o.watchStandbyConfig(ctx, configured); err != nil {
				o.log.Error("configuration not read on this standby", logkey.Err(err))
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
		case <-o.standby.lead:
			return // the leader serves what it enables
		}
		o.serveStandby(ctx)
	})
	return o.monitors.Run(ctx)
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
func (o *Operator) loadAll(ctx context.Context) ([]ownedHooks, []error) {
	var all []ownedHooks
	var errs []error
	g := o.modules.Global()
	if hooks, err := binding.Load(ctx, o.runner, g.HooksDir(), g.Hooks(), hook.Global); err != nil {
		errs = append(errs, err)
	} else {
		all = append(all, ownedHooks{hooks: hooks})
	}
	for _, m := range o.modules.Modules() {
		if hooks, err := binding.Load(ctx, o.runner, m.Path(), m.Hooks(), hook.Module); err != nil {
			errs = append(errs, fmt.Errorf("module %s: %w", m.Name(), err))
		} else {
			all = append(all, ownedHooks{m: m, hooks: hooks})
		}
	}
	return all, errs
}

// serveLoaded serves the webhook bindings of hooks loaded before.
func (o *Operator) serveLoaded(all []ownedHooks, errs []error) error {
	for _, h := range all {
		owner := ""
		if h.m != nil {
			owner = h.m.Name()
		}
		if err := o.webhooks.Serve(owner, o.webhookEntries(h.m, h.hooks)); err != nil {
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
func (o *Operator) serveStandby(ctx context.Context) {
	all, errs := o.loadAll(ctx)
	sm, _ := o.monitors.(snapshotMonitors)
	var pending []snapshotBinding
	if sm != nil {
		pending = o.startSnapshots(ctx, sm, snapshotBindings(all))
	}
	if err := o.serveLoaded(all, errs); err != nil {
		// Reported once: the leader reports (and retries) the same hooks.
		o.log.Error("webhooks of some hooks not served on this standby", logkey.Err(err))
	}
	delay := o.opts.RetryDelay
	for len(pending) > 0 {
		timer := o.clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-o.standby.lead:
			timer.Stop()
			return
		case <-timer.C():
		}
		delay = min(2*delay, o.opts.RetryMaxDelay)
		pending = o.startSnapshots(ctx, sm, pending)
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
// that failed. It stops early when this replica leads: Run starts the
// bindings then.
func (o *Operator) startSnapshots(ctx context.Context, sm snapshotMonitors, bs []snapshotBinding) []snapshotBinding {
	var failed []snapshotBinding
	for i := range bs {
		b := &bs[i]
		select {
		case <-o.standby.lead:
			return nil
		default:
		}
		sctx, cancel := context.WithTimeout(ctx, snapshotStartTimeout)
		err := sm.StartSnapshot(sctx, b.id, b.binding)
		cancel()
		if ctx.Err() != nil {
			return bs[i:]
		}
		if err != nil && o.leads() {
			return nil // the leader's Start stopped it, to start the binding afresh
		}
		if err != nil {
			o.log.Warn("webhook snapshot not kept on this standby, will retry", slog.String(logkey.Module, b.owner),
				slog.String(logkey.Binding, b.binding.Name), logkey.Err(err))
			failed = append(failed, *b)
			continue
		}
		o.standby.while(func() { o.standby.ids[b.owner] = append(o.standby.ids[b.owner], b.id) })
	}
	return failed
}

// dropStandbySnapshots stops the snapshot-only monitors that no binding of
// the leader adopted: those of modules that are not enabled. Called once,
// by the main queue worker when the first converge is done.
func (o *Operator) dropStandbySnapshots() {
	sm, ok := o.monitors.(snapshotMonitors)
	if !ok {
		return
	}
	o.standby.mu.Lock()
	ids := o.standby.ids
	o.standby.ids = map[string][]string{}
	o.standby.mu.Unlock()
	for owner, list := range ids {
		if owner != binding.GlobalOwner && o.state.get(owner).Enabled {
			continue // its runs adopt them, or already did
		}
		for _, id := range list {
			sm.StopSnapshot(id)
		}
	}
}

// watchStandbyConfig takes the configuration's states into the store, as
// the leader's ConfigMap reactions do, until this replica leads. It
// closes configured once the first state was taken.
func (o *Operator) watchStandbyConfig(ctx context.Context, configured chan<- struct{}) error {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- o.standby.config.Run(wctx) }()
	first, seen := true, false
	for {
		select {
		case ev := <-o.standby.events:
			seen = o.takeStandbyConfig(ev, seen)
			if first {
				first = false
				close(configured)
			}
		case <-o.standby.lead:
			stop()
			return <-done
		case <-ctx.Done():
			return <-done
		case err := <-done:
			return err
		}
	}
}

// takeStandbyConfig applies one configuration state to the store as the
// leader would keep it in force: an invalid content keeps the last valid
// one, an absent ConfigMap is empty until one was seen and then keeps the
// last (or, with --config-map-deleted=empty, is empty). It reports whether
// a ConfigMap has been seen.
func (o *Operator) takeStandbyConfig(ev config.Event, seen bool) bool {
	switch {
	case ev.Absent && seen && !o.opts.emptyWhenMissing():
		return true
	case ev.Err != nil:
		o.log.Warn("configuration not taken on this standby: the last valid one stays in force", logkey.Err(ev.Err))
		return seen || !ev.Absent
	}
	o.standby.while(func() {
		moduleErrs, globalErr := o.validateConfig(ev.Config, ownCheck)
		if !configAcceptable(o.store.Config() != nil, len(moduleErrs) > 0, globalErr) {
			o.log.Warn("configuration not taken on this standby: the last valid one stays in force",
				slog.Int(logkey.Count, len(moduleErrs)), logkey.Err(globalErr))
			return
		}
		o.store.SetConfig(ev.Config)
	})
	return seen || !ev.Absent
}

// configAcceptable says whether a content is taken into use, as the
// leader decides it: never with an invalid global section; with invalid
// module sections only when no content is in force yet (those modules are
// then skipped).
func configAcceptable(haveConfig, moduleErrs bool, globalErr error) bool {
	return globalErr == nil && (!haveConfig || !moduleErrs)
}
