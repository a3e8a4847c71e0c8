package requests

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/transport"
	"k8s.io/utils/clock"
)

// Getter serves Helm a rest.Config, a discovery cache and a REST mapper
// over it, all shared by every operation: Helm's RESTClientGetter. The
// cache reads the server's capabilities again at most once per max age
// (see capabilityCache). It is safe for concurrent use.
type Getter struct {
	config    *rest.Config
	namespace string
	discovery *capabilityCache
	mapper    meta.RESTMapper
}

// GetterOptions configure a Getter.
type GetterOptions struct {
	// Config is the cluster's; required.
	Config *rest.Config
	// Namespace is what the kubeconfig loader answers as the namespace.
	Namespace string
	// Discovery and Mapper are a shared discovery cache and the REST
	// mapper over it (both or neither); nil makes a cache and mapper of
	// the Getter's own.
	Discovery discovery.CachedDiscoveryInterface
	Mapper    meta.RESTMapper
	// MaxAge is how old the server's version and API versions may be when
	// an operation starts.
	MaxAge time.Duration
	// Wrap wraps the transport of every request Helm sends, in order (the
	// last wraps the others); discovery's requests are not wrapped.
	Wrap []transport.WrapperFunc
}

// NewGetter returns a Getter over the cache and mapper of opts, or over a
// cache and mapper of its own when opts has none.
func NewGetter(opts GetterOptions, clk clock.PassiveClock) (*Getter, error) {
	disc, mapper := opts.Discovery, opts.Mapper
	if disc == nil {
		dc, err := discovery.NewDiscoveryClientForConfig(opts.Config)
		if err != nil {
			return nil, fmt.Errorf("create discovery client: %w", err)
		}
		cached := memory.NewMemCacheClient(dc)
		deferred := restmapper.NewDeferredDiscoveryRESTMapper(cached)
		disc = resettingCache{CachedDiscoveryInterface: cached, reset: deferred.Reset}
		mapper = restmapper.NewShortcutExpander(deferred, cached, nil)
	}
	config := rest.CopyConfig(opts.Config)
	for _, wrap := range opts.Wrap {
		config.Wrap(wrap)
	}
	return &Getter{
		config:    config,
		namespace: opts.Namespace,
		discovery: &capabilityCache{CachedDiscoveryInterface: disc, clock: clk, maxAge: opts.MaxAge},
		mapper:    mapper,
	}, nil
}

// Refresh invalidates the discovery cache now, e.g. after a release
// created or deleted CRDs.
func (g *Getter) Refresh() { g.discovery.Refresh() }

// ToRESTConfig returns a copy of the cluster's configuration, its transport
// wrapped.
func (g *Getter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.config), nil }

// ToDiscoveryClient returns the shared discovery cache.
func (g *Getter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

// ToRESTMapper returns the shared REST mapper.
func (g *Getter) ToRESTMapper() (meta.RESTMapper, error) { return g.mapper, nil }

// ToRawKubeConfigLoader only answers the namespace; Helm takes everything
// else from ToRESTConfig.
func (g *Getter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	overrides := &clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: g.namespace}}
	return clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), overrides)
}

// resettingCache is a discovery cache whose Invalidate also drops the
// mapper built from it.
type resettingCache struct {
	discovery.CachedDiscoveryInterface
	reset func()
}

func (c resettingCache) Invalidate() { c.reset() }

// capabilityCache is the discovery cache as Helm sees it. Helm invalidates
// it at the start of every operation to read the server's version and API
// versions (.Capabilities); reading them again costs three requests and
// decoding every group's resources, per operation. capabilityCache passes
// that invalidation on only when the last one it passed is maxAge old, and
// keeps the server version until then. Refresh invalidates at once.
type capabilityCache struct {
	discovery.CachedDiscoveryInterface
	clock  clock.PassiveClock
	maxAge time.Duration

	mu      sync.Mutex
	at      time.Time // last invalidation passed on; zero: never
	version *version.Info
}

// Invalidate is Helm's per-operation invalidation: it passes on once per
// maxAge.
func (c *capabilityCache) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && c.clock.Since(c.at) < c.maxAge {
		return
	}
	c.invalidateLocked()
}

// Refresh invalidates the cache now, e.g. after a release created or
// deleted CRDs.
func (c *capabilityCache) Refresh() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.invalidateLocked()
}

func (c *capabilityCache) invalidateLocked() {
	c.CachedDiscoveryInterface.Invalidate()
	c.at = c.clock.Now()
	c.version = nil
}

// ServerVersion returns the version read since the last invalidation
// passed on, reading it if there is none. (The memory cache does not keep
// it.)
func (c *capabilityCache) ServerVersion() (*version.Info, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != nil {
		v := *c.version
		return &v, nil
	}
	v, err := c.CachedDiscoveryInterface.ServerVersion()
	if err != nil {
		return nil, err //nolint:wrapcheck // Helm wraps it
	}
	c.version = v
	out := *v
	return &out, nil
}
