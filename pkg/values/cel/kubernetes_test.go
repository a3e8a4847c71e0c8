package cel

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// check validates value (YAML) against old (YAML, "" for none) and
// returns "path: message" lines.
func check(t *testing.T, r *Rules, value, old string) []string {
	t.Helper()
	var o any
	if old != "" {
		o = tree(t, old)
	}
	vs := r.Validate("m", tree(t, value), o)
	if len(vs) == 0 {
		return nil
	}
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Path+": "+v.Message)
	}
	return out
}

// mapListSchema has transition rules below a map list (one key and two
// keys), at a set list itself and an additionalProperties map.
const mapListSchema = `
type: object
properties:
  pools:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [name]
    items:
      type: object
      properties:
        name: {type: string}
        size: {type: integer}
      x-kubernetes-validations:
      - rule: self.size >= oldSelf.size
        message: a pool cannot shrink
  ports:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [port, protocol]
    items:
      type: object
      properties:
        port: {type: integer}
        protocol: {type: string}
        name: {type: string}
      x-kubernetes-validations:
      - rule: self.name == oldSelf.name
        message: a port's name is immutable
  tags:
    type: array
    x-kubernetes-list-type: set
    items:
      type: string
    x-kubernetes-validations:
    - rule: oldSelf.all(t, t in self)
      message: tags are only added
  zones:
    type: object
    additionalProperties:
      type: integer
      x-kubernetes-validations:
      - rule: self >= oldSelf
        message: a zone's weight cannot drop
`

