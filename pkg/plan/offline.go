package plan

import (
	"context"
	"fmt"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/store"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// Offline answers what the operator would do with modules on disk and a
// given ConfigMap content, without a cluster and without running hooks
// (enabled scripts do run: they decide enabled state).
type Offline struct {
	modules *module.Set
	store   *store.Store
	scripts ScriptRunner
	ns      string
	// globalSet is what --values and --set gave for the global section,
	// moduleSet what they gave for each module section, by module key.
	globalSet values.Values
	moduleSet map[string]values.Values
}

// overrideSource names --values and --set where a plan says who set a
// value or an enabled flag: offline, they stand where global hooks' and
// modules' hooks' patches would be.
const overrideSource = "--values/--set"

// ModuleInfo describes one module for listings.
type ModuleInfo struct {
	Name    string        `json:"name"`
	Order   int           `json:"order"`
	Enabled bool          `json:"enabled"`
	By      status.Source `json:"decidedBy"`
	Helm    bool          `json:"helm"`
	Path    string        `json:"path"`
	// Reason says in words what decided Enabled (Decision.Reason).
	Reason string `json:"reason"`
	// Assumed are the global values ("path=value") that global hooks set
	// in the cluster and that the module's enabled script saw at their
	// schema defaults offline: the operator may decide otherwise.
	Assumed []string `json:"assumed,omitempty"`
	// Namespace, Version, Description and Requires come from module.yaml.
	Namespace   string   `json:"namespace,omitempty"`
	Version     string   `json:"version,omitempty"`
	Description string   `json:"description,omitempty"`
	Requires    []string `json:"requires,omitempty"`
	// Critical, Stage, Tags, Subsystems and ExclusiveGroup come from
	// Deckhouse's module.yaml fields; Warnings list what was ignored in
	// module.yaml; Error says why the operator would not run the module.
	Critical       bool     `json:"critical,omitempty"`
	Stage          string   `json:"stage,omitempty"`
	Tags           []string `json:"tags,omitempty"`
	Subsystems     []string `json:"subsystems,omitempty"`
	ExclusiveGroup string   `json:"exclusiveGroup,omitempty"`
	Warnings       []string `json:"warnings,omitempty"`
	Error          string   `json:"error,omitempty"`
}

// NewOffline discovers modules as the operator would and takes cfg as the
// ConfigMap content (nil: no ConfigMap) of namespace ns ("" is "default").
func NewOffline(discover module.Options, ns string, cfg *config.Config, scripts ScriptRunner) (*Offline, error) {
	mods, err := module.Discover(discover)
	if err != nil {
		return nil, fmt.Errorf("discover modules: %w", err)
	}
	if cfg == nil {
		cfg = &config.Config{}
	}
	st, err := store.New(mods)
	if err != nil {
		return nil, err
	}
	st.SetConfig(cfg)
	if ns == "" {
		ns = "default"
	}
	return &Offline{modules: mods, store: st, scripts: scripts, ns: ns}, nil
}

// List decides every module's enabled state, running enabled scripts.
func (x *Offline) List(ctx context.Context) ([]ModuleInfo, error) {
	run := &scriptsRun{ScriptRunner: x.scripts, ran: map[string]bool{}}
	decisions, err := Enabled(ctx, x.modules, x.store, run)
	if err != nil {
		return nil, err
	}
	assumed := x.assumedGlobals()
	out := make([]ModuleInfo, 0, len(decisions))
	for _, d := range decisions {
		m, _ := x.modules.Module(d.Name)
		def := m.Definition()
		info := ModuleInfo{
			Name: d.Name, Order: m.Order(), Enabled: d.Enabled, By: d.By, Helm: m.IsHelm(), Path: m.Path(), Reason: d.Reason,
			Namespace: def.Namespace, Version: def.Version, Description: m.Description(), Requires: m.Requires(),
			Critical: m.Critical(), Stage: def.Stage, Tags: def.Tags, Subsystems: def.Subsystems, ExclusiveGroup: m.ExclusiveGroup(),
			Warnings: m.Warnings(),
		}
		if err := m.Err(); err != nil {
			info.Error = err.Error()
		}
		if d.By == status.SourceDynamic {
			// Offline no global hook runs: the flag came from --values
			// or --set, standing in for one.
			info.By = SourceOverride
			info.Reason = overriddenReason(d.Reason)
		}
		if run.ran[d.Name] && len(assumed) > 0 {
			info.Assumed = assumed
			info.Reason += "; " + assumedReason(assumed)
		}
		out = append(out, info)
	}
	return out, nil
}

func (x *Offline) module(name string) (*module.Module, error) {
	m, ok := x.modules.Module(name)
	if !ok {
		return nil, fmt.Errorf("no module %q in %d discovered modules", name, len(x.modules.Modules()))
	}
	return m, nil
}

// Values returns a module's values as its chart gets them, without hook
// patches: {global: ..., <moduleKey>: ...}. Name "global" returns global
// values alone.
func (x *Offline) Values(name string) (values.Values, error) {
	if name == config.GlobalKey {
		return values.Values{config.GlobalKey: x.store.GlobalValues()}, nil
	}
	m, err := x.module(name)
	if err != nil {
		return nil, err
	}
	return values.Values{config.GlobalKey: x.store.GlobalValues(), m.Key(): x.store.ModuleValues(m)}, nil
}

// Explain attributes every leaf of a module's values (or of global values,
// for name "global") to the layer that set it.
func (x *Offline) Explain(name string) ([]store.Leaf, error) {
	if name == config.GlobalKey {
		return prefixLeaves(config.GlobalKey, store.Explain(withOverrides(x.store.GlobalLayers(), x.globalSet))), nil
	}
	m, err := x.module(name)
	if err != nil {
		return nil, err
	}
	return prefixLeaves(m.Key(), store.Explain(withOverrides(x.store.ModuleLayers(m), x.moduleSet[m.Key()]))), nil
}

// withOverrides puts what --values and --set gave over layers, as their
// patches are over the values the layers make.
func withOverrides(layers []store.Layer, set values.Values) []store.Layer {
	if len(set) == 0 {
		return layers
	}
	return append(layers, store.Layer{Source: overrideSource, Values: set})
}

func prefixLeaves(key string, leaves []store.Leaf) []store.Leaf {
	for i := range leaves {
		if leaves[i].Path == "" {
			leaves[i].Path = key
		} else {
			leaves[i].Path = key + "." + leaves[i].Path
		}
	}
	return leaves
}

// Render returns the manifests Helm would apply for a module, rendered with
// Helm's default capabilities.
func (x *Offline) Render(ctx context.Context, name string) (*helm.Rendered, error) {
	m, err := x.module(name)
	if err != nil {
		return nil, err
	}
	if !m.IsHelm() {
		return nil, fmt.Errorf("module %q has no chart (neither Chart.yaml nor templates/)", name)
	}
	v, err := x.Values(name)
	if err != nil {
		return nil, err
	}
	ns := x.ns
	if m.Namespace() != "" {
		ns = m.Namespace()
	}
	return helm.RenderOffline(ctx, ns, helm.Release{Name: name, ChartDir: m.Path(), Values: map[string]any(v), Namespace: m.Namespace()})
}
