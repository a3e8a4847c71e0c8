package records

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
)

// Labels Helm's storage drivers set on every release record, next to the
// release's own labels (Helm 3 copies release.Labels onto the record).
const (
	ownerSelector = "owner=helm"
	NameLabel     = "name"
	versionLabel  = "version"
	statusLabel   = "status"
)

// Listed returns the sorted names of the releases whose newest record
// (highest version label, compared as numbers) is in a state Helm's list
// with action.ListAll shows, which is every state but unknown, and whose
// labels match says are wanted. Records without a name or a numeric
// version are not Helm's and are ignored.
func Listed(records []map[string]string, match func(labels map[string]string) bool) []string {
	type newest struct {
		version        int
		wanted, listed bool
	}
	last := map[string]newest{}
	for _, labels := range records {
		name := labels[NameLabel]
		version, err := strconv.Atoi(labels[versionLabel])
		if name == "" || err != nil {
			continue
		}
		if n, seen := last[name]; seen && n.version >= version {
			continue
		}
		state := action.ListAll.FromName(labels[statusLabel])
		last[name] = newest{version: version, wanted: match(labels), listed: state&action.ListAll != 0}
	}
	names := make([]string, 0, len(last))
	for name, n := range last {
		if n.listed && n.wanted {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Modified returns the time of the last write of each revision's record
// of release name (Helm's modifiedAt label), by revision, from the labels
// of the records.
func Modified(records []map[string]string, name string) map[int]time.Time {
	out := map[int]time.Time{}
	for _, l := range records {
		if l[NameLabel] != name {
			continue
		}
		v, err1 := strconv.Atoi(l[versionLabel])
		sec, err2 := strconv.ParseInt(l["modifiedAt"], 10, 64)
		if err1 == nil && err2 == nil {
			out[v] = time.Unix(sec, 0)
		}
	}
	return out
}

// Lister lists the release records' metadata with one request.
type Lister struct {
	client    metadata.Interface
	resource  schema.GroupVersionResource
	namespace string
}

// NewLister returns a lister of driver's records ("secret" or
// "configmap", Helm's names) in namespace.
func NewLister(cfg *rest.Config, driver, namespace string) (*Lister, error) {
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	resource := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if driver == "configmap" || driver == "configmaps" {
		resource.Resource = "configmaps"
	}
	return &Lister{client: client, resource: resource, namespace: namespace}, nil
}

// RecordLabels lists the records' metadata, selected by the API server.
func (l *Lister) RecordLabels(ctx context.Context) ([]map[string]string, error) {
	list, err := l.client.Resource(l.resource).Namespace(l.namespace).List(ctx, metav1.ListOptions{LabelSelector: ownerSelector})
	if err != nil {
		return nil, fmt.Errorf("list release records: %w", err)
	}
	labels := make([]map[string]string, 0, len(list.Items))
	for i := range list.Items {
		labels = append(labels, list.Items[i].Labels)
	}
	return labels, nil
}
