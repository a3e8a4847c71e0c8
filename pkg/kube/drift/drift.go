// Package drift finds where live objects differ from their release's
// manifest in fields people changed, and puts those fields back.
package drift

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// FieldManager is the field manager of the server-side applies with
// which Revert puts drifted fields back. It is not the release's own
// manager on purpose: a server-side apply of a few fields under a manager
// that applied the whole object before would drop that manager's other
// fields.
const FieldManager = "addon-operator-drift"

// Object names one object of a release.
type Object struct {
	APIVersion string
	Kind       string
	// Namespace is empty for cluster-scoped kinds.
	Namespace string
	Name      string
}

// String names the object for errors and events, e.g.
// "v1 ConfigMap default/settings".
func (o Object) String() string {
	if o.Namespace == "" {
		return o.APIVersion + " " + o.Kind + " " + o.Name
	}
	return o.APIVersion + " " + o.Kind + " " + o.Namespace + "/" + o.Name
}

// Drift is an object whose live state differs from its release's manifest.
type Drift struct {
	Object Object
	// Fields name the drifted fields in the API server's field path
	// syntax, the one of server-side apply conflicts, in the order of
	// Paths: fields as .name, items of associative lists by their keys,
	// of sets by their value. For example .data.key,
	// .spec.template.spec.containers[name="app"].image,
	// .metadata.labels.app.kubernetes.io/name.
	Fields []string
	// Paths are the drifted fields as structured-merge-diff paths, in the
	// order of its sets (sorted, a map's fields before what is nested in
	// its other fields); Revert puts them back. A Drift made by hand without them is nothing
	// to revert.
	Paths []fieldpath.Path
}

// Checker compares a release's objects with the cluster. It is safe for
// concurrent use; with WithWatched it remembers which objects it found
// without drift.
//
// The rule: a field the manifest sets is drift when a server-side apply
// of the manifest (made as a dry run, so nothing changes) would change its
// live value (anything but status, and of metadata only labels and
// annotations), unless the field is a caBundle (CA injectors fill webhook
// configurations) or a controller owns its live value according to
// metadata.managedFields. The fields the manifest sets are the set the API
// server tracks for the dry run's manager (FieldManager) in its answer's
// managedFields, paths of the kind's schema; each is compared where the
// answer and the live object hold it. A controller is a manager whose name contains
// "controller" (kube-controller-manager and most operators), the
// autoscalers horizontal-pod-autoscaler, vpa-updater and vpa-recommender,
// or a name given to WithControllers. A change by a person
// (kubectl-edit, kubectl-client-side-apply, kubectl-patch) or by any other
// client is drift. Fields the manifest does not set, list items others
// add, and objects that do not exist are not drift: healing recreates
// missing objects.
type Checker struct {
	client      dynamic.Interface
	kinds       *kube.Resolver
	log         *slog.Logger
	namespace   string
	controllers []string
	watched     Watched
	clean       *cleanChecks
}

// NewChecker returns a Checker that reads and writes through
// client and resolves kinds with kinds. Namespaced objects without a namespace are looked for in
// "default" until WithNamespace says otherwise.
func NewChecker(client dynamic.Interface, kinds *kube.Resolver, log *slog.Logger) *Checker {
	return &Checker{
		client:    client,
		kinds:     kinds,
		log:       log,
		namespace: "default",
	}
}

// WithNamespace returns a copy of c that looks for namespaced objects
// without a namespace in namespace, as Helm installs them in the release's
// namespace.
func (c *Checker) WithNamespace(namespace string) *Checker {
	out := *c
	out.namespace = namespace
	return &out
}

// WithControllers returns a copy of c that also counts managers as
// controllers: fields they own are never drift.
func (c *Checker) WithControllers(managers ...string) *Checker {
	out := *c
	out.controllers = slices.Concat(c.controllers, managers)
	return &out
}

// Check returns the drifted objects of manifest, a release's rendered
// objects as multi-document YAML, in the manifest's order; objects without
// drift are left out. It reads each object with one GET and one dry-run
// server-side apply, and compares the two (see driftPaths). Objects that do
// not exist, also because their kind is unknown to the server, are skipped.
// An error names the object and wraps the API error.
func (c *Checker) Check(ctx context.Context, manifest string) ([]Drift, error) {
	drifts, _, err := c.CheckSeen(ctx, manifest)
	return drifts, err
}

