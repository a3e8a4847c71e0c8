// Package release deploys and removes modules' Helm releases together with
// what comes with them: a module's CRDs before its release, the heal watch
// and the drift check after it, drift checks between runs (on changes of
// release objects and on a resync timer), the remediation of failed
// releases, the ownership check before an uninstall, and pausing heal
// events while a module's own work may delete its objects.
package release

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/helm/kubeclient"
	"github.com/addon-operator/addon-operator/pkg/kube/drift"
	"github.com/addon-operator/addon-operator/pkg/kube/heal"
	"github.com/addon-operator/addon-operator/pkg/kube/readiness"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// Releaser manages modules' Helm releases; *helm.Client is the real one.
type Releaser interface {
	Apply(ctx context.Context, r helm.Release) (helm.Outcome, error)
	Uninstall(ctx context.Context, name string) (bool, error)
	Status(ctx context.Context, name string) (helm.Status, error)
	Owned(ctx context.Context) ([]string, error)
	ClaimUnlabeled(ctx context.Context) ([]string, error)
}

// Healer watches deployed release objects and reports deletions;
// *heal.Watcher is the real one.
type Healer interface {
	Run(ctx context.Context) error
	Watch(module string, objects []heal.ObjectRef)
	Forget(module string)
	Pause(module string)
	Resume(module string)
}

// DriftChecker compares live objects with a release's manifest;
// *drift.Checker is the real one.
type DriftChecker interface {
	Check(ctx context.Context, manifest string) ([]drift.Drift, error)
	Revert(ctx context.Context, manifest string, drifts []drift.Drift) error
}

// CRDApplier applies the CRDs of a module's crds/ directory.
type CRDApplier interface {
	ApplyCRDs(ctx context.Context, dir string) ([]string, error)
}

// ReadinessChecker waits for a release's objects to be ready, looking
// again when changed hears that one of them changed;
// *readiness.Checker is the real one.
type ReadinessChecker interface {
	Wait(ctx context.Context, namespace string, objects []readiness.Object, timeout time.Duration, changed <-chan struct{}, progress func(readiness.Pending)) error
}

// NamespaceCreator creates a module's namespace when it is missing;
// *kube.Namespaces is the real one.
type NamespaceCreator interface {
	Ensure(ctx context.Context, name string, labels map[string]string) error
}

// DriftEvents records drifted objects as Kubernetes Events;
// *event.Recorder is the real one.
type DriftEvents interface {
	ObjectDrifted(module, object string, fields []string, reverted bool)
}

// Options are a Manager's seams; Healer, Drift, CRDs, Events and Recorder
// may be nil.
type Options struct {
	Releases Releaser
	Healer   Healer
	Drift    DriftChecker
	CRDs     CRDApplier
	Events   DriftEvents
	Recorder *metrics.Recorder
	// HealDrift reverts drifted objects instead of only reporting them.
	HealDrift bool
	// Readiness, when not nil, makes Deploy wait until the release's
	// objects are ready, for the module's module.yaml readinessTimeout or
	// else ReadinessTimeout; Progress hears what it waits for.
	Readiness        ReadinessChecker
	ReadinessTimeout time.Duration
	Progress         func(module string, p readiness.Pending)
	// Superseded, when not nil, returns a channel closed when the
	// module's inputs change while its run waits: the wait then ends with
	// ErrSuperseded.
	Superseded func(module string) <-chan struct{}
	// Namespace is the operator's: the namespace of releases whose
	// module.yaml names none. Namespaces, when not nil, creates the
	// namespaces that module.yaml files name.
	Namespace  string
	Namespaces NamespaceCreator
	// DriftDebounce is how long RunDrift waits after a change of a
	// module's object before it checks the module; DriftResync how often it
	// checks every deployed module, 0 for never.
	DriftDebounce, DriftResync time.Duration
	Clock                      clock.WithDelayedExecution
	Logger                     *slog.Logger
	// Rendered, when not nil, hears each module's chart as Deploy
	// rendered it, before Deploy returns, also when the deploy failed:
	// what the API server's errors may quote (Secrets) is redacted from
	// the texts the operator shows.
	Rendered func(module string, r *helm.Rendered)
	// Weights, when not nil, creates a release's objects of lower
	// werf.io/weight before the others (see ahead); nil is Releases when
	// it is a WeightCreator too. Without one, weights are not acted on.
	Weights WeightCreator
}

// Manager deploys and removes modules' releases. Its seams are safe for
// concurrent use, and so is it. It remembers each deployed module's
// manifest for drift checks between runs, and which modules are in
// maintenance, under mu.
type Manager struct {
	opts Options

	mu          sync.Mutex
	deployed    map[string]*deployed
	maintenance map[string]bool
	// changed has the channel of each module whose readiness is awaited,
	// told when one of its objects changes.
	changed map[string]chan struct{}
}

