package helm

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/helm/objects"
)

const (
	annotationReleaseName = "meta.helm.sh/release-name"
	// handMade is the greeting of the ConfigMap echo that the tests create
	// behind Helm's back.
	handMade = "hand-made"
)

// createEcho creates ConfigMap echo as kubectl would.
func createEcho(t *testing.T, ns string) {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "echo"},
		Data:       map[string]string{"greeting": handMade},
	}
	if _, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// wantConflict checks that err refuses release for ConfigMap echo owned
// by owner.
func wantConflict(t *testing.T, err error, release, ns string, owner objects.Owner) {
	t.Helper()
	var conflict *objects.OwnershipConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("apply %s: err = %v, want an OwnershipConflictError", release, err)
	}
	want := &objects.OwnershipConflictError{Release: release, Conflicts: []objects.Conflict{{Object: "ConfigMap " + ns + "/echo", Owner: owner}}}
	if diff := cmp.Diff(want, conflict); diff != "" {
		t.Errorf("conflict (-want +got):\n%s", diff)
	}
}

func TestObjectOfNoReleaseIsNotTaken(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)
	createEcho(t, ns)

	_, err := c.Apply(t.Context(), echo("hello"))
	wantConflict(t, err, "echo", ns, objects.Owner{})
	cm := configMap(t, ns, "echo")
	if cm.Data["greeting"] != handMade || len(cm.Annotations) != 0 || len(cm.Labels) != 0 {
		t.Errorf("refused ConfigMap changed: data %v, annotations %v, labels %v", cm.Data, cm.Annotations, cm.Labels)
	}
	if _, err := c.Status(t.Context(), "echo"); !errors.Is(err, helm.ErrNotFound) {
		t.Errorf("Status after the refusal: err = %v, want no release", err)
	}

	// The user hands it over.
	cm.Annotations = map[string]string{objects.AnnotationAdopt: "true"}
	if _, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := apply(t, c, echo("hello")); out.Revision != 1 {
		t.Errorf("apply after the annotation = %+v, want revision 1", out)
	}
	cm = configMap(t, ns, "echo")
	if cm.Data["greeting"] != "hello" || cm.Annotations[annotationReleaseName] != "echo" {
		t.Errorf("adopted ConfigMap data %v annotations %v, want greeting hello owned by release echo", cm.Data, cm.Annotations)
	}
	checkObjectLabels(t, "adopted ConfigMap", cm.Labels)
}

func TestModuleAllowedToAdoptTakesObjectOfNoRelease(t *testing.T) {
	ns := cp.Namespace(t)
	c, err := helm.New(helm.Options{RESTConfig: cp.Config, Namespace: ns, Timeout: time.Minute, AdoptObjects: []string{"echo"}})
	if err != nil {
		t.Fatal(err)
	}
	createEcho(t, ns)
	apply(t, c, echo("hello"))
	if cm := configMap(t, ns, "echo"); cm.Data["greeting"] != "hello" || cm.Annotations[annotationReleaseName] != "echo" {
		t.Errorf("ConfigMap data %v annotations %v, want greeting hello owned by release echo", cm.Data, cm.Annotations)
	}
}