func TestTransitionRulesBelowMapLists(t *testing.T) {
	r := compileYAML(t, mapListSchema)
	old := `{pools: [{name: a, size: 3}, {name: b, size: 5}], ports: [{port: 80, protocol: TCP, name: http}, {port: 80, protocol: UDP, name: quic}], tags: [x], zones: {z1: 2}}`
	cases := []struct {
		name, value string
		want        []string
	}{
		{"unchanged", old, nil},
		{"reordered and grown", `{pools: [{name: b, size: 6}, {name: a, size: 3}], ports: [{port: 80, protocol: UDP, name: quic}, {port: 80, protocol: TCP, name: http}]}`, nil},
		{"an item shrinks, found by its key wherever it is", `{pools: [{name: c, size: 1}, {name: b, size: 4}, {name: a, size: 3}]}`, []string{"m.pools[1]: a pool cannot shrink"}},
		{"a new item has no previous value", `{pools: [{name: c, size: 0}]}`, nil},
		{"two keys: only the item with both equal is its previous version", `{ports: [{port: 80, protocol: TCP, name: web}, {port: 443, protocol: TCP, name: other}]}`, []string{"m.ports[0]: a port's name is immutable"}},
		{"a set list itself is its previous list", `{tags: [y, x]}`, nil},
		{"a set list itself, one gone", `{tags: [y]}`, []string{"m.tags: tags are only added"}},
		{"additionalProperties by key", `{zones: {z1: 1, z2: 0}}`, []string{"m.zones.z1: a zone's weight cannot drop"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, check(t, r, tc.value, old)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
	// Without a previous value, no transition rule runs.
	if got := check(t, r, `{pools: [{name: a, size: 0}]}`, ""); got != nil {
		t.Errorf("without a previous value: %v", got)
	}
}

// Kubernetes' CEL library, as the API server offers it, each function
// once passing and once failing.
func TestKubernetesLibraries(t *testing.T) {
	r := compileYAML(t, `
type: object
properties:
  memory:
    type: string
    x-kubernetes-validations:
    - {rule: "quantity(self).isLessThan(quantity('2Gi'))", message: at most 2Gi}
  endpoint:
    type: string
    x-kubernetes-validations:
    - {rule: "isURL(self) && url(self).getScheme() == 'https'", message: an https URL}
  podCIDR:
    type: string
    x-kubernetes-validations:
    - {rule: "isCIDR(self) && cidr(self).ip().family() == 4", message: an IPv4 CIDR}
  address:
    type: string
    x-kubernetes-validations:
    - {rule: "isIP(self) && !ip(self).isLoopback()", message: an address not on loopback}
  hostname:
    type: string
    x-kubernetes-validations:
    - {rule: "!format.dns1123Label().validate(self).hasValue()", message: a DNS label}
  order:
    type: array
    items: {type: integer}
    x-kubernetes-validations:
    - {rule: "self.isSorted() && self.sum() < 100", message: "sorted, summing under 100"}
  image:
    type: string
    x-kubernetes-validations:
    - {rule: "self.find('[0-9]+$') != ''", message: a numbered tag}
  version:
    type: string
    x-kubernetes-validations:
    - {rule: "isSemver(self) && semver(self).isGreaterThan(semver('1.0.0'))", message: a version past 1.0.0}
`)
	good := `{memory: 1Gi, endpoint: "https://example.com/x", podCIDR: 10.0.0.0/8, address: 10.1.2.3, hostname: web-1, order: [1, 2, 3], image: app-12, version: 1.2.0}`
	if got := check(t, r, good, ""); got != nil {
		t.Errorf("good values: %v", got)
	}
	bad := `{memory: 3Gi, endpoint: "http://example.com", podCIDR: "fd00::/8", address: 127.0.0.1, hostname: Web_1, order: [3, 1], image: app-latest, version: 0.9.0}`
	want := []string{
		"m.address: an address not on loopback",
		"m.endpoint: an https URL",
		"m.hostname: a DNS label",
		"m.image: a numbered tag",
		"m.memory: at most 2Gi",
		"m.order: sorted, summing under 100",
		"m.podCIDR: an IPv4 CIDR",
		"m.version: a version past 1.0.0",
	}
	if diff := cmp.Diff(want, check(t, r, bad, "")); diff != "" {
		t.Errorf("bad values (-want +got):\n%s", diff)
	}
}

// A library function's cost counts: url costs by the length of its
// argument, so a list of long URLs spends a budget that the same number
// of calls costing one unit each would not.
func TestLibraryCostCounts(t *testing.T) {
	r := compileYAML(t, `
type: object
properties:
  urls:
    type: array
    items:
      type: string
      x-kubernetes-validations:
      - rule: url(self).getHost() != ''
`)
	long := "https://example.com/" + strings.Repeat("a", 10_000)
	urls := make([]any, 100)
	for i := range urls {
		urls[i] = long
	}
	// The time limit is not what this test is about: on a loaded machine
	// under -race, 2,000 parses of 10 kB could reach it before the cost
	// limit.
	r.budget, r.timeLimit = 10_000, time.Minute
	vs := r.Validate("m", map[string]any{"urls": urls}, nil)
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "exceeded the budget of 10000") {
		t.Fatalf("100 calls of url on 10 kB each: %v, want the budget exceeded", vs)
	}
	if vs := r.Validate("m", map[string]any{"urls": urls[:1]}, nil); len(vs) != 0 {
		t.Fatalf("one call: %v", vs)
	}
	// One rule over the whole list exceeds the per-rule limit.
	all := compileYAML(t, `{type: object, properties: {urls: {type: array, items: {type: string}, x-kubernetes-validations: [{rule: "self.all(u, url(u).getHost() != '')", message: URLs}]}}}`)
	all.timeLimit = time.Minute
	many := make([]any, 2000)
	for i := range many {
		many[i] = long
	}
	vs = all.Validate("m", map[string]any{"urls": many}, nil)
	if len(vs) == 0 || !strings.Contains(vs[0].Message, "cost limit exceeded") {
		t.Fatalf("2000 calls of url on 10 kB each in one rule: %v, want the per-rule limit exceeded", vs)
	}
}

func TestMessageExpressionReasonAndFieldPath(t *testing.T) {
	r := compileYAML(t, `
type: object
properties:
  replicas:
    type: integer
    x-kubernetes-validations:
    - rule: self <= 5
      messageExpression: "'at most 5 replicas, got ' + string(self)"
      message: at most 5 replicas
  name:
    type: string
    x-kubernetes-validations:
    - rule: self != 'admin'
      messageExpression: "self.size() > 3 ? '' : 'short'"
      message: the static message
    - rule: self != 'root'
      messageExpression: "string(self.noSuchField)"
      message: root is reserved
  spec:
    type: object
    properties:
      'a.b': {type: string}
      c: {type: object, properties: {d: {type: string}}}
    x-kubernetes-validations:
    - rule: "!has(self.c) || self.c.d != 'x'"
      message: d is not x
      reason: FieldValueForbidden
      fieldPath: .c.d
    - rule: "!('a.b' in self) || self['a.b'] != ''"
      message: a.b is not empty
      reason: FieldValueRequired
      fieldPath: "['a.b']"
`)
	vs := r.Validate("m", tree(t, `{replicas: 7, name: admin, spec: {c: {d: x}, a.b: ""}}`), nil)
	got := make([]Violation, len(vs))
	copy(got, vs)
	want := []Violation{
		{Path: "m.name", Reason: ReasonInvalid, Message: "the static message"},
		{Path: "m.replicas", Reason: ReasonInvalid, Message: "at most 5 replicas, got 7"},
		{Path: "m.spec.a.b", Reason: ReasonRequired, Message: "a.b is not empty"},
		{Path: "m.spec.c.d", Reason: ReasonForbidden, Message: "d is not x"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	// A message expression that fails gives the static message.
	if got := check(t, r, `{name: root}`, ""); !cmp.Equal(got, []string{"m.name: root is reserved"}) {
		t.Errorf("failing messageExpression: %v", got)
	}
}

// A message expression at a place holding sensitive values is not used:
// it could quote the value into a message that leaves the process.
func TestMessageExpressionNotUsedOverSensitiveValues(t *testing.T) {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(`
type: object
properties:
  password:
    type: string
    x-sensitive: true
x-kubernetes-validations:
- rule: self.password.size() >= 8
  messageExpression: "'too short: ' + self.password"
  message: the password is too short
`), &m); err != nil {
		t.Fatal(err)
	}
	r, err := Compile(m, func(node map[string]any) bool { return node["type"] == "object" })
	if err != nil {
		t.Fatal(err)
	}
	vs := r.Validate("m", map[string]any{"password": "hunter2"}, nil)
	if len(vs) != 1 || vs[0].Message != "the password is too short" {
		t.Fatalf("got %v, want the static message", vs)
	}
}

func TestOptionalOldSelf(t *testing.T) {
	r := compileYAML(t, `
type: object
properties:
  mode:
    type: string
    x-kubernetes-validations:
    - rule: "oldSelf.hasValue() ? self == oldSelf.value() : self == 'Single'"
      optionalOldSelf: true
      message: starts as Single and never changes
`)
	if !r.HasTransitions() {
		t.Error("HasTransitions = false")
	}
	cases := []struct{ value, old, want string }{
		{"{mode: Single}", "", ""},
		{"{mode: HA}", "", "m.mode: starts as Single and never changes"},
		{"{mode: HA}", "{mode: HA}", ""},
		{"{mode: Single}", "{mode: HA}", "m.mode: starts as Single and never changes"},
	}
	for _, tc := range cases {
		if got := strings.Join(check(t, r, tc.value, tc.old), "|"); got != tc.want {
			t.Errorf("%s after %q: %q, want %q", tc.value, tc.old, got, tc.want)
		}
	}
}

// What the API server refuses in a schema, a module's schema cannot carry
// either: nothing is ignored.
func TestRefusedRuleFields(t *testing.T) {
	cases := map[string]string{
		`unknown field "messageExpresion"`:            `{x-kubernetes-validations: [{rule: "true", messageExpresion: "'x'"}]}`,
		`reason "Bad" is none of`:                     `{x-kubernetes-validations: [{rule: "true", reason: Bad}]}`,
		`the schema has no property "b" there`:        `{properties: {a: {type: string}}, x-kubernetes-validations: [{rule: "true", fieldPath: .b}]}`,
		`fieldPath "a": a step at "a" starts with`:    `{properties: {a: {type: string}}, x-kubernetes-validations: [{rule: "true", fieldPath: a}]}`,
		`messageExpression "1" evaluates to int`:      `{x-kubernetes-validations: [{rule: "true", messageExpression: "1"}]}`,
		`compile messageExpression`:                   `{x-kubernetes-validations: [{rule: "true", messageExpression: "self +"}]}`,
		`optionalOldSelf is string`:                   `{x-kubernetes-validations: [{rule: "true", optionalOldSelf: "yes"}]}`,
		`message contains a line break`:               "{x-kubernetes-validations: [{rule: \"true\", message: \"a\\nb\"}]}",
		`list-type map needs x-kubernetes-list-map`:   `{type: array, x-kubernetes-list-type: map, items: {type: object}}`,
		`x-kubernetes-list-type "bag" is none of`:     `{type: array, x-kubernetes-list-type: bag}`,
		`properties.a: x-kubernetes-validations[0]: `: `{properties: {a: {x-kubernetes-validations: [{rule: "self.startsWith(1, 2, 3)"}]}}}`,
	}
	for want, doc := range cases {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		_, err := Compile(m, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", doc, err, want)
		}
	}
}

// BenchmarkCompile measures compiling a schema of a dozen rules, the
// environment included: once per schema a module loads.
func BenchmarkCompile(b *testing.B) {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(mapListSchema), &m); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Compile(m, nil); err != nil {
			b.Fatal(err)
		}
	}
}