// New returns a Manager over the given seams.
func New(o Options) *Manager {
	if o.Weights == nil {
		o.Weights, _ = o.Releases.(WeightCreator)
	}
	return &Manager{opts: o, deployed: map[string]*deployed{}, maintenance: map[string]bool{}, changed: map[string]chan struct{}{}}
}

// Run runs the heal watch until ctx ends; without one it returns at once.
func (r *Manager) Run(ctx context.Context) error {
	if r.opts.Healer == nil {
		return nil
	}
	return r.opts.Healer.Run(ctx)
}

// Pause stops heal events for a module while its own work (hooks, Helm)
// may delete its objects; the returned func resumes them.
func (r *Manager) Pause(name string) func() {
	if r.opts.Healer == nil {
		return func() {}
	}
	r.opts.Healer.Pause(name)
	return func() { r.opts.Healer.Resume(name) }
}

// Owned lists the releases the operator made.
func (r *Manager) Owned(ctx context.Context) ([]string, error) { return r.opts.Releases.Owned(ctx) }

// ClaimUnlabeled adopts the releases without the operator's label, with
// --adopt-unlabeled-releases, or else lists them untouched; see
// helm.Client.ClaimUnlabeled.
func (r *Manager) ClaimUnlabeled(ctx context.Context) ([]string, error) {
	return r.opts.Releases.ClaimUnlabeled(ctx)
}

// Exists reports whether the module has a release that the operator owns.
// A release of the module's name that someone else made is never
// uninstalled.
func (r *Manager) Exists(ctx context.Context, name string) (bool, error) {
	st, err := r.opts.Releases.Status(ctx, name)
	switch {
	case err == nil && !st.Owned:
		r.opts.Logger.Info("release not created by addon-operator left in place", slog.String(logkey.Module, name), slog.String(logkey.Release, name))
		return false, nil
	case err == nil:
		return true, nil
	case errors.Is(err, helm.ErrNotFound):
		return false, nil
	default:
		return false, fmt.Errorf("module %s: release status: %w", name, err)
	}
}

// Uninstall removes a module's release and stops watching its objects.
func (r *Manager) Uninstall(ctx context.Context, name string) error {
	if _, err := r.opts.Releases.Uninstall(ctx, name); err != nil {
		return fmt.Errorf("module %s: uninstall release: %w", name, err)
	}
	r.opts.Logger.Info("release uninstalled", slog.String(logkey.Module, name), slog.String(logkey.Release, name))
	return nil
}

// UninstallModule removes a module's release as Uninstall does, with each
// chart delete hook awaited up to the module's chartHookTimeout, when it
// has one and the release client can bound them.
func (r *Manager) UninstallModule(ctx context.Context, m *module.Module) error {
	type hookUninstaller interface {
		UninstallHooks(ctx context.Context, name string, hookTimeout time.Duration) (bool, error)
	}
	u, ok := r.opts.Releases.(hookUninstaller)
	timeout := m.Definition().ChartHookTimeout.Duration
	if !ok || timeout <= 0 {
		return r.Uninstall(ctx, m.Name())
	}
	if _, err := u.UninstallHooks(ctx, m.Name(), timeout); err != nil {
		return fmt.Errorf("module %s: uninstall release: %w", m.Name(), err)
	}
	r.opts.Logger.Info("release uninstalled", slog.String(logkey.Module, m.Name()), slog.String(logkey.Release, m.Name()))
	return nil
}

// Forget stops watching a removed module's objects and checking their
// drift.
func (r *Manager) Forget(name string) {
	r.mu.Lock()
	delete(r.deployed, name)
	r.mu.Unlock()
	if r.opts.Healer != nil {
		r.opts.Healer.Forget(name)
	}
}

// Purge uninstalls a release of ours whose module no longer exists. A
// failure is logged, not retried: nothing else depends on it.
func (r *Manager) Purge(ctx context.Context, release string) {
	if _, err := r.opts.Releases.Uninstall(ctx, release); err != nil {
		r.opts.Logger.Warn("purge of release without module failed", slog.String(logkey.Release, release), logkey.Err(err))
		return
	}
	r.opts.Logger.Info("release without module purged", slog.String(logkey.Release, release))
}

// Wait blocks until what a Deploy applied is ready (see Deploy).
type Wait func(ctx context.Context) error

