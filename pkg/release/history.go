package release

import (
	"context"
	"errors"
	"slices"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/helm/revisions"
)

// ErrNoHistory is History's error when the release client keeps none.
var ErrNoHistory = errors.New("the release client keeps no history")

// History returns the revisions of a module's release, newest first, at
// most maxRevisions (all when 0 or less), from a release client that
// keeps them (*helm.Client); none for a release that does not exist.
func (r *Manager) History(ctx context.Context, name string, maxRevisions int) ([]revisions.Revision, error) {
	type historian interface {
		History(ctx context.Context, name string) ([]revisions.Revision, error)
	}
	h, ok := r.opts.Releases.(historian)
	if !ok {
		return nil, ErrNoHistory
	}
	revs, err := h.History(ctx, name)
	if errors.Is(err, helm.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	slices.Reverse(revs)
	if maxRevisions > 0 && len(revs) > maxRevisions {
		revs = revs[:maxRevisions]
	}
	return revs, nil
}
