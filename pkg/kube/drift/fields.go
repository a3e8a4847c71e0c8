package drift

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// fieldSet is one node of a decoded fieldsV1 set, the format of
// metadata.managedFields[].fieldsV1: what a manager owns at one position of
// an object and below it. A node with no entries at all is a leaf: the
// manager owns the whole value there (a scalar, or an atomic map or list).
type fieldSet struct {
	// fields are the "f:<name>" entries: struct fields and map keys.
	fields map[string]*fieldSet
	// keyed are the "k:<json object>" entries: items of associative lists,
	// named by the values of their key fields.
	keyed []keyedItem
	// values are the "v:<json value>" entries: items of set lists.
	values []valueItem
	// indexes are the "i:<n>" entries: list items by position.
	indexes map[int]*fieldSet
	// self is the "." entry: the position itself (a map or a list item)
	// exists because of the manager; it says nothing about what is below.
	self bool
}

type keyedItem struct {
	keys map[string]any
	set  *fieldSet
}

type valueItem struct {
	value any
	set   *fieldSet
}

// driftManaged is what one managedFields entry owns.
type driftManaged struct {
	manager string
	set     *fieldSet
}

// decodeManaged decodes the fieldsV1 sets of a live object's
// managedFields. Entries in another format, or without fields, own nothing
// and are left out. Entries of subresources (status, scale) count like the
// others: a controller scaling through /scale owns spec.replicas.
func decodeManaged(entries []metav1.ManagedFieldsEntry) ([]driftManaged, error) {
	out := make([]driftManaged, 0, len(entries))
	for _, e := range entries {
		if e.FieldsType != "FieldsV1" || e.FieldsV1 == nil {
			continue
		}
		set, err := decodeFields(e.FieldsV1.GetRawBytes())
		if err != nil {
			return nil, fmt.Errorf("managedFields of %q: %w", e.Manager, err)
		}
		out = append(out, driftManaged{manager: e.Manager, set: set})
	}
	return out, nil
}

// decodeFields decodes one fieldsV1 JSON object. Keys other than ".",
// "f:", "k:", "v:" and "i:" entries are an error.
func decodeFields(raw []byte) (*fieldSet, error) {
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("decode fieldsV1: %w", err)
	}
	set := &fieldSet{}
	for key, sub := range entries {
		if key == "." {
			set.self = true
			continue
		}
		child, err := decodeFields(sub)
		if err != nil {
			return nil, err
		}
		if err := set.add(key, child); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// add records child under the fieldsV1 key.
func (s *fieldSet) add(key string, child *fieldSet) error {
	prefix, rest, _ := strings.Cut(key, ":")
	switch prefix {
	case "f":
		if s.fields == nil {
			s.fields = map[string]*fieldSet{}
		}
		s.fields[rest] = child
	case "k":
		var keys map[string]any
		if err := utiljson.Unmarshal([]byte(rest), &keys); err != nil {
			return fmt.Errorf("fieldsV1 key %q: %w", key, err)
		}
		s.keyed = append(s.keyed, keyedItem{keys: keys, set: child})
	case "v":
		var value any
		if err := utiljson.Unmarshal([]byte(rest), &value); err != nil {
			return fmt.Errorf("fieldsV1 key %q: %w", key, err)
		}
		s.values = append(s.values, valueItem{value: value, set: child})
	case "i":
		i, err := strconv.Atoi(rest)
		if err != nil {
			return fmt.Errorf("fieldsV1 key %q: %w", key, err)
		}
		if s.indexes == nil {
			s.indexes = map[int]*fieldSet{}
		}
		s.indexes[i] = child
	default:
		return fmt.Errorf("fieldsV1 key %q: unknown prefix", key)
	}
	return nil
}

func (s *fieldSet) leaf() bool {
	return !s.self && len(s.fields) == 0 && len(s.keyed) == 0 && len(s.values) == 0 && len(s.indexes) == 0
}

// owns reports whether the set owns the value at path: the set has the
// position itself, or an ancestor of it as a leaf (an atomic map or list).
// List steps are matched against the live item the step found.
func (s *fieldSet) owns(path []driftStep) bool {
	node := s
	for _, step := range path {
		node = node.child(step)
		if node == nil {
			return false
		}
		if node.leaf() {
			return true
		}
	}
	return true
}

func (s *fieldSet) child(step driftStep) *fieldSet {
	if !step.isList() {
		return s.fields[step.key]
	}
	if step.live < 0 {
		return nil
	}
	if set, ok := s.indexes[step.live]; ok {
		return set
	}
	for _, v := range s.values {
		if reflect.DeepEqual(v.value, step.item) {
			return v.set
		}
	}
	item, ok := step.item.(map[string]any)
	if !ok {
		return nil
	}
	for _, k := range s.keyed {
		if hasKeys(item, k.keys) {
			return k.set
		}
	}
	return nil
}

// hasKeys reports whether item has every key field with its value.
func hasKeys(item, keys map[string]any) bool {
	for name, want := range keys {
		got, ok := item[name]
		if !ok || !reflect.DeepEqual(got, want) {
			return false
		}
	}
	return len(keys) > 0
}

// defaultControllers are managers, beyond those whose name contains
// "controller", that change fields of objects they do not create.
func defaultControllers() []string {
	return []string{"horizontal-pod-autoscaler", "vpa-updater", "vpa-recommender"}
}

// isController reports whether manager is a controller: its name
// contains "controller" (kube-controller-manager, cloud-controller-manager,
// most operators), it is a known autoscaler, or one of extra.
func isController(manager string, extra []string) bool {
	return strings.Contains(strings.ToLower(manager), "controller") ||
		slices.Contains(defaultControllers(), manager) ||
		slices.Contains(extra, manager)
}

// isDrift decides whether a field whose live value differs from the
// manifest is drift. It is not when the field is a webhook's caBundle (CA
// injectors own those by design) or when any live owner of the field is a
// controller (see isController). Every other difference is drift:
// a change by a person (kubectl-edit, kubectl-client-side-apply, kubectl
// patch), a field with no owner at all, and a field still owned by the
// release's own manager (an upgrade that did not land).
func isDrift(path []driftStep, managed []driftManaged, controllers []string) bool {
	if n := len(path); n > 0 && path[n-1].key == "caBundle" {
		return false
	}
	for _, m := range managed {
		if isController(m.manager, controllers) && m.set.owns(path) {
			return false
		}
	}
	return true
}
