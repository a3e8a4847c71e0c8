package main

import (
	"context"
	"fmt"
	"log/slog"

	"golang.org/x/sync/errgroup"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/kube/crd"
	"github.com/addon-operator/addon-operator/pkg/kube/heal"
)

// crdFieldManager owns the fields of CRDs applied from modules' crds/.
const crdFieldManager = "addon-operator"

// newHealWatcher builds the watcher of deployed release objects and of
// the releases' storage records (Helm's driver), which report on one
// channel.
func newHealWatcher(cfg *rest.Config, kinds *kube.Resolver, namespace, driver string, log *slog.Logger) (*releaseWatcher, chan heal.Event, chan heal.Change, error) {
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("metadata client: %w", err)
	}
	events := make(chan heal.Event)
	changes := make(chan heal.Change)
	w, err := heal.NewWatcher(heal.Options{
		Metadata: md, Kinds: kinds, Clock: clock.RealClock{}, Log: log, Events: events, Changes: changes,
		ModuleLabel: helm.LabelModule, Namespace: namespace,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	records, err := heal.NewRecordWatcher(heal.RecordWatcherOptions{
		Metadata: md, Driver: driver, Namespace: namespace, Events: events, Log: log,
		Labels: []string{helm.LabelManagedBy},
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return &releaseWatcher{Watcher: w, records: records}, events, changes, nil
}

// releaseWatcher watches a module's release objects and its release
// records together: pausing or forgetting a module does both.
type releaseWatcher struct {
	*heal.Watcher
	records *heal.RecordWatcher
}

// Run runs both watchers until ctx ends.
func (w *releaseWatcher) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return w.Watcher.Run(ctx) })
	g.Go(func() error { return w.records.Run(ctx) })
	return g.Wait() //nolint:wrapcheck // the watchers' own errors
}

func (w *releaseWatcher) Pause(module string) {
	w.Watcher.Pause(module)
	w.records.Pause(module)
}

func (w *releaseWatcher) Resume(module string) {
	w.Watcher.Resume(module)
	w.records.Resume(module)
}

func (w *releaseWatcher) Forget(module string) {
	w.Watcher.Forget(module)
	w.records.Forget(module)
}

// crdApplier applies modules' CRDs and refreshes the shared discovery
// cache, so the new kinds resolve for the release, monitors and the
// patcher.
type crdApplier struct {
	client apiextensions.Interface
	disc   *kube.Discovery
}

func newCRDApplier(cfg *rest.Config, disc *kube.Discovery) (*crdApplier, error) {
	c, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("apiextensions client: %w", err)
	}
	return &crdApplier{client: c, disc: disc}, nil
}

func (a *crdApplier) ApplyCRDs(ctx context.Context, dir string) ([]string, error) {
	names, err := crd.Apply(ctx, a.client, dir, crdFieldManager)
	if len(names) > 0 {
		a.disc.Refresh()
	}
	return names, err
}
