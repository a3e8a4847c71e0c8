package operator

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// Options configure the operator. Defaults come from DefaultOptions; flags
// from BindFlags; environment fallbacks are applied by the command.
type Options struct {
	// ModulesDirs is a ':'-separated list of directories with modules.
	ModulesDirs string
	// GlobalHooksDir holds global hooks (in hooks/ or directly) and openapi/.
	GlobalHooksDir string
	// UnnumberedModulesOrder is the order of modules without an NNN- prefix.
	UnnumberedModulesOrder int
	// KubernetesVersion is the cluster's version, read from discovery at
	// start (no flag); "" leaves module.yaml's requirements.kubernetes
	// unchecked.
	KubernetesVersion string
	// Namespace is where the ConfigMap and all releases live.
	Namespace string
	// ConfigMap is the name of the users' ConfigMap.
	ConfigMap string
	// TempDir is where hooks' per-run files are created.
	TempDir string
	// HookTimeout bounds one hook run; the whole process group is killed then.
	HookTimeout time.Duration
	// HookLogMaxBytes bounds the output lines of one hook run that reach
	// the log; see hook.Executor.MaxLogBytes.
	HookLogMaxBytes int64
	// RetryDelay and RetryMaxDelay bound the backoff of a failing task.
	RetryDelay, RetryMaxDelay time.Duration
	// HealDrift reverts release objects whose live state drifted from
	// the manifest; without it drift is only reported.
	HealDrift bool
	// DriftDebounce is how long after a change of a release object its
	// module's drift is checked; changes within it share one check.
	DriftDebounce time.Duration
	// DriftResync is how often every deployed release's drift is checked
	// besides the checks on changes; 0 turns it off.
	DriftResync time.Duration
	// Remediation is what happens to a module's release after
	// RemediationRetries deployments in a row failed: "none", "rollback"
	// or "uninstall" (see helm.Remediation). A module's module.yaml may
	// set its own (module.Remediation).
	Remediation        string
	RemediationRetries int
	// ModuleWorkers is how many module runs may be in progress at once.
	ModuleWorkers int
	// MaxValuesReruns bounds how often afterHelm hooks may change a module's
	// values in a row before the module run fails.
	MaxValuesReruns int
	// ConfigMapDeleted says what a ConfigMap deleted while the operator
	// runs means: ConfigMapDeletedKeep or ConfigMapDeletedEmpty. It is the
	// older, narrower form of ConfigMissing; "empty" in either applies.
	ConfigMapDeleted string
	// ConfigMissing says what a missing configuration source (no
	// ConfigMap, no ModuleConfig object, or one that configures nothing
	// without confirmation) means while a configuration is in force or
	// was saved before a restart: ConfigMissingHold or ConfigMissingEmpty.
	ConfigMissing string
	// ReadinessTimeout bounds how long a module run waits for its release's
	// objects to be ready, unless the module's module.yaml says otherwise.
	ReadinessTimeout time.Duration
}

// The values of Options.ConfigMapDeleted.
const (
	// ConfigMapDeletedKeep keeps the last valid ConfigMap content in force
	// until the ConfigMap is recreated.
	ConfigMapDeletedKeep = "keep"
	// ConfigMapDeletedEmpty applies an empty configuration, as if the
	// ConfigMap had never existed: modules it enabled are uninstalled.
	ConfigMapDeletedEmpty = "empty"
)

// The values of Options.ConfigMissing.
const (
	// ConfigMissingHold keeps the last accepted configuration in force,
	// and says so, until the source is back or confirms an empty one.
	ConfigMissingHold = "hold"
	// ConfigMissingEmpty applies an empty configuration: modules the
	// source enabled are uninstalled, their settings reset.
	ConfigMissingEmpty = "empty"
)

// emptyWhenMissing reports whether a missing source is an empty
// configuration, by --config-missing or the older --config-map-deleted.
func (o *Options) emptyWhenMissing() bool {
	return o.ConfigMissing == ConfigMissingEmpty || o.ConfigMapDeleted == ConfigMapDeletedEmpty
}

// DefaultOptions returns the defaults documented in --help.
func DefaultOptions() Options {
	return Options{
		ModulesDirs:            "modules",
		GlobalHooksDir:         "global-hooks",
		UnnumberedModulesOrder: module.DefaultUnnumberedOrder,
		ConfigMap:              "addon-operator",
		TempDir:                "",
		HookTimeout:            10 * time.Minute,
		HookLogMaxBytes:        256 << 10,
		RetryDelay:             5 * time.Second,
		RetryMaxDelay:          time.Minute,
		MaxValuesReruns:        10,
		ModuleWorkers:          4,
		DriftDebounce:          200 * time.Millisecond,
		Remediation:            "none",
		RemediationRetries:     3,
		DriftResync:            10 * time.Minute,
		ConfigMapDeleted:       ConfigMapDeletedKeep,
		ConfigMissing:          ConfigMissingHold,
		ReadinessTimeout:       5 * time.Minute,
	}
}

