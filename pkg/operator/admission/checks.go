// Package admission is what every replica answers at admission: the
// configuration's checks (schemas, the module SDK's settings checks,
// exclusive groups, unknown keys), hooks' webhook bindings served and
// registered with the webhook server it builds, and, on a standby, the
// configuration and snapshots its webhook answers need.
package admission

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/store"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// SettingsChecker runs the settings checks of module SDK batch binaries;
// *hook.Executor is the real one.
type SettingsChecker interface {
	HasSettingsCheck(ctx context.Context, path string) (bool, error)
	CachedSettingsCheck(path string, settings values.Values) (hook.SettingsCheckResult, bool)
	CheckSettings(ctx context.Context, path string, settings values.Values) (hook.SettingsCheckResult, error)
}

// Origin is who asks for a settings check. Admission requests come from
// whoever may write the configuration, at the rate they choose; each new
// settings value starts a process. They share admissionCheckSlots
// processes and must be answered within the webhook's timeout (5 s), so
// they wait at most admissionCheckTime for a slot and the check together,
// and are refused when the slots stay taken. The operator's own readers
// (the leader taking a configuration into use, a standby) take no slot: a
// flood of admission requests cannot keep a configuration from being
// checked when it is applied.
type Origin int

// The origins of settings checks.
const (
	// Own is the operator's own reading of the configuration.
	Own Origin = iota
	// Admission is an admission request's.
	Admission
)

const (
	admissionCheckSlots = 2
	admissionCheckTime  = 4 * time.Second
)

// ErrChecksBusy is the refusal of an admission request that found every
// settings check slot taken for its whole wait.
var ErrChecksBusy = errors.New("settings check not run: every admission check slot stayed busy; the change is refused, try again")

// Checks check a configuration as every reader of it does (the admission
// webhooks, the leader taking it into use, a standby). They read immutable
// schemas and module definitions, the values store's validation and the
// enabled modules through the func they were built with; they are safe for
// concurrent use, on every replica.
type Checks struct {
	modules *module.Set
	store   *store.Store
	// checker runs settings checks; nil runs none.
	checker SettingsChecker
	// enabled returns the modules enabled now, by name.
	enabled func() map[string]bool
	log     *slog.Logger
	// tokens are the admission requests' share of settings checks, one
	// per running check; admissionTime is the time each request may take.
	tokens        chan struct{}
	admissionTime time.Duration
}

// NewChecks returns the checks of the configuration of modules, validated
// by st, with the settings checks of checker (nil: none) and the enabled
// modules enabled returns (nil: none).
func NewChecks(modules *module.Set, st *store.Store, checker SettingsChecker, enabled func() map[string]bool, log *slog.Logger) *Checks {
	if enabled == nil {
		enabled = func() map[string]bool { return map[string]bool{} }
	}
	return &Checks{modules: modules, store: st, checker: checker, enabled: enabled, log: log,
		tokens: make(chan struct{}, admissionCheckSlots), admissionTime: admissionCheckTime}
}

// Validate checks each section against its schema, then each module
// section its schema accepts by the settings checks of the module's batch
// binaries ("hook check"). A section a check rejects is invalid with the
// check's message, as a schema error is: a new configuration with it is
// refused and the last good one stays in force. Its callers (admission
// among them) have no context: each check is bounded by
// hook.SettingsCheckTimeout instead, an admission request's by its share.
func (c *Checks) Validate(cfg *config.Config, origin Origin) (map[string]error, error) {
	moduleErrs, globalErr := c.store.ValidateConfig(cfg)
	if c.checker == nil || cfg == nil {
		return moduleErrs, globalErr
	}
	for _, m := range c.modules.Modules() {
		section, has := cfg.Modules[m.Key()]
		if !has || moduleErrs[m.Name()] != nil {
			continue
		}
		if err := c.checkSettings(m.Name(), m.Hooks(), section, origin); err != nil {
			if moduleErrs == nil {
				moduleErrs = map[string]error{}
			} else {
				moduleErrs = maps.Clone(moduleErrs)
			}
			moduleErrs[m.Name()] = err
		}
	}
	return moduleErrs, globalErr
}

