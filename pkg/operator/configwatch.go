package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/confighealth"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// watchConfig turns ConfigMap events into tasks. The first event, valid or
// not, starts the startup sequence. The configuration saved before this
// start is read first: what the first event means depends on it.
func (o *Operator) watchConfig(ctx context.Context) error {
	if !o.loadLastApplied(ctx) {
		return nil
	}
	first := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-o.events:
			o.observeConfig(ev)
			if first {
				first = false
				o.main.PushBack(startupTask{})
			}
		}
	}
}

// lastAppliedRetry is how long a failed read of the saved configuration
// waits before the next.
const lastAppliedRetry = 5 * time.Second

// loadLastApplied reads the configuration saved before this start into
// o.saved, retrying while the API does not answer. A Secret that cannot
// be used is remembered in o.savedErr: a missing source then holds
// nothing but drops nothing either. It returns false once ctx is done.
func (o *Operator) loadLastApplied(ctx context.Context) bool {
	if o.lastApplied == nil {
		return true
	}
	for {
		c, err := o.lastApplied.Load(ctx)
		switch {
		case err == nil:
			o.saved = c
			return true
		case errors.Is(err, config.ErrLastAppliedUnreadable):
			o.savedErr = err
			o.log.Warn("last applied configuration unreadable: a missing configuration source drops nothing", logkey.Err(err))
			return true
		}
		o.log.Warn("last applied configuration not read, will retry", logkey.Err(err))
		t := o.clock.NewTimer(lastAppliedRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C():
		}
	}
}

// observeConfig reacts to one configuration event. A missing source (no
// ConfigMap, no ModuleConfig) or one that configures nothing without
// confirmation holds the last accepted configuration (of this run, or
// saved before it) instead of applying an empty one, loudly; with
// --config-missing=empty, or with nothing to lose, it is an empty
// configuration. An invalid content is rejected; at startup the saved
// configuration is put in force in its place. See config.DecideHold.
func (o *Operator) observeConfig(ev config.Event) {
	if o.recorder != nil && !ev.ModuleConfigs {
		o.recorder.ConfigMapPresent(!ev.Absent)
	}
	seen, missing := o.cfgHealth.Observe(!ev.Absent, ev.Err == nil)
	switch {
	case ev.Absent && seen && !ev.ModuleConfigs:
		o.cfgHealth.Deleted()
	case !ev.Absent && missing:
		o.cfgHealth.Recreated()
	}
	reason := config.DecideHold(config.HoldInput{
		Absent: ev.Absent, Invalid: ev.Err != nil, Empty: ev.Err == nil && ev.Config.IsEmpty(),
		Confirmed: ev.Confirmed, ModuleConfigs: ev.ModuleConfigs, Last: o.lastKind(),
		EmptyWhenMissing: o.opts.Config.EmptyWhenMissing(),
	})
	if ev.Err != nil {
		o.cfgHealth.Reject(ev.Err, false)
		// At startup the saved configuration takes the place of the
		// rejected one; later the one in force simply stays.
		if o.accepted == nil && o.saved != nil {
			o.hold(reason)
		} else if o.cfgHealth.Held() != "" {
			o.hold(reason)
		}
		return
	}
	if reason != "" {
		o.hold(reason)
		return
	}
	if ev.Config.IsEmpty() && o.lastKind() == config.LastKept {
		o.log.Warn("applying an empty configuration", slog.String(logkey.Reason, emptyReason(ev.Confirmed)))
	}
	o.cfgHealth.Release()
	o.accepted = ev.Config
	o.queueApply(ev.Config)
}

// emptyReason says why an empty configuration replaces one in force.
func emptyReason(confirmed bool) string {
	if confirmed {
		return "the source carries " + config.ConfirmEmptyAnnotation
	}
	return "--config-missing=empty"
}

// lastKind says what configuration a missing source would drop: the one
// accepted in this run, else the one saved before it.
func (o *Operator) lastKind() config.Last {
	switch {
	case o.accepted != nil:
		return config.LastOf(o.accepted)
	case o.savedErr != nil:
		return config.LastUnreadable
	default:
		return config.LastOf(o.saved)
	}
}

// hold keeps the last accepted configuration in force for reason: at
// startup, nothing accepted yet, that is the saved one, queued now.
func (o *Operator) hold(reason string) {
	held := "the configuration accepted last in this run"
	if o.accepted == nil {
		switch {
		case o.saved != nil:
			o.accepted = o.saved
			o.queueApply(o.saved)
			held = fmt.Sprintf("the configuration saved before this start (Secret %s/%s, checksum %s)",
				o.opts.Namespace, o.lastApplied.Name(), o.saved.Sum())
		case o.savedErr != nil:
			held = "nothing: the saved configuration is unreadable, so modules are not started, changed or removed"
		}
	}
	o.cfgHealth.Hold(reason, holdNote(reason, held, o.opts.Config.ConfigMap))
}