// sharingChart writes a module "other" that renders ConfigMap other, and
// ConfigMap echo too when .Values.other.share.
func sharingChart(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "templates/cm.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: other
{{- if .Values.other.share }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: echo
data:
  greeting: from-other
{{- end }}
`)
	return dir
}

func otherRelease(dir string, share bool) helm.Release {
	return helm.Release{Name: "other", ChartDir: dir, Values: map[string]any{"global": map[string]any{}, "other": map[string]any{"share": share}}}
}

func TestObjectOfAnotherReleaseIsNotTaken(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)
	apply(t, c, echo("hello"))
	dir := sharingChart(t)
	apply(t, c, otherRelease(dir, false))

	_, err := c.Apply(t.Context(), otherRelease(dir, true))
	wantConflict(t, err, "other", ns, objects.Owner{Release: "echo", Namespace: ns})
	// "true" hands over objects of no release only.
	cm := configMap(t, ns, "echo")
	cm.Annotations[objects.AnnotationAdopt] = "true"
	if _, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Apply(t.Context(), otherRelease(dir, true))
	wantConflict(t, err, "other", ns, objects.Owner{Release: "echo", Namespace: ns})

	// other stops rendering it: echo's object stays, echo's. The refusals
	// recorded no revision, so other's first one is still in force.
	if out := apply(t, c, otherRelease(dir, false)); !out.Skipped || out.Revision != 1 {
		t.Errorf("apply other without the shared object = %+v, want revision 1, skipped", out)
	}
	cm = configMap(t, ns, "echo")
	if cm.Data["greeting"] != "hello" || cm.Annotations[annotationReleaseName] != "echo" {
		t.Errorf("echo's ConfigMap data %v annotations %v, want greeting hello owned by release echo", cm.Data, cm.Annotations)
	}
	if out := apply(t, c, echo("hello")); !out.Skipped {
		t.Errorf("apply echo = %+v, want skipped: its release is intact", out)
	}
}

// installForeign installs release name with plain Helm, as another tool
// (or an addon-operator that did not label its releases) would: a chart
// rendering ConfigMap echo.
func installForeign(t *testing.T, ns, name string) {
	t.Helper()
	install := action.NewInstall(helmConfig(t, ns))
	install.ReleaseName, install.Namespace = name, ns
	foreign := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: "1.0.0"},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte(
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: echo\ndata:\n  greeting: " + handMade + "\n")}},
	}
	if _, err := install.RunWithContext(t.Context(), foreign, nil); err != nil {
		t.Fatalf("install foreign release: %v", err)
	}
}

func TestForeignReleaseIsRefusedUnlessMigrating(t *testing.T) {
	ns := cp.Namespace(t)
	installForeign(t, ns, "echo")
	c := newClient(t, ns)

	_, err := c.Apply(t.Context(), echo("hello"))
	var foreign *helm.ForeignReleaseError
	if !errors.As(err, &foreign) || foreign.Release != "echo" || foreign.Namespace != ns || foreign.Revision != 1 {
		t.Fatalf("apply over the foreign release: err = %v, want a ForeignReleaseError for echo revision 1", err)
	}
	if status, err := c.Status(t.Context(), "echo"); err != nil || status.Revision != 1 || status.Owned {
		t.Errorf("foreign release after the refusal = %+v, %v; want revision 1, not owned", status, err)
	}
	if got := configMap(t, ns, "echo").Data["greeting"]; got != handMade {
		t.Errorf("foreign ConfigMap greeting = %q, want it untouched", got)
	}

	migrating, err := helm.New(helm.Options{
		RESTConfig: cp.Config, Namespace: ns, Timeout: time.Minute, AdoptUnlabeledReleases: true,
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if out := apply(t, migrating, echo("hello")); out.Revision != 2 || out.Reason != helm.ReasonChecksumChanged {
		t.Errorf("apply with the migration switch = %+v, want revision 2 upgraded", out)
	}
	if status, err := c.Status(t.Context(), "echo"); err != nil || !status.Owned {
		t.Errorf("release after the migration = %+v, %v; want owned", status, err)
	}
	cm := configMap(t, ns, "echo")
	if cm.Data["greeting"] != "hello" {
		t.Errorf("greeting after the migration = %q, want hello", cm.Data["greeting"])
	}
	checkObjectLabels(t, "migrated ConfigMap", cm.Labels)
}

func TestDeletedReleaseRecordIsRestored(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)
	apply(t, c, echo("hello"))
	apply(t, c, echo("bye"))
	before := configMap(t, ns, "echo")

	secrets := cp.Clientset(t).CoreV1().Secrets(ns)
	if err := secrets.DeleteCollection(t.Context(), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "owner=helm,name=echo"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "release records to be deleted", func() error {
		if _, err := c.Status(t.Context(), "echo"); !errors.Is(err, helm.ErrNotFound) {
			return errors.New("release still has records")
		}
		return nil
	})

	out := apply(t, c, echo("bye"))
	if out.Revision != 1 || out.Reason != helm.ReasonNoRelease || !out.HistoryLost {
		t.Errorf("apply after the records were deleted = %+v, want revision 1 installed, history lost", out)
	}
	if after := configMap(t, ns, "echo"); after.UID != before.UID || after.Data["greeting"] != "bye" {
		t.Errorf("ConfigMap after the reinstall: uid %s (was %s), data %v; want the same object, greeting bye", after.UID, before.UID, after.Data)
	}
	checkReleaseSecrets(t, ns, out.Checksum, 1)
}

// writeFile writes content to dir/name, creating its directory.
func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