// Discovery returns the options that find modules and global hooks as
// these options say.
func (o *Options) Discovery(log *slog.Logger) module.Options {
	return module.Options{
		ModulesDirs:     module.SplitDirs(o.ModulesDirs),
		GlobalHooksDir:  o.GlobalHooksDir,
		UnnumberedOrder: o.UnnumberedModulesOrder,
		Logger:          log,
		// module.yaml's requirements.kubernetes is checked against it.
		KubernetesVersion: o.KubernetesVersion,
	}
}

// BindFlags registers a flag for every option.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ModulesDirs, "modules-dir", o.ModulesDirs,
		"directories with modules, separated by ':' (env ADDON_OPERATOR_MODULES_DIR, MODULES_DIR)")
	fs.StringVar(&o.GlobalHooksDir, "global-hooks-dir", o.GlobalHooksDir,
		"directory with global hooks and their openapi/ schemas (env ADDON_OPERATOR_GLOBAL_HOOKS_DIR, GLOBAL_HOOKS_DIR)")
	fs.IntVar(&o.UnnumberedModulesOrder, "unnumbered-modules-order", o.UnnumberedModulesOrder,
		"order of modules whose directory has no NNN- prefix (env ADDON_OPERATOR_UNNUMBERED_MODULES_ORDER, UNNUMBERED_MODULES_ORDER)")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace,
		"namespace of the ConfigMap and of every module's Helm release (env ADDON_OPERATOR_NAMESPACE; required)")
	fs.StringVar(&o.ConfigMap, "config-map", o.ConfigMap,
		"name of the ConfigMap with global and module settings (env ADDON_OPERATOR_CONFIG_MAP)")
	fs.StringVar(&o.ConfigMapDeleted, "config-map-deleted", o.ConfigMapDeleted,
		"what a ConfigMap deleted while the operator runs means: \"keep\" the last valid configuration until it is recreated, "+
			"or \"empty\" (modules it enabled are uninstalled); the older form of --config-missing (env ADDON_OPERATOR_CONFIG_MAP_DELETED)")
	fs.StringVar(&o.ConfigMissing, "config-missing", o.ConfigMissing,
		"what a missing configuration source means (no ConfigMap; no ModuleConfig object; or one that configures nothing and lacks "+
			"the annotation addon-operator.io/confirm-empty-config=true) while a configuration is in force or was saved before a restart: "+
			"\"hold\" the last accepted one and say so, or \"empty\" (modules it enabled are uninstalled, settings reset); "+
			"a first install with nothing saved starts empty either way (env ADDON_OPERATOR_CONFIG_MISSING)")
	fs.StringVar(&o.TempDir, "tmp-dir", o.TempDir,
		"directory for hooks' per-run files; empty: addon-operator in the system's temporary directory when that is memory (tmpfs), else /dev/shm/addon-operator when /dev/shm is, else /tmp/addon-operator (env ADDON_OPERATOR_TMP_DIR)")
	fs.DurationVar(&o.HookTimeout, "hook-timeout", o.HookTimeout,
		"longest a hook may run; then its whole process group is killed (env ADDON_OPERATOR_HOOK_TIMEOUT)")
	fs.Int64Var(&o.HookLogMaxBytes, "hook-log-max-bytes", o.HookLogMaxBytes,
		"bytes of a hook run's stdout and stderr lines logged at most; the rest is counted in one warning; 0 logs everything (env ADDON_OPERATOR_HOOK_LOG_MAX_BYTES)")
	fs.BoolVar(&o.HealDrift, "heal-drift", o.HealDrift,
		"revert fields of release objects that someone changed, instead of only reporting them (env ADDON_OPERATOR_HEAL_DRIFT)")
	fs.DurationVar(&o.DriftDebounce, "drift-debounce", o.DriftDebounce,
		"wait after a change of a release object before its module's drift is checked; changes meanwhile share the check (env ADDON_OPERATOR_DRIFT_DEBOUNCE)")
	fs.DurationVar(&o.DriftResync, "drift-resync", o.DriftResync,
		"how often every release is checked for drift besides the checks on changes; 0 turns it off (env ADDON_OPERATOR_DRIFT_RESYNC)")
	fs.StringVar(&o.Remediation, "remediation", o.Remediation,
		"what happens to a module's release after --remediation-retries failed deployments in a row: \"none\", \"rollback\" to the last deployed "+
			"revision (a failed install is uninstalled) or \"uninstall\"; the new revision is retried with backoff either way (env ADDON_OPERATOR_REMEDIATION)")
	fs.IntVar(&o.RemediationRetries, "remediation-retries", o.RemediationRetries,
		"failed deployments of a release in a row before --remediation applies (env ADDON_OPERATOR_REMEDIATION_RETRIES)")
	fs.IntVar(&o.ModuleWorkers, "module-workers", o.ModuleWorkers,
		"module runs doing work in the operator at once; modules that do not wait for each other run in parallel; a run waiting for its objects to be ready holds no worker, nor one waiting for its hook's process while fewer than 4 a worker wait so (env ADDON_OPERATOR_MODULE_WORKERS)")
	fs.DurationVar(&o.ReadinessTimeout, "readiness-timeout", o.ReadinessTimeout,
		"longest a module run waits for its release's objects to be ready (kstatus) before it fails; a module's module.yaml readinessTimeout overrides it "+
			"(env ADDON_OPERATOR_READINESS_TIMEOUT)")
	fs.DurationVar(&o.RetryDelay, "retry-delay", o.RetryDelay,
		"first delay before a failed task is retried; it doubles on each failure (env ADDON_OPERATOR_RETRY_DELAY)")
	fs.DurationVar(&o.RetryMaxDelay, "retry-max-delay", o.RetryMaxDelay,
		"longest delay between retries of a failing task (env ADDON_OPERATOR_RETRY_MAX_DELAY)")
}

