package objects

import (
	"context"
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/metadata"
)

// Watched knows the resource version of objects it watches;
// *heal.Watcher is the real one. ok is false for an object it does not
// know to exist; namespace is "" for cluster-scoped resources.
type Watched interface {
	ResourceVersion(gr schema.GroupResource, namespace, name string) (string, bool)
}

// FirstMissing returns the reference (see Ref) of the first object
// of manifest that does not exist in the cluster, or "" when all do. An
// object watched knows to exist is not read; the others are read, metadata
// only, one GET each. watched may be nil.
func FirstMissing(ctx context.Context, cfg *action.Configuration, manifest string, watched Watched) (string, error) {
	infos, err := cfg.KubeClient.Build(strings.NewReader(manifest), false)
	if err != nil {
		return "", fmt.Errorf("build rendered objects: %w", err)
	}
	if len(infos) == 0 {
		return "", nil
	}
	restConfig, err := cfg.RESTClientGetter.ToRESTConfig()
	if err != nil {
		return "", fmt.Errorf("rest config: %w", err)
	}
	client, err := metadata.NewForConfig(restConfig)
	if err != nil {
		return "", fmt.Errorf("create metadata client: %w", err)
	}
	for _, info := range infos {
		namespaced := info.Mapping.Scope.Name() == meta.RESTScopeNameNamespace
		if watched != nil {
			ns := ""
			if namespaced {
				ns = info.Namespace
			}
			if _, ok := watched.ResourceVersion(info.Mapping.Resource.GroupResource(), ns, info.Name); ok {
				continue
			}
		}
		var get metadata.ResourceInterface = client.Resource(info.Mapping.Resource)
		if namespaced {
			get = client.Resource(info.Mapping.Resource).Namespace(info.Namespace)
		}
		_, err := get.Get(ctx, info.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return Ref(info), nil
		}
		if err != nil {
			return "", fmt.Errorf("get %s: %w", Ref(info), err)
		}
	}
	return "", nil
}

// Ref names an object as kind/namespace/name, or kind/name when its
// kind is cluster-scoped.
func Ref(info *resource.Info) string {
	kind := info.Mapping.GroupVersionKind.Kind
	if info.Mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return kind + "/" + info.Namespace + "/" + info.Name
	}
	return kind + "/" + info.Name
}

// DeleteCreated deletes info's object, as its create returned it: only
// while its UID is the created one; one deleted or replaced meanwhile is
// left alone.
func DeleteCreated(info *resource.Info) error {
	m, err := meta.Accessor(info.Object)
	if err != nil {
		return fmt.Errorf("read created %s: %w", Ref(info), err)
	}
	uid := m.GetUID()
	background := metav1.DeletePropagationBackground
	opts := &metav1.DeleteOptions{PropagationPolicy: &background, Preconditions: &metav1.Preconditions{UID: &uid}}
	_, err = resource.NewHelper(info.Client, info.Mapping).DeleteWithOptions(info.Namespace, info.Name, opts)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete created %s: %w", Ref(info), err)
	}
	return nil
}
