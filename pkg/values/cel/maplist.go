package cel

import (
	"fmt"
	"strconv"
	"strings"
)

// List types of x-kubernetes-list-type.
const (
	listAtomic = "atomic"
	listSet    = "set"
	listMap    = "map"
)

// readListType reads a schema node's x-kubernetes-list-type and
// x-kubernetes-list-map-keys, refusing what the API server refuses: an
// unknown type, or a map list without keys.
func readListType(doc map[string]any) (listType string, keys []string, err error) {
	raw, has := doc["x-kubernetes-list-type"]
	if !has || raw == nil {
		return "", nil, nil
	}
	listType, ok := raw.(string)
	if !ok {
		return "", nil, fmt.Errorf("x-kubernetes-list-type is %T, want a string", raw)
	}
	switch listType {
	case listAtomic, listSet:
		return listType, nil, nil
	case listMap:
	default:
		return "", nil, fmt.Errorf("x-kubernetes-list-type %q is none of atomic, set, map", listType)
	}
	rawKeys, _ := doc["x-kubernetes-list-map-keys"].([]any)
	for _, k := range rawKeys {
		s, ok := k.(string)
		if !ok || s == "" {
			return "", nil, fmt.Errorf("x-kubernetes-list-map-keys holds %v, want non-empty strings", k)
		}
		keys = append(keys, s)
	}
	if len(keys) == 0 {
		return "", nil, fmt.Errorf("x-kubernetes-list-type map needs x-kubernetes-list-map-keys")
	}
	return listType, keys, nil
}

// oldItems finds, for an item of a list, the item of the previous list it
// is the new version of: for a map list, the first previous item with the
// same values of the map keys, as the API server correlates them; for set
// and atomic lists none, as items there have no identity beyond their
// whole value.
type oldItems struct {
	keys  []string
	items map[string]any
}

func newOldItems(keys []string, old []any) oldItems {
	o := oldItems{keys: keys, items: make(map[string]any, len(old))}
	for _, item := range old {
		if k, ok := o.keyOf(item); ok {
			if _, seen := o.items[k]; !seen {
				o.items[k] = item
			}
		}
	}
	return o
}

// get returns the previous version of item, if any.
func (o oldItems) get(item any) (any, bool) {
	if o.items == nil {
		return nil, false
	}
	k, ok := o.keyOf(item)
	if !ok {
		return nil, false
	}
	old, ok := o.items[k]
	return old, ok
}

// keyOf is the composite key of an item: every map key present with a
// scalar value, each written with its type.
func (o oldItems) keyOf(item any) (string, bool) {
	m, ok := item.(map[string]any)
	if !ok {
		return "", false
	}
	var b strings.Builder
	for _, key := range o.keys {
		b.WriteByte(0)
		switch v := m[key].(type) {
		case string:
			b.WriteString(strconv.Quote(v))
		case float64:
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		case bool:
			b.WriteString(strconv.FormatBool(v))
		default:
			return "", false
		}
	}
	return b.String(), true
}
