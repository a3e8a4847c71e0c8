package kube

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resolved remembers what a Resolver over a Discovery found, for as long
// as the discovery cache it was found in holds: the mapper's answer is a
// function of that cache, and working it out again (the short-name
// expander walks every resource the server serves) cost a readiness check
// more CPU than its GET. A refresh of the cache, or a miss that refreshed
// it, forgets everything. Misses are not remembered. It is safe for
// concurrent use.
type resolved struct {
	// generation returns the cache's count of refreshes.
	generation func() uint64

	mu  sync.Mutex
	gen uint64
	by  map[schema.GroupVersionKind]Resource
}

// get returns the remembered resource of gvk, else resolves it with
// resolve and remembers the answer unless the cache was refreshed since
// before the lookup. A lookup of a kind that misses refreshes the cache
// inside the mapper, which drops the mapping it built from the cache an
// instant later: another kind resolved in that instant may be remembered
// as the previous cache had it (a refresh adds kinds; the ones already
// served keep their resources) until the next refresh.
func (m *resolved) get(ctx context.Context, gvk schema.GroupVersionKind, resolve func(context.Context, schema.GroupVersionKind) (Resource, error)) (Resource, error) {
	gen := m.generation()
	m.mu.Lock()
	if m.gen != gen {
		m.gen, m.by = gen, nil
	}
	res, ok := m.by[gvk]
	m.mu.Unlock()
	if ok {
		return res, nil
	}
	res, err := resolve(ctx, gvk)
	if err != nil {
		return res, err
	}
	m.mu.Lock()
	if m.gen == gen && m.generation() == gen {
		if m.by == nil {
			m.by = map[schema.GroupVersionKind]Resource{}
		}
		m.by[gvk] = res
	}
	m.mu.Unlock()
	return res, nil
}