// Deploy installs or upgrades a module's release with values; the Helm
// client skips it when nothing changed. It returns the release's revision,
// 0 for a module without a chart, and, when the release's objects are to
// be awaited, the Wait for them: the caller decides where it waits (a
// module run parks rather than hold a worker). The Wait fails with
// ErrSuperseded when the module's inputs change meanwhile. For a release
// whose objects have several werf.io/weight values, Deploy may first
// create a lower weight's objects alone and return revision 0 with the
// Wait for them, which ends with ErrNextWeight once they are ready: Deploy
// is then called again (see ahead).
func (r *Manager) Deploy(ctx context.Context, m *module.Module, values map[string]any) (int, Wait, error) {
	name := m.Name()
	if !m.IsHelm() {
		return 0, nil, nil
	}
	if err := r.ensureNamespace(ctx, m); err != nil {
		return 0, nil, err
	}
	d := r.module(name)
	d.busy.Lock()
	defer d.busy.Unlock()
	start := r.opts.Clock.Now()
	def := m.Definition()
	var step weightStep
	out, err := r.opts.Releases.Apply(ctx, helm.Release{Name: name, ChartDir: m.Path(), Values: values, Namespace: m.Namespace(),
		HookTimeout: def.ChartHookTimeout.Duration, UpgradeOnValuesChange: def.UpgradesOnValuesChange(), Ahead: r.ahead(m, d, &step)})
	if out.Rendered != nil && r.opts.Rendered != nil {
		r.opts.Rendered(name, out.Rendered)
	}
	if err == nil && out.Deferred {
		// Objects of a lower weight were created first: the release is
		// applied once they are ready.
		return 0, step.wait, nil
	}
	if r.opts.Recorder != nil {
		op := "upgrade"
		if err == nil && out.Skipped {
			op = "skip"
		}
		r.opts.Recorder.HelmOperation(name, op, r.opts.Clock.Since(start))
	}
	if err != nil {
		return 0, nil, fmt.Errorf("module %s: helm: %w", name, err)
	}
	if err := r.afterDeploy(ctx, name, r.Namespace(m), out.Manifest, !out.Fresh, out.Created); err != nil {
		return out.Revision, nil, err
	}
	log := r.opts.Logger.With(slog.String(logkey.Module, name), slog.String(logkey.Release, name), slog.Int(logkey.Revision, out.Revision))
	if out.Skipped {
		log.Debug("release up to date")
	} else {
		log.Info("release deployed", slog.String(logkey.Reason, string(out.Reason)))
	}
	// A fresh install created every object; a skip found every one.
	wait, err := r.readyWait(m, out.Manifest, out.Fresh || out.Skipped)
	return out.Revision, wait, err
}

// Render renders a module's chart against the cluster, as the next Deploy
// would, when the release client can.
func (r *Manager) Render(ctx context.Context, rel helm.Release) (*helm.Rendered, error) {
	type renderer interface {
		Render(ctx context.Context, r helm.Release) (*helm.Rendered, error)
	}
	rr, ok := r.opts.Releases.(renderer)
	if !ok {
		return nil, errors.New("the release client cannot render")
	}
	return rr.Render(ctx, rel)
}

// afterDeploy arms healing for the objects the release now has and, when
// checkDrift, reports (and with --heal-drift reverts) objects whose live
// state drifted from it. Objects an install has just created cannot have
// drifted: checking them would read each once more for nothing, and the
// drift checker is told they are clean at the versions they were created
// with (created), so that its next check reads only those changed since.
func (r *Manager) afterDeploy(ctx context.Context, name, namespace, manifest string, checkDrift bool, created []kubeclient.CreatedObject) error {
	if r.opts.Healer != nil {
		objects, err := heal.ObjectsFromManifest(manifest)
		if err != nil {
			return fmt.Errorf("module %s: read release manifest: %w", name, err)
		}
		for i := range objects {
			// Only namespaced kinds take it: the watcher ignores it for others.
			objects[i].Namespace = cmp.Or(objects[i].Namespace, namespace)
		}
		r.opts.Healer.Watch(name, objects)
	}
	if r.opts.Drift == nil {
		return nil
	}
	// Checks between runs compare with this manifest, also after an
	// install that had nothing to compare yet.
	d := r.module(name)
	r.mu.Lock()
	d.manifest, d.namespace = manifest, namespace
	r.mu.Unlock()
	if !checkDrift {
		r.seedDrift(ctx, name, d, manifest, created)
		return nil
	}
	if err := r.checkDrift(ctx, name, d, manifest); err != nil {
		return fmt.Errorf("module %s: check drift: %w", name, err)
	}
	return nil
}

// ApplyCRDs applies a module's crds/ before its release, every run: they
// are created and updated, never deleted.
func (r *Manager) ApplyCRDs(ctx context.Context, m *module.Module) error {
	dir := filepath.Join(m.Path(), "crds")
	if r.opts.CRDs == nil {
		return nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil //nolint:nilerr // no crds/ directory: nothing to apply
	}
	names, err := r.opts.CRDs.ApplyCRDs(ctx, dir)
	if err != nil {
		return fmt.Errorf("module %s: apply CRDs: %w", m.Name(), err)
	}
	r.opts.Logger.Debug("CRDs applied", slog.String(logkey.Module, m.Name()), slog.Int(logkey.Count, len(names)))
	return nil
}
