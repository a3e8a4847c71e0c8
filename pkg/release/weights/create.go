package weights

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// Helm's ownership metadata: an existing object that carries it for a
// release is adopted by that release's install or upgrade instead of
// refused.
const (
	helmManagedByLabel      = "app.kubernetes.io/managed-by"
	helmManagedByValue      = "Helm"
	helmReleaseNameKey      = "meta.helm.sh/release-name"
	helmReleaseNamespaceKey = "meta.helm.sh/release-namespace"
)

// Owner is the release the objects created ahead belong to: its name and
// its namespace, which is also where its namespaced objects without a
// namespace go.
type Owner struct {
	Release   string
	Namespace string
}

// Creator creates the objects of a weight group that do not exist yet,
// and looks at and awaits the external dependencies of a release's
// objects (see AwaitExternal). It keeps no state.
type Creator struct {
	dyn   dynamic.Interface
	kinds *kube.Resolver
	clock clock.Clock
}

// NewCreator returns a Creator over a dynamic client and the process's
// kind resolver, on the real clock.
func NewCreator(dyn dynamic.Interface, kinds *kube.Resolver) *Creator {
	return &Creator{dyn: dyn, kinds: kinds, clock: clock.RealClock{}}
}

// WithClock returns a copy of c that times its waits by clk.
func (c *Creator) WithClock(clk clock.Clock) *Creator {
	out := *c
	out.clock = clk
	return &out
}

// Created is what CreateMissing did.
type Created struct {
	// Count is how many objects it created.
	Count int
	// Foreign names the objects that exist without the owner's Helm
	// ownership metadata: another release's, or none's. They are left as
	// they are, for Helm's ownership check to refuse or adopt.
	Foreign []string
}

// CreateMissing creates each of objs that does not exist, with Helm's
// ownership metadata for owner. Objects that exist are left as they are,
// whoever owns them. objs are not modified.
func (c *Creator) CreateMissing(ctx context.Context, owner Owner, objs []map[string]any) (Created, error) {
	var out Created
	for _, obj := range objs {
		u, ri, err := c.target(ctx, owner, obj)
		if err != nil {
			return out, err
		}
		live, err := get(ctx, ri, u)
		if err != nil {
			return out, err
		}
		if live != nil {
			if !ownedBy(live, owner) {
				out.Foreign = append(out.Foreign, ObjectName(u.Object))
			}
			continue
		}
		setOwner(u, owner)
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return out, fmt.Errorf("create %s: %w", ObjectName(obj), err)
		}
		out.Count++
	}
	return out, nil
}

// ownedBy reports whether live carries owner's Helm ownership metadata.
func ownedBy(live *unstructured.Unstructured, owner Owner) bool {
	a := live.GetAnnotations()
	return live.GetLabels()[helmManagedByLabel] == helmManagedByValue &&
		a[helmReleaseNameKey] == owner.Release && a[helmReleaseNamespaceKey] == owner.Namespace
}

// AnyMissing reports whether one of objs does not exist.
func (c *Creator) AnyMissing(ctx context.Context, owner Owner, objs []map[string]any) (bool, error) {
	for _, obj := range objs {
		u, ri, err := c.target(ctx, owner, obj)
		if err != nil {
			return false, err
		}
		live, err := get(ctx, ri, u)
		if err != nil || live == nil {
			return live == nil, err
		}
	}
	return false, nil
}

// target returns a copy of obj in the namespace it goes to, and the
// client of its resource there.
func (c *Creator) target(ctx context.Context, owner Owner, obj map[string]any) (*unstructured.Unstructured, dynamic.ResourceInterface, error) {
	u := (&unstructured.Unstructured{Object: obj}).DeepCopy()
	res, err := c.kinds.Resolve(ctx, u.GroupVersionKind())
	if err != nil {
		return nil, nil, fmt.Errorf("resolve %s: %w", ObjectName(obj), err)
	}
	if !res.Namespaced {
		u.SetNamespace("")
		return u, c.dyn.Resource(res.GVR), nil
	}
	if u.GetNamespace() == "" {
		u.SetNamespace(owner.Namespace)
	}
	return u, c.dyn.Resource(res.GVR).Namespace(u.GetNamespace()), nil
}

// get returns the live object of u, nil when it does not exist.
func get(ctx context.Context, ri dynamic.ResourceInterface, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
	switch {
	case err == nil:
		return live, nil
	case apierrors.IsNotFound(err):
		return nil, nil
	default:
		return nil, fmt.Errorf("read %s: %w", ObjectName(u.Object), err)
	}
}

// setOwner puts Helm's ownership metadata for owner on u.
func setOwner(u *unstructured.Unstructured, owner Owner) {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[helmManagedByLabel] = helmManagedByValue
	u.SetLabels(labels)
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[helmReleaseNameKey] = owner.Release
	annotations[helmReleaseNamespaceKey] = owner.Namespace
	u.SetAnnotations(annotations)
}
