package kube

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/clock"
)

// DefaultFreshFor is how long after a refresh a Discovery trusts a miss:
// a kind not found within this window is unknown, one not found later
// refreshes the cache and is looked up once more.
const DefaultFreshFor = time.Second

// Discovery is one in-memory cache of the API server's discovery
// information and a REST mapper over it, for everything in the process that
// maps kinds to resources or reads the server's API versions: its Resolver
// serves monitors, the patcher, the heal watcher, drift checks and the
// debug diff; its RESTMapper and Client serve Helm. Reading discovery
// costs two requests and decoding every group's resources, so it is read
// once and refreshed only when something may have changed it:
//
//   - a lookup misses a kind and the cache is older than its fresh window
//     (CRDs installed since are then found without a restart);
//   - Refresh is called, e.g. after the operator applied CRDs.
//
// It is safe for concurrent use.
type Discovery struct {
	cache    *freshCache
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	expand   meta.RESTMapper
	resolver *Resolver
}

// NewDiscovery returns a Discovery over d. A miss within freshFor of the
// last refresh does not refresh again (DefaultFreshFor when zero); clk
// times it (the real clock when nil).
func NewDiscovery(d discovery.DiscoveryInterface, freshFor time.Duration, clk clock.PassiveClock) *Discovery {
	if freshFor <= 0 {
		freshFor = DefaultFreshFor
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	cache := &freshCache{CachedDiscoveryInterface: memory.NewMemCacheClient(d), clock: clk, freshFor: freshFor, at: clk.Now()}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cache)
	expand := restmapper.NewShortcutExpander(mapper, cache, nil)
	r := NewResolver(expand)
	r.memo = &resolved{generation: cache.generation}
	return &Discovery{cache: cache, mapper: mapper, expand: expand, resolver: r}
}

// RESTMapper returns the mapper over the cache. It expands short names
// (ds, cm) and accepts singular resource names, so every spelling a
// binding's kind may use resolves. Its Reset is Refresh.
func (d *Discovery) RESTMapper() meta.ResettableRESTMapper {
	return resettable{RESTMapper: d.expand, reset: d.Refresh}
}

// Client returns the cache as a discovery client, for readers of the
// server's versions and API groups. Its Invalidate is Refresh.
func (d *Discovery) Client() discovery.CachedDiscoveryInterface {
	return refreshingClient{CachedDiscoveryInterface: d.cache, refresh: d.Refresh}
}

// Refresh drops what the cache holds: the next lookup reads discovery
// again.
func (d *Discovery) Refresh() {
	d.mapper.Reset()
	// The mapper drops the mapping it built from the cache after the
	// cache: what was resolved in between is forgotten too.
	d.cache.bump()
}

// resettable is a mapper whose Reset refreshes a Discovery.
type resettable struct {
	meta.RESTMapper
	reset func()
}

func (r resettable) Reset() { r.reset() }

// refreshingClient is the cache seen from outside: invalidating it also
// drops the mapper built from it.
type refreshingClient struct {
	discovery.CachedDiscoveryInterface
	refresh func()
}

func (c refreshingClient) Invalidate() { c.refresh() }

// freshCache is a memory discovery cache that remembers when it was last
// invalidated. The deferred mapper asks Fresh after a miss and, when it
// is false, invalidates the cache and looks up once more.
type freshCache struct {
	discovery.CachedDiscoveryInterface
	clock    clock.PassiveClock
	freshFor time.Duration

	mu  sync.Mutex
	at  time.Time // last invalidation, or creation
	gen uint64    // invalidations so far
}

func (c *freshCache) Invalidate() {
	// Counted before and after: a lookup that may have read the cache
	// before it was emptied sees another count when it is done.
	c.bump()
	c.CachedDiscoveryInterface.Invalidate()
	c.mu.Lock()
	c.at = c.clock.Now()
	c.gen++
	c.mu.Unlock()
}

// bump counts one more invalidation.
func (c *freshCache) bump() {
	c.mu.Lock()
	c.gen++
	c.mu.Unlock()
}

// generation counts the invalidations begun.
func (c *freshCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// Fresh reports whether the cache was invalidated within the fresh window,
// so that a miss is trusted rather than retried.
func (c *freshCache) Fresh() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clock.Since(c.at) < c.freshFor
}
