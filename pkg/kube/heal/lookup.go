package heal

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// watchedStores are the stores of the running informers, for
// ResourceVersion. Run's goroutine adds and removes them; readers only
// read. mu guards the map.
type watchedStores struct {
	mu     sync.RWMutex
	stores map[informerKey]watchedStore
}

type watchedStore struct {
	store  cache.Store
	synced <-chan struct{}
}

func (s *watchedStores) add(key informerKey, store cache.Store, synced <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stores == nil {
		s.stores = make(map[informerKey]watchedStore)
	}
	s.stores[key] = watchedStore{store: store, synced: synced}
}

func (s *watchedStores) remove(key informerKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.stores, key)
}

// ResourceVersion returns the resource version of the object name in
// namespace ("" for a cluster-scoped resource) of resource gr as the watch
// last saw it. ok is false when no watch that has listed covers that
// resource and namespace, or the object is not among the operator's
// objects it holds (absent, or without the module label): only a present
// object is answered, never an absence.
//
// The answer may lag behind the cluster by the watch's delay: a deletion
// not yet seen still answers the object, and is reported as an Event when
// it is seen.
func (w *Watcher) ResourceVersion(gr schema.GroupResource, namespace, name string) (string, bool) {
	w.stores.mu.RLock()
	s, ok := w.stores.stores[informerKey{resource: gr, namespace: namespace}]
	w.stores.mu.RUnlock()
	if !ok {
		return "", false
	}
	select {
	case <-s.synced:
	default:
		return "", false
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, exists, err := s.store.GetByKey(key)
	if err != nil || !exists {
		return "", false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return m.GetResourceVersion(), true
}
