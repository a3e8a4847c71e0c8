package records

import (
	"encoding/json"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	helmtime "helm.sh/helm/v3/pkg/time"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func recordRelease(version int, status release.Status) *release.Release {
	now := helmtime.Unix(1700000000, 0)
	return &release.Release{
		Name: "echo", Namespace: "ns", Version: version,
		Info:     &release.Info{Status: status, FirstDeployed: now, LastDeployed: now, Description: "Install complete"},
		Chart:    &chart.Chart{Metadata: &chart.Metadata{Name: "echo", Version: "0.1.0", APIVersion: "v2"}},
		Config:   map[string]any{"greeting": "hello"},
		Manifest: "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: echo\n",
		Labels:   map[string]string{"addon-operator.io/managed-by": "addon-operator", "addon-operator.io/checksum": "abc"},
	}
}

// The records Secrets writes are the ones Helm's own driver writes:
// Helm reads them back as the same release, and they carry the same type
// and labels.
func TestSecretRecordsWriteWhatHelmWrites(t *testing.T) {
	cs := fake.NewClientset()
	secrets := cs.CoreV1().Secrets("ns")
	helms := driver.NewSecrets(secrets)
	ours := NewSecrets(helms, secrets, func() time.Time { return time.Unix(1700000100, 0) })

	rel := recordRelease(1, release.StatusPendingInstall)
	if err := ours.Create("sh.helm.release.v1.echo.v1", rel); err != nil {
		t.Fatal(err)
	}
	if err := helms.Create("sh.helm.release.v1.theirs.v1", rel); err != nil {
		t.Fatal(err)
	}
	if err := ours.Create("sh.helm.release.v1.echo.v1", rel); !errors.Is(err, driver.ErrReleaseExists) {
		t.Errorf("second create: err = %v, want ErrReleaseExists", err)
	}
	rel.Info.Status = release.StatusDeployed
	if err := ours.Update("sh.helm.release.v1.echo.v1", rel); err != nil {
		t.Fatal(err)
	}
	if err := helms.Update("sh.helm.release.v1.theirs.v1", rel); err != nil {
		t.Fatal(err)
	}

	got, err := helms.Get("sh.helm.release.v1.echo.v1")
	if err != nil {
		t.Fatalf("Helm's driver reads our record: %v", err)
	}
	want, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	read, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(read)); diff != "" {
		t.Errorf("release read back (-written +read):\n%s", diff)
	}
	mine, err := secrets.Get(t.Context(), "sh.helm.release.v1.echo.v1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := secrets.Get(t.Context(), "sh.helm.release.v1.theirs.v1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mine.Type != theirs.Type {
		t.Errorf("type %q, Helm's %q", mine.Type, theirs.Type)
	}
	// The fake keeps what Update sent: modifiedAt, not createdAt, as in a
	// cluster.
	if mine.Labels["modifiedAt"] != "1700000100" {
		t.Errorf("modifiedAt = %q, want the writer's clock", mine.Labels["modifiedAt"])
	}
	strip := func(l map[string]string) map[string]string {
		l = maps.Clone(l)
		delete(l, "modifiedAt")
		delete(l, "createdAt")
		return l
	}
	if diff := cmp.Diff(strip(theirs.Labels), strip(mine.Labels)); diff != "" {
		t.Errorf("labels (-Helm's +ours):\n%s", diff)
	}
	if _, ok := theirs.Labels["modifiedAt"]; !ok {
		t.Errorf("Helm's record has no modifiedAt: %v; the comparison assumes it", theirs.Labels)
	}
}