// Validate reports options that cannot work.
func (o *Options) Validate() error {
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("--namespace (ADDON_OPERATOR_NAMESPACE) is required"))
	}
	if o.ModulesDirs == "" {
		errs = append(errs, errors.New("--modules-dir must name at least one directory"))
	}
	if o.ConfigMap == "" {
		errs = append(errs, errors.New("--config-map must not be empty"))
	}
	for _, d := range []struct {
		flag string
		val  time.Duration
	}{
		{"--hook-timeout", o.HookTimeout}, {"--retry-delay", o.RetryDelay},
		{"--retry-max-delay", o.RetryMaxDelay}, {"--readiness-timeout", o.ReadinessTimeout},
	} {
		if d.val <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", d.flag, d.val))
		}
	}
	if o.DriftDebounce < 0 || o.DriftResync < 0 {
		errs = append(errs, fmt.Errorf("--drift-debounce and --drift-resync must not be negative, got %s and %s", o.DriftDebounce, o.DriftResync))
	}
	// An empty remediation is none, as in Options built without defaults.
	if r, err := helm.ParseRemediation(cmp.Or(o.Remediation, string(helm.RemediationNone))); err != nil {
		errs = append(errs, fmt.Errorf("--remediation: %w", err))
	} else if r != helm.RemediationNone && o.RemediationRetries < 1 {
		errs = append(errs, fmt.Errorf("--remediation-retries must be at least 1, got %d", o.RemediationRetries))
	}
	if o.HookLogMaxBytes < 0 {
		errs = append(errs, fmt.Errorf("--hook-log-max-bytes must not be negative, got %d", o.HookLogMaxBytes))
	}
	if o.ConfigMapDeleted != ConfigMapDeletedKeep && o.ConfigMapDeleted != ConfigMapDeletedEmpty {
		errs = append(errs, fmt.Errorf("--config-map-deleted must be %q or %q, got %q", ConfigMapDeletedKeep, ConfigMapDeletedEmpty, o.ConfigMapDeleted))
	}
	if o.ConfigMissing != ConfigMissingHold && o.ConfigMissing != ConfigMissingEmpty {
		errs = append(errs, fmt.Errorf("--config-missing must be %q or %q, got %q", ConfigMissingHold, ConfigMissingEmpty, o.ConfigMissing))
	}
	if o.ModuleWorkers < 1 {
		errs = append(errs, fmt.Errorf("--module-workers must be at least 1, got %d", o.ModuleWorkers))
	}
	if o.RetryMaxDelay < o.RetryDelay {
		errs = append(errs, fmt.Errorf("--retry-max-delay %s is shorter than --retry-delay %s", o.RetryMaxDelay, o.RetryDelay))
	}
	return errors.Join(errs...)
}
