package release

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/release/weights"
)

// WeightCreator creates the objects of a weight group that do not exist
// yet; *weights.Creator is the real one.
type WeightCreator interface {
	CreateMissing(ctx context.Context, owner weights.Owner, objs []map[string]any) (weights.Created, error)
	AnyMissing(ctx context.Context, owner weights.Owner, objs []map[string]any) (bool, error)
}

// ErrNextWeight ends the Wait that Deploy returns for a weight group it
// created ahead of the rest of a release (see ahead), once the group is
// ready: the caller then calls Deploy again, which goes on with the next
// group, or with Helm's install or upgrade of the whole release.
var ErrNextWeight = errors.New("weight group ready, deploy again for the next")

// weightStep is what the ahead step of one Deploy left: the wait for the
// group it created, when Apply was deferred for it.
type weightStep struct {
	wait Wait
}

// ahead returns the Release.Ahead of a deploy of module m: it orders the
// creation of the release's objects by werf.io/weight (see package
// weights), and holds an object with external dependencies until they
// are ready (see externalsAhead), before its group is created or, in the
// highest group, before Helm applies the release. Going up the groups below the highest, it creates a group's
// objects that do not exist yet; a group to be awaited (created now, or
// found existing but not yet seen ready while a higher group has objects
// to create) defers Apply, and step gets the wait for it. Groups ready as
// created (ConfigMaps, Secrets...) do not stop it. A release of one
// weight, or a Manager without a WeightCreator, costs a substring search
// of its manifest. The order is one of creation: when every object
// exists, an upgrade awaits no group before Helm applies the release.
func (r *Manager) ahead(m *module.Module, d *deployed, step *weightStep) func(ctx context.Context, manifest string) (int, bool, error) {
	return func(ctx context.Context, manifest string) (int, bool, error) {
		if r.opts.Weights == nil {
			return 0, false, nil
		}
		owner := weights.Owner{Release: m.Name(), Namespace: r.Namespace(m)}
		dependents, err := r.externals(manifest, owner.Namespace)
		if err != nil {
			return 0, false, err
		}
		groups, err := weights.Groups(manifest, owner.Namespace)
		if err != nil {
			return 0, false, err
		}
		var lower []weights.Group // the highest group is Helm's
		if len(groups) > 0 {
			lower = groups[:len(groups)-1]
		}
		ahead := 0
		for _, g := range lower {
			ahead += len(g.Objects)
		}
		for i, g := range lower {
			// Objects of the group that wait for external dependencies
			// hold the group, and the groups above it.
			if deferred, err := r.externalsAhead(ctx, m, owner, dependents, g.Objects, step); err != nil || deferred {
				return ahead, deferred, err
			}
			deferred, done, err := r.aheadGroup(ctx, m, d, owner, g, groups[i+1:], step)
			if err != nil || deferred {
				return ahead, deferred, err
			}
			if done {
				break
			}
		}
		// What Helm creates waits for its external dependencies too.
		if deferred, err := r.externalsAhead(ctx, m, owner, dependents, nil, step); err != nil || deferred {
			return ahead, deferred, err
		}
		if len(groups) > 0 {
			r.clearWeights(d)
		}
		return ahead, false, nil
	}
}

// aheadGroup creates group g's missing objects and tells whether Apply
// waits for it (deferred, with step.wait set), or whether no order is
// left to keep (done): every object above it exists, or one of the group
// exists without the release's ownership, which the Helm operation then
// refuses or adopts at once rather than after a wait on someone else's
// object.
func (r *Manager) aheadGroup(ctx context.Context, m *module.Module, d *deployed, owner weights.Owner, g weights.Group, above []weights.Group, step *weightStep) (deferred, done bool, err error) {
	res, err := r.opts.Weights.CreateMissing(ctx, owner, g.Objects)
	if err != nil {
		return false, false, fmt.Errorf("module %s: %s: %w", m.Name(), g, err)
	}
	if len(res.Foreign) > 0 {
		// Not the release's: Helm's ownership check decides (refuses, or
		// adopts what is handed over) before anything is awaited.
		r.opts.Logger.Info("object of a lower weight exists and is not the release's; Helm's ownership check decides",
			slog.String(logkey.Module, m.Name()), slog.Any(logkey.Name, res.Foreign))
		return false, true, nil
	}
	created := res.Count
	if created > 0 {
		r.opts.Logger.Info("objects created ahead of higher weights", slog.String(logkey.Module, m.Name()),
			slog.String(logkey.Reason, g.String()), slog.Int(logkey.Count, created))
		r.setWeightReady(d, g.String(), false)
	} else if r.weightReady(d, g.String()) {
		return false, false, nil
	}
	wait, err := r.groupWait(m, d, g)
	if err != nil {
		return false, false, err
	}
	if wait == nil {
		r.setWeightReady(d, g.String(), true)
		return false, false, nil
	}
	if created == 0 {
		missing, err := r.anyMissing(ctx, owner, above)
		if err != nil {
			return false, false, fmt.Errorf("module %s: %w", m.Name(), err)
		}
		if !missing {
			return false, true, nil
		}
	}
	step.wait = wait
	return true, false, nil
}

// anyMissing reports whether an object of groups does not exist yet.
func (r *Manager) anyMissing(ctx context.Context, owner weights.Owner, groups []weights.Group) (bool, error) {
	for _, g := range groups {
		missing, err := r.opts.Weights.AnyMissing(ctx, owner, g.Objects)
		if err != nil || missing {
			return missing, err
		}
	}
	return false, nil
}

// groupWait returns the wait for group g's objects to be ready, ending
// with ErrNextWeight once they are; nil when they are ready as they
// exist.
func (r *Manager) groupWait(m *module.Module, d *deployed, g weights.Group) (Wait, error) {
	manifest, err := g.Manifest()
	if err != nil {
		return nil, fmt.Errorf("module %s: %s: %w", m.Name(), g, err)
	}
	wait, err := r.readyWait(m, manifest, true)
	if err != nil || wait == nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		if err := wait(ctx); err != nil {
			return err
		}
		r.setWeightReady(d, g.String(), true)
		return fmt.Errorf("module %s: %s: %w", m.Name(), g, ErrNextWeight)
	}, nil
}

func (r *Manager) weightReady(d *deployed, w string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return d.weightsReady[w]
}

func (r *Manager) setWeightReady(d *deployed, w string, ready bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d.weightsReady == nil {
		d.weightsReady = map[string]bool{}
	}
	d.weightsReady[w] = ready
}

// clearWeights forgets which groups were seen ready, once the release is
// applied whole: the next deploy's new objects are ordered anew.
func (r *Manager) clearWeights(d *deployed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d.weightsReady = nil
}
