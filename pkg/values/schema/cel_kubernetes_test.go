package schema

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/values"
)

// kubernetesCELSchema has a transition rule below a map list, a rule using
// Kubernetes' quantity library with a messageExpression, and rules with
// reasons.
const kubernetesCELSchema = `
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
        size: {type: integer, default: 1}
      x-kubernetes-validations:
      - rule: self.size >= oldSelf.size
        messageExpression: "'pool ' + self.name + ' cannot shrink from ' + string(oldSelf.size)"
  memory:
    type: string
    default: 1Gi
    x-kubernetes-validations:
    - rule: quantity(self).isLessThan(quantity('2Gi'))
      messageExpression: "'memory ' + self + ' is not under 2Gi'"
  admin:
    type: string
    x-kubernetes-validations:
    - rule: "false"
      message: no admin may be set
      reason: FieldValueForbidden
`

func TestKubernetesCELThroughSchemas(t *testing.T) {
	cfg, _ := writeSchemas(t, kubernetesCELSchema, "")
	s, err := LoadSchemas(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	old := s.ApplyDefaults(ConfigSchema, values.Values{"pools": []any{map[string]any{"name": "a", "size": 3}, map[string]any{"name": "b"}}})
	section := s.ApplyDefaults(ConfigSchema, values.Values{"pools": []any{map[string]any{"name": "b"}, map[string]any{"name": "a", "size": 2}}, "memory": "3Gi", "admin": "x"})
	got := violations(t, s.ValidateTransition(ConfigSchema, "echo", section, old))
	want := []Violation{
		{Path: "echo.admin", Message: "is forbidden: no admin may be set"},
		{Path: "echo.memory", Message: "is invalid: memory 3Gi is not under 2Gi"},
		{Path: "echo.pools[1]", Message: "is invalid: pool a cannot shrink from 3"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	if err := s.ValidateTransition(ConfigSchema, "echo", old, old); err != nil {
		t.Errorf("unchanged: %v", err)
	}
}
