package release

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/addon-operator/addon-operator/pkg/kube/readiness"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/release/weights"
)

// ExternalAwaiter looks at and awaits the external dependencies of a
// release's objects (nelm's <id>.external-dependency.werf.io/resource),
// with the operator's rights; *weights.Creator is the real one. A
// Manager takes it from Options.Weights; without one, external
// dependencies are not acted on.
type ExternalAwaiter interface {
	CheckExternal(ctx context.Context, d weights.External) (weights.ExternalState, error)
	AwaitExternal(ctx context.Context, deps []weights.External, timeout time.Duration, seen func(weights.ExternalState)) error
}

// externals returns the objects of manifest that carry external
// dependencies, nil without an ExternalAwaiter.
func (r *Manager) externals(manifest, namespace string) ([]weights.Dependent, error) {
	if _, ok := r.opts.Weights.(ExternalAwaiter); !ok {
		return nil, nil
	}
	return weights.Dependents(manifest, namespace)
}

// externalsAhead keeps an object with external dependencies from being
// created before they exist and are ready: for the dependents among objs
// (all of them when objs is nil) that do not exist yet, it looks at each
// dependency once; when one is absent or not ready, it sets step.wait to
// the wait for them, which ends with ErrNextWeight, and reports deferred:
// the caller then deploys again. A dependency whose type resolves to no
// kind, or that the operator may not read, fails at once. Objects that
// exist are not held: as with weights, the order is one of creation.
func (r *Manager) externalsAhead(ctx context.Context, m *module.Module, owner weights.Owner, dependents []weights.Dependent, objs []map[string]any, step *weightStep) (bool, error) {
	if len(dependents) == 0 {
		return false, nil
	}
	aw, _ := r.opts.Weights.(ExternalAwaiter)
	in := map[string]bool{}
	for _, obj := range objs {
		in[objectKey(obj)] = true
	}
	var pending []weights.External
	var held []string
	for _, dep := range dependents {
		if objs != nil && !in[objectKey(dep.Object)] {
			continue
		}
		missing, err := r.opts.Weights.AnyMissing(ctx, owner, []map[string]any{dep.Object})
		if err != nil || !missing {
			if err != nil {
				return false, fmt.Errorf("module %s: %w", m.Name(), err)
			}
			continue
		}
		notReady, err := unready(ctx, aw, dep.Externals)
		if err != nil {
			return false, err // names the dependency and the object; Deploy names the module
		}
		if len(notReady) > 0 {
			pending = append(pending, notReady...)
			held = append(held, weights.ObjectName(dep.Object))
		}
	}
	if len(pending) == 0 {
		return false, nil
	}
	r.opts.Logger.Info("objects wait for their external dependencies", slog.String(logkey.Module, m.Name()), slog.Any(logkey.Name, held))
	step.wait = func(ctx context.Context) error { return r.waitExternal(ctx, m, aw, pending) }
	return true, nil
}

// unready returns the dependencies of deps not ready at one look; an
// error is one that waiting cannot mend (*weights.ExternalError). Other
// errors reading a dependency count it as not ready: the wait retries.
func unready(ctx context.Context, aw ExternalAwaiter, deps []weights.External) ([]weights.External, error) {
	var out []weights.External
	for _, d := range deps {
		st, err := aw.CheckExternal(ctx, d)
		var permanent *weights.ExternalError
		if errors.As(err, &permanent) {
			return nil, err
		}
		if err != nil || !st.Ready {
			out = append(out, d)
		}
	}
	return out, nil
}

// waitExternal waits, for the module's readiness timeout, until deps are
// ready, and then ends with ErrNextWeight: the module deploys again and
// creates what waited for them. What each look found goes to
// Options.Progress.
func (r *Manager) waitExternal(ctx context.Context, m *module.Module, aw ExternalAwaiter, deps []weights.External) error {
	waitCtx, cancel := r.supersedable(ctx, m.Name())
	defer cancel()
	seen := func(st weights.ExternalState) {
		if r.opts.Progress == nil {
			return
		}
		s := status.InProgressStatus
		if !st.Exists {
			s = status.NotFoundStatus
		}
		r.opts.Progress(m.Name(), readiness.Pending{
			Object: readiness.Object{Kind: st.Kind, Namespace: st.Namespace, Name: st.Dependency.Name}, Status: s,
			Message: "external dependency of " + st.Dependency.Object + ": " + st.Seen(),
		})
	}
	err := aw.AwaitExternal(waitCtx, deps, r.readinessTimeout(m), seen)
	if err := r.waitEnded(ctx, waitCtx, m.Name(), err); err != nil {
		return err
	}
	return fmt.Errorf("module %s: external dependencies ready: %w", m.Name(), ErrNextWeight)
}

// objectKey identifies an object of a manifest across two reads of it.
func objectKey(obj map[string]any) string {
	v, _ := obj["apiVersion"].(string)
	return v + " " + weights.ObjectName(obj)
}
