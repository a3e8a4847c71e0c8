// Package weights orders the creation of a release's objects by nelm's
// werf.io/weight and werf.io/deploy-dependency-<id> annotations: the
// objects of a release fall into groups of one weight, an object with
// deploy dependencies into a group right after its dependencies' groups,
// and a group that does not exist yet is created, and awaited ready,
// before any later group. The Helm library
// applies a release in one step, so the groups below the highest are
// created here, carrying Helm's ownership metadata (which Helm's install
// and upgrade adopt), and Helm's install or upgrade then applies the
// whole release.
package weights

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// Annotation is nelm's weight annotation. Its value is an integer, of
// either sign; an object without it has weight 0. Chart hooks are not
// release objects (helm.sh/hook-weight orders them) and never reach here.
const Annotation = "werf.io/weight"

// Group is the objects of one weight, in the manifest's order; Depth is
// 0 for the objects without deploy dependencies, and n for those whose
// dependencies end n groups after the group of weight Weight.
type Group struct {
	Weight  int
	Depth   int
	Objects []map[string]any
}

// String names the group in messages: "weight 10", or "weight 10 +2 by
// deploy dependencies".
func (g Group) String() string {
	if g.Depth == 0 {
		return "weight " + strconv.Itoa(g.Weight)
	}
	return "weight " + strconv.Itoa(g.Weight) + " +" + strconv.Itoa(g.Depth) + " by deploy dependencies"
}

// Manifest returns the group's objects as a multi-document manifest.
func (g Group) Manifest() (string, error) {
	var b strings.Builder
	for _, obj := range g.Objects {
		doc, err := yaml.Marshal(obj)
		if err != nil {
			return "", fmt.Errorf("encode %s: %w", ObjectName(obj), err)
		}
		b.WriteString("---\n")
		b.Write(doc)
	}
	return b.String(), nil
}

// Groups returns the objects of a rendered release manifest in the
// order of their creation: grouped by weight, ascending, each object with
// deploy dependencies in a group after its dependencies'; namespace is
// the release's, where dependencies without one are looked for. A
// manifest whose objects all fall into one group has nothing to order:
// Groups returns nil, without parsing it when no object names either
// annotation. A weight that is not an integer, a dependency that is not
// nelm's format or matches no object of the release, or dependencies in a
// cycle are errors naming the objects and the annotation.
func Groups(manifest, namespace string) ([]Group, error) {
	if !strings.Contains(manifest, Annotation) && !strings.Contains(manifest, DependencyPrefix) {
		return nil, nil
	}
	objs, err := kube.ManifestObjects(manifest)
	if err != nil {
		return nil, err //nolint:wrapcheck // the caller names the release
	}
	ws := make([]int, len(objs))
	for i, obj := range objs {
		if ws[i], err = weightOf(obj); err != nil {
			return nil, err
		}
	}
	st, err := stages(objs, ws, namespace)
	if err != nil {
		return nil, err
	}
	distinct := slices.Clone(ws)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	byStage := map[stage][]map[string]any{}
	for i, obj := range objs {
		byStage[st[i]] = append(byStage[st[i]], obj)
	}
	if len(byStage) < 2 {
		return nil, nil
	}
	out := make([]Group, 0, len(byStage))
	for _, s := range slices.SortedFunc(maps.Keys(byStage), stage.compare) {
		out = append(out, Group{Weight: distinct[s.rank], Depth: s.depth, Objects: byStage[s]})
	}
	return out, nil
}

// weightOf returns obj's weight: its annotation's integer, else 0.
func weightOf(obj map[string]any) (int, error) {
	u := unstructured.Unstructured{Object: obj}
	v, ok := u.GetAnnotations()[Annotation]
	if !ok {
		return 0, nil
	}
	w, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, &InvalidError{Object: ObjectName(obj), Annotation: Annotation, Value: v}
	}
	return w, nil
}

// InvalidError is an ordering annotation that cannot be kept: a
// werf.io/weight that is not an integer (Reason empty), or a deploy
// dependency that is not nelm's format or matches no object of the
// release. It is permanent: only a changed chart fixes it.
type InvalidError struct {
	Object     string
	Annotation string
	Value      string
	Reason     string
}

func (e *InvalidError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("%s: annotation %s: %q is not an integer", e.Object, e.Annotation, e.Value)
	}
	return fmt.Sprintf("%s: annotation %s: %q: %s", e.Object, e.Annotation, e.Value, e.Reason)
}

// ObjectName names obj for messages: "Kind namespace/name" or "Kind name".
func ObjectName(obj map[string]any) string {
	u := unstructured.Unstructured{Object: obj}
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}
