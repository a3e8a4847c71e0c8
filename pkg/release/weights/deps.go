package weights

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DependencyPrefix starts nelm's deploy-dependency annotations:
// werf.io/deploy-dependency-<id>: state=ready|present[,kind=K][,name=N]
// [,namespace=NS][,group=G][,version=V]. The annotated object is created
// only once every object of the release the value matches is (the fields
// given must all match; a missing namespace is the release's). As in
// nelm, a dependency takes precedence over the object's werf.io/weight:
// the object goes right after its dependencies' group.
const DependencyPrefix = "werf.io/deploy-dependency-"

// dependency is one deploy-dependency annotation.
type dependency struct {
	annotation string
	value      string
	state      string
	kind       string
	name       string
	namespace  string
	group      string
	version    string
	hasGroup   bool
}

// dependenciesOf reads obj's deploy-dependency annotations, sorted by
// annotation.
func dependenciesOf(obj map[string]any) ([]dependency, error) {
	u := unstructured.Unstructured{Object: obj}
	var out []dependency
	for key, value := range u.GetAnnotations() {
		if !strings.HasPrefix(key, DependencyPrefix) {
			continue
		}
		d, err := parseDependency(key, value)
		if err != nil {
			return nil, &InvalidError{Object: ObjectName(obj), Annotation: key, Value: value, Reason: err.Error()}
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b dependency) int { return strings.Compare(a.annotation, b.annotation) })
	return out, nil
}

func parseDependency(key, value string) (dependency, error) {
	d := dependency{annotation: key, value: value}
	if strings.TrimPrefix(key, DependencyPrefix) == "" {
		return d, fmt.Errorf("no id after %s", DependencyPrefix)
	}
	for part := range strings.SplitSeq(value, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || v == "" {
			return d, fmt.Errorf("%q is not key=value", part)
		}
		fields := map[string]*string{"state": &d.state, "kind": &d.kind, "name": &d.name, "namespace": &d.namespace, "group": &d.group, "version": &d.version}
		dst, known := fields[k]
		if !known {
			return d, fmt.Errorf("unknown key %q (state, kind, name, namespace, group, version)", k)
		}
		*dst = v
		d.hasGroup = d.hasGroup || k == "group"
	}
	if d.state != "ready" && d.state != "present" {
		return d, fmt.Errorf("state %q is neither ready nor present", d.state)
	}
	return d, nil
}

// matches reports whether obj, of a release in namespace releaseNS, is
// what d names.
func (d *dependency) matches(obj map[string]any, releaseNS string) bool {
	u := unstructured.Unstructured{Object: obj}
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil {
		return false
	}
	ns := u.GetNamespace()
	if ns == "" {
		ns = releaseNS
	}
	want := d.namespace
	if want == "" {
		want = releaseNS
	}
	return (d.kind == "" || d.kind == u.GetKind()) &&
		(d.name == "" || d.name == u.GetName()) &&
		(!d.hasGroup || d.group == gv.Group) &&
		(d.version == "" || d.version == gv.Version) &&
		ns == want
}

// stage is where an object goes: the rank of its weight among the
// release's weights, then how many dependency steps follow that group.
type stage struct{ rank, depth int }

func (s stage) compare(o stage) int {
	if s.rank != o.rank {
		return s.rank - o.rank
	}
	return s.depth - o.depth
}

// stager computes the stages of a release's objects.
type stager struct {
	objs    []map[string]any
	weights []int // of each object
	ranks   map[int]int
	deps    [][]int // the indices each object depends on
	stages  []stage
	state   []int // 0 not seen, 1 on the path, 2 done
	path    []int
}

// stages returns each object's stage; an error names a dependency that
// matches no object of the release, or a cycle.
func stages(objs []map[string]any, weights []int, releaseNS string) ([]stage, error) {
	s := &stager{objs: objs, weights: weights, ranks: map[int]int{}, deps: make([][]int, len(objs)),
		stages: make([]stage, len(objs)), state: make([]int, len(objs))}
	distinct := slices.Clone(weights)
	slices.Sort(distinct)
	for i, w := range slices.Compact(distinct) {
		s.ranks[w] = i
	}
	for i, obj := range objs {
		ds, err := dependenciesOf(obj)
		if err != nil {
			return nil, err
		}
		for k := range ds {
			d := &ds[k]
			found := false
			for j, other := range objs {
				if j != i && d.matches(other, releaseNS) {
					s.deps[i] = append(s.deps[i], j)
					found = true
				}
			}
			if !found {
				return nil, &InvalidError{Object: ObjectName(obj), Annotation: d.annotation, Value: d.value, Reason: "no object of the release matches it"}
			}
		}
	}
	for i := range objs {
		if err := s.visit(i); err != nil {
			return nil, err
		}
	}
	return s.stages, nil
}

// visit computes object i's stage after those of its dependencies.
func (s *stager) visit(i int) error {
	switch s.state[i] {
	case 2:
		return nil
	case 1:
		start := slices.Index(s.path, i)
		names := make([]string, 0, len(s.path)-start+1)
		for _, j := range s.path[start:] {
			names = append(names, ObjectName(s.objs[j]))
		}
		names = append(names, ObjectName(s.objs[i]))
		return &CycleError{Objects: names}
	}
	s.state[i] = 1
	s.path = append(s.path, i)
	if len(s.deps[i]) == 0 {
		s.stages[i] = stage{rank: s.ranks[s.weights[i]]}
	}
	for n, j := range s.deps[i] {
		if err := s.visit(j); err != nil {
			return err
		}
		after := stage{rank: s.stages[j].rank, depth: s.stages[j].depth + 1}
		if n == 0 || after.compare(s.stages[i]) > 0 {
			s.stages[i] = after
		}
	}
	s.path = s.path[:len(s.path)-1]
	s.state[i] = 2
	return nil
}

// CycleError is deploy dependencies that form a cycle: no order creates
// them. It is permanent: only a changed chart fixes it.
type CycleError struct {
	Objects []string // the cycle, its first object repeated at the end
}

func (e *CycleError) Error() string {
	return "annotations " + DependencyPrefix + "*: the objects depend on each other in a cycle: " + strings.Join(e.Objects, " -> ")
}
