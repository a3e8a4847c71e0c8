package objects

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/addon-operator/addon-operator/pkg/helm/kubeclient"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// Helm's label on every object of a release; its install and upgrade
// refuse an existing object without it.
const (
	labelHelmManagedBy = "app.kubernetes.io/managed-by"
	helmManagedByValue = "Helm"
)

// Helm's ownership annotations, set on every object of a release.
const (
	annotationReleaseName      = "meta.helm.sh/release-name"
	annotationReleaseNamespace = "meta.helm.sh/release-namespace"
)

// AnnotationAdopt on an existing object lets a release take it over (set
// Helm's ownership metadata for itself) when its chart renders it. "true"
// hands over an object of no release to whichever release renders it; the
// release (module) name hands over an object of no release or of another
// release to that release only.
const AnnotationAdopt = "addon-operator.io/adopt"

// Owner is the release an object belongs to, as Helm's ownership
// annotations (meta.helm.sh/release-name and -namespace) name it. The zero
// Owner is no release: an object made by hand, kubectl or another tool.
type Owner struct {
	Release   string
	Namespace string
}

// String names the owner for messages: `release "x" in namespace "y"`, or
// "no release".
func (o Owner) String() string {
	if o.Release == "" {
		return "no release"
	}
	return fmt.Sprintf("release %q in namespace %q", o.Release, o.Namespace)
}

// Conflict is an object a release renders that exists in the cluster and
// belongs to another owner.
type Conflict struct {
	// Object is "Kind namespace/name", or "Kind name" when cluster-scoped.
	Object string
	Owner  Owner
}

// OwnershipConflictError reports that release Release renders objects
// that exist and belong to another release or to none, and that nobody
// asked to hand over (see AnnotationAdopt, Options.AdoptObjects). Nothing
// was deployed and no object was changed. The run is worth retrying: the
// user resolves it by deleting or annotating the objects.
type OwnershipConflictError struct {
	Release   string
	Conflicts []Conflict
}

func (e *OwnershipConflictError) Error() string {
	parts := make([]string, 0, len(e.Conflicts))
	for _, c := range e.Conflicts {
		parts = append(parts, fmt.Sprintf("%s (owner: %s)", c.Object, c.Owner))
	}
	return fmt.Sprintf("objects exist that release %q does not own, not taken: %s; to hand one over, annotate it %s=%s, or delete it",
		e.Release, strings.Join(parts, ", "), AnnotationAdopt, e.Release)
}

// liveObject is what the ownership decision needs of one existing object.
type liveObject struct {
	ref         string
	owner       Owner
	adopt       string // the AnnotationAdopt value
	helmLabeled bool   // labelHelmManagedBy=Helm
}

// ownershipPlan is what deploying a release does with the existing objects
// it renders.
type ownershipPlan struct {
	// adopt are indexes of objects to mark as the release's before Helm
	// runs: handed over, or the release's own but missing Helm's label.
	adopt []int
	// own counts objects that already belong to the release.
	own       int
	conflicts []Conflict
}

// planOwnership decides, for the existing objects a release renders,
// which it may take. An object of this release is its own. An object of no
// release is adopted when annotated AnnotationAdopt "true" or the release
// name, or when unowned is set (Options.AdoptObjects). An object of
// another release is adopted only when annotated with this release's name:
// "true" is not enough to take it from its release. Anything else is a
// conflict.
func planOwnership(objects []liveObject, self Owner, unowned bool) ownershipPlan {
	var p ownershipPlan
	for i, obj := range objects {
		switch {
		case obj.owner == self:
			p.own++
			if !obj.helmLabeled {
				p.adopt = append(p.adopt, i)
			}
		case obj.adopt == self.Release,
			obj.owner.Release == "" && (obj.adopt == "true" || unowned):
			p.adopt = append(p.adopt, i)
		default:
			p.conflicts = append(p.conflicts, Conflict{Object: obj.ref, Owner: obj.owner})
		}
	}
	return p
}

// Claimant is a release about to be deployed, as Claim sees it.
type Claimant struct {
	// Self is the release.
	Self Owner
	// Unowned lets it take existing objects of no release without
	// AnnotationAdopt (pkg/helm's Options.AdoptObjects).
	Unowned bool
	// Base is the revision Helm upgrades from; nil for an install.
	Base *release.Release
}

// Claimed is what Claim found.
type Claimed struct {
	// Own counts the existing objects that already belonged to the
	// release.
	Own int
	// Absent are the objects found absent.
	Absent []*resource.Info
	// Existing counts the objects that existed.
	Existing int
}

