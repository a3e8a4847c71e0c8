package plan

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/kube/crd"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/rbac"
)

// AccessOptions say which modules Access covers.
type AccessOptions struct {
	// All covers every module on disk; otherwise the modules that can be
	// enabled: those the values, the ConfigMap and the overrides do not
	// switch off (an enabled script is taken to say yes, since it decides
	// only at run time), with their requirements met.
	All bool
	// Capabilities are what the charts render against.
	Capabilities helm.Capabilities
}

// Access reads what the RBAC of the module set depends on: every covered
// module's rendered chart (chart hooks included) and crds/, its hooks'
// kubernetes and conversion bindings and its module.yaml rbac rules, and
// the global hooks' bindings. Hooks run with --config only.
func (x *Offline) Access(ctx context.Context, configs binding.ConfigReader, o AccessOptions) ([]rbac.Input, error) {
	g := x.modules.Global()
	hooks, err := binding.Load(ctx, configs, g.HooksDir(), g.Hooks(), hook.Global)
	if err != nil {
		return nil, fmt.Errorf("global hooks: %w", err)
	}
	global := rbac.Input{Owner: "global"}
	addBindings(&global, hooks)
	out := []rbac.Input{global}
	covered, err := x.covered(o.All)
	if err != nil {
		return nil, err
	}
	for _, m := range covered {
		in, err := x.moduleAccess(ctx, configs, m, o.Capabilities)
		if err != nil {
			return nil, fmt.Errorf("module %s (%s): %w", m.Name(), m.Path(), err)
		}
		out = append(out, in)
	}
	return out, nil
}

// covered returns the modules Access covers, in order.
func (x *Offline) covered(all bool) ([]*module.Module, error) {
	mods := x.modules.Modules()
	if all {
		return mods, nil
	}
	decisions, err := decideEnabled(inputs(x.modules, x.store), func(string, []string) (bool, error) { return true, nil })
	if err != nil {
		return nil, err
	}
	enabled := map[string]bool{}
	for _, d := range DisableUnmet(x.modules, decisions) {
		enabled[d.Name] = d.Enabled
	}
	var out []*module.Module
	for _, m := range mods {
		if enabled[m.Name()] {
			out = append(out, m)
		}
	}
	return out, nil
}

func (x *Offline) moduleAccess(ctx context.Context, configs binding.ConfigReader, m *module.Module, caps helm.Capabilities) (rbac.Input, error) {
	in := rbac.Input{Owner: m.Name(), Namespace: m.Namespace()}
	rules := m.Definition().RBAC
	for i := range rules {
		in.Declared = append(in.Declared, rbac.Rule{PolicyRule: rules[i].PolicyRule, Namespaces: rules[i].Namespaces})
	}
	hooks, err := binding.Load(ctx, configs, m.Path(), m.Hooks(), hook.Module)
	if err != nil {
		return in, err
	}
	addBindings(&in, hooks)
	if in.CRDs, err = crd.Objects(filepath.Join(m.Path(), "crds")); err != nil {
		return in, err
	}
	if !m.IsHelm() {
		return in, nil
	}
	v, err := x.Values(m.Name())
	if err != nil {
		return in, err
	}
	ns := x.ns
	if m.Namespace() != "" {
		ns = m.Namespace()
	}
	r, err := helm.RenderOfflineWith(ctx, ns, helm.Release{Name: m.Name(), ChartDir: m.Path(), Values: map[string]any(v), Namespace: m.Namespace()}, caps)
	if err != nil {
		return in, err
	}
	for _, manifest := range append([]string{r.Manifest}, r.Hooks...) {
		objs, err := kube.ManifestObjects(manifest)
		if err != nil {
			return in, err
		}
		in.Objects = append(in.Objects, objs...)
	}
	return in, nil
}

// addBindings adds hooks' kubernetes and conversion bindings to in.
func addBindings(in *rbac.Input, hooks []*binding.Hook) {
	for _, h := range hooks {
		for i := range h.Config.Kubernetes {
			k := &h.Config.Kubernetes[i]
			w := rbac.Watch{APIVersion: k.APIVersion, Kind: k.Kind}
			if ns := k.Namespace; ns != nil {
				w.NamespaceLabels = ns.LabelSelector != nil
				if ns.NameSelector != nil {
					w.Namespaces = ns.NameSelector.MatchNames
				}
			}
			in.Watches = append(in.Watches, w)
		}
		for _, c := range h.Config.Conversions {
			in.Conversions = append(in.Conversions, c.CRDName)
		}
	}
}
