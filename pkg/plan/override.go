package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// SourceOverride is what decided a module's enabled state in a plan when
// --values or --set gave its <moduleKey>Enabled flag: where the operator
// would name a global hook (status.SourceDynamic), a plan, which runs no
// global hook, names the flags.
const SourceOverride status.Source = "flags"

// overriddenReason is the reason of a flag --values or --set gave, from
// the one Enabled gives for a global hook's patch.
func overriddenReason(reason string) string {
	return strings.Replace(reason, setByGlobalHook, " given by "+overrideSource, 1)
}

// Override layers values over what the ConfigMap and files give, as hook
// patches would: "global" and "<moduleKey>Enabled" as a global hook's
// patch, a module's section as that module's hook's patch. Each section is
// merged into the current one; patches are checked against the values
// schemas as hooks' patches are. It lets a plan show what global hooks
// would enable or set, without running them.
func (x *Offline) Override(v values.Values) error {
	for _, key := range slices.Sorted(maps.Keys(v)) {
		if err := x.override(key, v[key]); err != nil {
			return fmt.Errorf("override %s: %w", key, err)
		}
	}
	return nil
}

func (x *Offline) override(key string, v any) error {
	if key == config.GlobalKey {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("want a map, got %s", values.KindOf(v))
		}
		x.globalSet = values.Merge(x.globalSet, values.Values(m))
		merged := values.Merge(x.store.GlobalValues(), values.Values(m))
		return x.store.AddGlobalPatch(values.Patch{{Op: "add", Path: "/global", Value: map[string]any(merged)}})
	}
	if moduleKey, ok := strings.CutSuffix(key, "Enabled"); ok && moduleKey != "" {
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("want true or false, got %s", values.KindOf(v))
		}
		return x.store.AddGlobalPatch(values.Patch{{Op: "add", Path: "/" + key, Value: b}})
	}
	for _, m := range x.modules.Modules() {
		if m.Key() != key {
			continue
		}
		section, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("want a map, got %s", values.KindOf(v))
		}
		if x.moduleSet == nil {
			x.moduleSet = map[string]values.Values{}
		}
		x.moduleSet[key] = values.Merge(x.moduleSet[key], values.Values(section))
		merged := values.Merge(x.store.ModuleValues(m), values.Values(section))
		return x.store.AddModulePatch(m, values.Patch{{Op: "add", Path: "/" + key, Value: map[string]any(merged)}})
	}
	return fmt.Errorf("no module has the key %q", key)
}
