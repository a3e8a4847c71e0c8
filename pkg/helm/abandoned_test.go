package helm

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/release"

	"github.com/addon-operator/addon-operator/pkg/helm/revisions"
)

// genChart is a module whose ConfigMap gen-<generation> is replaced by
// another on every generation, as in the chaos test, plus one ConfigMap per
// name in .Values.echo.extra.
func genChart(t *testing.T) string {
	t.Helper()
	return writeFiles(t, map[string]string{
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: echo
data:
  generation: {{ .Values.echo.generation | quote }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: echo-gen-{{ .Values.echo.generation }}
{{- range .Values.echo.extra }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ . }}
{{- end }}
`,
	})
}

func genRelease(dir, generation string, extra ...string) Release {
	return Release{
		Name:     "echo",
		ChartDir: dir,
		Values: map[string]any{
			"global": map[string]any{},
			"echo":   map[string]any{"generation": generation, "extra": extra},
		},
	}
}

// interruptUpgrade leaves release echo as an upgrade to r killed after it
// created its objects would: a new revision in state, rendered from r, and
// its objects in the cluster, annotated for echo except the ones in foreign
// (name -> owning release, "" for none). An object named "kept" carries
// helm.sh/resource-policy: keep.
func interruptUpgrade(t *testing.T, env *testEnv, cluster *fakeCluster, r Release, state release.Status, foreign map[string]string) {
	t.Helper()
	rendered, err := env.client.Render(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	last, err := env.store.Last("echo")
	if err != nil {
		t.Fatal(err)
	}
	next := *last
	info := *last.Info
	next.Info, next.Version, next.Manifest = &info, last.Version+1, rendered.Manifest
	next.SetStatus(state, "interrupted by the test")
	if err := env.store.Create(&next); err != nil {
		t.Fatal(err)
	}
	cluster.apply(t, rendered.Manifest, "echo", nil)
	for name, owner := range foreign {
		cluster.apply(t, "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: "+name+"\n", owner, nil)
	}
	cluster.apply(t, "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: kept\n", "echo", map[string]string{"helm.sh/resource-policy": "keep"})
}

func TestApplyDeletesObjectsOfInterruptedRevisions(t *testing.T) {
	tests := []struct {
		name          string
		state         release.Status
		wantRecovered bool
	}{
		{name: "pending upgrade", state: release.StatusPendingUpgrade, wantRecovered: true},
		{name: "failed upgrade", state: release.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, cluster := newTestEnv(t), newFakeCluster()
			env.kube = cluster
			dir := genChart(t)
			if _, err := env.client.Apply(t.Context(), genRelease(dir, "1")); err != nil {
				t.Fatalf("install: %v", err)
			}
			interruptUpgrade(t, env, cluster, genRelease(dir, "2", "other-release", "no-release", "kept"),
				tt.state, map[string]string{"other-release": "other", "no-release": ""})

			out, err := env.client.Apply(t.Context(), genRelease(dir, "3"))
			if err != nil {
				t.Fatalf("apply after interruption: %v", err)
			}
			if out.Recovered != tt.wantRecovered || out.Revision != 3 {
				t.Errorf("outcome = %+v, want recovered %v, revision 3", out, tt.wantRecovered)
			}
			want := []string{
				"ConfigMap/echo (echo)",
				"ConfigMap/echo-gen-3 (echo)", // gen-1 deleted by Helm, gen-2 by Apply
				"ConfigMap/kept (echo)",
				"ConfigMap/no-release ()",
				"ConfigMap/other-release (other)",
			}
			if diff := cmp.Diff(want, cluster.inventory()); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyRetriesFailedDeletionOfInterruptedObjects(t *testing.T) {
	env, cluster := newTestEnv(t), newFakeCluster()
	env.kube = cluster
	dir := genChart(t)
	if _, err := env.client.Apply(t.Context(), genRelease(dir, "1")); err != nil {
		t.Fatalf("install: %v", err)
	}
	interruptUpgrade(t, env, cluster, genRelease(dir, "2"), release.StatusPendingUpgrade, nil)

	errDelete := errors.New("delete refused by the test")
	cluster.failDeletes(errDelete)
	if _, err := env.client.Apply(t.Context(), genRelease(dir, "3")); !errors.Is(err, errDelete) {
		t.Fatalf("apply with deletes failing: err = %v, want %v", err, errDelete)
	}
	if status, err := env.client.Status(t.Context(), "echo"); err != nil || status.Revision != 3 || status.State != "failed" {
		t.Errorf("Status = %+v, %v; want revision 3 failed", status, err)
	}

	cluster.failDeletes(nil)
	out, err := env.client.Apply(t.Context(), genRelease(dir, "3"))
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if out.Skipped || out.Reason != ReasonNotDeployed || out.Revision != 4 {
		t.Errorf("retry outcome = %+v, want %s, revision 4", out, ReasonNotDeployed)
	}
	want := []string{"ConfigMap/echo (echo)", "ConfigMap/echo-gen-3 (echo)", "ConfigMap/kept (echo)"}
	if diff := cmp.Diff(want, cluster.inventory()); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}

// TestApplyResumesCleanupAfterAKill: killed after Helm recorded the
// upgrade deployed but before the objects of the interrupted revision were
// deleted, the next Apply deletes them.
func TestApplyResumesCleanupAfterAKill(t *testing.T) {
	env, cluster := newTestEnv(t), newFakeCluster()
	env.kube = cluster
	dir := genChart(t)
	if _, err := env.client.Apply(t.Context(), genRelease(dir, "1")); err != nil {
		t.Fatalf("install: %v", err)
	}
	interruptUpgrade(t, env, cluster, genRelease(dir, "2"), release.StatusPendingUpgrade, nil)

	// The state a kill right after Helm's upgrade leaves: revision 3
	// deployed, still marked, gen-2 still there. (Failing deletes stop
	// Apply at that point; the revision is then set back to deployed.)
	cluster.failDeletes(errors.New("killed"))
	if _, err := env.client.Apply(t.Context(), genRelease(dir, "3")); err == nil {
		t.Fatal("apply with deletes failing succeeded")
	}
	rel, err := env.store.Get("echo", 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := rel.Labels[revisions.LabelCleanup]; got != "2-2" {
		t.Fatalf("revision 3 label %s = %q, want 2-2", revisions.LabelCleanup, got)
	}
	rel.SetStatus(release.StatusDeployed, "upgrade complete")
	if err := env.store.Update(rel); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cluster.inventory(), "ConfigMap/echo-gen-2 (echo)") {
		t.Fatalf("setup: gen-2 is gone already: %v", cluster.inventory())
	}

	// The next change upgrades from revision 3, whose manifest does not
	// hold gen-2: Helm alone would leave it.
	cluster.failDeletes(nil)
	out, err := env.client.Apply(t.Context(), genRelease(dir, "4"))
	if err != nil {
		t.Fatalf("apply after the kill: %v", err)
	}
	if out.Revision != 4 || out.Recovered {
		t.Errorf("outcome = %+v, want revision 4, not recovered", out)
	}
	want := []string{"ConfigMap/echo (echo)", "ConfigMap/echo-gen-4 (echo)", "ConfigMap/kept (echo)"}
	if diff := cmp.Diff(want, cluster.inventory()); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	for _, version := range []int{3, 4} {
		rel, err := env.store.Get("echo", version)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := rel.Labels[revisions.LabelCleanup]; ok {
			t.Errorf("label %s=%q still on revision %d", revisions.LabelCleanup, v, version)
		}
	}
}