// CheckSeen is Check that also returns the resourceVersion of each live
// object it compared, by Object: a later change of an object to another
// resourceVersion is what can drift it again.
func (c *Checker) CheckSeen(ctx context.Context, manifest string) ([]Drift, map[Object]string, error) {
	objs, err := kube.ManifestObjects(manifest)
	if err != nil {
		return nil, nil, err
	}
	var drifts []Drift
	seen := map[Object]string{}
	for _, obj := range objs {
		d, rv, err := c.check(ctx, obj)
		if err != nil {
			return nil, nil, err
		}
		if rv != "" {
			seen[d.Object] = rv
		}
		if len(d.Fields) > 0 {
			drifts = append(drifts, d)
		}
	}
	return drifts, seen, nil
}

func (c *Checker) check(ctx context.Context, obj map[string]any) (Drift, string, error) {
	t, ok, err := c.target(ctx, obj)
	if err != nil || !ok {
		return Drift{}, "", err
	}
	key := cleanKey{resource: t.resource, namespace: t.ref.Namespace, name: t.ref.Name}
	digest := manifestDigest(obj)
	if c.unchanged(key, digest) {
		rv, _ := c.watched.ResourceVersion(key.resource, key.namespace, key.name)
		return Drift{Object: t.ref}, rv, nil
	}
	live, err := t.res.Get(ctx, t.ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		c.log.DebugContext(ctx, "drift check skips a missing object",
			slog.String(logkey.Kind, t.ref.Kind), slog.String(logkey.Namespace, t.ref.Namespace), slog.String(logkey.Name, t.ref.Name))
		return Drift{}, "", nil
	}
	if err != nil {
		return Drift{}, "", fmt.Errorf("get %s: %w", t.ref, err)
	}
	d, err := c.compare(ctx, t, obj, live)
	if err == nil {
		c.remember(key, digest, live.GetResourceVersion(), len(d.Fields) > 0)
	}
	return d, live.GetResourceVersion(), err
}

// compare returns live's drift from the manifest object obj.
func (c *Checker) compare(ctx context.Context, t driftTarget, obj map[string]any, live *unstructured.Unstructured) (Drift, error) {
	applied, err := c.dryRun(ctx, t, obj, live)
	if apierrors.IsNotFound(err) {
		return Drift{Object: t.ref}, nil // deleted since the Get: healing's business
	}
	if err != nil {
		if ctx.Err() != nil {
			return Drift{}, fmt.Errorf("dry-run apply %s: %w", t.ref, err)
		}
		// The server may refuse what it cannot dry-run (an admission
		// webhook with side effects, an immutable field someone changed):
		// the object's drift is unknown, the others are still checked.
		c.log.WarnContext(ctx, "drift check skips an object the server would not apply as a dry run",
			slog.String(logkey.Kind, t.ref.Kind), slog.String(logkey.Namespace, t.ref.Namespace), slog.String(logkey.Name, t.ref.Name), logkey.Err(err))
		return Drift{Object: t.ref}, nil
	}
	set, err := appliedFields(applied.GetManagedFields())
	if err != nil {
		return Drift{}, fmt.Errorf("check %s: %w", t.ref, err)
	}
	owned, err := controllerFields(live.GetManagedFields(), c.controllers)
	if err != nil {
		return Drift{}, fmt.Errorf("check %s: %w", t.ref, err)
	}
	d := Drift{Object: t.ref, Paths: driftPaths(set, owned, applied.Object, live.Object)}
	for _, p := range d.Paths {
		d.Fields = append(d.Fields, p.String())
	}
	return d, nil
}

// dryRun server-side applies the manifest object obj onto live with
// dryRun=All, field manager FieldManager and force, and returns what the
// object would become: live with every field the manifest sets put back,
// merged the way the API server merges (associative lists by their keys).
// The apply carries live's uid, so it never stands for a creation.
func (c *Checker) dryRun(ctx context.Context, t driftTarget, obj map[string]any, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	applied := &unstructured.Unstructured{Object: maps.Clone(kube.SecretData(obj))}
	if m, ok := applied.Object["metadata"].(map[string]any); ok {
		applied.Object["metadata"] = maps.Clone(m)
	}
	applied.SetNamespace(t.ref.Namespace)
	applied.SetUID(live.GetUID())
	return t.res.Apply(ctx, t.ref.Name, applied, metav1.ApplyOptions{
		FieldManager: FieldManager, Force: true, DryRun: []string{metav1.DryRunAll},
	})
}

