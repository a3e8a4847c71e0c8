package config

// ConfirmEmptyAnnotation is the annotation that, set to "true" on the
// ConfigMap (or on any ModuleConfig), confirms that an empty configuration is meant: without it
// a source that says nothing while a configuration is in force, or was
// saved before a restart, does not uninstall or reset anything.
const ConfirmEmptyAnnotation = "addon-operator.io/confirm-empty-config"

// Why a configuration is held: the last accepted one stays in force
// instead of what the source says. They are the values of the
// addon_operator_config_held metric's reason label.
const (
	// HoldConfigMapMissing: the ConfigMap does not exist.
	HoldConfigMapMissing = "ConfigMapMissing"
	// HoldNoModuleConfigs: no ModuleConfig object exists.
	HoldNoModuleConfigs = "NoModuleConfigs"
	// HoldEmptyUnconfirmed: the source exists but configures nothing, and
	// carries no ConfirmEmptyAnnotation.
	HoldEmptyUnconfirmed = "EmptyUnconfirmed"
	// HoldInvalid: the source's content is rejected.
	HoldInvalid = "ConfigInvalid"
)

// HoldReasons lists every hold reason, for metrics that publish each.
func HoldReasons() []string {
	return []string{HoldConfigMapMissing, HoldNoModuleConfigs, HoldEmptyUnconfirmed, HoldInvalid}
}

// Last says what configuration there is to lose.
type Last int

// The values of Last.
const (
	// LastNone: no configuration was accepted before, in this run or a
	// saved one (a first install).
	LastNone Last = iota
	// LastEmpty: the configuration accepted last configures nothing.
	LastEmpty
	// LastKept: the configuration accepted last configures something.
	LastKept
	// LastUnreadable: a saved configuration exists but cannot be read.
	// Nothing can be put in force from it, and nothing may be dropped
	// because of it.
	LastUnreadable
)

// LastOf classifies the configuration accepted last: c nil is none.
func LastOf(c *Config) Last {
	switch {
	case c == nil:
		return LastNone
	case c.IsEmpty():
		return LastEmpty
	default:
		return LastKept
	}
}

// HoldInput is what the hold decision looks at.
type HoldInput struct {
	// Absent: the source does not exist (no ConfigMap, no ModuleConfig).
	Absent bool
	// Invalid: the source's content is rejected.
	Invalid bool
	// Empty: the source's content is valid and configures nothing.
	Empty bool
	// Confirmed: the source carries ConfirmEmptyAnnotation.
	Confirmed bool
	// ModuleConfigs: the source is ModuleConfig objects, not the ConfigMap.
	ModuleConfigs bool
	// Last is the configuration that would be lost.
	Last Last
	// EmptyWhenMissing: --config-missing=empty, a missing source is an
	// empty configuration, as before holding existed.
	EmptyWhenMissing bool
}

// DecideHold says whether the source's content is put in force ("") or
// the last accepted configuration is held, and why. A missing or empty
// source replaces a configuration only when there is nothing to lose, when
// --config-missing=empty says so, or when an existing source confirms it;
// an invalid one never does.
func DecideHold(in HoldInput) string {
	switch {
	case in.Invalid:
		return HoldInvalid
	case !in.Absent && !in.Empty:
		return ""
	case in.Last == LastNone || in.Last == LastEmpty:
		return "" // nothing to lose: a first install
	case in.EmptyWhenMissing:
		return ""
	case !in.Absent && in.Confirmed:
		return ""
	case in.Absent && in.ModuleConfigs:
		return HoldNoModuleConfigs
	case in.Absent:
		return HoldConfigMapMissing
	default:
		return HoldEmptyUnconfirmed
	}
}

// IsEmpty reports whether the configuration configures nothing: no global
// values, no module values, no Enabled flag and no maintenance mode.
func (c *Config) IsEmpty() bool {
	if c == nil {
		return true
	}
	if len(c.Global) > 0 || len(c.Enabled) > 0 || len(c.Maintenance) > 0 {
		return false
	}
	for _, v := range c.Modules {
		if len(v) > 0 {
			return false
		}
	}
	return true
}