// Claim makes the existing objects of infos (the rendered ones) that Helm
// is about to create (those not in who.Base's manifest) acceptable to
// Helm's ownership check, or refuses with an *OwnershipConflictError
// before changing anything.
func Claim(ctx context.Context, log *slog.Logger, cfg *action.Configuration, who Claimant, infos kube.ResourceList) (Claimed, error) {
	if who.Base != nil {
		current, err := cfg.KubeClient.Build(strings.NewReader(who.Base.Manifest), false)
		if err != nil {
			return Claimed{}, fmt.Errorf("build objects of revision %d: %w", who.Base.Version, err)
		}
		infos = infos.Difference(current)
	}
	found, objects, absent, err := readObjects(infos)
	if err != nil {
		return Claimed{}, err
	}
	plan := planOwnership(objects, who.Self, who.Unowned)
	if len(plan.conflicts) > 0 {
		return Claimed{}, &OwnershipConflictError{Release: who.Self.Release, Conflicts: plan.conflicts}
	}
	for _, i := range plan.adopt {
		if err := markOwned(found[i], who.Self); err != nil {
			return Claimed{}, err
		}
		log.InfoContext(ctx, "object adopted", slog.String(logkey.Release, who.Self.Release), slog.String(logkey.Kind, found[i].Mapping.GroupVersionKind.Kind),
			slog.String(logkey.Name, found[i].Name), slog.String(logkey.Owner, objects[i].owner.String()))
	}
	return Claimed{Own: plan.own, Absent: absent, Existing: len(found)}, nil
}

// Foreign returns the keys (kubeclient.ObjectKey) of the objects of rel's
// manifest that exist and belong to another owner, for rel's uninstall to
// spare them: rel is a last revision that is not deployed, and a failed
// revision's manifest may name objects that its creates found in their
// way.
func Foreign(ctx context.Context, log *slog.Logger, cfg *action.Configuration, rel *release.Release) (map[string]bool, error) {
	objects, err := cfg.KubeClient.Build(strings.NewReader(rel.Manifest), false)
	if err != nil {
		return nil, fmt.Errorf("build objects of revision %d: %w", rel.Version, err)
	}
	found, live, _, err := readObjects(objects)
	if err != nil {
		return nil, err
	}
	self := Owner{Release: rel.Name, Namespace: rel.Namespace}
	spare := map[string]bool{}
	for i, info := range found {
		if live[i].owner == self {
			continue
		}
		spare[kubeclient.ObjectKey(info)] = true
		log.WarnContext(ctx, "object of a failed revision belongs to another owner, not deleted with the release",
			slog.String(logkey.Release, rel.Name), slog.Int(logkey.Revision, rel.Version), slog.String(logkey.Kind, info.Mapping.GroupVersionKind.Kind),
			slog.String(logkey.Name, info.Name), slog.String(logkey.Owner, live[i].owner.String()))
	}
	return spare, nil
}

// readObjects reads each object of infos: those that exist, with what the
// ownership decision needs of each (found[i] is live[i], and holds the live
// object from then on), and those that do not.
func readObjects(infos []*resource.Info) (found []*resource.Info, live []liveObject, absent []*resource.Info, err error) {
	for _, info := range infos {
		// Not info.Get: on NotFound it reads the namespace too, to tell a
		// missing namespace apart, one more request per absent object;
		// Helm's create reports a missing namespace anyway.
		obj, err := resource.NewHelper(info.Client, info.Mapping).Get(info.Namespace, info.Name)
		if apierrors.IsNotFound(err) {
			absent = append(absent, info)
			continue
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("get %s: %w", Ref(info), err)
		}
		info.Object = obj
		l, err := readLive(info)
		if err != nil {
			return nil, nil, nil, err
		}
		found, live = append(found, info), append(live, l)
	}
	return found, live, absent, nil
}

func readLive(info *resource.Info) (liveObject, error) {
	m, err := meta.Accessor(info.Object)
	if err != nil {
		return liveObject{}, fmt.Errorf("read %s: %w", Ref(info), err)
	}
	a := m.GetAnnotations()
	return liveObject{
		ref:         displayRef(info),
		owner:       Owner{Release: a[annotationReleaseName], Namespace: a[annotationReleaseNamespace]},
		adopt:       a[AnnotationAdopt],
		helmLabeled: m.GetLabels()[labelHelmManagedBy] == helmManagedByValue,
	}, nil
}

// markOwned sets Helm's ownership label and annotations for owner on the
// live object, so that Helm's install or upgrade takes it over.
func markOwned(info *resource.Info, owner Owner) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]string{labelHelmManagedBy: helmManagedByValue},
		"annotations": map[string]string{annotationReleaseName: owner.Release, annotationReleaseNamespace: owner.Namespace},
	}})
	if err != nil {
		return fmt.Errorf("encode ownership patch: %w", err)
	}
	if _, err := resource.NewHelper(info.Client, info.Mapping).Patch(info.Namespace, info.Name, types.MergePatchType, patch, nil); err != nil {
		return fmt.Errorf("adopt %s: %w", Ref(info), err)
	}
	return nil
}

// displayRef names an object as "Kind namespace/name", or "Kind name" when
// its kind is cluster-scoped.
func displayRef(info *resource.Info) string {
	if info.Mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return info.Mapping.GroupVersionKind.Kind + " " + info.Namespace + "/" + info.Name
	}
	return info.Mapping.GroupVersionKind.Kind + " " + info.Name
}

// OwnedBy reports whether obj carries Helm's ownership annotations for
// release name in namespace, and no helm.sh/resource-policy: keep.
func OwnedBy(obj runtime.Object, name, namespace string) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	a := m.GetAnnotations()
	return a[annotationReleaseName] == name && a[annotationReleaseNamespace] == namespace &&
		a[kube.ResourcePolicyAnno] != kube.KeepPolicy
}
