package operator

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"time"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// settingsChecker runs the settings checks of module SDK batch binaries;
// *hook.Executor is the real one.
type settingsChecker interface {
	HasSettingsCheck(ctx context.Context, path string) (bool, error)
	CachedSettingsCheck(path string, settings values.Values) (hook.SettingsCheckResult, bool)
	CheckSettings(ctx context.Context, path string, settings values.Values) (hook.SettingsCheckResult, error)
}

// Who asks for a settings check. Admission requests come from whoever may
// write the configuration, at the rate they choose; each new settings
// value starts a process. They share admissionCheckSlots processes and
// must be answered within the webhook's timeout (5 s), so they wait at
// most admissionCheckTime for a slot and the check together, and are
// refused when the slots stay taken. The operator's own readers (the
// leader taking a configuration into use, a standby) take no slot: a
// flood of admission requests cannot keep a configuration from being
// checked when it is applied.
type checkOrigin int

const (
	ownCheck checkOrigin = iota
	admissionCheck
)

const (
	admissionCheckSlots = 2
	admissionCheckTime  = 4 * time.Second
)

// checkSlots are the admission requests' share of settings checks: a
// token per running check, and the time each request may take.
type checkSlots struct {
	tokens chan struct{}
	time   time.Duration
}

// errChecksBusy is the refusal of an admission request that found every
// settings check slot taken for its whole wait.
var errChecksBusy = errors.New("settings check not run: every admission check slot stayed busy; the change is refused, try again")

// validateConfig checks a configuration as every reader of it does (the
// admission webhooks, the leader taking it into use, a standby): each
// section against its schema, then each module section its schema accepts
// by the settings checks of the module's batch binaries ("hook check").
// A section a check rejects is invalid with the check's message, as a
// schema error is: a new configuration with it is refused and the last
// good one stays in force. Its callers (admission among them) have no
// context: each check is bounded by hook.SettingsCheckTimeout instead.
func (o *Operator) validateConfig(c *config.Config, origin checkOrigin) (map[string]error, error) {
	moduleErrs, globalErr := o.store.ValidateConfig(c)
	checker, ok := o.runner.(settingsChecker)
	if !ok || c == nil {
		return moduleErrs, globalErr
	}
	for _, m := range o.modules.Modules() {
		section, has := c.Modules[m.Key()]
		if !has || moduleErrs[m.Name()] != nil {
			continue
		}
		if err := o.checkSettings(checker, m.Name(), m.Hooks(), section, origin); err != nil {
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
//nolint:contextcheck,nolintlint // contextcheck reads this on the declaration: the context is made here, see validateConfig
func (o *Operator) checkSettings(checker settingsChecker, module string, paths []string, section values.Values, origin checkOrigin) error {
	limit := hook.SettingsCheckTimeout
	if origin == admissionCheck {
		limit = o.admissionChecks.time
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for _, p := range paths {
		has, err := checker.HasSettingsCheck(ctx, p)
		if err != nil {
			o.log.Warn("settings check not found out", slog.String(logkey.Module, module), slog.String(logkey.Hook, p), logkey.Err(err))
			continue
		}
		if !has {
			continue
		}
		res, err := o.admissionChecks.run(ctx, checker, p, section, origin, o.log)
		if errors.Is(err, errChecksBusy) {
			return err
		}
		if err != nil {
			return errors.New("settings check failed to run: " + err.Error())
		}
		for _, w := range res.Warnings {
			o.log.Warn("settings check warns", slog.String(logkey.Module, module), slog.String(logkey.Hook, p), slog.String(logkey.Reason, w))
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
func (slots checkSlots) run(ctx context.Context, checker settingsChecker, path string, section values.Values, origin checkOrigin, log *slog.Logger) (hook.SettingsCheckResult, error) {
	if origin == ownCheck {
		return checker.CheckSettings(ctx, path, section)
	}
	if res, ok := checker.CachedSettingsCheck(path, section); ok {
		return res, nil
	}
	select {
	case slots.tokens <- struct{}{}:
		defer func() { <-slots.tokens }()
	case <-ctx.Done():
		log.Warn("admission settings check refused: every slot busy", slog.String(logkey.Hook, path), slog.Int(logkey.Count, cap(slots.tokens)))
		return hook.SettingsCheckResult{}, errChecksBusy
	}
	return checker.CheckSettings(ctx, path, section)
}
