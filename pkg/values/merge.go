package values

// Merge deep-merges layers into a new tree, lowest priority first, the way
// module values are layered (static values, schema defaults, config values,
// ...):
//
//   - a map in a later layer is merged key by key into a map in an earlier one;
//   - any other later value (scalar, slice, or a map over a non-map) replaces
//     the earlier value whole; slices are never merged element-wise;
//   - an explicit null in a later layer deletes the key, so a user can unset a
//     default. Nulls are deletion markers only: the result never holds a null
//     map value, even where no earlier layer had the key. Nulls inside slices
//     are data and are kept.
//
// The result shares nothing with the inputs, which are never modified.
// Merge of no layers, or of empty layers, is empty, non-nil Values.
func Merge(layers ...Values) Values {
	out := make(map[string]any)
	for _, layer := range layers {
		mergeInto(out, layer)
	}
	return Values(out)
}

// mergeInto merges src into dst, which this package owns exclusively.
func mergeInto(dst, src map[string]any) {
	for k, sv := range src {
		if sv == nil {
			delete(dst, k)
			continue
		}
		sm, srcIsMap := asMap(sv)
		if !srcIsMap {
			dst[k] = deepCopy(sv)
			continue
		}
		dm, dstIsMap := dst[k].(map[string]any)
		if !dstIsMap {
			// A fresh map, so nulls inside sm are dropped as well.
			dm = make(map[string]any, len(sm))
			dst[k] = dm
		}
		mergeInto(dm, sm)
	}
}
