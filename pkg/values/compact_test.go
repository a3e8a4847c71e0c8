package values

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// compactInputs are the value trees every compaction case is checked on:
// empty, a populated module section, and sections holding scalars where the
// patches expect maps.
func compactInputs() []string {
	return []string{
		`{}`,
		`{"mod":{}}`,
		`{"mod":{"a":{"b":{"c":1,"d":2}},"x":1},"global":{"g":1}}`,
		`{"mod":{"a":{"b":"scalar"},"list":[1,2,3]}}`,
		`{"mod":{"a":{"keep":true}}}`,
	}
}

type compactCase struct {
	name  string
	patch string
	want  string
}

func TestCompact(t *testing.T) {
	runCompactCases(t, []compactCase{
		{name: "empty", patch: `[]`, want: `[]`},
		{
			name:  "later op on the same path wins",
			patch: `[{"op":"add","path":"/mod/x","value":1},{"op":"add","path":"/mod/y","value":1},{"op":"add","path":"/mod/x","value":2}]`,
			want:  `[{"op":"add","path":"/mod/y","value":1},{"op":"add","path":"/mod/x","value":2}]`,
		},
		{
			name:  "add on a parent drops earlier ops below it",
			patch: `[{"op":"add","path":"/mod/a/b/c","value":1},{"op":"remove","path":"/mod/a/b/d"},{"op":"add","path":"/mod/z","value":0},{"op":"add","path":"/mod/a","value":{}}]`,
			want:  `[{"op":"add","path":"/mod/z","value":0},{"op":"add","path":"/mod/a","value":{}}]`,
		},
		{
			name:  "top-level remove drops adds below it",
			patch: `[{"op":"add","path":"/mod/a","value":1},{"op":"add","path":"/mod/b/c","value":1},{"op":"remove","path":"/mod"}]`,
			want:  `[{"op":"remove","path":"/mod"}]`,
		},
		{
			name:  "nested remove keeps the parents an add created",
			patch: `[{"op":"add","path":"/mod/a/b","value":1},{"op":"add","path":"/mod/a/c","value":2},{"op":"remove","path":"/mod/a/b"}]`,
			want:  `[{"op":"add","path":"/mod/a/c","value":2},{"op":"add","path":"/mod/a/b","value":{}},{"op":"remove","path":"/mod/a/b"}]`,
		},
		{
			name: "add-remove cycles stay bounded",
			patch: `[{"op":"add","path":"/mod/a/b","value":1},{"op":"remove","path":"/mod/a/b"},
				{"op":"add","path":"/mod/a/b","value":2},{"op":"remove","path":"/mod/a/b"},
				{"op":"add","path":"/mod/a/b","value":3},{"op":"remove","path":"/mod/a/b"}]`,
			want: `[{"op":"add","path":"/mod/a/b","value":{}},{"op":"remove","path":"/mod/a/b"}]`,
		},
		{
			name:  "remove then add of the same key",
			patch: `[{"op":"remove","path":"/mod/a"},{"op":"add","path":"/mod/a","value":5}]`,
			want:  `[{"op":"add","path":"/mod/a","value":5}]`,
		},
		{
			name:  "test ops are dropped",
			patch: `[{"op":"add","path":"/mod/a","value":1},{"op":"test","path":"/mod/a","value":1},{"op":"add","path":"/mod/b","value":1}]`,
			want:  `[{"op":"add","path":"/mod/a","value":1},{"op":"add","path":"/mod/b","value":1}]`,
		},
	})
}

// TestCompactKeeps covers ops Compact must keep for its guarantee to hold.
func TestCompactKeeps(t *testing.T) {
	runCompactCases(t, []compactCase{
		{
			name:  "replace does not drop the add that created its target",
			patch: `[{"op":"add","path":"/mod/a","value":1},{"op":"replace","path":"/mod/a","value":2},{"op":"replace","path":"/mod/a","value":3}]`,
			want:  `[{"op":"add","path":"/mod/a","value":1},{"op":"replace","path":"/mod/a","value":3}]`,
		},
		{
			name:  "nested remove of a parent drops adds below it",
			patch: `[{"op":"add","path":"/mod/a/b","value":1},{"op":"remove","path":"/mod/a"},{"op":"add","path":"/mod/a/b","value":2}]`,
			want:  `[{"op":"add","path":"/mod/a","value":{}},{"op":"remove","path":"/mod/a"},{"op":"add","path":"/mod/a/b","value":2}]`,
		},
		{
			name:  "a replace of a parent in between keeps the earlier add",
			patch: `[{"op":"add","path":"/mod/a","value":1},{"op":"replace","path":"/mod","value":{"a":0}},{"op":"add","path":"/mod/a","value":2}]`,
			want:  `[{"op":"add","path":"/mod/a","value":1},{"op":"replace","path":"/mod","value":{"a":0}},{"op":"add","path":"/mod/a","value":2}]`,
		},
		{
			name:  "move is a barrier",
			patch: `[{"op":"add","path":"/mod/a","value":1},{"op":"move","from":"/mod/a","path":"/mod/b"},{"op":"add","path":"/mod/a","value":2}]`,
			want:  `[{"op":"add","path":"/mod/a","value":1},{"op":"move","from":"/mod/a","path":"/mod/b"},{"op":"add","path":"/mod/a","value":2}]`,
		},
		{
			name:  "array indexes are not compacted",
			patch: `[{"op":"add","path":"/mod/list/0","value":"a"},{"op":"add","path":"/mod/list/0","value":"b"}]`,
			want:  `[{"op":"add","path":"/mod/list/0","value":"a"},{"op":"add","path":"/mod/list/0","value":"b"}]`,
		},
		{
			name:  "a whole-array add drops ops before the barrier only",
			patch: `[{"op":"add","path":"/mod/x","value":1},{"op":"add","path":"/mod/list/-","value":"a"},{"op":"add","path":"/mod/list","value":[]},{"op":"add","path":"/mod/x","value":2}]`,
			want:  `[{"op":"add","path":"/mod/x","value":1},{"op":"add","path":"/mod/list/-","value":"a"},{"op":"add","path":"/mod/list","value":[]},{"op":"add","path":"/mod/x","value":2}]`,
		},
		{
			name:  "escaped keys compare unescaped",
			patch: `[{"op":"add","path":"/mod/a~1b/c","value":1},{"op":"add","path":"/mod/a~1b","value":2},{"op":"add","path":"/mod/a/b","value":3}]`,
			want:  `[{"op":"add","path":"/mod/a~1b","value":2},{"op":"add","path":"/mod/a/b","value":3}]`,
		},
	})
}

