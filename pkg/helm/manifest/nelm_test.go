package manifest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHookDeletePolicies(t *testing.T) {
	for value, want := range map[string][]string{
		"before-creation":                        {"before-hook-creation"},
		"succeeded, failed":                      {"hook-succeeded", "hook-failed"},
		"before-creation-if-immutable,succeeded": {"hook-succeeded"},
		"":                                       {},
	} {
		policies, _ := hookDeletePolicies(value)
		got := make([]string, 0, len(policies))
		for _, p := range policies {
			got = append(got, string(p))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", value, diff)
		}
	}
	if _, unknown := hookDeletePolicies("before-creation-if-immutable"); len(unknown) != 1 {
		t.Errorf("before-creation-if-immutable: unknown %q, want it named", unknown)
	}
}
