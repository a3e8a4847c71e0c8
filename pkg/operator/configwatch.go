package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// configMapEvents records Kubernetes Events about the ConfigMap itself;
// *event.Recorder is the real one.
type configMapEvents interface {
	ConfigMapDeleted(kept bool)
	ConfigMapRecreated()
	ConfigRejected(keys []string, err error)
}

// configHealth is what is wrong with the ConfigMap now. The ConfigMap
// watch and the main queue worker write it; the mutex lets status readers
// in.
type configHealth struct {
	mu sync.Mutex
	// seen is set once the ConfigMap was seen to exist with a content
	// that parses: from then on its absence is a deletion of a
	// configuration, not "no configuration yet".
	seen bool
	// missingSince is when the ConfigMap was deleted; zero while it exists.
	missingSince time.Time
	// invalid is the last rejection, nil once a valid content was applied.
	invalid        error
	invalidSince   time.Time
	invalidSkipped bool // only sections were invalid, at startup: their modules are skipped
	// patchKept is set once a hook's config patch was kept in memory
	// because the ConfigMap is missing: later ones are not warned about.
	patchKept bool
}

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
				o.main.PushBack(task{Kind: taskStartup})
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
	seen, missing := o.configPresence(!ev.Absent, ev.Err == nil)
	switch {
	case ev.Absent && !seen:
		o.queueApply(ev.Config) // no ConfigMap yet: empty, as documented
		return
	case ev.Absent:
		o.configMapDeleted()
		if o.opts.ConfigMapDeleted == ConfigMapDeletedEmpty {
			o.queueApply(ev.Config)
		}
		return
	case missing:
		o.log.Info("ConfigMap recreated, applying its content", slog.String("namespace", o.opts.Namespace), slog.String("name", o.opts.ConfigMap))
		if o.configEvents != nil {
			o.configEvents.ConfigMapRecreated()
		}
	}
	if ev.Err != nil {
		o.rejectConfig(ev.Err, false)
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
	o.main.Remove(isKind(taskApplyConfig))
	o.main.PushFront(task{Kind: taskApplyConfig, Config: c})
}

// configPresence records whether the ConfigMap exists and whether its
// content parses, and returns whether a content that parses had been seen
// before and whether the ConfigMap was missing (deleted) until now. A
// ConfigMap deleted before any of its contents parsed leaves no
// configuration to keep: its absence is an empty one, as at start.
func (o *Operator) configPresence(present, parses bool) (seen, wasMissing bool) {
	o.cfgHealth.mu.Lock()
	defer o.cfgHealth.mu.Unlock()
	seen, wasMissing = o.cfgHealth.seen, !o.cfgHealth.missingSince.IsZero()
	if present {
		o.cfgHealth.missingSince, o.cfgHealth.patchKept = time.Time{}, false
		o.cfgHealth.seen = o.cfgHealth.seen || parses
	}
	return seen, wasMissing
}

// configMapDeleted reports a ConfigMap deleted while the operator runs:
// once, however long it stays away. A rejection of its last content no
// longer matters: that content is gone.
func (o *Operator) configMapDeleted() {
	o.cfgHealth.mu.Lock()
	already := !o.cfgHealth.missingSince.IsZero()
	if !already {
		o.cfgHealth.missingSince = o.clock.Now()
	}
	o.cfgHealth.invalid = nil
	o.cfgHealth.mu.Unlock()
	if already {
		return
	}
	kept := o.opts.ConfigMapDeleted == ConfigMapDeletedKeep
	attrs := []any{slog.String("namespace", o.opts.Namespace), slog.String("name", o.opts.ConfigMap)}
	if kept {
		o.log.Warn("ConfigMap deleted, keeping the last valid configuration until it is recreated", attrs...)
	} else {
		o.log.Warn("ConfigMap deleted, applying an empty configuration", attrs...)
	}
	if o.configEvents != nil {
		o.configEvents.ConfigMapDeleted(kept)
	}
}

// firstPatchKept reports whether this is the first config patch kept in
// memory since the ConfigMap went missing.
func (o *Operator) firstPatchKept() bool {
	o.cfgHealth.mu.Lock()
	defer o.cfgHealth.mu.Unlock()
	first := !o.cfgHealth.patchKept
	o.cfgHealth.patchKept = true
	return first
}

