package cel

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// Below the items of a set or atomic list (a list without
// x-kubernetes-list-type is atomic) the API server correlates no item
// with a previous one, and refuses a CRD whose rule names oldSelf there,
// however deep, also with optionalOldSelf; a map list below such a list
// does not restore correlation. The schema is refused here the same way,
// naming the outermost such list.
func TestOldSelfBelowSetAndAtomicListsRefused(t *testing.T) {
	cases := map[string]struct{ doc, within string }{
		"set items": {`
properties:
  tags:
    type: array
    x-kubernetes-list-type: set
    items: {type: string, x-kubernetes-validations: [{rule: "self == oldSelf"}]}`, "properties.tags"},
		"atomic items": {`
properties:
  hosts:
    type: array
    x-kubernetes-list-type: atomic
    items: {type: string, x-kubernetes-validations: [{rule: "self == oldSelf"}]}`, "properties.hosts"},
		"items of a list without a list type": {`
properties:
  hosts:
    type: array
    items: {type: object, properties: {name: {type: string, x-kubernetes-validations: [{rule: "self == oldSelf"}]}}}`, "properties.hosts"},
		"optionalOldSelf below set items": {`
properties:
  tags:
    type: array
    x-kubernetes-list-type: set
    items: {type: string, x-kubernetes-validations: [{rule: "oldSelf.orValue('') != 'x'", optionalOldSelf: true}]}`, "properties.tags"},
		"a map list inside a set list's items": {`
properties:
  groups:
    type: array
    x-kubernetes-list-type: set
    items:
      type: array
      x-kubernetes-list-type: map
      x-kubernetes-list-map-keys: [name]
      items: {type: object, properties: {name: {type: string}}, x-kubernetes-validations: [{rule: "self == oldSelf"}]}`, "properties.groups"},
		"x-deckhouse-validations below set items": {`
properties:
  tags:
    type: array
    x-kubernetes-list-type: set
    items: {type: string, x-deckhouse-validations: [{expression: "self == oldSelf", message: fixed}]}`, "properties.tags"},
		"the root is a set list": {`
type: array
x-kubernetes-list-type: set
items: {type: string, x-kubernetes-validations: [{rule: "self == oldSelf"}]}`, "the schema's root"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(tc.doc), &m); err != nil {
				t.Fatal(err)
			}
			_, err := Compile(m, nil)
			want := "oldSelf cannot be used on the uncorrelatable portion of the schema within " + tc.within + ":"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Compile: %v, want %q", err, want)
			}
		})
	}
}

// setListSchema has rules the API server accepts around set and atomic
// lists: transition rules at the lists themselves (their previous value is
// the whole previous list, found through the parent's keys), plain rules
// at their items, and a set list inside the items of a map list, whose
// rule sees the same item's previous set.
const setListSchema = `
type: object
properties:
  tags:
    type: array
    x-kubernetes-list-type: set
    items:
      type: string
      x-kubernetes-validations:
      - rule: self.size() <= 8
        message: a tag has at most 8 characters
    x-kubernetes-validations:
    - rule: oldSelf.all(t, t in self)
      message: tags are only added
  hosts:
    type: array
    items: {type: string}
    x-kubernetes-validations:
    - rule: self.size() == 0 || oldSelf.size() == 0 || self[0] == oldSelf[0]
      message: the first host stays first
  pools:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [name]
    items:
      type: object
      properties:
        name: {type: string}
        zones:
          type: array
          x-kubernetes-list-type: set
          items: {type: string}
          x-kubernetes-validations:
          - rule: oldSelf.all(z, z in self)
            message: a pool keeps its zones
`

func TestTransitionRulesAtSetAndAtomicLists(t *testing.T) {
	r := compileYAML(t, setListSchema)
	old := `{tags: [a, b], hosts: [h1, h2], pools: [{name: p, zones: [z1, z2]}, {name: q, zones: [z3]}]}`
	cases := []struct {
		name, value string
		want        []string
	}{
		{"unchanged", old, nil},
		{"set reordered and grown", `{tags: [b, c, a], hosts: [h1], pools: [{name: q, zones: [z3, z4]}, {name: p, zones: [z2, z1]}]}`, nil},
		{"a tag removed", `{tags: [b], hosts: [h1, h2]}`, []string{"m.tags: tags are only added"}},
		{"an item rule runs on each item, without oldSelf", `{tags: [a, b, much-too-long]}`, []string{"m.tags[2]: a tag has at most 8 characters"}},
		{"an atomic list compared whole", `{hosts: [h2, h1]}`, []string{"m.hosts: the first host stays first"}},
		{"a set inside a map list's item: the same item's previous set", `{pools: [{name: q, zones: [z3]}, {name: p, zones: [z1]}]}`, []string{"m.pools[1].zones: a pool keeps its zones"}},
		{"a new map-list item has no previous set", `{pools: [{name: r, zones: []}]}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, check(t, r, tc.value, old)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
	if got := check(t, r, `{tags: [], hosts: [x]}`, ""); got != nil {
		t.Errorf("without a previous value: %v", got)
	}
}