// holdNote says what is held, why and what ends it.
func holdNote(reason, held, configMap string) string {
	const confirm = "; create it with the annotation " + config.ConfirmEmptyAnnotation + "=true and no data to apply an empty configuration"
	switch reason {
	case config.HoldConfigMapMissing:
		return "ConfigMap " + configMap + " does not exist; holding " + held + " until it is created" + confirm
	case config.HoldNoModuleConfigs:
		return "no ModuleConfig object exists; holding " + held + " until one is created; create ModuleConfig global with the annotation " +
			config.ConfirmEmptyAnnotation + "=true and no spec to apply an empty configuration"
	case config.HoldEmptyUnconfirmed:
		return "the configuration source configures nothing and lacks the annotation " + config.ConfirmEmptyAnnotation +
			"=true; holding " + held + " until it configures something or carries the annotation"
	default:
		return "the configuration source is invalid; holding " + held + " until it is fixed"
	}
}

// queueApply puts a ConfigMap content at the head of the main queue, in
// place of any content still waiting there: each content is the whole
// ConfigMap, so only the latest matters, and an older one handled after it
// would put stale values back in force. This goroutine is the only one
// that queues contents, so removing and pushing need no lock together.
func (o *Operator) queueApply(c *config.Config) {
	o.main.Remove(is[applyConfigTask])
	o.main.PushFront(applyConfigTask{config: c})
}

// Conditions returns what the operator works around now: the ConfigMap's
// deletion and the rejection of its content, and releases it left in
// place as not its own, each with what the operator does about it.
func (o *Operator) Conditions() []status.Condition {
	conds := o.cfgHealth.Conditions()
	if c := o.foreign.Load(); c != nil {
		conds = append(conds, *c)
	}
	return conds
}

// newConfigHealth tracks the ConfigMap's health for the options in force.
func (o *Operator) newConfigHealth(events confighealth.Events) *confighealth.Tracker {
	return confighealth.New(confighealth.Options{
		Namespace: o.opts.Namespace, Name: o.opts.Config.ConfigMap, KeepDeleted: !o.opts.Config.EmptyWhenMissing(),
		Clock: o.clock, Logger: o.log, Events: events, Recorder: o.recorder,
	})
}

// queueModuleRun asks for a run of the module because its inputs changed
// (its ConfigMap section, its values): a module failing and waiting for its
// backoff runs at once. A run already pending absorbs it.
func (o *Operator) queueModuleRun(name string) {
	o.pool.RetryNow(name, nil)
}

// writeConfigPatch applies a hook's config-values patch and writes the
// changed keys back to the ConfigMap. m is nil for global hooks. The patch
// is computed and applied in one step; a failed write undoes only the keys
// it wrote and that nothing changed since. While a deleted ConfigMap's
// last configuration is kept, the patch is kept in memory only: writing it
// would recreate the ConfigMap with these keys alone.
func (o *Operator) writeConfigPatch(ctx context.Context, m *module.Module, p values.Patch) error {
	if len(p) == 0 {
		return nil
	}
	policy := values.GlobalHookRoots()
	if m != nil {
		policy = values.ModuleHookRoots(m.Key())
	}
	// Applied before the write, so the watch event that echoes it (which
	// the main queue may handle before Write even returns) changes nothing.
	edit, undo, err := o.store.ApplyConfigPatch(m, p, policy)
	if err != nil || len(edit.Sections)+len(edit.Enabled) == 0 {
		return err
	}
	edit.NoCreate = o.cfgHealth.KeepsDeleted()
	held := o.cfgHealth.Held() == config.HoldEmptyUnconfirmed
	if held {
		// Writing would give the empty source a part of the
		// configuration, which would then replace all of it.
		err = config.ErrAbsent
	} else {
		err = o.config.Write(ctx, edit)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, config.ErrAbsent):
		log := o.log
		if m != nil {
			log = log.With(slog.String(logkey.Module, m.Name()))
		}
		level := slog.LevelDebug
		if o.cfgHealth.FirstPatchKept() {
			level = slog.LevelWarn
		}
		if held {
			log.Log(ctx, level, "config patch kept in memory only: the configuration is held", slog.String(logkey.Name, o.opts.Config.ConfigMap))
		} else {
			log.Log(ctx, level, "config patch kept in memory only: the ConfigMap was deleted", slog.String(logkey.Name, o.opts.Config.ConfigMap))
		}
		return nil
	default:
		o.store.RevertEdit(edit, undo)
		return err
	}
}
