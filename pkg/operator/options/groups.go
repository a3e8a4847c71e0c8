package options

import (
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/queue"
)

// Discovery says where the modules and global hooks are: module.Discover's
// input, which the start command and the offline commands (plan, lint,
// rbac, diff) share.
type Discovery struct {
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
}

// Options returns the options that find modules and global hooks as d
// says.
func (d *Discovery) Options(log *slog.Logger) module.Options {
	return module.Options{
		ModulesDirs:     module.SplitDirs(d.ModulesDirs),
		GlobalHooksDir:  d.GlobalHooksDir,
		UnnumberedOrder: d.UnnumberedModulesOrder,
		Logger:          log,
		// module.yaml's requirements.kubernetes is checked against it.
		KubernetesVersion: d.KubernetesVersion,
	}
}

// BindFlags registers the flags of the module tree: --modules-dir,
// --global-hooks-dir and --unnumbered-modules-order.
func (d *Discovery) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&d.ModulesDirs, "modules-dir", d.ModulesDirs,
		"directories with modules, separated by ':' (env ADDON_OPERATOR_MODULES_DIR, MODULES_DIR)")
	fs.StringVar(&d.GlobalHooksDir, "global-hooks-dir", d.GlobalHooksDir,
		"directory with global hooks and their openapi/ schemas (env ADDON_OPERATOR_GLOBAL_HOOKS_DIR, GLOBAL_HOOKS_DIR)")
	fs.IntVar(&d.UnnumberedModulesOrder, "unnumbered-modules-order", d.UnnumberedModulesOrder,
		"order of modules whose directory has no NNN- prefix (env ADDON_OPERATOR_UNNUMBERED_MODULES_ORDER, UNNUMBERED_MODULES_ORDER)")
}

// Config is the configuration source and what its absence means: the
// configuration watch's settings.
type Config struct {
	// ConfigMap is the name of the users' ConfigMap.
	ConfigMap string
	// Deleted says what a ConfigMap deleted while the operator runs
	// means: ConfigMapDeletedKeep or ConfigMapDeletedEmpty. It is the
	// older, narrower form of Missing; "empty" in either applies.
	Deleted string
	// Missing says what a missing configuration source (no ConfigMap, no
	// ModuleConfig object, or one that configures nothing without
	// confirmation) means while a configuration is in force or was saved
	// before a restart: ConfigMissingHold or ConfigMissingEmpty.
	Missing string
}

// The values of Config.Deleted.
const (
	// ConfigMapDeletedKeep keeps the last valid ConfigMap content in force
	// until the ConfigMap is recreated.
	ConfigMapDeletedKeep = "keep"
	// ConfigMapDeletedEmpty applies an empty configuration, as if the
	// ConfigMap had never existed: modules it enabled are uninstalled.
	ConfigMapDeletedEmpty = "empty"
)

// The values of Config.Missing.
const (
	// ConfigMissingHold keeps the last accepted configuration in force,
	// and says so, until the source is back or confirms an empty one.
	ConfigMissingHold = "hold"
	// ConfigMissingEmpty applies an empty configuration: modules the
	// source enabled are uninstalled, their settings reset.
	ConfigMissingEmpty = "empty"
)

// EmptyWhenMissing reports whether a missing source is an empty
// configuration, by --config-missing or the older --config-map-deleted.
func (c Config) EmptyWhenMissing() bool {
	return c.Missing == ConfigMissingEmpty || c.Deleted == ConfigMapDeletedEmpty
}

func (c *Config) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.ConfigMap, "config-map", c.ConfigMap,
		"name of the ConfigMap with global and module settings (env ADDON_OPERATOR_CONFIG_MAP)")
	fs.StringVar(&c.Deleted, "config-map-deleted", c.Deleted,
		"what a ConfigMap deleted while the operator runs means: \"keep\" the last valid configuration until it is recreated, "+
			"or \"empty\" (modules it enabled are uninstalled); the older form of --config-missing (env ADDON_OPERATOR_CONFIG_MAP_DELETED)")
	fs.StringVar(&c.Missing, "config-missing", c.Missing,
		"what a missing configuration source means (no ConfigMap; no ModuleConfig object; or one that configures nothing and lacks "+
			"the annotation addon-operator.io/confirm-empty-config=true) while a configuration is in force or was saved before a restart: "+
			"\"hold\" the last accepted one and say so, or \"empty\" (modules it enabled are uninstalled, settings reset); "+
			"a first install with nothing saved starts empty either way (env ADDON_OPERATOR_CONFIG_MISSING)")
}

