// Package plan decides what a converge does: which modules are enabled and
// by which source, which to delete or purge, and in which order the rest
// run along their dependency graph (module.yaml requirements, order
// prefixes). The decisions are pure functions of their inputs; only enabled
// scripts run, through a ScriptRunner. Offline answers the same questions,
// and what values a module gets, without a cluster, for the CLI.
package plan

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/store"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// ScriptRunner runs modules' enabled scripts; *hook.Executor is the real
// one.
type ScriptRunner interface {
	Run(ctx context.Context, r hook.Run) (*hook.Result, error)
}

// Enabled decides every module's enabled state from the sources in st,
// running the enabled scripts of modules the other sources enable.
func Enabled(ctx context.Context, mods *module.Set, st *store.Store, scripts ScriptRunner) ([]Decision, error) {
	said := map[string]string{} // what enabled scripts wrote to MODULE_ENABLED_REASON
	decisions, err := decideEnabled(inputs(mods, st), func(name string, soFar []string) (bool, error) {
		m, _ := mods.Module(name)
		ok, reason, err := runScript(ctx, scripts, st, m, soFar)
		said[name] = reason
		return ok, err
	})
	for i := range decisions {
		m, _ := mods.Module(decisions[i].Name)
		decisions[i].Reason = reasonFor(decisions[i], m, said[m.Name()])
	}
	if err != nil {
		return decisions, err
	}
	return DisableUnmet(mods, DisableExclusive(mods, decisions)), nil
}

// inputs collects what each module's enabled state depends on, except its
// enabled script.
func inputs(mods *module.Set, st *store.Store) []enabledInput {
	dynamic := st.DynamicEnabled()
	cfg := st.Config()
	list := mods.Modules()
	out := make([]enabledInput, 0, len(list))
	for _, m := range list {
		in := enabledInput{Name: m.Name(), Common: m.CommonEnabled(), Own: m.StaticEnabled(), HasScript: m.EnabledScript() != ""}
		if v, ok := dynamic[m.Key()]; ok {
			in.Dynamic = &v
		}
		if v, ok := cfg.Enabled[m.Key()]; ok {
			in.ConfigMap = &v
		}
		out = append(out, in)
	}
	return out
}

// runScript asks a module's enabled script, giving it the modules enabled
// so far in global.enabledModules.
func runScript(ctx context.Context, scripts ScriptRunner, st *store.Store, m *module.Module, enabledSoFar []string) (bool, string, error) {
	global := st.GlobalValues()
	global["enabledModules"] = enabledSoFar
	res, err := scripts.Run(ctx, hook.Run{
		Path:         m.EnabledScript(),
		Kind:         hook.RunEnabledScript,
		Values:       values.Values{config.GlobalKey: global, m.Key(): st.ModuleValues(m)},
		ConfigValues: st.ConfigFor(m),
		Module:       m.Name(),
		Hook:         "enabled",
	})
	if err != nil {
		return false, "", err
	}
	if res.Enabled == nil {
		return false, "", fmt.Errorf("%s wrote no result to MODULE_ENABLED_RESULT", m.EnabledScript())
	}
	return *res.Enabled, res.EnabledReason, nil
}

// enabledInput is what is known about one module before its enabled script.
type enabledInput struct {
	Name      string
	Common    *bool // <key>Enabled in modules/values.yaml
	Own       *bool // <key>Enabled in the module's values.yaml
	Dynamic   *bool // set by a global hook patch
	ConfigMap *bool // <key>Enabled in the ConfigMap
	HasScript bool
}

// Decision is the enabled state of one module and what decided it.
type Decision struct {
	Name    string
	Enabled bool
	By      status.Source
	// Reason says in words what decided: the flag and where it is set,
	// what the enabled script wrote to MODULE_ENABLED_REASON, or, for an
	// otherwise enabled module, that a module it requires is disabled.
	Reason string
}

// scriptFunc runs a module's enabled script with the names of the modules
// enabled before it, in order.
type scriptFunc func(name string, enabledSoFar []string) (bool, error)

// decideEnabled walks modules in order and decides each one's state. Scripts
// run only for modules that are enabled by the other sources, and see the
// modules enabled so far.
func decideEnabled(modules []enabledInput, script scriptFunc) ([]Decision, error) {
	decisions := make([]Decision, 0, len(modules))
	var enabled []string
	for _, m := range modules {
		d := Decision{Name: m.Name, By: status.SourceDefault}
		for _, s := range []struct {
			flag *bool
			by   status.Source
		}{
			{m.Common, status.SourceStaticCommon},
			{m.Own, status.SourceStaticModule},
			{m.Dynamic, status.SourceDynamic},
			{m.ConfigMap, status.SourceConfigMap},
		} {
			if s.flag != nil {
				d.Enabled, d.By = *s.flag, s.by
			}
		}
		if d.Enabled && m.HasScript {
			ok, err := script(m.Name, append([]string(nil), enabled...))
			if err != nil {
				return nil, fmt.Errorf("module %q: enabled script: %w", m.Name, err)
			}
			if !ok {
				d.Enabled, d.By = false, status.SourceEnabledScript
			}
		}
		if d.Enabled {
			enabled = append(enabled, m.Name)
		}
		decisions = append(decisions, d)
	}
	return decisions, nil
}

// setByGlobalHook ends the reason of a flag a global hook's patch set.
const setByGlobalHook = " set by a global hook"

// reasonFor says in words what decided d; said is what the module's
// enabled script wrote to MODULE_ENABLED_REASON, if it ran.
func reasonFor(d Decision, m *module.Module, said string) string {
	flag := fmt.Sprintf("%s: %t", config.EnabledKey(m.Key()), d.Enabled)
	var reason string
	switch d.By {
	case status.SourceStaticCommon:
		reason = flag + " in modules/values.yaml"
	case status.SourceStaticModule:
		reason = flag + " in " + filepath.Base(m.Path()) + "/values.yaml"
	case status.SourceDynamic:
		reason = flag + setByGlobalHook
	case status.SourceConfigMap:
		reason = flag + " in the ConfigMap"
	case status.SourceEnabledScript:
		reason = "the enabled script wrote false"
	default:
		return "no " + config.EnabledKey(m.Key()) + " in values.yaml files, global hooks or the ConfigMap"
	}
	if said != "" {
		reason += "; enabled script: " + said
	}
	return reason
}
