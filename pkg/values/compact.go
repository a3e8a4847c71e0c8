package values

// Compact shortens an accumulated patch (all values patches a hook ever
// wrote, in order) so it can be re-applied on every values recomputation
// without growing without bound. Guarantee: for any input on which p applies
// (Patch.Apply) without error, Compact(p) applies without error and gives the
// same result. Surviving ops keep their order; p is not modified, and op
// values are shared with p, not copied.
//
// Rules, applied as each op L is appended:
//
//   - test ops are dropped: they change nothing in a patch that applied.
//   - An add, replace or remove L drops earlier ops at L's path or below it
//     (a later op on the same path replaces an earlier one; an op on a parent
//     path drops earlier ops on its children). A replace L drops only earlier
//     replace and remove ops, since an earlier add may have created what it
//     replaces.
//   - A remove L below the top level that drops an add is preceded by
//     add L.path {}: the dropped add created L's missing parents, and the
//     result must keep them.
//
// An earlier op is kept, so that the guarantee holds, when it or L goes
// through an array index, "-" or an empty token (array positions shift); when
// a surviving op between them touches the same path, a parent or a child of
// it; or when a move, copy, or any op through an array index lies between
// them. Move and copy ops are never dropped. Hooks' patches are add and
// remove on object keys, which compact well.
func Compact(p Patch) Patch {
	out := make(Patch, 0, len(p))
	for _, op := range p {
		if op.Op == "test" {
			continue
		}
		out = dropShadowed(out, op)
		out = append(out, op)
	}
	return out
}

// dropShadowed returns the ops of out that l does not make redundant, in
// order, followed by the parent-preserving add that a remove l needs.
func dropShadowed(out Patch, l Op) Patch {
	lTokens, err := ParsePointer(l.Path)
	if err != nil || !plainTokens(lTokens) || (l.Op != "add" && l.Op != "replace" && l.Op != "remove") {
		return out
	}
	keep := make([]bool, len(out))
	var between [][]string // tokens of kept ops after the current one
	droppedAdd := false
	for i := len(out) - 1; i >= 0; i-- {
		e := out[i]
		eTokens, plain := plainOp(e)
		if !plain {
			// Barrier: array positions, move or copy could depend on
			// anything earlier.
			for j := range i + 1 {
				keep[j] = true
			}
			break
		}
		if shadows(l, lTokens, e, eTokens) && !touchesAny(eTokens, between) {
			droppedAdd = droppedAdd || e.Op == "add"
			continue
		}
		keep[i] = true
		between = append(between, eTokens)
	}
	kept := out[:0:0]
	for i, e := range out {
		if keep[i] {
			kept = append(kept, e)
		}
	}
	if l.Op == "remove" && droppedAdd && len(lTokens) > 1 {
		kept = append(kept, Op{Op: "add", Path: l.Path, Value: map[string]any{}})
	}
	return kept
}

// plainOp returns the path tokens of an add, replace or remove whose path
// names object members only.
func plainOp(e Op) ([]string, bool) {
	if e.Op != "add" && e.Op != "replace" && e.Op != "remove" {
		return nil, false
	}
	tokens, err := ParsePointer(e.Path)
	if err != nil || !plainTokens(tokens) {
		return nil, false
	}
	return tokens, true
}

// shadows reports whether l overwrites everything e did: e is at or below
// l's path, and l does not depend on what e may have created.
func shadows(l Op, lTokens []string, e Op, eTokens []string) bool {
	if !hasPrefix(eTokens, lTokens) {
		return false
	}
	return l.Op != "replace" || e.Op != "add"
}

func touchesAny(tokens []string, others [][]string) bool {
	for _, o := range others {
		if related(tokens, o) {
			return true
		}
	}
	return false
}
