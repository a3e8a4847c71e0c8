// Package confighealth tracks what is wrong with the users' ConfigMap as
// the operator sees it (deleted, or a content rejected by its schemas, and
// the modules skipped for it) and reports it: status conditions, one log
// line per change, Kubernetes Events and the config error counter.
package confighealth

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// Events records Kubernetes Events about the ConfigMap itself;
// *event.Recorder is the real one.
type Events interface {
	ConfigMapDeleted(kept bool)
	ConfigMapRecreated()
	ConfigRejected(keys []string, err error)
	ConfigHeld(reason, note string)
}

// Options say which ConfigMap is tracked and where reports go.
type Options struct {
	Namespace, Name string
	// KeepDeleted says that a deleted ConfigMap's last valid
	// configuration stays in force (--config-map-deleted=keep).
	KeepDeleted bool
	Clock       clock.PassiveClock
	Logger      *slog.Logger
	// Events and Recorder may be nil.
	Events   Events
	Recorder *metrics.Recorder
}

// Tracker is what is wrong with the ConfigMap now. The ConfigMap watch,
// the main queue worker and module runs (through config patches) write
// it; its methods are safe for concurrent use.
type Tracker struct {
	namespace, name string
	keepDeleted     bool
	clock           clock.PassiveClock
	log             *slog.Logger
	events          Events
	recorder        *metrics.Recorder

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
	// skipped holds modules whose ConfigMap section failed its schema at
	// startup; they are skipped until a valid section arrives.
	skipped map[string]error
	// held is why the last accepted configuration is held instead of
	// the source's (a config.Hold* reason), "" while it is not; heldNote
	// says what is held and what ends it.
	held, heldNote string
	heldSince      time.Time
}

// New returns a tracker of a ConfigMap not seen yet.
func New(o Options) *Tracker {
	return &Tracker{
		namespace: o.Namespace, name: o.Name, keepDeleted: o.KeepDeleted,
		clock: o.Clock, log: o.Logger, events: o.Events, recorder: o.Recorder, skipped: map[string]error{},
	}
}

// Observe records whether the ConfigMap exists and whether its
// content parses, and returns whether a content that parses had been seen
// before and whether the ConfigMap was missing (deleted) until now. A
// ConfigMap deleted before any of its contents parsed leaves no
// configuration to keep: its absence is an empty one, as at start.
func (t *Tracker) Observe(present, parses bool) (seen, wasMissing bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen, wasMissing = t.seen, !t.missingSince.IsZero()
	if present {
		t.missingSince, t.patchKept = time.Time{}, false
		t.seen = t.seen || parses
	}
	return seen, wasMissing
}

// Deleted reports a ConfigMap deleted while the operator runs:
// once, however long it stays away. A rejection of its last content no
// longer matters: that content is gone.
func (t *Tracker) Deleted() {
	t.mu.Lock()
	already := !t.missingSince.IsZero()
	if !already {
		t.missingSince = t.clock.Now()
	}
	t.invalid = nil
	t.mu.Unlock()
	if already {
		return
	}
	kept := t.keepDeleted
	attrs := []any{slog.String(logkey.Namespace, t.namespace), slog.String(logkey.Name, t.name)}
	if kept {
		t.log.Warn("ConfigMap deleted, keeping the last valid configuration until it is recreated", attrs...)
	} else {
		t.log.Warn("ConfigMap deleted, applying an empty configuration", attrs...)
	}
	if t.events != nil {
		t.events.ConfigMapDeleted(kept)
	}
}

// FirstPatchKept reports whether this is the first config patch kept in
// memory since the ConfigMap went missing.
func (t *Tracker) FirstPatchKept() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	first := !t.patchKept
	t.patchKept = true
	return first
}

// KeepsDeleted reports whether a write must not create the source: the
// ConfigMap was seen and its deletion keeps the last configuration, or
// the configuration is held because the source is missing.
func (t *Tracker) KeepsDeleted() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return (t.seen && t.keepDeleted) || t.held == config.HoldConfigMapMissing || t.held == config.HoldNoModuleConfigs
}

