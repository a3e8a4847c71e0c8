package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/server"
)

// clusterView reads what is deployed: live objects, the operator's
// releases and its ConfigMap.
type clusterView struct {
	namespace string
	core      kubernetes.Interface
	objects   server.Cluster
	releases  *helm.Client
}

func (k *kubeFlags) view(log *slog.Logger) (*clusterView, error) {
	ns, err := k.operatorNamespace()
	if err != nil {
		return nil, err
	}
	cfg, err := k.restConfig()
	if err != nil {
		return nil, err
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	disc := kube.NewDiscovery(dc, 0, nil)
	releases, err := helm.New(helm.Options{RESTConfig: cfg, Namespace: ns, Logger: log, Discovery: disc.Client(), Mapper: disc.RESTMapper()})
	if err != nil {
		return nil, err
	}
	return &clusterView{
		namespace: ns,
		core:      core,
		objects:   server.Cluster{Dynamic: dyn, Kinds: disc.Resolver(), Namespace: ns},
		releases:  releases,
	}, nil
}

// moduleDiff compares a module's rendered manifest ("" when the module is
// to be removed) with the cluster: every rendered object's change, then
// the objects its release deployed that the render no longer has.
func (v *clusterView) moduleDiff(ctx context.Context, name, manifest string) ([]server.ObjectDiff, error) {
	diffs, err := v.objects.Diff(ctx, manifest)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", name, err)
	}
	deployed, err := v.releases.Manifest(ctx, name)
	if err != nil && !errors.Is(err, helm.ErrNotFound) {
		return nil, err
	}
	deleted, err := v.objects.Deleted(ctx, deployed, manifest)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", name, err)
	}
	return append(diffs, deleted...), nil
}
