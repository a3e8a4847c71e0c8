package server

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// Action is what applying a rendered object would do to the cluster.
type Action string

// Actions.
const (
	ActionCreate Action = "create" // the object does not exist
	ActionUpdate Action = "update" // the object differs
	ActionNone   Action = "none"   // the object is as rendered
	ActionDelete Action = "delete" // deployed, no longer rendered: Helm deletes it
)

// ObjectDiff is how one rendered object differs from its live copy.
type ObjectDiff struct {
	// Object is Kind/namespace/name, or Kind/name for cluster-scoped kinds.
	Object string `json:"object"`
	Action Action `json:"action"`
	// Diff is a unified diff of the YAML from the live object to the
	// rendered one; empty for ActionNone.
	Diff string `json:"diff,omitempty"`
}

// Cluster reads live objects to compare rendered manifests with.
type Cluster struct {
	Dynamic dynamic.Interface
	Kinds   *kube.Resolver
	// Namespace is where namespaced objects without a namespace of their
	// own live: the operator's namespace.
	Namespace string
}

// Diff compares every object of a rendered manifest with its live copy, in
// manifest order. An object whose kind the cluster does not serve yet is to
// be created. Chart hooks are not compared: Helm recreates them.
func (c Cluster) Diff(ctx context.Context, manifest string) ([]ObjectDiff, error) {
	objs, err := kube.ManifestObjects(manifest)
	if err != nil {
		return nil, err
	}
	out := make([]ObjectDiff, 0, len(objs))
	for _, obj := range objs {
		ref, live, err := c.live(ctx, &unstructured.Unstructured{Object: obj})
		if err != nil {
			return nil, err
		}
		d, err := DiffObject(ref, obj, live)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// live returns an object's reference and its live copy, nil when missing.
func (c Cluster) live(ctx context.Context, u *unstructured.Unstructured) (string, map[string]any, error) {
	gvk := u.GroupVersionKind()
	ref := u.GetKind() + "/" + u.GetName()
	if u.GetNamespace() != "" {
		ref = u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
	}
	res, err := c.Kinds.Resolve(ctx, gvk)
	if meta.IsNoMatchError(err) {
		return ref, nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("map %s: %w", ref, err)
	}
	var get dynamic.ResourceInterface = c.Dynamic.Resource(res.GVR)
	if res.Namespaced {
		ns := u.GetNamespace()
		if ns == "" {
			ns = c.Namespace
		}
		if ns == "" {
			return "", nil, fmt.Errorf("%s has no namespace and no default namespace is set", ref)
		}
		ref = u.GetKind() + "/" + ns + "/" + u.GetName()
		get = c.Dynamic.Resource(res.GVR).Namespace(ns)
	}
	live, err := get.Get(ctx, u.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ref, nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("get %s: %w", ref, err)
	}
	return ref, live.Object, nil
}

// DiffObject compares a rendered object with its live copy; live is nil
// when the object does not exist. Only what the rendered object sets is
// compared, as a Helm upgrade only changes that: status, server-managed
// metadata (uid, resourceVersion, generation, creationTimestamp,
// managedFields), fields the API server defaulted, and labels and
// annotations added by Helm, controllers or the API server are not
// differences. A field the chart no longer sets is not shown either.
//
// A Secret's stringData is compared as the data the API server stores it
// as. Other values are compared as written: a quantity written otherwise
// than the server returns it (0.5 and 500m) shows as a change.
func DiffObject(ref string, rendered, live map[string]any) (ObjectDiff, error) {
	rendered = kube.SecretData(stripServerFields(rendered))
	want, err := yaml.Marshal(rendered)
	if err != nil {
		return ObjectDiff{}, fmt.Errorf("marshal rendered %s: %w", ref, err)
	}
	wantLines := splitLines(string(want))
	if live == nil {
		diff := unifiedDiff(ref+" (not in the cluster)", ref+" (rendered)", nil, wantLines)
		return ObjectDiff{Object: ref, Action: ActionCreate, Diff: diff}, nil
	}
	got, err := yaml.Marshal(prune(stripServerFields(live), rendered))
	if err != nil {
		return ObjectDiff{}, fmt.Errorf("marshal live %s: %w", ref, err)
	}
	diff := unifiedDiff(ref+" (live)", ref+" (rendered)", splitLines(string(got)), wantLines)
	if diff == "" {
		return ObjectDiff{Object: ref, Action: ActionNone}, nil
	}
	return ObjectDiff{Object: ref, Action: ActionUpdate, Diff: diff}, nil
}

// stripServerFields returns a copy of obj without the fields only the API
// server writes.
func stripServerFields(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "status" {
			out[k] = v
		}
	}
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return out
	}
	clean := make(map[string]any, len(md))
	for k, v := range md {
		switch k {
		case "managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink":
		default:
			clean[k] = v
		}
	}
	out["metadata"] = clean
	return out
}

// prune returns live reduced to the map keys rendered has, recursively.
// Lists are pruned element by element; live elements past the rendered
// ones stay whole.
func prune(live, rendered any) any {
	switch r := rendered.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return live
		}
		out := make(map[string]any, len(r))
		for k, rv := range r {
			if lv, ok := l[k]; ok {
				out[k] = prune(lv, rv)
			}
		}
		return out
	case []any:
		l, ok := live.([]any)
		if !ok {
			return live
		}
		out := make([]any, len(l))
		for i, lv := range l {
			if i < len(r) {
				lv = prune(lv, r[i])
			}
			out[i] = lv
		}
		return out
	default:
		return live
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
