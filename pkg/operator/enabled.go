package operator

import (
	"fmt"

	"github.com/addon-operator/addon-operator/pkg/status"
)

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

// Plan is what a converge does to modules and releases.
type Plan struct {
	Decisions []Decision
	// Run lists enabled modules in order; Startup marks those that became
	// enabled (their onStartup hooks run first).
	Run     []string
	Startup map[string]bool
	// Delete lists modules to uninstall, in reverse order.
	Delete []string
	// Purge lists releases the operator owns that have no module.
	Purge []string
}

// planConverge compares decisions with what was enabled before and which
// releases exist. A disabled module is deleted when it was enabled before or
// still has a release of ours (disabled while the operator was down).
func planConverge(decisions []Decision, wasEnabled map[string]bool, owned []string) Plan {
	p := Plan{Decisions: decisions, Startup: map[string]bool{}}
	known := make(map[string]bool, len(decisions))
	hasRelease := make(map[string]bool, len(owned))
	for _, r := range owned {
		hasRelease[r] = true
	}
	for _, d := range decisions {
		known[d.Name] = true
		switch {
		case d.Enabled:
			p.Run = append(p.Run, d.Name)
			if !wasEnabled[d.Name] {
				p.Startup[d.Name] = true
			}
		case wasEnabled[d.Name] || hasRelease[d.Name]:
			p.Delete = append([]string{d.Name}, p.Delete...)
		}
	}
	for _, r := range owned {
		if !known[r] {
			p.Purge = append(p.Purge, r)
		}
	}
	return p
}
