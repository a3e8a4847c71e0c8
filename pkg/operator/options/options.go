// Package options is the operator's settings: each concern's group of
// them, their defaults, their flags and their validation. The command
// binds and checks them; pkg/operator takes the built value.
package options

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/addon-operator/addon-operator/pkg/helm/revisions"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// Options configure the operator. Defaults come from Default; flags from
// BindFlags; environment fallbacks are applied by the command. Each group
// is the settings of the concern that uses it.
type Options struct {
	// Discovery finds the modules and global hooks.
	Discovery Discovery
	// Namespace is where the ConfigMap and all releases live.
	Namespace string
	// Config is the configuration source and what its absence means.
	Config Config
	// Hooks bound hook runs (the command's hook.Executor).
	Hooks Hooks
	// Retry bounds the backoff of a failing task.
	Retry Retry
	// Release is how modules' releases are checked for drift and awaited.
	Release Release
	// Remediation is what happens to a release whose deployments fail.
	Remediation Remediation
	// ModuleWorkers is how many module runs may be in progress at once.
	ModuleWorkers int
	// MaxValuesReruns bounds how often afterHelm hooks may change a module's
	// values in a row before the module run fails.
	MaxValuesReruns int
}

// Default returns the defaults documented in --help.
func Default() Options {
	return Options{
		Discovery: Discovery{
			ModulesDirs:            "modules",
			GlobalHooksDir:         "global-hooks",
			UnnumberedModulesOrder: module.DefaultUnnumberedOrder,
		},
		Config: Config{
			ConfigMap: "addon-operator",
			Deleted:   ConfigMapDeletedKeep,
			Missing:   ConfigMissingHold,
		},
		Hooks:       Hooks{Timeout: 10 * time.Minute, LogMaxBytes: 256 << 10},
		Retry:       Retry{Delay: 5 * time.Second, MaxDelay: time.Minute},
		Release:     Release{DriftDebounce: 200 * time.Millisecond, DriftResync: 10 * time.Minute, ReadinessTimeout: 5 * time.Minute},
		Remediation: Remediation{Strategy: "none", Retries: 3},
		// MaxValuesReruns has no flag.
		MaxValuesReruns: 10,
		ModuleWorkers:   4,
	}
}

// BindFlags registers a flag for every option.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	o.Discovery.BindFlags(fs)
	fs.StringVar(&o.Namespace, "namespace", o.Namespace,
		"namespace of the ConfigMap and of every module's Helm release (env ADDON_OPERATOR_NAMESPACE; required)")
	o.Config.bindFlags(fs)
	o.Hooks.bindFlags(fs)
	o.Release.bindFlags(fs)
	o.Remediation.bindFlags(fs)
	fs.IntVar(&o.ModuleWorkers, "module-workers", o.ModuleWorkers,
		"module runs doing work in the operator at once; modules that do not wait for each other run in parallel; a run waiting for its objects to be ready holds no worker, nor one waiting for its hook's process while fewer than 4 a worker wait so (env ADDON_OPERATOR_MODULE_WORKERS)")
	o.Retry.bindFlags(fs)
}

// Validate reports options that cannot work.
func (o *Options) Validate() error {
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("--namespace (ADDON_OPERATOR_NAMESPACE) is required"))
	}
	if o.Discovery.ModulesDirs == "" {
		errs = append(errs, errors.New("--modules-dir must name at least one directory"))
	}
	if o.Config.ConfigMap == "" {
		errs = append(errs, errors.New("--config-map must not be empty"))
	}
	for _, d := range []struct {
		flag string
		val  time.Duration
	}{
		{"--hook-timeout", o.Hooks.Timeout}, {"--retry-delay", o.Retry.Delay},
		{"--retry-max-delay", o.Retry.MaxDelay}, {"--readiness-timeout", o.Release.ReadinessTimeout},
	} {
		if d.val <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", d.flag, d.val))
		}
	}
	if o.Release.DriftDebounce < 0 || o.Release.DriftResync < 0 {
		errs = append(errs, fmt.Errorf("--drift-debounce and --drift-resync must not be negative, got %s and %s", o.Release.DriftDebounce, o.Release.DriftResync))
	}
	// An empty remediation is none, as in Options built without defaults.
	if r, err := revisions.ParseRemediation(cmp.Or(o.Remediation.Strategy, string(revisions.RemediationNone))); err != nil {
		errs = append(errs, fmt.Errorf("--remediation: %w", err))
	} else if r != revisions.RemediationNone && o.Remediation.Retries < 1 {
		errs = append(errs, fmt.Errorf("--remediation-retries must be at least 1, got %d", o.Remediation.Retries))
	}
	if o.Hooks.LogMaxBytes < 0 {
		errs = append(errs, fmt.Errorf("--hook-log-max-bytes must not be negative, got %d", o.Hooks.LogMaxBytes))
	}
	if o.Config.Deleted != ConfigMapDeletedKeep && o.Config.Deleted != ConfigMapDeletedEmpty {
		errs = append(errs, fmt.Errorf("--config-map-deleted must be %q or %q, got %q", ConfigMapDeletedKeep, ConfigMapDeletedEmpty, o.Config.Deleted))
	}
	if o.Config.Missing != ConfigMissingHold && o.Config.Missing != ConfigMissingEmpty {
		errs = append(errs, fmt.Errorf("--config-missing must be %q or %q, got %q", ConfigMissingHold, ConfigMissingEmpty, o.Config.Missing))
	}
	if o.ModuleWorkers < 1 {
		errs = append(errs, fmt.Errorf("--module-workers must be at least 1, got %d", o.ModuleWorkers))
	}
	if o.Retry.MaxDelay < o.Retry.Delay {
		errs = append(errs, fmt.Errorf("--retry-max-delay %s is shorter than --retry-delay %s", o.Retry.MaxDelay, o.Retry.Delay))
	}
	return errors.Join(errs...)
}