// keepsDeletedConfig reports whether a write must not create the
// ConfigMap: it was seen, and its deletion keeps the last configuration.
func (o *Operator) keepsDeletedConfig() bool {
	o.cfgHealth.mu.Lock()
	defer o.cfgHealth.mu.Unlock()
	return o.cfgHealth.seen && o.opts.ConfigMapDeleted == ConfigMapDeletedKeep
}

// rejectConfig reports a rejected ConfigMap content: one WARN line, the
// error counter, an Event naming the keys, and a status condition until a
// valid content is applied. skipped says that only module sections were
// invalid at startup, so their modules are skipped rather than a last
// valid configuration kept.
func (o *Operator) rejectConfig(err error, skipped bool) {
	o.cfgHealth.mu.Lock()
	o.cfgHealth.invalid, o.cfgHealth.invalidSince, o.cfgHealth.invalidSkipped = err, o.clock.Now(), skipped
	o.cfgHealth.mu.Unlock()
	attrs := []any{slog.String("name", o.opts.ConfigMap), slog.String("error", err.Error())}
	if skipped {
		o.log.Warn("ConfigMap has invalid sections, skipping their modules", attrs...)
	} else {
		o.log.Warn("ConfigMap is invalid, keeping the last valid one", attrs...)
	}
	if o.recorder != nil {
		o.recorder.ConfigError()
	}
	if o.configEvents != nil {
		o.configEvents.ConfigRejected(config.InvalidKeys(err), err)
	}
}

// acceptConfig clears a rejection once a valid content is applied.
func (o *Operator) acceptConfig() {
	o.cfgHealth.mu.Lock()
	was := o.cfgHealth.invalid
	o.cfgHealth.invalid = nil
	o.cfgHealth.mu.Unlock()
	if was != nil {
		o.log.Info("ConfigMap is valid again", slog.String("name", o.opts.ConfigMap))
	}
}

// configErr returns the last rejection, nil once a valid content came.
func (o *Operator) configErr() error {
	o.cfgHealth.mu.Lock()
	defer o.cfgHealth.mu.Unlock()
	return o.cfgHealth.invalid
}

// Conditions returns what is wrong with the ConfigMap now: its deletion
// and the rejection of its content, each with what the operator does
// about it.
func (o *Operator) Conditions() []status.Condition {
	o.cfgHealth.mu.Lock()
	defer o.cfgHealth.mu.Unlock()
	h := &o.cfgHealth
	ref := o.opts.Namespace + "/" + o.opts.ConfigMap
	var out []status.Condition
	if !h.missingSince.IsZero() {
		msg := fmt.Sprintf("ConfigMap %s was deleted; the last valid configuration stays in force until it is recreated (--config-map-deleted=keep)", ref)
		if o.opts.ConfigMapDeleted == ConfigMapDeletedEmpty {
			msg = fmt.Sprintf("ConfigMap %s was deleted; an empty configuration is in force (--config-map-deleted=empty)", ref)
		}
		out = append(out, status.Condition{Type: status.ConditionConfigMapMissing, Message: msg, Since: h.missingSince})
	}
	if h.invalid != nil {
		then := "the last valid configuration stays in force until it is fixed"
		if h.invalidSkipped {
			then = "modules whose section is invalid are skipped until it is fixed"
		}
		out = append(out, status.Condition{
			Type:    status.ConditionConfigMapInvalid,
			Message: fmt.Sprintf("ConfigMap %s is invalid: %v; %s", ref, h.invalid, then),
			Since:   h.invalidSince, Keys: config.InvalidKeys(h.invalid),
		})
	}
	return out
}

// queueModuleRun asks for a run of the module because its inputs changed
// (its ConfigMap section, its values): a module failing and waiting for its
// backoff runs at once. A run already pending absorbs it.
func (o *Operator) queueModuleRun(name string) {
	o.pool.retryNow(name, nil)
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
	edit, undo, err := o.store.applyConfigPatch(m, p, policy)
	if err != nil || len(edit.Sections)+len(edit.Enabled) == 0 {
		return err
	}
	edit.NoCreate = o.keepsDeletedConfig()
	err = o.config.Write(ctx, edit)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, config.ErrAbsent):
		log := o.log
		if m != nil {
			log = log.With(slog.String("module", m.Name()))
		}
		if o.firstPatchKept() {
			log.Warn("config patch kept in memory only: the ConfigMap was deleted", slog.String("name", o.opts.ConfigMap))
		} else {
			log.Debug("config patch kept in memory only: the ConfigMap was deleted", slog.String("name", o.opts.ConfigMap))
		}
		return nil
	default:
		o.store.revertEdit(edit, undo)
		return err
	}
}
