package release

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/kube/drift"
	"github.com/addon-operator/addon-operator/pkg/kube/readiness"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// Namespace is the namespace of a module's release: its module.yaml's,
// else the operator's.
func (r *Manager) Namespace(m *module.Module) string {
	if ns := m.Namespace(); ns != "" {
		return ns
	}
	return r.opts.Namespace
}

// readyWait returns the Wait for the objects of a release's manifest to
// be ready, as kstatus computes it; nil without a ReadinessChecker (a
// release is ready once Helm applied it) or when every object is ready as
// applied. exist tells that every object has just been seen to exist (a
// fresh install created them, or Helm's step was skipped, which it is only
// when all exist): those ready from their existence on are not read again.
func (r *Manager) readyWait(m *module.Module, manifest string, exist bool) (Wait, error) {
	if r.opts.Readiness == nil {
		return nil, nil
	}
	objects, err := readiness.ObjectsFromManifest(manifest, exist)
	if err != nil {
		return nil, fmt.Errorf("module %s: read release manifest: %w", m.Name(), err)
	}
	if !readiness.AnyToRead(objects) {
		return nil, nil
	}
	return func(ctx context.Context) error { return r.waitReady(ctx, m, objects) }, nil
}

// waitReady waits until objects are ready, for the module's timeout; it
// looks again at once when one of the module's objects changes (the heal
// watch's changes, as RunDrift receives them), else on a slow poll.
func (r *Manager) waitReady(ctx context.Context, m *module.Module, objects []readiness.Object) error {
	progress := func(p readiness.Pending) {
		if r.opts.Progress != nil {
			r.opts.Progress(m.Name(), p)
		}
	}
	waitCtx, cancel := r.supersedable(ctx, m.Name())
	defer cancel()
	changed, stop := r.watchChanges(m.Name())
	defer stop()
	err := r.opts.Readiness.Wait(waitCtx, r.Namespace(m), objects, r.readinessTimeout(m), changed, progress)
	return r.waitEnded(ctx, waitCtx, m.Name(), err)
}

// readinessTimeout bounds a module's waits: its module.yaml's
// readinessTimeout, else the Manager's.
func (r *Manager) readinessTimeout(m *module.Module) time.Duration {
	if t := m.Definition().ReadinessTimeout.Duration; t > 0 {
		return t
	}
	return r.opts.ReadinessTimeout
}

// supersedable returns the context of a wait of module name, cancelled
// when the module's inputs change (Options.Superseded), and its cancel.
func (r *Manager) supersedable(ctx context.Context, name string) (context.Context, context.CancelFunc) {
	waitCtx, cancel := context.WithCancel(ctx)
	var superseded <-chan struct{}
	if r.opts.Superseded != nil {
		superseded = r.opts.Superseded(name)
	}
	if superseded != nil {
		go func() { // ends with the wait, at the latest
			select {
			case <-superseded:
				cancel()
			case <-waitCtx.Done():
			}
		}()
	}
	return waitCtx, cancel
}

// waitEnded words how a wait on waitCtx (see supersedable) ended: nil,
// ErrSuperseded when the module's inputs changed, else err.
func (r *Manager) waitEnded(ctx, waitCtx context.Context, name string, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() == nil && waitCtx.Err() != nil:
		return fmt.Errorf("module %s: %w", name, ErrSuperseded)
	default:
		return fmt.Errorf("module %s: %w", name, err)
	}
}

// watchChanges returns a channel that hears when one of the module's
// objects changes while its readiness is awaited, and the func that stops
// it.
func (r *Manager) watchChanges(name string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	r.changed[name] = ch
	r.mu.Unlock()
	return ch, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.changed[name] == ch {
			delete(r.changed, name)
		}
	}
}

// objectChanged tells the module's readiness wait, if any, to look again.
func (r *Manager) objectChanged(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch, ok := r.changed[name]; ok {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// ErrSuperseded ends a readiness wait when the module's inputs changed:
// the next run waits for what they deploy instead.
var ErrSuperseded = errors.New("readiness wait ended: the module's inputs changed")

// ensureNamespace creates the namespace a module's module.yaml names,
// labelled as the module's objects are, when it is missing. It is never
// deleted.
func (r *Manager) ensureNamespace(ctx context.Context, m *module.Module) error {
	if m.Namespace() == "" || r.opts.Namespaces == nil {
		return nil
	}
	labels := map[string]string{helm.LabelManagedBy: helm.ManagedByValue, helm.LabelModule: m.Name()}
	if err := r.opts.Namespaces.Ensure(ctx, m.Namespace(), labels); err != nil {
		return fmt.Errorf("module %s: %w", m.Name(), err)
	}
	return nil
}

// driftIn returns the drift checker that looks for namespaced objects
// without a namespace in namespace, when the checker can (the real one
// can).
func (r *Manager) driftIn(namespace string) DriftChecker {
	if c, ok := r.opts.Drift.(interface {
		WithNamespace(namespace string) *drift.Checker
	}); ok {
		return c.WithNamespace(namespace)
	}
	return r.opts.Drift
}
