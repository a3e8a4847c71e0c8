package helm

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restGetter serves Helm a rest.Config, one in-memory discovery cache and a
// REST mapper over it. It is safe for concurrent use: the cache locks, and
// Helm invalidates it before reading the server's capabilities.
type restGetter struct {
	config    *rest.Config
	namespace string
	discovery discovery.CachedDiscoveryInterface
	deferred  *restmapper.DeferredDiscoveryRESTMapper
	mapper    meta.RESTMapper
}

func newRESTGetter(config *rest.Config, namespace string) (*restGetter, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("create discovery client: %w", err)
	}
	cached := memory.NewMemCacheClient(dc)
	deferred := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	mapper := restmapper.NewShortcutExpander(deferred, cached, nil)
	return &restGetter{config: config, namespace: namespace, discovery: cached, deferred: deferred, mapper: mapper}, nil
}

func (g *restGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.config), nil }

func (g *restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

// ToRESTMapper resets the mapper first: every Helm operation asks for it
// once, and kinds whose CRDs were installed since (by another module's
// crds/ or chart) must resolve without restarting the operator.
func (g *restGetter) ToRESTMapper() (meta.RESTMapper, error) {
	g.deferred.Reset()
	return g.mapper, nil
}

// ToRawKubeConfigLoader only answers the namespace; Helm takes everything
// else from ToRESTConfig.
func (g *restGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	overrides := &clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: g.namespace}}
	return clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), overrides)
}
