package helm

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
)

// installForeign installs release name as Helm alone would: no
// LabelManagedBy on its record.
func installForeign(t *testing.T, env *testEnv, name string) {
	t.Helper()
	install := action.NewInstall(env.config(nil))
	install.ReleaseName, install.Namespace = name, testNamespace
	ch := &chart.Chart{Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: "1.0.0"}}
	if _, err := install.RunWithContext(t.Context(), ch, nil); err != nil {
		t.Fatalf("install foreign release %s: %v", name, err)
	}
}

func TestClaimUnlabeled(t *testing.T) {
	tests := []struct {
		name        string
		adopt       bool
		wantForeign []string
		wantOwned   []string
	}{
		{name: "without the switch, listed and untouched", wantForeign: []string{"gone", "other"}, wantOwned: []string{"ours"}},
		{name: "with the switch, labelled as ours", adopt: true, wantOwned: []string{"gone", "other", "ours"}},
	}
	for _, tt := range tests {
		for _, listed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, records listed %t", tt.name, listed), func(t *testing.T) {
				claimUnlabeled(t, listed, tt.adopt, tt.wantForeign, tt.wantOwned)
			})
		}
	}
}

// claimUnlabeled checks ClaimUnlabeled on one release of ours and two
// foreign ones, finding them through the records' labels when listed,
// else by decoding every record.
func claimUnlabeled(t *testing.T, listed, adopt bool, wantForeign, wantOwned []string) {
	t.Helper()
	env := newTestEnv(t)
	if listed {
		env.client.lister = &memoryRecords{store: env.store}
	}
	r := echoRelease(echoChart(t, "one"), "hello")
	r.Name = "ours"
	if _, err := env.client.Apply(t.Context(), r); err != nil {
		t.Fatalf("apply ours: %v", err)
	}
	installForeign(t, env, "other")
	installForeign(t, env, "gone")
	env.client.adoptReleases = adopt

	foreign, err := env.client.ClaimUnlabeled(t.Context())
	if err != nil {
		t.Fatalf("ClaimUnlabeled: %v", err)
	}
	if diff := cmp.Diff(wantForeign, foreign); diff != "" {
		t.Errorf("foreign releases (-want +got):\n%s", diff)
	}
	owned, err := env.client.Owned(t.Context())
	if err != nil {
		t.Fatalf("Owned: %v", err)
	}
	if diff := cmp.Diff(wantOwned, owned); diff != "" {
		t.Errorf("owned releases (-want +got):\n%s", diff)
	}
	for _, name := range []string{"gone", "other"} {
		if last, err := env.store.Last(name); err != nil || last.Version != 1 {
			t.Errorf("last revision of %s = %v, %v; want revision 1, not a new one", name, last, err)
		}
	}
	again, err := env.client.ClaimUnlabeled(t.Context())
	if err != nil || !cmp.Equal(again, wantForeign) {
		t.Errorf("second ClaimUnlabeled = %v, %v; want %v", again, err, wantForeign)
	}
}