// Reject reports a rejected ConfigMap content: one WARN line, the
// error counter, an Event naming the keys, and a status condition until a
// valid content is applied. skipped says that only module sections were
// invalid at startup, so their modules are skipped rather than a last
// valid configuration kept.
func (t *Tracker) Reject(err error, skipped bool) {
	t.mu.Lock()
	t.invalid, t.invalidSince, t.invalidSkipped = err, t.clock.Now(), skipped
	t.mu.Unlock()
	attrs := []any{slog.String(logkey.Name, t.name), logkey.Err(err)}
	if skipped {
		t.log.Warn("ConfigMap has invalid sections, skipping their modules", attrs...)
	} else {
		t.log.Warn("ConfigMap is invalid, keeping the last valid one", attrs...)
	}
	if t.recorder != nil {
		t.recorder.ConfigError()
	}
	if t.events != nil {
		t.events.ConfigRejected(config.InvalidKeys(err), err)
	}
}

// Accept clears a rejection once a valid content is applied.
func (t *Tracker) Accept() {
	t.mu.Lock()
	was := t.invalid
	t.invalid = nil
	t.mu.Unlock()
	if was != nil {
		t.log.Info("ConfigMap is valid again", slog.String(logkey.Name, t.name))
	}
}

// Err returns the last rejection, nil once a valid content came.
func (t *Tracker) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.invalid
}

// Conditions returns what is wrong with the ConfigMap now: its deletion
// and the rejection of its content, each with what the operator does
// about it.
func (t *Tracker) Conditions() []status.Condition {
	t.mu.Lock()
	defer t.mu.Unlock()
	ref := t.namespace + "/" + t.name
	var out []status.Condition
	if !t.missingSince.IsZero() {
		msg := fmt.Sprintf("ConfigMap %s was deleted; the last valid configuration stays in force until it is recreated (--config-map-deleted=keep)", ref)
		if !t.keepDeleted {
			msg = fmt.Sprintf("ConfigMap %s was deleted; an empty configuration is in force (--config-map-deleted=empty)", ref)
		}
		out = append(out, status.Condition{Type: status.ConditionConfigMapMissing, Message: msg, Since: t.missingSince})
	}
	if t.held != "" {
		out = append(out, status.Condition{Type: status.ConditionConfigHeld, Reason: t.held,
			Message: t.held + ": " + t.heldNote, Since: t.heldSince})
	}
	if t.invalid != nil {
		then := "the last valid configuration stays in force until it is fixed"
		if t.invalidSkipped {
			then = "modules whose section is invalid are skipped until it is fixed"
		}
		out = append(out, status.Condition{
			Type:    status.ConditionConfigMapInvalid,
			Message: fmt.Sprintf("ConfigMap %s is invalid: %v; %s", ref, t.invalid, then),
			Since:   t.invalidSince, Keys: config.InvalidKeys(t.invalid),
		})
	}
	return out
}

// Hold reports that the last accepted configuration is held instead of
// what the source says, for reason (a config.Hold* reason); note says
// what is held and what ends it. A new reason logs a WARN line and
// records an Event; the condition and the addon_operator_config_held
// metric say it until Release.
func (t *Tracker) Hold(reason, note string) {
	t.mu.Lock()
	same := t.held == reason
	if !same {
		t.held, t.heldSince = reason, t.clock.Now()
	}
	t.heldNote = note
	t.mu.Unlock()
	if same {
		return
	}
	if t.recorder != nil {
		t.recorder.ConfigHeld(reason, config.HoldReasons())
	}
	t.log.Warn("configuration held", slog.String(logkey.Reason, reason+": "+note))
	if t.events != nil {
		t.events.ConfigHeld(reason, note)
	}
}

// Release ends a hold: the source's content is in force again.
func (t *Tracker) Release() {
	t.mu.Lock()
	was := t.held
	t.held, t.heldNote = "", ""
	t.mu.Unlock()
	if t.recorder != nil {
		t.recorder.ConfigHeld("", config.HoldReasons())
	}
	if was != "" {
		t.log.Info("configuration no longer held", slog.String(logkey.Reason, was))
	}
}

// Held returns why the configuration is held, "" while it is not.
func (t *Tracker) Held() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held
}

// Recreated reports a deleted ConfigMap that exists again.
func (t *Tracker) Recreated() {
	t.log.Info("ConfigMap recreated, applying its content", slog.String(logkey.Namespace, t.namespace), slog.String(logkey.Name, t.name))
	if t.events != nil {
		t.events.ConfigMapRecreated()
	}
}

// SkipSections records the modules whose ConfigMap section failed its
// schema and are skipped until a valid section arrives; it replaces the
// previous record.
func (t *Tracker) SkipSections(errs map[string]error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.skipped = errs
}

// SectionErr returns why a module is skipped, nil when it is not.
func (t *Tracker) SectionErr(module string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.skipped[module]
}
