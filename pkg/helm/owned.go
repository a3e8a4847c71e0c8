package helm

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"helm.sh/helm/v3/pkg/action"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// Labels Helm's storage drivers set on every release record, next to the
// release's own labels (Helm 3 copies release.Labels onto the record).
const (
	recordOwnerSelector = "owner=helm"
	recordNameLabel     = "name"
	recordVersionLabel  = "version"
	recordStatusLabel   = "status"
)

// recordsSyncWait is how long Owned waits for Options.Records to have
// listed the records before it lists them itself.
const recordsSyncWait = 30 * time.Second

// ReleaseRecords reads the labels of the release records (Helm's storage
// Secrets or ConfigMaps) in the namespace; *heal.RecordWatcher is the real
// one, answering from its watch.
type ReleaseRecords interface {
	// RecordLabels returns the labels of every record, among them Helm's
	// name, version and status and LabelManagedBy, once known; it blocks
	// until then or until ctx ends. The maps are read, never written.
	RecordLabels(ctx context.Context) ([]map[string]string, error)
}

// ownedFromRecords answers Owned from the records' labels; ok is false
// when the Client can read none (a test's memory driver).
func (c *Client) ownedFromRecords(ctx context.Context) (owned []string, ok bool, err error) {
	relabelled := c.relabelled.Swap(false)
	if c.records != nil && !relabelled {
		wait, cancel := context.WithTimeout(ctx, c.recordsSyncWait)
		labels, err := c.records.RecordLabels(wait)
		cancel()
		if err == nil {
			owned, err := c.confirmUninstalled(ctx, ownedOf(labels))
			return owned, err == nil, err
		}
		if ctx.Err() != nil {
			return nil, false, fmt.Errorf("read release records: %w", ctx.Err())
		}
		c.log.WarnContext(ctx, "release records not watched in time, listing them", logkey.Err(err))
	}
	labels, ok, err := c.listRecords(ctx)
	if !ok || err != nil {
		return nil, false, err
	}
	return ownedOf(labels), true, nil
}

// listRecords lists the records' labels with one request; ok is false
// when the Client has no cluster to list them from (a test's memory
// driver).
func (c *Client) listRecords(ctx context.Context) (labels []map[string]string, ok bool, err error) {
	if c.lister == nil {
		return nil, false, nil
	}
	labels, err = c.lister.RecordLabels(ctx)
	return labels, err == nil, err
}

// confirmUninstalled reads the last revision of each release in owned
// that the Client uninstalled since the watch last showed it gone: the
// watch may not have seen the deletion of its records yet. A release read
// anew no longer needs it; owned loses those without a revision of ours.
func (c *Client) confirmUninstalled(ctx context.Context, owned []string) ([]string, error) {
	c.uninstalledMu.Lock()
	defer c.uninstalledMu.Unlock()
	for name := range c.uninstalled {
		if !slices.Contains(owned, name) {
			delete(c.uninstalled, name) // the watch has seen it go
			continue
		}
		cfg, err := c.config(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("read release %q: %w", name, err)
		}
		last, err := lastRelease(cfg, name)
		if err != nil {
			return nil, err
		}
		if last != nil && statusOf(last).Owned {
			delete(c.uninstalled, name) // installed again since
			continue
		}
		owned = slices.DeleteFunc(owned, func(n string) bool { return n == name })
	}
	return owned, nil
}

// noteUninstalled makes the next answers from the watch confirm that
// release name is gone.
func (c *Client) noteUninstalled(name string) {
	c.uninstalledMu.Lock()
	defer c.uninstalledMu.Unlock()
	if c.uninstalled == nil {
		c.uninstalled = map[string]bool{}
	}
	c.uninstalled[name] = true
}

// ownedOf returns the sorted names of the releases whose newest record
// carries LabelManagedBy=ManagedByValue, as listedReleases tells: the
// answer action.List gives for those records with StateMask ListAll and
// selector LabelManagedBy=ManagedByValue. A release whose newest record
// lost the label is not owned, whatever its older records say.
func ownedOf(records []map[string]string) []string { return listedReleases(records, true) }

// listedReleases returns the sorted names of the releases whose newest
// record (highest version label, compared as numbers) is in a state
// Helm's list with action.ListAll shows, which is every state but
// unknown, and carries LabelManagedBy=ManagedByValue when ours, or not
// when !ours. Records without a name or a numeric version are not Helm's
// and are ignored.
func listedReleases(records []map[string]string, ours bool) []string {
	type newest struct {
		version      int
		ours, listed bool
	}
	last := map[string]newest{}
	for _, labels := range records {
		name := labels[recordNameLabel]
		version, err := strconv.Atoi(labels[recordVersionLabel])
		if name == "" || err != nil {
			continue
		}
		if n, seen := last[name]; seen && n.version >= version {
			continue
		}
		state := action.ListAll.FromName(labels[recordStatusLabel])
		last[name] = newest{version: version, ours: labels[LabelManagedBy] == ManagedByValue, listed: state&action.ListAll != 0}
	}
	names := make([]string, 0, len(last))
	for name, n := range last {
		if n.listed && n.ours == ours {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// recordLister lists the release records' metadata with one request.
type recordLister struct {
	client    metadata.Interface
	resource  schema.GroupVersionResource
	namespace string
}

// newRecordLister returns a lister of driver's records in namespace.
func newRecordLister(cfg *rest.Config, driver, namespace string) (*recordLister, error) {
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	resource := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if driver == "configmap" || driver == "configmaps" {
		resource.Resource = "configmaps"
	}
	return &recordLister{client: client, resource: resource, namespace: namespace}, nil
}

// RecordLabels lists the records' metadata, selected by the API server.
func (l *recordLister) RecordLabels(ctx context.Context) ([]map[string]string, error) {
	list, err := l.client.Resource(l.resource).Namespace(l.namespace).List(ctx, metav1.ListOptions{LabelSelector: recordOwnerSelector})
	if err != nil {
		return nil, fmt.Errorf("list release records: %w", err)
	}
	labels := make([]map[string]string, 0, len(list.Items))
	for i := range list.Items {
		labels = append(labels, list.Items[i].Labels)
	}
	return labels, nil
}
