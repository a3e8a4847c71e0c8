package helm

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/helm/revisions"
)

// remedyChart writes a chart whose ConfigMap the API server rejects when
// broken is set, and which has a post-rollback hook, and returns its
// directory.
func remedyChart(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: remedy\nversion: 0.1.0\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: remedy
  {{- if .Values.remedy.broken }}
  labels: {"not a valid key!": x}
  {{- end }}
data: {note: {{ .Values.remedy.note | quote }}}
`,
		"templates/hook.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: remedy-rolled-back
  annotations: {helm.sh/hook: post-rollback}
`,
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func remedyRelease(dir, note string, broken bool) helm.Release {
	return helm.Release{Name: "remedy", ChartDir: dir, Values: map[string]any{
		"global": map[string]any{}, "remedy": map[string]any{"note": note, "broken": broken},
	}}
}

func TestRemediateFailedUpgradeRollsBack(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)
	dir := remedyChart(t)
	apply(t, c, remedyRelease(dir, "one", false))
	if _, err := c.Apply(t.Context(), remedyRelease(dir, "two", true)); err == nil {
		t.Fatal("upgrade with an invalid label succeeded")
	}
	got, err := c.Remediate(t.Context(), "remedy", revisions.RemediationRollback)
	if err != nil {
		t.Fatalf("Remediate: %v", err)
	}
	if d := cmp.Diff(revisions.Remedy{Action: "rollback", Failed: 2, Target: 1}, got); d != "" {
		t.Errorf("remedy (-want +got):\n%s", d)
	}
	st, err := c.Status(t.Context(), "remedy")
	if err != nil || st.Revision != 3 || st.State != "deployed" || !st.Owned {
		t.Errorf("status after the rollback = %+v, %v; want revision 3 deployed and ours", st, err)
	}
	if note := configMap(t, ns, "remedy").Data["note"]; note != "one" {
		t.Errorf("note after the rollback = %q, want the deployed revision's one", note)
	}
	configMap(t, ns, "remedy-rolled-back") // the chart's rollback hook ran

	// The new revision is tried again: not skipped, since the checksum of
	// the revision rolled back to is not the new render's.
	out := apply(t, c, remedyRelease(dir, "three", false))
	if out.Skipped || out.Revision != 4 {
		t.Errorf("apply after the rollback = %+v, want revision 4 deployed", out)
	}
	if got, err := c.Remediate(t.Context(), "remedy", revisions.RemediationRollback); err != nil || got.Action != "" {
		t.Errorf("Remediate of a deployed release = %+v, %v; want nothing done", got, err)
	}
}

func TestRemediateFailedInstallUninstalls(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)
	dir := remedyChart(t)
	if _, err := c.Apply(t.Context(), remedyRelease(dir, "one", true)); err == nil {
		t.Fatal("install with an invalid label succeeded")
	}
	got, err := c.Remediate(t.Context(), "remedy", revisions.RemediationRollback)
	if err != nil || got.Action != "uninstall" || got.Failed != 1 {
		t.Fatalf("Remediate = %+v, %v; want the failed install uninstalled", got, err)
	}
	if _, err := c.Status(t.Context(), "remedy"); !errors.Is(err, helm.ErrNotFound) {
		t.Errorf("status after the uninstall: %v, want ErrNotFound", err)
	}
	if out := apply(t, c, remedyRelease(dir, "one", false)); out.Revision != 1 {
		t.Errorf("install after the uninstall = revision %d, want 1", out.Revision)
	}
}