// checkSettings runs the settings check of each batch binary among paths
// that has one, with section; the first rejection is the error. A check
// that cannot run is an error too: settings it never saw are not taken.
//
//nolint:contextcheck,nolintlint // contextcheck reads this on the declaration: the context is made here, see Validate
func (c *Checks) checkSettings(name string, paths []string, section values.Values, origin Origin) error {
	limit := hook.SettingsCheckTimeout
	if origin == Admission {
		limit = c.admissionTime
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for _, p := range paths {
		has, err := c.checker.HasSettingsCheck(ctx, p)
		if err != nil {
			c.log.Warn("settings check not found out", slog.String(logkey.Module, name), slog.String(logkey.Hook, p), logkey.Err(err))
			continue
		}
		if !has {
			continue
		}
		res, err := c.run(ctx, p, section, origin)
		if errors.Is(err, ErrChecksBusy) {
			return err
		}
		if err != nil {
			return errors.New("settings check failed to run: " + err.Error())
		}
		for _, w := range res.Warnings {
			c.log.Warn("settings check warns", slog.String(logkey.Module, name), slog.String(logkey.Hook, p), slog.String(logkey.Reason, w))
		}
		if !res.Valid {
			msg := res.Message
			if msg == "" {
				msg = "rejected without a message"
			}
			return errors.New("settings check: " + msg)
		}
	}
	return nil
}

// run runs one check; an admission request runs it in one of the slots
// unless the answer for these settings is known.
func (c *Checks) run(ctx context.Context, path string, section values.Values, origin Origin) (hook.SettingsCheckResult, error) {
	if origin == Own {
		return c.checker.CheckSettings(ctx, path, section)
	}
	if res, ok := c.checker.CachedSettingsCheck(path, section); ok {
		return res, nil
	}
	select {
	case c.tokens <- struct{}{}:
		defer func() { <-c.tokens }()
	case <-ctx.Done():
		c.log.Warn("admission settings check refused: every slot busy", slog.String(logkey.Hook, path), slog.Int(logkey.Count, cap(c.tokens)))
		return hook.SettingsCheckResult{}, ErrChecksBusy
	}
	return c.checker.CheckSettings(ctx, path, section)
}

// Acceptable says whether a content is taken into use, as the leader
// decides it: never with an invalid global section; with invalid module
// sections only when no content is in force yet (those modules are then
// skipped).
func Acceptable(haveConfig, moduleErrs bool, globalErr error) bool {
	return globalErr == nil && (!haveConfig || !moduleErrs)
}

// HasModule reports whether a module of that name was discovered.
func (c *Checks) HasModule(name string) bool {
	_, ok := c.modules.Module(name)
	return ok
}

// SectionErrs turns module names to their sections' errors into key
// errors, by module name.
func (c *Checks) SectionErrs(moduleErrs map[string]error) []error {
	errs := make([]error, 0, len(moduleErrs))
	for _, name := range slices.Sorted(maps.Keys(moduleErrs)) {
		m, _ := c.modules.Module(name)
		errs = append(errs, &config.KeyError{Key: m.Key(), Err: moduleErrs[name]})
	}
	return errs
}

// moduleByKey returns the name of the module whose values key is key.
func (c *Checks) moduleByKey(key string) (string, bool) {
	i := slices.IndexFunc(c.modules.Modules(), func(m *module.Module) bool { return m.Key() == key })
	if i < 0 {
		return "", false
	}
	return c.modules.Modules()[i].Name(), true
}

// CheckModuleConfig checks a ModuleConfig object, as JSON, at admission:
// its settings as the configuration's checks take them, and its enabling
// against the module's exclusiveGroup.
func (c *Checks) CheckModuleConfig(object []byte) error {
	if err := config.CheckModuleConfig(object, c.HasModule, func(cfg *config.Config) (map[string]error, error) {
		return c.Validate(cfg, Admission)
	}); err != nil {
		return err
	}
	return c.checkExclusiveModuleConfig(object)
}

// checkExclusiveModuleConfig refuses a ModuleConfig that enables a module
// while another module of its exclusiveGroup is enabled.
func (c *Checks) checkExclusiveModuleConfig(object []byte) error {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(object); err != nil {
		return nil //nolint:nilerr // the ModuleConfig check reports it
	}
	on, found, err := unstructured.NestedBool(u.Object, "spec", "enabled")
	if err != nil || !found {
		return nil //nolint:nilerr // nothing switched; a wrong type is the ModuleConfig check's
	}
	if _, ok := c.modules.Module(u.GetName()); !ok {
		return nil
	}
	if err := c.checkExclusive(map[string]bool{u.GetName(): on}); err != nil {
		return fmt.Errorf("spec.enabled: %w", err)
	}
	return nil
}

// checkExclusive checks a change of enabled states, module name to the
// state a write asks for, against the enabled modules now.
func (c *Checks) checkExclusive(enable map[string]bool) error {
	after := c.enabled()
	switchedOn := map[string]bool{}
	for name, on := range enable {
		if on && !after[name] {
			switchedOn[name] = true
		}
		after[name] = on
	}
	errs := c.modules.ExclusiveConflicts(after, switchedOn)
	for _, err := range errs {
		c.log.Warn("configuration refused", slog.String(logkey.Reason, err.Error()))
	}
	return errors.Join(errs...)
}
