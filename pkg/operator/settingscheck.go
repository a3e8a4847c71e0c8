package operator

import (
	"context"
	"errors"
	"log/slog"
	"maps"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// settingsChecker runs the settings checks of module SDK batch binaries;
// *hook.Executor is the real one.
type settingsChecker interface {
	HasSettingsCheck(ctx context.Context, path string) (bool, error)
	CheckSettings(ctx context.Context, path string, settings values.Values) (hook.SettingsCheckResult, error)
}

// validateConfig checks a configuration as every reader of it does (the
// admission webhooks, the leader taking it into use, a standby): each
// section against its schema, then each module section its schema accepts
// by the settings checks of the module's batch binaries ("hook check").
// A section a check rejects is invalid with the check's message, as a
// schema error is: a new configuration with it is refused and the last
// good one stays in force. Its callers (admission among them) have no
// context: each check is bounded by hook.SettingsCheckTimeout instead.
func (o *Operator) validateConfig(c *config.Config) (map[string]error, error) {
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
		if err := o.checkSettings(checker, m.Name(), m.Hooks(), section); err != nil {
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
func (o *Operator) checkSettings(checker settingsChecker, module string, paths []string, section values.Values) error {
	ctx, cancel := context.WithTimeout(context.Background(), hook.SettingsCheckTimeout)
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
		res, err := checker.CheckSettings(ctx, p, section)
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
