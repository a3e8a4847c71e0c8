package configwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// lastAppliedRetry is how long a failed read of the saved configuration
// waits before the next.
const lastAppliedRetry = 5 * time.Second

// loadLastApplied reads the configuration saved before this start into
// w.saved, retrying while the API does not answer. A Secret that cannot
// be used is remembered in w.savedErr: a missing source then holds
// nothing but drops nothing either. It returns false once ctx is done.
func (w *Watch) loadLastApplied(ctx context.Context) bool {
	if w.opts.LastApplied == nil {
		return true
	}
	for {
		c, err := w.opts.LastApplied.Load(ctx)
		switch {
		case err == nil:
			w.saved = c
			return true
		case errors.Is(err, config.ErrLastAppliedUnreadable):
			w.savedErr = err
			w.log.Warn("last applied configuration unreadable: a missing configuration source drops nothing", logkey.Err(err))
			return true
		}
		w.log.Warn("last applied configuration not read, will retry", logkey.Err(err))
		t := w.opts.Clock.NewTimer(lastAppliedRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C():
		}
	}
}

// observe reacts to one configuration event. A missing source (no
// ConfigMap, no ModuleConfig) or one that configures nothing without
// confirmation holds the last accepted configuration (of this run, or
// saved before it) instead of applying an empty one, loudly; with
// --config-missing=empty, or with nothing to lose, it is an empty
// configuration. An invalid content is rejected; at startup the saved
// configuration is put in force in its place. See config.DecideHold.
func (w *Watch) observe(ev config.Event) {
	if w.opts.Recorder != nil && !ev.ModuleConfigs {
		w.opts.Recorder.ConfigMapPresent(!ev.Absent)
	}
	seen, missing := w.health.Observe(!ev.Absent, ev.Err == nil)
	switch {
	case ev.Absent && seen && !ev.ModuleConfigs:
		w.health.Deleted()
	case !ev.Absent && missing:
		w.health.Recreated()
	}
	reason := config.DecideHold(config.HoldInput{
		Absent: ev.Absent, Invalid: ev.Err != nil, Empty: ev.Err == nil && ev.Config.IsEmpty(),
		Confirmed: ev.Confirmed, ModuleConfigs: ev.ModuleConfigs, Last: w.lastKind(),
		EmptyWhenMissing: w.opts.EmptyWhenMissing,
	})
	if ev.Err != nil {
		w.health.Reject(ev.Err, false)
		// At startup the saved configuration takes the place of the
		// rejected one; later the one in force simply stays.
		if w.accepted == nil && w.saved != nil {
			w.hold(reason)
		} else if w.health.Held() != "" {
			w.hold(reason)
		}
		return
	}
	if reason != "" {
		w.hold(reason)
		return
	}
	if ev.Config.IsEmpty() && w.lastKind() == config.LastKept {
		w.log.Warn("applying an empty configuration", slog.String(logkey.Reason, emptyReason(ev.Confirmed)))
	}
	w.health.Release()
	w.accepted = ev.Config
	w.opts.Queue.Apply(ev.Config)
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
func (w *Watch) lastKind() config.Last {
	switch {
	case w.accepted != nil:
		return config.LastOf(w.accepted)
	case w.savedErr != nil:
		return config.LastUnreadable
	default:
		return config.LastOf(w.saved)
	}
}

// hold keeps the last accepted configuration in force for reason: at
// startup, nothing accepted yet, that is the saved one, queued now.
func (w *Watch) hold(reason string) {
	held := "the configuration accepted last in this run"
	if w.accepted == nil {
		switch {
		case w.saved != nil:
			w.accepted = w.saved
			w.opts.Queue.Apply(w.saved)
			held = fmt.Sprintf("the configuration saved before this start (Secret %s/%s, checksum %s)",
				w.opts.Namespace, w.opts.LastApplied.Name(), w.saved.Sum())
		case w.savedErr != nil:
			held = "nothing: the saved configuration is unreadable, so modules are not started, changed or removed"
		}
	}
	w.health.Hold(reason, holdNote(reason, held, w.opts.ConfigMap))
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
