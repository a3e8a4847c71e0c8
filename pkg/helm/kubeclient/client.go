package kubeclient

import (
	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"
)

// Client is Helm's kube client without its reachability check:
// Helm asks the server's version (GET /version, with a client built for
// the purpose) at the start of every install, upgrade, uninstall and
// list. The operation's own requests report an unreachable server just as
// well, and the operator watches the API server's health itself. Every
// other method, and every optional interface of *kube.Client, is Helm's.
//
// Create is Helm's too, and also notes what it created in Created (nil
// notes nothing), also when it failed: the objects an install made from
// the manifest, at the versions the API server gave them, need no drift
// check until they change, and an install undone deletes them.
//
// Delete is Helm's, except for the objects it spares (see Sparing), which
// it leaves alone: an uninstall's objects that belong to another owner.
//
// WatchUntilReady is Helm's too, and notes in Hooks (nil notes nothing)
// the chart hook it waits for, so that an error names it (see HookWaits).
type Client struct {
	*kube.Client
	created *Created
	spare   map[string]bool
	hooks   *HookWaits
}

// New returns Helm's client kc with its creates noted and its chart hook
// waits followed, for one operation.
func New(kc *kube.Client) Client {
	return Client{Client: kc, created: &Created{}, hooks: &HookWaits{}}
}

// Created returns what the creates returned; nil when not noted.
func (c Client) Created() *Created { return c.created }

// Hooks returns the chart hook waits followed; nil when not followed.
func (c Client) Hooks() *HookWaits { return c.hooks }

// Sparing returns c, whose deletes leave alone the objects whose ObjectKey
// is in spare.
func (c Client) Sparing(spare map[string]bool) Client {
	c.spare = spare
	return c
}

// Delete is DeleteWithPropagationPolicy in the background.
func (c Client) Delete(resources kube.ResourceList) (*kube.Result, []error) {
	return c.DeleteWithPropagationPolicy(resources, metav1.DeletePropagationBackground)
}

// DeleteWithPropagationPolicy is Helm's, without the spared objects.
func (c Client) DeleteWithPropagationPolicy(resources kube.ResourceList, policy metav1.DeletionPropagation) (*kube.Result, []error) {
	if len(c.spare) > 0 {
		resources = resources.Filter(func(info *resource.Info) bool { return !c.spare[ObjectKey(info)] })
		if len(resources) == 0 {
			return &kube.Result{}, nil
		}
	}
	return c.Client.DeleteWithPropagationPolicy(resources, policy) //nolint:wrapcheck // Helm's own errors, as Helm returns them
}

// IsReachable answers without a request: the server is taken to be
// reachable.
func (Client) IsReachable() error { return nil }

// Create is Helm's, noting what it created.
func (c Client) Create(resources kube.ResourceList) (*kube.Result, error) {
	res, err := c.Client.Create(resources)
	if err != nil {
		// Helm returns no result when a create failed; the objects it did
		// create hold what the server answered, their UIDs among it.
		res = &kube.Result{Created: resources.Filter(created)}
	}
	c.created.add(res)
	return res, err //nolint:wrapcheck // Helm's own error, as Helm returns it
}

// created reports whether info's object is one the server returned: the
// rendered objects carry no UID.
func created(info *resource.Info) bool {
	m, err := meta.Accessor(info.Object)
	return err == nil && m.GetUID() != ""
}

// ObjectKey identifies an object across builds of manifests: group, kind,
// namespace and name, as Helm's ResourceList.Difference matches them.
func ObjectKey(info *resource.Info) string {
	return info.Mapping.GroupVersionKind.GroupKind().String() + "/" + info.Namespace + "/" + info.Name
}
