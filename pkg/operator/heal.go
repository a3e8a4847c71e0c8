package operator

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/kube/drift"
	"github.com/addon-operator/addon-operator/pkg/kube/heal"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// healer watches deployed release objects and reports deletions;
// *heal.Watcher is the real one.
type healer interface {
	Run(ctx context.Context) error
	Watch(module string, objects []heal.ObjectRef)
	Forget(module string)
	Pause(module string)
	Resume(module string)
}

// driftChecker compares live objects with a release's manifest;
// *drift.Checker is the real one.
type driftChecker interface {
	Check(ctx context.Context, manifest string) ([]drift.Drift, error)
	Revert(ctx context.Context, manifest string, drifts []drift.Drift) error
}

// crdApplier applies the CRDs of a module's crds/ directory.
type crdApplier interface {
	ApplyCRDs(ctx context.Context, dir string) ([]string, error)
}

// pause stops heal events for a module while its own work (hooks, Helm)
// may delete its objects; the returned func resumes them.
func (o *Operator) pause(name string) func() {
	if o.healer == nil {
		return func() {}
	}
	o.healer.Pause(name)
	return func() { o.healer.Resume(name) }
}

// routeHeal reacts to a deleted release object: the module runs again, and
// its Helm step puts the object back.
func (o *Operator) routeHeal(ev heal.Event) {
	if !o.state.get(ev.Module).Enabled {
		return
	}
	if helm.IsRecord(ev.Module, ev.Object.Kind, ev.Object.Name) {
		o.log.Warn("release record deleted, the release history is lost; running module to install the release again",
			slog.String("module", ev.Module), slog.String("release", ev.Module), slog.String("kind", ev.Object.Kind), slog.String("name", ev.Object.Name))
		if o.moduleEvents != nil {
			o.moduleEvents.ReleaseRecordDeleted(ev.Module, ev.Object.String())
		}
		o.queueModuleRun(ev.Module)
		return
	}
	o.log.Info("release object deleted, running module to restore it", slog.String("module", ev.Module),
		slog.String("kind", ev.Object.Kind), slog.String("namespace", ev.Object.Namespace), slog.String("name", ev.Object.Name))
	if o.recorder != nil {
		o.recorder.ObjectsHealed(ev.Module, 1)
	}
	o.pool.request(ev.Module, nil) // not an input change: a failing module keeps its backoff
}

// afterDeploy arms healing for the objects the release now has and reports
// (and with --heal-drift reverts) objects whose live state drifted from it.
func (o *Operator) afterDeploy(ctx context.Context, name, manifest string) error {
	if o.healer != nil {
		objects, err := heal.ObjectsFromManifest(manifest)
		if err != nil {
			return fmt.Errorf("module %s: read release manifest: %w", name, err)
		}
		o.healer.Watch(name, objects)
	}
	if o.drift == nil {
		return nil
	}
	drifts, err := o.drift.Check(ctx, manifest)
	if err != nil {
		return fmt.Errorf("module %s: check drift: %w", name, err)
	}
	if o.recorder != nil {
		o.recorder.DriftedObjects(name, len(drifts))
	}
	for _, d := range drifts {
		o.log.Warn("release object drifted from its manifest", slog.String("module", name), slog.String("kind", d.Object.Kind),
			slog.String("namespace", d.Object.Namespace), slog.String("name", d.Object.Name), slog.String("fields", strings.Join(d.Fields, ",")))
		if o.moduleEvents != nil {
			o.moduleEvents.ObjectDrifted(name, d.Object.String(), d.Fields, o.opts.HealDrift)
		}
	}
	if len(drifts) == 0 || !o.opts.HealDrift {
		return nil
	}
	if err := o.drift.Revert(ctx, manifest, drifts); err != nil {
		return fmt.Errorf("module %s: revert drift: %w", name, err)
	}
	o.log.Info("drift reverted", slog.String("module", name), slog.Int("objects", len(drifts)))
	return nil
}

// applyCRDs applies a module's crds/ before its release, every run: they
// are created and updated, never deleted.
func (o *Operator) applyCRDs(ctx context.Context, m *module.Module) error {
	dir := filepath.Join(m.Path(), "crds")
	if o.crds == nil {
		return nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil //nolint:nilerr // no crds/ directory: nothing to apply
	}
	names, err := o.crds.ApplyCRDs(ctx, dir)
	if err != nil {
		return fmt.Errorf("module %s: apply CRDs: %w", m.Name(), err)
	}
	o.log.Debug("CRDs applied", slog.String("module", m.Name()), slog.Int("crds", len(names)))
	return nil
}