func runCompactCases(t *testing.T, tests []compactCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPatch(t, tt.patch)
			before := mustPatch(t, tt.patch)
			got := Compact(p)
			if diff := cmp.Diff(mustPatch(t, tt.want), got); diff != "" {
				t.Errorf("Compact() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, p); diff != "" {
				t.Errorf("Compact() changed its input (-before +after):\n%s", diff)
			}
			for _, in := range compactInputs() {
				checkCompactEquivalent(t, p, mustJSON(t, in))
			}
		})
	}
}

// TestCompactEquivalentRandom checks the Compact guarantee on many patches
// drawn from a small alphabet of paths, so that ops collide often.
func TestCompactEquivalentRandom(t *testing.T) {
	const patches = 1000
	rng := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // G404: reproducible test data, not secrets
	applied, shortened := 0, 0
	for range patches {
		p := randomPatch(rng, 1+rng.IntN(12))
		for _, in := range compactInputs() {
			if checkCompactEquivalent(t, p, mustJSON(t, in)) {
				applied++
				if len(Compact(p)) < len(p) {
					shortened++
				}
			}
		}
		if t.Failed() {
			t.Fatalf("patch: %s", patchJSON(p))
		}
	}
	// The generator must exercise the guarantee, not only failing patches.
	t.Logf("%d of %d applications succeeded, %d with a shorter compacted patch", applied, patches*len(compactInputs()), shortened)
	if applied < patches/2 || shortened < patches/4 {
		t.Errorf("generator too weak: want at least %d successes and %d shortened", patches/2, patches/4)
	}
}

// checkCompactEquivalent reports whether p applies to in; if it does, it
// fails the test unless Compact(p) applies with the same result.
func checkCompactEquivalent(t *testing.T, p Patch, in Values) bool {
	t.Helper()
	want, err := p.Apply(in)
	if err != nil {
		return false
	}
	c := Compact(p)
	got, err := c.Apply(in)
	if err != nil {
		t.Errorf("on %v: compacted patch %s fails: %v", in, patchJSON(c), err)
		return true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("on %v: compacted patch %s gives a different result (-original +compacted):\n%s", in, patchJSON(c), diff)
	}
	if len(c) > len(p) {
		t.Errorf("compacted patch has %d ops, original %d", len(c), len(p))
	}
	return true
}

// randomPatch draws mostly add and remove ops on object keys, as hooks
// write them, and some of every kind on any path, arrays included.
func randomPatch(rng *rand.Rand, n int) Patch {
	plain := []string{"/mod", "/mod/a", "/mod/a/b", "/mod/a/b/c", "/mod/a/d", "/mod/x", "/global/g"}
	other := []string{"/mod/list", "/mod/list/0", "/mod/list/-", "/mod/a/0", "", "/"}
	kinds := []string{"add", "remove", "replace", "test", "move", "copy"}
	values := []any{1.0, "s", nil, map[string]any{}, map[string]any{"b": map[string]any{"c": 2.0}}, []any{1.0}}
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	p := make(Patch, n)
	for i := range p {
		op := Op{Op: pick(kinds[:2]), Path: pick(plain)}
		if rng.IntN(4) == 0 {
			op = Op{Op: pick(kinds), Path: pick(append(plain, other...))}
		}
		switch {
		case needsFrom(op.Op):
			op.From = pick(append(plain, other...))
		case needsValue(op.Op):
			op.Value = values[rng.IntN(len(values))]
		}
		p[i] = op
	}
	return p
}

// patchJSON renders a patch for failure messages.
func patchJSON(p Patch) string {
	raw, err := json.Marshal(p)
	if err != nil {
		return fmt.Sprintf("%#v", p)
	}
	return string(raw)
}
