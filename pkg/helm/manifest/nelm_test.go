package manifest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
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

func TestHookPoliciesStoresTranslatedPolicies(t *testing.T) {
	store := HookPolicies{Driver: driver.NewMemory()}
	hook := "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations:\n    werf.io/delete-policy: succeeded\n"
	rel := &release.Release{Name: "r", Version: 1, Info: &release.Info{Status: release.StatusDeployed}, Hooks: []*release.Hook{{Name: "j", Manifest: hook}}}
	if err := store.Create("sh.helm.release.v1.r.v1", rel); err != nil {
		t.Fatalf("Create: %v", err)
	}
	got, err := store.Get("sh.helm.release.v1.r.v1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if diff := cmp.Diff([]release.HookDeletePolicy{release.HookSucceeded}, got.Hooks[0].DeletePolicies); diff != "" {
		t.Errorf("stored delete policies (-want +got):\n%s", diff)
	}
}
