package main

import (
	"context"
	"fmt"
	"log/slog"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/kube"
)

// crdFieldManager owns the fields of CRDs applied from modules' crds/.
const crdFieldManager = "addon-operator"

// newHealWatcher builds the watcher of deployed release objects.
func newHealWatcher(cfg *rest.Config, mapper meta.ResettableRESTMapper, namespace string, log *slog.Logger) (*kube.HealWatcher, chan kube.HealEvent, error) {
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("metadata client: %w", err)
	}
	events := make(chan kube.HealEvent)
	w, err := kube.NewHealWatcher(kube.HealWatcherOptions{
		Metadata: md, Mapper: mapper, Clock: clock.RealClock{}, Log: log, Events: events,
		ModuleLabel: helm.LabelModule, Namespace: namespace,
	})
	if err != nil {
		return nil, nil, err
	}
	return w, events, nil
}

// crdApplier applies modules' CRDs and refreshes the shared RESTMapper, so
// the new kinds resolve for the release, monitors and the patcher.
type crdApplier struct {
	client apiextensions.Interface
	mapper meta.ResettableRESTMapper
}

func newCRDApplier(cfg *rest.Config, mapper meta.ResettableRESTMapper) (*crdApplier, error) {
	c, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("apiextensions client: %w", err)
	}
	return &crdApplier{client: c, mapper: mapper}, nil
}

func (a *crdApplier) ApplyCRDs(ctx context.Context, dir string) ([]string, error) {
	names, err := kube.ApplyCRDs(ctx, a.client, dir, crdFieldManager)
	if len(names) > 0 {
		a.mapper.Reset()
	}
	return names, err
}
