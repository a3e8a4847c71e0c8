package operator

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/hook/operation"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/runner"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// hookMetricsSink keeps metrics hooks emit; *metrics.HookMetrics is the
// real one.
type hookMetricsSink interface {
	Apply(src metrics.Source, ms []metrics.HookMetric) error
}

// hookRun runs the hook of binding id (of moduleName, "" for global hooks)
// with the binding contexts of one or more merged hookRunTasks. Values it
// changed queue a converge (global values) or a module run (module values).
func (o *Operator) hookRun(ctx context.Context, id, moduleName string, contexts []hook.BindingContext) error {
	ref, ok := o.bindings.Get(id)
	if !ok {
		return nil // the binding was stopped since the task was queued
	}
	if moduleName != "" && !o.state.get(moduleName).Enabled {
		return nil
	}
	if moduleName != "" {
		// The module's hooks may delete its objects on purpose.
		defer o.releases.Pause(moduleName)()
	}
	changed, err := o.runRefHook(ctx, ref, compactGroups(contexts))
	if err != nil {
		return err
	}
	switch {
	case !changed:
	case ref.Module == "":
		o.log.Info("global values changed by hook, converging", slog.String(logkey.Hook, ref.Hook.Name), slog.String(logkey.Binding, ref.Name()))
		o.queueConverge()
	default:
		o.queueModuleRun(ref.Module)
	}
	return nil
}

// syncRun is one Synchronization run of a hook for binding ids (of one
// hook, in order), with a Synchronization context per binding read now.
// It releases the bindings' events when done. Values it changes queue
// nothing: the module run or converge that started it goes on.
func (o *Operator) syncRun(ctx context.Context, moduleName string, ids []string) error {
	var refs []binding.Ref
	var live []string
	for _, id := range ids {
		if ref, ok := o.bindings.Get(id); ok && !o.bindings.IsSynced(id) {
			refs, live = append(refs, ref), append(live, id)
		}
	}
	if len(refs) == 0 {
		return nil // stopped or done since the task was queued
	}
	if moduleName != "" && !o.state.get(moduleName).Enabled {
		return nil
	}
	if moduleName != "" {
		defer o.releases.Pause(moduleName)()
	}
	if refs[0].Kube.ExecuteHookOnSynchronization {
		contexts := make([]hook.BindingContext, len(live))
		for i, id := range live {
			contexts[i] = o.syncContext(id, refs[i])
		}
		if _, err := o.runRefHook(ctx, refs[0], compactGroups(contexts)); err != nil {
			return err
		}
	}
	for _, id := range live {
		o.bindings.MarkSynced(id)
		o.monitors.EnableEvents(id)
	}
	return nil
}

// runRefHook runs the hook of ref after its rate limit with contexts, their
// snapshots read now. A failure its config allows is logged and counted,
// not returned.
func (o *Operator) runRefHook(ctx context.Context, ref binding.Ref, contexts []hook.BindingContext) (bool, error) {
	if l := o.bindings.Limiter(ref.Hook); l != nil {
		// On a module run's step the wait holds no worker (runner.Park).
		if err := runner.Park(ctx, l.Wait); err != nil {
			return false, err
		}
	}
	contexts = o.withSnapshots(ref.Owner(), ref.Hook, contexts)
	m, _ := o.modules.Module(ref.Module) // nil for a global hook
	changed, err := o.runHook(ctx, m, ref.Hook, ref.Name(), contexts)
	o.recordProbe(ref, err)
	if err == nil || !ref.AllowFailure() {
		return changed, err
	}
	o.log.Warn("hook failed, allowed to", slog.String(logkey.Module, ref.Module), slog.String(logkey.Hook, ref.Hook.Name),
		slog.String(logkey.Binding, ref.Name()), logkey.Err(err))
	if o.recorder != nil {
		o.recorder.HookAllowedError(ref.Module, ref.Hook.Name, ref.Name())
	}
	return changed, nil
}

// syncContext is a Synchronization context with the binding's objects as
// they are now.
func (o *Operator) syncContext(id string, ref binding.Ref) hook.BindingContext {
	objects := o.monitors.SyncObjects(id)
	if g := ref.Group(); g != "" {
		return hook.BindingContext{Binding: ref.Name(), Type: hook.TypeGroup, GroupName: g}
	}
	return hook.BindingContext{Binding: ref.Name(), Type: hook.TypeSynchronization, Objects: objects}
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
func (o *Operator) withSnapshots(owner string, h *binding.Hook, contexts []hook.BindingContext) []hook.BindingContext {
	for i := range contexts {
		var include []string
		for j := range h.Config.Kubernetes {
			if h.Config.Kubernetes[j].Name == contexts[i].Binding {
				include = binding.Ref{Kube: &h.Config.Kubernetes[j]}.IncludeSnapshots()
			}
		}
		for j := range h.Config.Schedules {
			if h.Config.Schedules[j].Name == contexts[i].Binding {
				include = binding.Ref{Sched: &h.Config.Schedules[j]}.IncludeSnapshots()
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
func (o *Operator) snapshots(owner string, h *binding.Hook, names []string) map[string][]hook.FilteredObject {
	out := make(map[string][]hook.FilteredObject, len(names))
	for _, name := range names {
		out[name] = []hook.FilteredObject{}
		for j := range h.Config.Kubernetes {
			if h.Config.Kubernetes[j].Name == name {
				if objs := o.monitors.Snapshot(binding.ID(owner, h, hook.Kubernetes, j)); objs != nil {
					out[name] = objs
				}
			}
		}
	}
	return out
}

// lifecycleSnapshots are what a lifecycle binding context carries: the
// snapshots of all the hook's kubernetes bindings. A hook without any gets
// an empty map, written as "snapshots": {}, as the protocol's lifecycle
// contexts always carry the key.
func (o *Operator) lifecycleSnapshots(owner string, h *binding.Hook) map[string][]hook.FilteredObject {
	if len(h.Config.Kubernetes) == 0 || o.monitors == nil {
		return map[string][]hook.FilteredObject{}
	}
	names := make([]string, 0, len(h.Config.Kubernetes))
	for j := range h.Config.Kubernetes {
		names = append(names, h.Config.Kubernetes[j].Name)
	}
	return o.snapshots(owner, h, names)
}

// applyOutputs applies a successful run's object operations and metrics.
func (o *Operator) applyOutputs(ctx context.Context, m *module.Module, h *binding.Hook, res *hook.Result) error {
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
