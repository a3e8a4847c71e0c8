package values

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Plain `go test` runs only these seeds; `go test -fuzz FuzzX` explores.

func FuzzParsePatch(f *testing.F) {
	for _, seed := range []string{
		``,
		` `,
		`[]`,
		`{"op":"add","path":"/a/b","value":{"x":[1,null,"s"]}}`,
		`[{"op":"remove","path":"/a~1b~0"},{"op":"move","from":"/a","path":"/b"}] {"op":"copy","from":"/b","path":"/c"}`,
		`{"op":"test","path":"","value":null}[{"op":"replace","path":"/","value":1.5e3}]`,
		`{"op":"ad","path":"/a"}`,
		`[1]`,
		`null`,
		`{"op":"add","path":"/a","value":"\u00e9\ud800"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePatch(data)
		if err != nil {
			return
		}
		if p == nil {
			t.Fatal("ParsePatch() = nil, nil; want a non-nil patch")
		}
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal parsed patch: %v", err)
		}
		again, err := ParsePatch(raw)
		if err != nil {
			t.Fatalf("re-parse %s: %v", raw, err)
		}
		if diff := cmp.Diff(p, again); diff != "" {
			t.Fatalf("re-parsed patch differs (-first +second):\n%s", diff)
		}
	})
}

func FuzzMerge(f *testing.F) {
	for _, seed := range [][2]string{
		{`{}`, `{}`},
		{`{"a":{"b":1,"c":[1,2]}}`, `{"a":{"b":null,"c":[3],"d":{"e":true}}}`},
		{`{"a":1}`, `{"a":{"b":{"c":null}}}`},
		{`{"a":null,"l":[null,{"x":null}]}`, `{"l":null}`},
		{`{"global":{"x":"y"},"modEnabled":true}`, `{"global":"flat"}`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, rawA, rawB []byte) {
		a, errA := FromJSON(rawA)
		b, errB := FromJSON(rawB)
		if errA != nil || errB != nil {
			return
		}
		beforeA, beforeB := a.DeepCopy(), b.DeepCopy()

		m := Merge(a, b)
		if diff := cmp.Diff(beforeA, a); diff != "" {
			t.Fatalf("Merge changed its first input (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(beforeB, b); diff != "" {
			t.Fatalf("Merge changed its second input (-before +after):\n%s", diff)
		}
		if hasNullMapValue(m) {
			t.Fatalf("Merge result holds a null map value: %v", m)
		}

		// Merging with empty is the identity, up to dropping null markers.
		alone := Merge(a)
		if diff := cmp.Diff(alone, Merge(a, Values{})); diff != "" {
			t.Fatalf("Merge(a, {}) != Merge(a) (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(alone, Merge(Values{}, a)); diff != "" {
			t.Fatalf("Merge({}, a) != Merge(a) (-want +got):\n%s", diff)
		}
		if !hasNullMapValue(a) {
			if diff := cmp.Diff(a, alone); diff != "" {
				t.Fatalf("Merge(a) != a for a without nulls (-want +got):\n%s", diff)
			}
		}
		if diff := cmp.Diff(m, Merge(m, m)); diff != "" {
			t.Fatalf("Merge(m, m) != m (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(m, Merge(Merge(a), b)); diff != "" {
			t.Fatalf("Merge(Merge(a), b) != Merge(a, b) (-want +got):\n%s", diff)
		}
	})
}

// FuzzApply checks that Apply never panics or changes its input, and that
// Compact keeps the result of every patch that applies.
func FuzzApply(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"mod":{"a":{"b":1}}}`, `[{"op":"add","path":"/mod/a/c","value":2},{"op":"remove","path":"/mod/a"}]`},
		{`{"mod":{"l":[null,1]}}`, `{"op":"test","path":"/mod/l","value":[null,1]}`},
		{`{"mod":{}}`, `[{"op":"add","path":"/mod/a/b","value":null},{"op":"add","path":"/mod/a/b/c","value":"s"},{"op":"remove","path":"/mod/a/b"}]`},
		{`{}`, `[{"op":"add","path":"/m/l/2","value":1},{"op":"move","from":"/m/l","path":"/m/k"},{"op":"copy","from":"/m","path":"/n"}]`},
		{`{"a":1}`, `[{"op":"add","path":"","value":{"b":2}},{"op":"replace","path":"/b","value":[]}]`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, rawValues, rawPatch []byte) {
		v, err := FromJSON(rawValues)
		if err != nil {
			return
		}
		p, err := ParsePatch(rawPatch)
		if err != nil {
			return
		}
		before := v.DeepCopy()
		want, err := p.Apply(v)
		if diff := cmp.Diff(before, v); diff != "" {
			t.Fatalf("Apply changed its input (-before +after):\n%s", diff)
		}
		if err != nil {
			return
		}
		c := Compact(p)
		got, err := c.Apply(v)
		if err != nil {
			t.Fatalf("compacted patch %s fails where %s applies: %v", patchJSON(c), patchJSON(p), err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("compacted patch %s differs from %s (-original +compacted):\n%s", patchJSON(c), patchJSON(p), diff)
		}
	})
}

// hasNullMapValue reports whether a map in the tree, outside slices (which
// Merge treats as opaque data), holds a null value.
func hasNullMapValue(v any) bool {
	m, ok := asMap(v)
	if !ok {
		return false
	}
	for _, val := range m {
		if val == nil || hasNullMapValue(val) {
			return true
		}
	}
	return false
}
