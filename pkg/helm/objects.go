package helm

import (
	"context"
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/metadata"
)

// firstMissing returns the reference (see objectRef) of the first object
// of manifest that does not exist in the cluster, or "" when all do. An
// object watched knows to exist is not read; the others are read, metadata
// only, one GET each. watched may be nil.
func firstMissing(ctx context.Context, cfg *action.Configuration, manifest string, watched WatchedObjects) (string, error) {
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
			return objectRef(info), nil
		}
		if err != nil {
			return "", fmt.Errorf("get %s: %w", objectRef(info), err)
		}
	}
	return "", nil
}

// objectRef names an object as kind/namespace/name, or kind/name when its
// kind is cluster-scoped.
func objectRef(info *resource.Info) string {
	kind := info.Mapping.GroupVersionKind.Kind
	if info.Mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return kind + "/" + info.Namespace + "/" + info.Name
	}
	return kind + "/" + info.Name
}
