package release

import (
	"context"
	"errors"
	"fmt"

	"github.com/addon-operator/addon-operator/pkg/helm/revisions"
)

// remediator puts failed releases back into a working state;
// *helm.Client is one.
type remediator interface {
	Remediate(ctx context.Context, name string, r revisions.Remediation) (revisions.Remedy, error)
}

// Remediate rolls back or uninstalls a module's failed release as r says
// (see helm.Client.Remediate). It never overlaps the module's drift checks.
func (r *Manager) Remediate(ctx context.Context, name string, rem revisions.Remediation) (revisions.Remedy, error) {
	rr, ok := r.opts.Releases.(remediator)
	if !ok {
		return revisions.Remedy{}, errors.New("the release client cannot remediate")
	}
	d := r.module(name)
	d.busy.Lock()
	defer d.busy.Unlock()
	start := r.opts.Clock.Now()
	out, err := rr.Remediate(ctx, name, rem)
	if r.opts.Recorder != nil && out.Action != "" {
		r.opts.Recorder.HelmOperation(name, out.Action, r.opts.Clock.Since(start))
		r.opts.Recorder.Remediation(name, out.Action, err)
	}
	if err != nil {
		return out, fmt.Errorf("module %s: %w", name, err)
	}
	return out, nil
}
