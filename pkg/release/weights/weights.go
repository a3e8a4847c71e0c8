// Package weights orders the creation of a release's objects by nelm's
// werf.io/weight annotation: the objects of a release fall into groups of
// one weight, and a group that does not exist yet is created, and
// awaited ready, before any object of a higher weight. The Helm library
// applies a release in one step, so the groups below the highest are
// created here, carrying Helm's ownership metadata (which Helm's install
// and upgrade adopt), and Helm's install or upgrade then applies the
// whole release.
package weights

import (
	"fmt"
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

// Group is the objects of one weight, in the manifest's order.
type Group struct {
	Weight  int
	Objects []map[string]any
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

// Groups returns the objects of a rendered release manifest grouped by
// weight, ascending. A manifest whose objects all have one weight has
// nothing to order: Groups returns nil, without parsing it when no object
// names the annotation. A weight that is not an integer is an error
// naming the object and the annotation.
func Groups(manifest string) ([]Group, error) {
	if !strings.Contains(manifest, Annotation) {
		return nil, nil
	}
	objs, err := kube.ManifestObjects(manifest)
	if err != nil {
		return nil, err //nolint:wrapcheck // the caller names the release
	}
	byWeight := map[int][]map[string]any{}
	for _, obj := range objs {
		w, err := weightOf(obj)
		if err != nil {
			return nil, err
		}
		byWeight[w] = append(byWeight[w], obj)
	}
	if len(byWeight) < 2 {
		return nil, nil
	}
	out := make([]Group, 0, len(byWeight))
	for w, objs := range byWeight {
		out = append(out, Group{Weight: w, Objects: objs})
	}
	slices.SortFunc(out, func(a, b Group) int { return a.Weight - b.Weight })
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
		return 0, &InvalidError{Object: ObjectName(obj), Value: v}
	}
	return w, nil
}

// InvalidError is a werf.io/weight annotation whose value is not an
// integer. It is permanent: only a changed chart fixes it.
type InvalidError struct {
	Object string
	Value  string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s: annotation %s: %q is not an integer", e.Object, Annotation, e.Value)
}

// ObjectName names obj for messages: "Kind namespace/name" or "Kind name".
func ObjectName(obj map[string]any) string {
	u := unstructured.Unstructured{Object: obj}
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}
