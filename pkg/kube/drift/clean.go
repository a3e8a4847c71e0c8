package drift

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// Watched knows the resource version of objects it watches;
// *heal.Watcher is the real one. ok is false for an object it does not
// know; namespace is "" for cluster-scoped resources.
type Watched interface {
	ResourceVersion(gr schema.GroupResource, namespace, name string) (string, bool)
}

// WithWatched returns a copy of c that skips the read of an object that
// has not changed since its last check found no drift: the same resource
// version, as w watches it, and the same manifest. The copies of the
// returned Checker share what they remember of past checks; it is one
// entry per object checked, forgotten when the object drifts or changes.
func (c *Checker) WithWatched(w Watched) *Checker {
	out := *c
	out.watched = w
	out.clean = &cleanChecks{seen: map[cleanKey]cleanCheck{}}
	return &out
}

// cleanChecks remembers the objects whose last check found no drift. mu
// guards seen.
type cleanChecks struct {
	mu   sync.Mutex
	seen map[cleanKey]cleanCheck
}

type cleanKey struct {
	resource        schema.GroupResource
	namespace, name string
}

// cleanCheck is what a check without drift saw: the live resource
// version, and the manifest object's digest.
type cleanCheck struct {
	resourceVersion string
	manifest        [sha256.Size]byte
}

func manifestDigest(obj map[string]any) [sha256.Size]byte {
	data, err := json.Marshal(obj) // map keys sorted: stable
	if err != nil {
		return [sha256.Size]byte{}
	}
	return sha256.Sum256(data)
}

// unchanged reports whether the object is as its last clean check saw it.
func (c *Checker) unchanged(key cleanKey, digest [sha256.Size]byte) bool {
	if c.watched == nil || c.clean == nil {
		return false
	}
	rv, ok := c.watched.ResourceVersion(key.resource, key.namespace, key.name)
	if !ok {
		return false
	}
	c.clean.mu.Lock()
	defer c.clean.mu.Unlock()
	last, ok := c.clean.seen[key]
	return ok && last.resourceVersion == rv && last.manifest == digest
}

// remember records the outcome of a check that read the object.
func (c *Checker) remember(key cleanKey, digest [sha256.Size]byte, resourceVersion string, drifted bool) {
	if c.clean == nil {
		return
	}
	c.clean.mu.Lock()
	defer c.clean.mu.Unlock()
	if drifted {
		delete(c.clean.seen, key)
		return
	}
	c.clean.seen[key] = cleanCheck{resourceVersion: resourceVersion, manifest: digest}
}

// Seed records the objects of manifest that an install has just created
// from it, each at the resource version the API server gave it, as clean:
// an object made from the manifest does not differ from it. A later check
// reads such an object only when the watch reports another version (a
// change since) or the manifest changes, as after a check that found it
// clean. Objects of manifest not in created are left alone. Without a
// watch (WithWatched) it does nothing.
func (c *Checker) Seed(ctx context.Context, manifest string, created map[Object]string) error {
	if c.clean == nil || len(created) == 0 {
		return nil
	}
	objs, err := kube.ManifestObjects(manifest)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		t, ok, err := c.target(ctx, obj)
		if err != nil {
			return err
		}
		rv, made := created[t.ref]
		if !ok || !made || rv == "" {
			continue
		}
		c.remember(cleanKey{resource: t.resource, namespace: t.ref.Namespace, name: t.ref.Name}, manifestDigest(obj), rv, false)
	}
	return nil
}
