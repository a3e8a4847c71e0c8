package operator

import (
	"context"
	"errors"
	"log/slog"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/confighealth"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// watchConfig turns ConfigMap events into tasks. The first event, valid or
// not, starts the startup sequence.
func (o *Operator) watchConfig(ctx context.Context) error {
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

// observeConfig reacts to one ConfigMap event. An absent ConfigMap is an
// empty configuration until the ConfigMap was seen; after that it is a
// deletion, which keeps the last valid configuration in force (or, with
// --config-map-deleted=empty, applies an empty one), loudly.
func (o *Operator) observeConfig(ev config.Event) {
	if o.recorder != nil {
		o.recorder.ConfigMapPresent(!ev.Absent)
	}
	seen, missing := o.cfgHealth.Observe(!ev.Absent, ev.Err == nil)
	switch {
	case ev.Absent && !seen:
		o.queueApply(ev.Config) // no ConfigMap yet: empty, as documented
		return
	case ev.Absent:
		o.cfgHealth.Deleted()
		if o.opts.ConfigMapDeleted == ConfigMapDeletedEmpty {
			o.queueApply(ev.Config)
		}
		return
	case missing:
		o.cfgHealth.Recreated()
	}
	if ev.Err != nil {
		o.cfgHealth.Reject(ev.Err, false)
		return
	}
	o.queueApply(ev.Config)
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
		Namespace: o.opts.Namespace, Name: o.opts.ConfigMap, KeepDeleted: o.opts.ConfigMapDeleted == ConfigMapDeletedKeep,
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
	err = o.config.Write(ctx, edit)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, config.ErrAbsent):
		log := o.log
		if m != nil {
			log = log.With(slog.String(logkey.Module, m.Name()))
		}
		if o.cfgHealth.FirstPatchKept() {
			log.Warn("config patch kept in memory only: the ConfigMap was deleted", slog.String(logkey.Name, o.opts.ConfigMap))
		} else {
			log.Debug("config patch kept in memory only: the ConfigMap was deleted", slog.String(logkey.Name, o.opts.ConfigMap))
		}
		return nil
	default:
		o.store.RevertEdit(edit, undo)
		return err
	}
}
