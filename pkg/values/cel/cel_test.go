package cel

import (
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

func compileYAML(t *testing.T, doc string) *Rules {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	r, err := Compile(m, nil)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return r
}

func tree(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

const schemaDoc = `
type: object
properties:
  replicas:
    type: integer
    x-kubernetes-validations:
    - rule: self <= 5
      message: at most 5 replicas
  mode:
    type: string
  storage:
    type: object
    properties:
      class: {type: string}
    x-deckhouse-validations:
    - expression: "self.class != 'local'"
      message: local storage is forbidden
x-deckhouse-validations:
- expression: "!(self.mode == 'HA' && self.replicas < 2)"
  message: HA needs two replicas
- expression: "!has(oldSelf.mode) || !has(self.mode) || oldSelf.mode == self.mode"
  message: mode is immutable
`

func TestValidatePassesAndFails(t *testing.T) {
	r := compileYAML(t, schemaDoc)
	if vs := r.Validate("echo", tree(t, "{replicas: 2, mode: HA, storage: {class: ssd}}"), nil); len(vs) != 0 {
		t.Fatalf("valid settings: %v", vs)
	}
	vs := r.Validate("echo", tree(t, "{replicas: 7, mode: HA, storage: {class: local}}"), nil)
	got := make([]string, 0, len(vs))
	for _, v := range vs {
		got = append(got, v.Path+": "+v.Message)
	}
	want := []string{"echo.replicas: at most 5 replicas", "echo.storage: local storage is forbidden"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
	vs = r.Validate("echo", tree(t, "{replicas: 1, mode: HA}"), nil)
	if len(vs) != 1 || vs[0].Path != "echo" || vs[0].Message != "HA needs two replicas" {
		t.Fatalf("root rule: %v", vs)
	}
}

func TestTransitionRuleNeedsOld(t *testing.T) {
	r := compileYAML(t, schemaDoc)
	if !r.HasTransitions() {
		t.Fatal("oldSelf rule not seen as a transition rule")
	}
	cur := tree(t, "{replicas: 2, mode: Single}")
	if vs := r.Validate("echo", cur, nil); len(vs) != 0 {
		t.Fatalf("without old values a transition rule must not run: %v", vs)
	}
	vs := r.Validate("echo", cur, tree(t, "{replicas: 2, mode: HA}"))
	if len(vs) != 1 || vs[0].Message != "mode is immutable" {
		t.Fatalf("changed mode: %v", vs)
	}
	if vs := r.Validate("echo", cur, tree(t, "{replicas: 3, mode: Single}")); len(vs) != 0 {
		t.Fatalf("unchanged mode: %v", vs)
	}
}

func TestIntegersAreIntegers(t *testing.T) {
	r := compileYAML(t, `
type: object
properties:
  count:
    type: integer
    x-kubernetes-validations:
    - rule: self % 2 == 0
      message: must be even
`)
	if vs := r.Validate("m", map[string]any{"count": float64(4)}, nil); len(vs) != 0 {
		t.Fatal(vs)
	}
	if vs := r.Validate("m", map[string]any{"count": float64(3)}, nil); len(vs) != 1 || vs[0].Path != "m.count" {
		t.Fatal(vs)
	}
}

func TestDeckhouseMissingKeyPasses(t *testing.T) {
	r := compileYAML(t, `
type: object
x-deckhouse-validations:
- expression: "self.a.b == 1"
  message: a.b must be 1
x-kubernetes-validations:
- rule: "self.a.b == 1"
`)
	vs := r.Validate("m", map[string]any{}, nil)
	if len(vs) != 1 || !strings.HasPrefix(vs[0].Message, "failed rule: self.a.b == 1") {
		t.Fatalf("only the Kubernetes rule fails on a missing key: %v", vs)
	}
}

func TestItemsAndAdditionalProperties(t *testing.T) {
	r := compileYAML(t, `
type: object
properties:
  hosts:
    type: array
    items:
      type: string
      x-kubernetes-validations:
      - {rule: "self.endsWith('.example.com')", message: must be under example.com}
  limits:
    type: object
    additionalProperties:
      type: integer
      x-deckhouse-validations:
      - {expression: "self > 0", message: must be positive}
`)
	vs := r.Validate("m", tree(t, "{hosts: [a.example.com, b.org], limits: {cpu: 1, mem: 0}}"), nil)
	if len(vs) != 2 || vs[0].Path != "m.hosts[1]" || vs[1].Path != "m.limits.mem" {
		t.Fatalf("got %v", vs)
	}
}

func TestCompileErrorsNameThePlace(t *testing.T) {
	cases := map[string]string{
		"properties.a: x-kubernetes-validations[0]: compile": `{properties: {a: {x-kubernetes-validations: [{rule: "self +"}]}}}`,
		"x-deckhouse-validations[0]: message is missing":     `{x-deckhouse-validations: [{expression: "true"}]}`,
		"x-deckhouse-validations[0]: expression is missing":  `{x-deckhouse-validations: [{message: m}]}`,
		"x-deckhouse-validations is string":                  `{x-deckhouse-validations: "self > 1"}`,
		"want bool":                                          `{x-kubernetes-validations: [{rule: "1 + 1"}]}`,
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

func TestNoRulesIsNil(t *testing.T) {
	r := compileYAML(t, `{type: object, properties: {a: {type: string}}}`)
	if r != nil || r.Validate("m", map[string]any{"a": "x"}, nil) != nil || r.HasTransitions() {
		t.Fatal("a schema without rules compiles to nil")
	}
}

// listRules has a rule at the items of a list, which runs once per item.
const listRules = `
type: object
properties:
  groups:
    type: array
    items:
      type: array
      items: {type: integer}
      x-kubernetes-validations:
      - rule: "self.all(x, x >= 0)"
        message: no negative numbers
`

// groups is a value of n lists of 100 numbers.
func groups(n int) any {
	inner := make([]any, 100)
	for i := range inner {
		inner[i] = float64(i)
	}
	out := make([]any, n)
	for i := range out {
		out[i] = inner
	}
	return map[string]any{"groups": out}
}

// The cost budget of one Validate call stops a long list from multiplying
// the per-rule limit: the value is refused with a violation that says
// why and where, and no rule runs past it.
func TestValidationBudgetStopsLongLists(t *testing.T) {
	r := compileYAML(t, listRules)
	r.budget = 10_000

	if vs := r.Validate("m", groups(2), nil); len(vs) != 0 {
		t.Fatalf("two groups fit the budget, got %v", vs)
	}
	vs := r.Validate("m", groups(500), nil)
	if len(vs) != 1 {
		t.Fatalf("want one budget violation, got %d: %v", len(vs), vs)
	}
	if !strings.Contains(vs[0].Message, "exceeded the budget of 10000") || !strings.HasPrefix(vs[0].Path, "m.groups[") || vs[0].Path == "m.groups[499]" {
		t.Fatalf("violation does not name the budget and where it ran out: %+v", vs[0])
	}
}

// The time limit of one Validate call holds even when the cost estimate
// does not: the value is refused, naming the limit.
func TestValidationTimeLimit(t *testing.T) {
	r := compileYAML(t, listRules)
	r.timeLimit = time.Nanosecond
	vs := r.Validate("m", groups(3), nil)
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "took longer than 1ns") {
		t.Fatalf("want one time-limit violation, got %v", vs)
	}
}

// The shipped limits are the API server's per-object budget and a time
// well inside an admission webhook's timeout.
func TestValidationLimitsDefaults(t *testing.T) {
	r := compileYAML(t, listRules)
	if r.budget != ValidationBudget || r.timeLimit != ValidationTimeLimit || ValidationTimeLimit >= 5*time.Second {
		t.Fatalf("limits %d, %s", r.budget, r.timeLimit)
	}
	if vs := r.Validate("m", groups(50), nil); len(vs) != 0 {
		t.Fatalf("a value of 5,000 numbers is within the limits: %v", vs)
	}
}
