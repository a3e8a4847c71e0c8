package weights

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// nelm's external dependencies: an object annotated
//
//	<id>.external-dependency.werf.io/resource: <type>[.<version>.<group>]/<name>
//	<id>.external-dependency.werf.io/namespace: <namespace>
//
// is created only once the object named, outside the release, exists and
// is ready. The type is a resource as kubectl takes it (secret, secrets,
// Secret, deploy, deployments.v1.apps, certificates.v1.cert-manager.io,
// deployment.apps); the namespace, when not given, is the release's, and
// a cluster-scoped kind has none. nelm's README names the namespace
// annotation <id>.external-dependency.werf.io/name; it is taken as the
// namespace too.
const (
	// ExternalMarker is in every external-dependency annotation key.
	ExternalMarker          = ".external-dependency.werf.io/"
	externalResourceSuffix  = ExternalMarker + "resource"
	externalNamespaceSuffix = ExternalMarker + "namespace"
	externalNameSuffix      = ExternalMarker + "name"
)

// External is one external dependency of an object of a release.
type External struct {
	// Object names the annotated object: "Kind namespace/name".
	Object string
	// Annotation is the key of its resource annotation.
	Annotation string
	// Type is the resource type as the annotation gives it.
	Type string
	Name string
	// Namespace is the annotation's, else the release's; a cluster-scoped
	// kind ignores it.
	Namespace string
}

// Target names what the dependency points at for messages:
// "secret/config in namespace apps".
func (e External) Target() string {
	return e.Type + "/" + e.Name + " in namespace " + e.Namespace
}

// Dependent is an object of a release with its external dependencies.
type Dependent struct {
	Object    map[string]any
	Externals []External
}

// Dependents returns the objects of a rendered release manifest that
// carry external dependencies, in the manifest's order; namespace is the
// release's. A manifest that names none is not parsed. An annotation that
// is not nelm's format (a type or name missing, the type "all", a
// namespace annotation without its resource annotation, two namespaces
// that differ) is an *InvalidError naming the object and the annotation.
func Dependents(manifest, namespace string) ([]Dependent, error) {
	if !strings.Contains(manifest, ExternalMarker) {
		return nil, nil
	}
	objs, err := kube.ManifestObjects(manifest)
	if err != nil {
		return nil, err //nolint:wrapcheck // the caller names the release
	}
	var out []Dependent
	for _, obj := range objs {
		ext, err := Externals(obj, namespace)
		if err != nil {
			return nil, err
		}
		if len(ext) > 0 {
			out = append(out, Dependent{Object: obj, Externals: ext})
		}
	}
	return out, nil
}

// Externals reads obj's external dependencies, sorted by annotation;
// namespace is the release's.
func Externals(obj map[string]any, namespace string) ([]External, error) {
	u := unstructured.Unstructured{Object: obj}
	annotations := u.GetAnnotations()
	byID := map[string]*External{}
	namespaces := map[string]string{} // id -> namespace, and the key it came from
	from := map[string]string{}
	for key, value := range annotations {
		id, suffix, ok := externalKey(key)
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		invalid := func(reason string) error {
			return &InvalidError{Object: ObjectName(obj), Annotation: key, Value: value, Reason: reason}
		}
		switch suffix {
		case externalResourceSuffix:
			typ, name, err := parseExternal(value)
			if err != nil {
				return nil, invalid(err.Error())
			}
			byID[id] = &External{Object: ObjectName(obj), Annotation: key, Type: typ, Name: name}
		default: // a namespace, by either key
			if value == "" {
				return nil, invalid("the namespace is empty")
			}
			if prev, seen := namespaces[id]; seen && prev != value {
				return nil, invalid(fmt.Sprintf("%s names namespace %q", from[id], prev))
			}
			namespaces[id], from[id] = value, key
		}
	}
	out := make([]External, 0, len(byID))
	for id, ns := range namespaces {
		if _, ok := byID[id]; !ok {
			return nil, &InvalidError{Object: ObjectName(obj), Annotation: from[id], Value: ns,
				Reason: "no " + id + externalResourceSuffix + " names the dependency it is the namespace of"}
		}
	}
	for id, e := range byID {
		e.Namespace = namespace
		if ns, ok := namespaces[id]; ok {
			e.Namespace = ns
		}
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b External) int { return strings.Compare(a.Annotation, b.Annotation) })
	return out, nil
}

// externalKey splits an external-dependency annotation key into its id
// and its suffix; ok is false for other keys.
func externalKey(key string) (id, suffix string, ok bool) {
	for _, s := range []string{externalResourceSuffix, externalNamespaceSuffix, externalNameSuffix} {
		if id, found := strings.CutSuffix(key, s); found && id != "" {
			return id, s, true
		}
	}
	return "", "", false
}

// parseExternal reads "<type>/<name>".
func parseExternal(value string) (typ, name string, err error) {
	typ, name, ok := strings.Cut(value, "/")
	switch {
	case !ok || strings.Contains(name, "/"):
		return "", "", fmt.Errorf("not <type>[.<version>.<group>]/<name>")
	case typ == "":
		return "", "", fmt.Errorf("the resource type is empty")
	case strings.EqualFold(typ, "all"):
		return "", "", fmt.Errorf("the resource type all is not one type")
	case name == "":
		return "", "", fmt.Errorf("the name is empty")
	}
	if slices.Contains(strings.Split(typ, "."), "") {
		return "", "", fmt.Errorf("the resource type %q has an empty part between dots", typ)
	}
	return typ, name, nil
}
