package operator

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/hook/operation"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// hookMetricsSink keeps metrics hooks emit; *metrics.HookMetrics is the
// real one.
type hookMetricsSink interface {
	Apply(src metrics.Source, ms []metrics.HookMetric) error
}

// hookRun runs a kubernetes or schedule hook with the binding contexts of
// one or more merged tasks. A Synchronization run releases its binding's
// events when done. Values changed by a non-Synchronization run queue a
// converge (global values) or a module run (module values).
func (o *Operator) hookRun(ctx context.Context, t task) error {
	ref, ok := o.bindings.get(t.BindingID)
	if !ok {
		return nil // the binding was stopped since the task was queued
	}
	if t.Module != "" && !o.state.get(t.Module).Enabled {
		return nil
	}
	if t.Module != "" {
		// The module's hooks may delete its objects on purpose.
		defer o.pause(t.Module)()
	}
	if t.Sync && !ref.Kube.ExecuteHookOnSynchronization {
		o.finishSync(t.BindingID)
		return nil
	}
	if l := o.bindings.limiter(ref.Hook); l != nil {
		if err := l.Wait(ctx); err != nil {
			return err
		}
	}
	contexts := t.Contexts
	if t.Sync {
		contexts = []hook.BindingContext{o.syncContext(t.BindingID, ref)}
	}
	contexts = o.withSnapshots(refOwner(ref), ref.Hook, compactGroups(contexts))
	changed, err := o.runBindingHook(ctx, ref, contexts)
	if err != nil {
		if !ref.allowFailure() {
			return err
		}
		o.log.Warn("hook failed, allowed to", slog.String("module", ref.Module), slog.String("hook", ref.Hook.Name),
			slog.String("binding", ref.name()), slog.String("error", err.Error()))
		if o.recorder != nil {
			o.recorder.HookAllowedError(ref.Module, ref.Hook.Name, ref.name())
		}
	}
	if t.Sync {
		o.finishSync(t.BindingID)
		return nil
	}
	switch {
	case !changed:
	case ref.Module == "":
		o.log.Info("global values changed by hook, converging", slog.String("hook", ref.Hook.Name), slog.String("binding", ref.name()))
		o.queueConverge()
	default:
		o.queueModuleRun(ref.Module)
	}
	return nil
}

func (o *Operator) finishSync(id string) {
	o.bindings.markSynced(id)
	o.monitors.EnableEvents(id)
}

// syncContext is a Synchronization context with the binding's objects as
// they are now.
func (o *Operator) syncContext(id string, ref bindingRef) hook.BindingContext {
	objects := o.monitors.SyncObjects(id)
	if g := ref.group(); g != "" {
		return hook.BindingContext{Binding: ref.name(), Type: hook.TypeGroup, GroupName: g}
	}
	return hook.BindingContext{Binding: ref.name(), Type: hook.TypeSynchronization, Objects: objects}
}

// compactGroups collapses consecutive contexts of one group into the last
// of them: a grouped hook only needs to know that something happened.
func compactGroups(in []hook.BindingContext) []hook.BindingContext {
	out := make([]hook.BindingContext, 0, len(in))
	for i := range in {
		if n := len(out); n > 0 && in[i].GroupName != "" && out[n-1].GroupName == in[i].GroupName {
			out[n-1] = in[i]
			continue
		}
		out = append(out, in[i])
	}
	return out
}

// withSnapshots fills each context's snapshots, read now: for a context of
// a kubernetes or schedule binding, those its binding includes (its group's
// bindings among them).
func (o *Operator) withSnapshots(owner string, h *loadedHook, contexts []hook.BindingContext) []hook.BindingContext {
	for i := range contexts {
		var include []string
		for j := range h.Config.Kubernetes {
			if h.Config.Kubernetes[j].Name == contexts[i].Binding {
				include = bindingRef{Kube: &h.Config.Kubernetes[j]}.includeSnapshots()
			}
		}
		for j := range h.Config.Schedules {
			if h.Config.Schedules[j].Name == contexts[i].Binding {
				include = bindingRef{Sched: &h.Config.Schedules[j]}.includeSnapshots()
			}
		}
		if len(include) > 0 {
			contexts[i].Snapshots = o.snapshots(owner, h, include)
		}
	}
	return contexts
}

// snapshots returns the current objects of the named kubernetes bindings
// of a hook. Names that match no binding get an empty list.
func (o *Operator) snapshots(owner string, h *loadedHook, names []string) map[string][]hook.FilteredObject {
	out := make(map[string][]hook.FilteredObject, len(names))
	for _, name := range names {
		out[name] = []hook.FilteredObject{}
		for j := range h.Config.Kubernetes {
			if h.Config.Kubernetes[j].Name == name {
				if objs := o.monitors.Snapshot(bindingID(owner, h, hook.Kubernetes, j)); objs != nil {
					out[name] = objs
				}
			}
		}
	}
	return out
}

// lifecycleSnapshots are what a lifecycle binding context carries: the
// snapshots of all the hook's kubernetes bindings, nil when it has none.
func (o *Operator) lifecycleSnapshots(owner string, h *loadedHook) map[string][]hook.FilteredObject {
	if len(h.Config.Kubernetes) == 0 || o.monitors == nil {
		return nil
	}
	names := make([]string, 0, len(h.Config.Kubernetes))
	for j := range h.Config.Kubernetes {
		names = append(names, h.Config.Kubernetes[j].Name)
	}
	return o.snapshots(owner, h, names)
}

// runBindingHook runs a global or module hook with contexts and applies
// its outputs; it reports whether its values changed.
func (o *Operator) runBindingHook(ctx context.Context, ref bindingRef, contexts []hook.BindingContext) (bool, error) {
	binding := ref.name()
	if ref.Module == "" {
		return o.runGlobalHookWith(ctx, ref.Hook, binding, contexts)
	}
	m, _ := o.modules.Module(ref.Module)
	return o.runModuleHookWith(ctx, m, ref.Hook, binding, contexts)
}

// applyOutputs applies a successful run's object operations and metrics.
func (o *Operator) applyOutputs(ctx context.Context, m *module.Module, h *loadedHook, res *hook.Result) error {
	if len(res.KubernetesPatch) > 0 {
		ops, err := operation.Parse(res.KubernetesPatch)
		if err != nil {
			return fmt.Errorf("KUBERNETES_PATCH_PATH: %w", err)
		}
		if o.patcher == nil {
			return fmt.Errorf("KUBERNETES_PATCH_PATH: %d operations but no object patcher", len(ops))
		}
		if err := o.patcher.Apply(ctx, ops); err != nil {
			return fmt.Errorf("KUBERNETES_PATCH_PATH: %w", err)
		}
	}
	if len(res.Metrics) > 0 && o.hookMetrics != nil {
		ms, err := metrics.ParseHookMetrics(res.Metrics)
		if err != nil {
			return fmt.Errorf("METRICS_PATH: %w", err)
		}
		src := metrics.Source{Hook: h.Name}
		if m != nil {
			src.Module = m.Name()
		}
		if err := o.hookMetrics.Apply(src, ms); err != nil {
			return fmt.Errorf("METRICS_PATH: %w", err)
		}
	}
	return nil
}

// valuesChanged compares checksums before and after.
func valuesChanged(before string, after values.Values) bool {
	return values.Checksum(after) != before
}
