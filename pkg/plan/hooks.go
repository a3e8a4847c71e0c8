package plan

import (
	"context"
	"fmt"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/hook"
)

// HookBinding is one binding of one hook, for listings.
type HookBinding struct {
	// Owner is "global" or the module's name.
	Owner string `json:"owner"`
	// Hook is the hook's path under the module or global hooks directory.
	Hook    string       `json:"hook"`
	Binding hook.Binding `json:"binding"`
	// Order is the ORDER of a lifecycle binding; hooks of one binding run
	// in ascending order, ties broken by path.
	Order *float64 `json:"order,omitempty"`
	// Name is a kubernetes or schedule binding's name; Detail its kind or
	// crontab.
	Name   string `json:"name,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Hooks runs every global and module hook with --config, as the operator
// loads them, and lists their bindings: global hooks first, then modules
// in order; lifecycle bindings in the order they run, then kubernetes and
// schedule bindings as configured.
func (x *Offline) Hooks(ctx context.Context, configs binding.ConfigReader) ([]HookBinding, error) {
	g := x.modules.Global()
	hooks, err := binding.Load(ctx, configs, g.HooksDir(), g.Hooks(), hook.Global)
	if err != nil {
		return nil, fmt.Errorf("global hooks: %w", err)
	}
	out := bindingsOf("global", hooks, []hook.Binding{hook.OnStartup, hook.BeforeAll, hook.AfterAll})
	for _, m := range x.modules.Modules() {
		hooks, err := binding.Load(ctx, configs, m.Path(), m.Hooks(), hook.Module)
		if err != nil {
			return nil, fmt.Errorf("module %s: %w", m.Name(), err)
		}
		out = append(out, bindingsOf(m.Name(), hooks,
			[]hook.Binding{hook.OnStartup, hook.BeforeHelm, hook.AfterHelm, hook.BeforeDeleteHelm, hook.AfterDeleteHelm})...)
	}
	return out, nil
}

func bindingsOf(owner string, hooks []*binding.Hook, lifecycle []hook.Binding) []HookBinding {
	var out []HookBinding
	for _, b := range lifecycle {
		for _, h := range binding.ByOrder(hooks, b) {
			order, _ := h.Config.Order(b)
			out = append(out, HookBinding{Owner: owner, Hook: h.Name, Binding: b, Order: &order})
		}
	}
	for _, h := range hooks {
		for i := range h.Config.Kubernetes {
			k := &h.Config.Kubernetes[i]
			out = append(out, HookBinding{Owner: owner, Hook: h.Name, Binding: hook.Kubernetes, Name: k.Name, Detail: k.APIVersion + " " + k.Kind})
		}
		for _, s := range h.Config.Schedules {
			out = append(out, HookBinding{Owner: owner, Hook: h.Name, Binding: hook.Schedule, Name: s.Name, Detail: s.Crontab})
		}
	}
	return out
}