// Revert puts the manifest's values of the drifted fields (Drift.Paths)
// back, one server-side apply per object with field manager FieldManager
// and force, so the fields change owner whoever held them. The applied
// object holds only the drifted fields, each cut before its first list
// item, so a list goes back whole; the API server merges
// associative lists such as containers by key, keeping items others added.
// The apply carries the live uid and resourceVersion, so it never creates
// an object deleted meanwhile (a missing object is skipped) and is retried
// on conflicts. Every object is tried; the error joins the failures, each
// naming its object. A drift whose object is not in manifest is an error.
func (c *Checker) Revert(ctx context.Context, manifest string, drifts []Drift) error {
	pending := map[Object][]fieldpath.Path{}
	for _, d := range drifts {
		if len(d.Paths) > 0 {
			pending[d.Object] = append(pending[d.Object], d.Paths...)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	objs, err := kube.ManifestObjects(manifest)
	if err != nil {
		return err
	}
	var errs []error
	for _, obj := range objs {
		if !mayBeOneOf(obj, pending) {
			continue
		}
		t, ok, err := c.target(ctx, obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fields, found := pending[t.ref]
		if !ok || !found {
			continue
		}
		delete(pending, t.ref)
		if err := c.revert(ctx, t, obj, fields); err != nil {
			errs = append(errs, fmt.Errorf("revert %s: %w", t.ref, err))
		}
	}
	byName := func(a, b Object) int { return cmp.Compare(a.String(), b.String()) }
	for _, ref := range slices.SortedFunc(maps.Keys(pending), byName) {
		errs = append(errs, fmt.Errorf("revert %s: not in the manifest, or of a kind the server does not know", ref))
	}
	return errors.Join(errs...)
}

func (c *Checker) revert(ctx context.Context, t driftTarget, obj map[string]any, paths []fieldpath.Path) error {
	partial, err := driftPartial(kube.SecretData(obj), t.ref, paths)
	if err != nil {
		return err
	}
	applied := &unstructured.Unstructured{Object: partial}
	missing := false
	err = kube.RetryOnConflict(ctx, func(ctx context.Context) error {
		live, err := t.res.Get(ctx, t.ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			missing = true
			return nil
		}
		if err != nil {
			return err
		}
		// The uid keeps the apply from creating the object when it is
		// deleted after the Get; the resourceVersion from changing it when
		// it is changed meanwhile. Both fail with a Conflict.
		applied.SetUID(live.GetUID())
		applied.SetResourceVersion(live.GetResourceVersion())
		_, err = t.res.Apply(ctx, t.ref.Name, applied, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		return err
	})
	if err != nil || missing {
		return err
	}
	c.log.InfoContext(ctx, "drift reverted",
		slog.String(logkey.Kind, t.ref.Kind), slog.String(logkey.Namespace, t.ref.Namespace), slog.String(logkey.Name, t.ref.Name))
	return nil
}

// driftTarget is a manifest object resolved to its API resource.
type driftTarget struct {
	ref      Object
	res      dynamic.ResourceInterface
	resource schema.GroupResource
}

// target resolves the manifest object obj. ok is false, without an error,
// when the server does not know obj's kind.
func (c *Checker) target(ctx context.Context, obj map[string]any) (t driftTarget, ok bool, err error) {
	u := unstructured.Unstructured{Object: obj}
	t.ref = Object{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Name: u.GetName()}
	gv, err := schema.ParseGroupVersion(t.ref.APIVersion)
	if err != nil {
		return t, false, fmt.Errorf("resolve %s: %w", t.ref, err)
	}
	res, err := c.kinds.Resolve(ctx, gv.WithKind(t.ref.Kind))
	if meta.IsNoMatchError(err) {
		c.log.DebugContext(ctx, "drift check skips an object of an unknown kind",
			slog.String(logkey.Kind, t.ref.Kind), slog.String(logkey.Name, t.ref.Name))
		return t, false, nil
	}
	if err != nil {
		return t, false, fmt.Errorf("resolve %s: %w", t.ref, err)
	}
	t.res = c.client.Resource(res.GVR)
	t.resource = res.GVR.GroupResource()
	if res.Namespaced {
		t.ref.Namespace = cmp.Or(u.GetNamespace(), c.namespace)
		t.res = c.client.Resource(res.GVR).Namespace(t.ref.Namespace)
	}
	return t, true, nil
}

// mayBeOneOf reports whether obj has the apiVersion, kind and name of
// an object in refs, before its namespace is resolved.
func mayBeOneOf(obj map[string]any, refs map[Object][]fieldpath.Path) bool {
	u := unstructured.Unstructured{Object: obj}
	for ref := range refs {
		if ref.APIVersion == u.GetAPIVersion() && ref.Kind == u.GetKind() && ref.Name == u.GetName() {
			return true
		}
	}
	return false
}
