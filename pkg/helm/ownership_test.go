package helm

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/addon-operator/addon-operator/pkg/helm/objects"
)

// TestApplyOwnership runs Apply against a cluster holding ConfigMap echo,
// which the echo chart renders, as another owner left it.
func TestApplyOwnership(t *testing.T) {
	tests := []struct {
		name         string
		owner        string            // release of the existing object, "" for none
		annotations  map[string]string // on the existing object
		adoptObjects []string
		wantConflict *objects.Conflict // nil: Apply succeeds and takes the object
		wantLost     bool
	}{
		{name: "no release", wantConflict: &objects.Conflict{Object: "ConfigMap addon-operator/echo"}},
		{name: "no release, annotated", annotations: map[string]string{objects.AnnotationAdopt: "true"}},
		{name: "no release, module may adopt", adoptObjects: []string{"other", "echo"}},
		{name: "no release, another module may adopt", adoptObjects: []string{"other"},
			wantConflict: &objects.Conflict{Object: "ConfigMap addon-operator/echo"}},
		{name: "another release", owner: "other", wantConflict: &objects.Conflict{
			Object: "ConfigMap addon-operator/echo", Owner: objects.Owner{Release: "other", Namespace: testNamespace},
		}},
		{name: "another release, annotated true", owner: "other", annotations: map[string]string{objects.AnnotationAdopt: "true"},
			wantConflict: &objects.Conflict{Object: "ConfigMap addon-operator/echo", Owner: objects.Owner{Release: "other", Namespace: testNamespace}}},
		{name: "another release, annotated for echo", owner: "other", annotations: map[string]string{objects.AnnotationAdopt: "echo"}},
		{name: "its own, records deleted", owner: "echo", wantLost: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, cluster := newTestEnv(t), newFakeCluster()
			env.kube = cluster
			env.client.adoptObjects = tt.adoptObjects
			cluster.apply(t, "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: echo\ndata:\n  greeting: by-hand\n", tt.owner, tt.annotations)

			out, err := env.client.Apply(t.Context(), echoRelease(echoChart(t, "one"), "hello"))
			if tt.wantConflict != nil {
				var conflict *objects.OwnershipConflictError
				if !errors.As(err, &conflict) {
					t.Fatalf("Apply: err = %v, want an OwnershipConflictError", err)
				}
				want := &objects.OwnershipConflictError{Release: "echo", Conflicts: []objects.Conflict{*tt.wantConflict}}
				if diff := cmp.Diff(want, conflict); diff != "" {
					t.Errorf("conflict (-want +got):\n%s", diff)
				}
				cm := cluster.object("configmaps", "echo")
				if cm.GetAnnotations()[helmReleaseName] != tt.owner || cm.Object["data"].(map[string]any)["greeting"] != "by-hand" || cluster.patches != 0 {
					t.Errorf("refused object changed: %v (%d patches)", cm.Object, cluster.patches)
				}
				if _, err := env.store.Last("echo"); err == nil {
					t.Error("a release was recorded although Apply refused")
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			// An install over an existing object is not fresh: the object
			// may differ from the manifest, so it is checked for drift.
			if out.Revision != 1 || out.HistoryLost != tt.wantLost || out.Fresh {
				t.Errorf("outcome = %+v, want revision 1, history lost %v, not fresh", out, tt.wantLost)
			}
			cm := cluster.object("configmaps", "echo")
			if cm.GetAnnotations()[helmReleaseName] != "echo" || cm.Object["data"].(map[string]any)["greeting"] != "hello" {
				t.Errorf("adopted object = %v, want owned by echo with greeting hello", cm.Object)
			}
		})
	}
}

func TestForeignReleaseErrorMessage(t *testing.T) {
	err := &ForeignReleaseError{Release: "delta", Namespace: "ns", Revision: 4, State: "deployed"}
	want := `release "delta" in namespace "ns" (revision 4, deployed) was not created by addon-operator ` +
		`(no label addon-operator.io/managed-by=addon-operator), not taken: remove or rename that release, ` +
		`or, when it is this module's release from an earlier addon-operator, start with --adopt-unlabeled-releases`
	if got := err.Error(); got != want {
		t.Errorf("message:\n got %s\nwant %s", got, want)
	}
}

// foreignRelease records a deployed revision 1 of release name as plain
// Helm would: without the operator's labels.
func foreignRelease(t *testing.T, env *testEnv, name string) {
	t.Helper()
	rel := &release.Release{
		Name: name, Namespace: testNamespace, Version: 1,
		Info:     &release.Info{Status: release.StatusDeployed, FirstDeployed: helmtime.Now(), LastDeployed: helmtime.Now()},
		Chart:    &chart.Chart{Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: "1.0.0"}},
		Manifest: "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: echo\n",
	}
	if err := env.store.Create(rel); err != nil {
		t.Fatal(err)
	}
}

func TestApplyRefusesForeignRelease(t *testing.T) {
	env := newTestEnv(t)
	foreignRelease(t, env, "echo")
	dir := echoChart(t, "one")

	_, err := env.client.Apply(t.Context(), echoRelease(dir, "hello"))
	var foreign *ForeignReleaseError
	if !errors.As(err, &foreign) {
		t.Fatalf("Apply over a foreign release: err = %v, want a ForeignReleaseError", err)
	}
	want := &ForeignReleaseError{Release: "echo", Namespace: testNamespace, Revision: 1, State: "deployed"}
	if diff := cmp.Diff(want, foreign); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if last, err := env.store.Last("echo"); err != nil || last.Version != 1 {
		t.Errorf("last revision = %v, %v; want the foreign revision 1 untouched", last, err)
	}

	env.client.adoptReleases = true
	out, err := env.client.Apply(t.Context(), echoRelease(dir, "hello"))
	if err != nil {
		t.Fatalf("Apply with adoption: %v", err)
	}
	if out.Revision != 2 || out.Reason != ReasonChecksumChanged {
		t.Errorf("outcome = %+v, want revision 2 upgraded for %s", out, ReasonChecksumChanged)
	}
	status, err := env.client.Status(t.Context(), "echo")
	if err != nil || !status.Owned {
		t.Errorf("Status after adoption = %+v, %v; want owned", status, err)
	}
	env.client.adoptReleases = false
	if out, err := env.client.Apply(t.Context(), echoRelease(dir, "hello")); err != nil || !out.Skipped {
		t.Errorf("Apply after adoption without the switch = %+v, %v; want skipped: the release is ours now", out, err)
	}
}