// Hooks bound hook runs: the settings of the hook executor the command
// builds.
type Hooks struct {
	// TempDir is where hooks' per-run files are created.
	TempDir string
	// Timeout bounds one hook run; the whole process group is killed then.
	Timeout time.Duration
	// LogMaxBytes bounds the output lines of one hook run that reach the
	// log; see hook.Executor.MaxLogBytes.
	LogMaxBytes int64
}

func (h *Hooks) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&h.TempDir, "tmp-dir", h.TempDir,
		"directory for hooks' per-run files; empty: addon-operator in the system's temporary directory when that is memory (tmpfs), else /dev/shm/addon-operator when /dev/shm is, else /tmp/addon-operator (env ADDON_OPERATOR_TMP_DIR)")
	fs.DurationVar(&h.Timeout, "hook-timeout", h.Timeout,
		"longest a hook may run; then its whole process group is killed (env ADDON_OPERATOR_HOOK_TIMEOUT)")
	fs.Int64Var(&h.LogMaxBytes, "hook-log-max-bytes", h.LogMaxBytes,
		"bytes of a hook run's stdout and stderr lines logged at most; the rest is counted in one warning; 0 logs everything (env ADDON_OPERATOR_HOOK_LOG_MAX_BYTES)")
}

// Retry bounds the backoff of a failing task: the queues', the module
// pool's and a standby's configuration watch's.
type Retry struct {
	// Delay is the first delay; it doubles on each failure up to MaxDelay.
	Delay, MaxDelay time.Duration
}

// Backoff returns the exponential backoff r bounds.
func (r Retry) Backoff() queue.Backoff { return queue.ExponentialBackoff(r.Delay, r.MaxDelay) }

func (r *Retry) bindFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&r.Delay, "retry-delay", r.Delay,
		"first delay before a failed task is retried; it doubles on each failure (env ADDON_OPERATOR_RETRY_DELAY)")
	fs.DurationVar(&r.MaxDelay, "retry-max-delay", r.MaxDelay,
		"longest delay between retries of a failing task (env ADDON_OPERATOR_RETRY_MAX_DELAY)")
}

// Release is how modules' releases are checked for drift and awaited:
// the release manager's settings (release.Options).
type Release struct {
	// HealDrift reverts release objects whose live state drifted from
	// the manifest; without it drift is only reported.
	HealDrift bool
	// DriftDebounce is how long after a change of a release object its
	// module's drift is checked; changes within it share one check.
	DriftDebounce time.Duration
	// DriftResync is how often every deployed release's drift is checked
	// besides the checks on changes; 0 turns it off.
	DriftResync time.Duration
	// ReadinessTimeout bounds how long a module run waits for its release's
	// objects to be ready, unless the module's module.yaml says otherwise.
	ReadinessTimeout time.Duration
}

func (r *Release) bindFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&r.HealDrift, "heal-drift", r.HealDrift,
		"revert fields of release objects that someone changed, instead of only reporting them (env ADDON_OPERATOR_HEAL_DRIFT)")
	fs.DurationVar(&r.DriftDebounce, "drift-debounce", r.DriftDebounce,
		"wait after a change of a release object before its module's drift is checked; changes meanwhile share the check (env ADDON_OPERATOR_DRIFT_DEBOUNCE)")
	fs.DurationVar(&r.DriftResync, "drift-resync", r.DriftResync,
		"how often every release is checked for drift besides the checks on changes; 0 turns it off (env ADDON_OPERATOR_DRIFT_RESYNC)")
	fs.DurationVar(&r.ReadinessTimeout, "readiness-timeout", r.ReadinessTimeout,
		"longest a module run waits for its release's objects to be ready (kstatus) before it fails; a module's module.yaml readinessTimeout overrides it "+
			"(env ADDON_OPERATOR_READINESS_TIMEOUT)")
}

// Remediation is what happens to a module's release after Retries
// deployments in a row failed: the settings of maintenance and
// remediation (upkeep.Options). A module's module.yaml may set its own
// (module.Remediation).
type Remediation struct {
	// Strategy is "none", "rollback" or "uninstall" (see revisions.Remediation).
	Strategy string
	Retries  int
}

func (r *Remediation) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&r.Strategy, "remediation", r.Strategy,
		"what happens to a module's release after --remediation-retries failed deployments in a row: \"none\", \"rollback\" to the last deployed "+
			"revision (a failed install is uninstalled) or \"uninstall\"; the new revision is retried with backoff either way (env ADDON_OPERATOR_REMEDIATION)")
	fs.IntVar(&r.Retries, "remediation-retries", r.Retries,
		"failed deployments of a release in a row before --remediation applies (env ADDON_OPERATOR_REMEDIATION_RETRIES)")
}
