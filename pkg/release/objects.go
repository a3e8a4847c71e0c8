package release

import (
	"context"
	"errors"
	"fmt"

	"github.com/addon-operator/addon-operator/pkg/kube/readiness"
)

// ErrNoStatuses is ObjectStatuses' error when the readiness checker cannot
// show objects' statuses.
var ErrNoStatuses = errors.New("the readiness checker cannot show statuses")

// maxObjectStatuses bounds the objects ObjectStatuses reads: a page shows
// the first ones of a large release.
const maxObjectStatuses = 200

// ObjectStatuses reads the objects of the module's release as last
// deployed and returns each with its kstatus status, the first
// maxObjectStatuses of them; none before a deploy since the operator
// started.
func (r *Manager) ObjectStatuses(ctx context.Context, name string) ([]readiness.Node, error) {
	type shower interface {
		Statuses(ctx context.Context, namespace string, objects []readiness.Object) ([]readiness.Node, error)
	}
	s, ok := r.opts.Readiness.(shower)
	if !ok {
		return nil, ErrNoStatuses
	}
	r.mu.Lock()
	d := r.deployed[name]
	var manifest, namespace string
	if d != nil {
		manifest, namespace = d.manifest, d.namespace
	}
	r.mu.Unlock()
	if manifest == "" {
		return nil, nil
	}
	objects, err := readiness.ObjectsFromManifest(manifest, false)
	if err != nil {
		return nil, fmt.Errorf("module %s: read release manifest: %w", name, err)
	}
	if len(objects) > maxObjectStatuses {
		objects = objects[:maxObjectStatuses]
	}
	return s.Statuses(ctx, namespace, objects)
}
