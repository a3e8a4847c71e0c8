// Package config owns the user ConfigMap: it parses the global and per-module
// config values and Enabled flags out of it, classifies changes between two
// parses, watches it, and writes hooks' config patches back to it.
package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// DefaultName is the name of the ConfigMap when none is configured.
const DefaultName = "addon-operator"

// GlobalKey is the ConfigMap key that holds the global config values.
const GlobalKey = "global"

// enabledSuffix turns a module key into its Enabled key: "certManagerEnabled".
const enabledSuffix = "Enabled"

// ErrInvalid matches, with errors.Is, every error Parse returns: the
// ConfigMap's content is wrong, as opposed to the API being unreachable.
var ErrInvalid = errors.New("invalid config")

// KeyError reports one ConfigMap key whose value or name is wrong. Parse
// returns one or more of them joined with errors.Join; find them with
// errors.As. Every KeyError matches ErrInvalid.
type KeyError struct {
	Key string // the ConfigMap key as written
	Err error  // what is wrong with it
}

func (e *KeyError) Error() string { return fmt.Sprintf("key %q: %v", e.Key, e.Err) }

// Unwrap returns the cause.
func (e *KeyError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalid.
func (e *KeyError) Is(target error) bool { return target == ErrInvalid }

// InvalidKeys returns, sorted and without duplicates, the keys named by
// every *KeyError in err's tree (errors.Join and %w wrapping are followed).
func InvalidKeys(err error) []string {
	var keys []string
	var walk func(error)
	walk = func(e error) {
		if ke, ok := e.(*KeyError); ok { //nolint:errorlint // the tree is walked by hand, each node once
			keys = append(keys, ke.Key)
		}
		switch u := e.(type) { //nolint:errorlint // the tree is walked by hand, each node once
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			if inner := u.Unwrap(); inner != nil {
				walk(inner)
			}
		}
	}
	if err != nil {
		walk(err)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// Config is one parse of the ConfigMap. Parse never leaves a map nil. A
// Config is a value: nothing in this package mutates one after Parse
// returns it, and callers that change its maps own the consequences.
type Config struct {
	// Global holds the config values under the "global" key; empty when the
	// key is absent.
	Global values.Values
	// Modules holds, by module key, the config values of each module that
	// has a section key. Modules without one are absent.
	Modules map[string]values.Values
	// Enabled holds, by module key, each "<moduleKey>Enabled" flag present.
	// Modules without the key are absent: the ConfigMap says nothing.
	Enabled map[string]bool
	// Maintenance holds, by module key, the modules whose
	// "<moduleKey>Maintenance" key is NoResourceReconciliation: their
	// releases are left as they are (see MaintenanceNoResourceReconciliation).
	// Modules not in maintenance are absent.
	Maintenance map[string]bool
}

// Checksum returns the canonical checksum (values.Checksum) of the section
// under key: GlobalKey or a module key. An absent section has the checksum
// of empty values, so adding an empty section changes no checksum. Log
// checksums, never values.
func (c *Config) Checksum(key string) string {
	if c == nil {
		return values.Checksum(values.Values{})
	}
	if key == GlobalKey {
		return values.Checksum(c.Global)
	}
	return values.Checksum(c.Modules[key])
}

// Parse turns ConfigMap data into a Config. A nil or empty map (an absent
// ConfigMap) yields an empty Config. Keys are "global", module keys
// (camelCase names that round-trip through kebab-case) and
// "<moduleKey>Enabled" with the value "true" or "false" (surrounding
// whitespace ignored). Section values are YAML maps; empty or null YAML is
// an empty map.
//
// Every wrong key is reported, as a *KeyError, in one error made with
// errors.Join, in key order; the error matches ErrInvalid. A ConfigMap with
// any error yields no Config at all: callers keep their last good one.
func Parse(data map[string]string) (*Config, error) {
	c := &Config{
		Global:  values.Values{},
		Modules: map[string]values.Values{},
		Enabled: map[string]bool{},

		Maintenance: map[string]bool{},
	}
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(data)) {
		if err := c.parseKey(key, data[key]); err != nil {
			errs = append(errs, &KeyError{Key: key, Err: err})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

func (c *Config) parseKey(key, raw string) error {
	if key == GlobalKey {
		v, err := values.FromYAML([]byte(raw))
		if err != nil {
			return err
		}
		c.Global = v
		return nil
	}
	if moduleKey, ok := strings.CutSuffix(key, maintenanceSuffix); ok && moduleKey != "" {
		if err := checkModuleKey(moduleKey); err != nil {
			return err
		}
		on, err := parseMaintenance(raw)
		if err != nil {
			return err
		}
		if on {
			c.Maintenance[moduleKey] = true
		}
		return nil
	}
	if moduleKey, ok := strings.CutSuffix(key, enabledSuffix); ok && moduleKey != "" {
		if err := checkModuleKey(moduleKey); err != nil {
			return err
		}
		enabled, err := parseEnabled(raw)
		if err != nil {
			return err
		}
		c.Enabled[moduleKey] = enabled
		return nil
	}
	if err := checkModuleKey(key); err != nil {
		return err
	}
	v, err := values.FromYAML([]byte(raw))
	if err != nil {
		return err
	}
	c.Modules[key] = v
	return nil
}

func parseEnabled(raw string) (bool, error) {
	switch strings.TrimSpace(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	default:
		return false, fmt.Errorf("enabled flag is %q, want \"true\" or \"false\"", raw)
	}
}

// checkModuleKey accepts the camelCase key of a valid module name.
func checkModuleKey(key string) error {
	name := module.NameFor(key)
	if key == GlobalKey || !module.ValidName(name) || module.KeyFor(name) != key {
		return fmt.Errorf("%q is not a module key: want the camelCase of a kebab-case module name, like \"certManager\"", key)
	}
	return nil
}

// maintenanceSuffix ends the keys of modules' maintenance modes:
// "certManagerMaintenance".
const maintenanceSuffix = "Maintenance"

// MaintenanceNoResourceReconciliation is the maintenance mode a
// "<moduleKey>Maintenance" key sets: the operator stops upgrading the
// module's release, restoring its deleted objects and reverting their
// drift, while the module's hooks keep running on their bindings.
const MaintenanceNoResourceReconciliation = "NoResourceReconciliation"

// parseMaintenance reads a maintenance key: NoResourceReconciliation (in
// any case) is on, an empty value off.
func parseMaintenance(raw string) (bool, error) {
	switch v := strings.TrimSpace(raw); {
	case strings.EqualFold(v, MaintenanceNoResourceReconciliation):
		return true, nil
	case v == "":
		return false, nil
	default:
		return false, fmt.Errorf("maintenance mode is %q, want %q or empty", raw, MaintenanceNoResourceReconciliation)
	}
}

// MaintenanceKey returns the ConfigMap key of a module's maintenance mode.
func MaintenanceKey(moduleKey string) string { return moduleKey + maintenanceSuffix }

// EnabledKey returns the ConfigMap key of a module's Enabled flag.
func EnabledKey(moduleKey string) string { return moduleKey + enabledSuffix }

// ModuleOfKey names the module a ConfigMap key configures, or GlobalKey;
// a key that names no module yields the module name it would name, which
// the writers of "*" own.
func ModuleOfKey(key string) string {
	if key == GlobalKey {
		return GlobalKey
	}
	for _, suffix := range []string{maintenanceSuffix, enabledSuffix} {
		if k, ok := strings.CutSuffix(key, suffix); ok && k != "" {
			return module.NameFor(k)
		}
	}
	return module.NameFor(key)
}

// EnabledKeyModule returns the module key of an Enabled key
// ("certManagerEnabled": "certManager"), and whether key is one.
func EnabledKeyModule(key string) (string, bool) {
	moduleKey, ok := strings.CutSuffix(key, enabledSuffix)
	return moduleKey, ok && moduleKey != ""
}
