package schema

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/values"
)

const celConfigSchema = `
type: object
properties:
  replicas:
    type: integer
    default: 1
    x-kubernetes-validations:
    - rule: self <= 5
      message: at most 5 replicas
  mode:
    type: string
    default: Single
x-deckhouse-validations:
- expression: "!(self.mode == 'HA' && self.replicas < 2)"
  message: HA needs two replicas
- expression: "oldSelf.mode == self.mode"
  message: mode is immutable
`

func TestCELRulesInConfigSchema(t *testing.T) {
	cfg, _ := writeSchemas(t, celConfigSchema, "")
	s, err := LoadSchemas(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasTransitionRules(ConfigSchema) {
		t.Error("HasTransitionRules = false, want true")
	}
	section := s.ApplyDefaults(ConfigSchema, values.Values{"mode": "HA", "replicas": 9})
	got := violations(t, s.ValidateConfig("echo", section))
	want := []Violation{{Path: "echo.replicas", Message: "is invalid: at most 5 replicas"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	got = violations(t, s.ValidateConfig("echo", s.ApplyDefaults(ConfigSchema, values.Values{"mode": "HA"})))
	if diff := cmp.Diff([]Violation{{Path: "echo", Message: "is invalid: HA needs two replicas"}}, got); diff != "" {
		t.Errorf("root rule (-want +got):\n%s", diff)
	}
	// The transition rule runs only with previous values.
	old := s.ApplyDefaults(ConfigSchema, values.Values{"mode": "Single"})
	err = s.ValidateTransition(ConfigSchema, "echo", s.ApplyDefaults(ConfigSchema, values.Values{"mode": "HA", "replicas": 2}), old)
	if err == nil || !strings.Contains(err.Error(), "echo is invalid: mode is immutable") {
		t.Errorf("ValidateTransition = %v, want mode is immutable", err)
	}
	if err := s.ValidateTransition(ConfigSchema, "echo", old, old); err != nil {
		t.Errorf("unchanged: %v", err)
	}
	// The values schema derived from the config schema keeps the rules.
	if err := s.ValidateValues("echo", values.Values{"mode": "HA", "replicas": 1}); err == nil || !strings.Contains(err.Error(), "HA needs two replicas") {
		t.Errorf("ValidateValues = %v, want the root rule", err)
	}
}

func TestCELRuleThatDoesNotCompile(t *testing.T) {
	cfg, _ := writeSchemas(t, "type: object\nx-deckhouse-validations:\n- expression: 'self.'\n  message: m\n", "")
	_, err := LoadSchemas(cfg, "")
	if err == nil || !strings.Contains(err.Error(), cfg) || !strings.Contains(err.Error(), "x-deckhouse-validations[0]") {
		t.Fatalf("LoadSchemas = %v, want an error naming the file and the rule", err)
	}
}
