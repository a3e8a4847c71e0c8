package helm

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/addon-operator/addon-operator/pkg/helm/kubeversion"
)

func TestRenderOfflineClaimsTheBuildsKubeVersion(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v\ndata:\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n",
	})
	r, err := RenderOffline(t.Context(), "ns", Release{Name: "v", ChartDir: dir, Values: map[string]any{}})
	if err != nil {
		t.Fatalf("RenderOffline: %v", err)
	}
	if want := `kube: "` + kubeversion.Default() + `"`; !strings.Contains(r.Manifest, want) {
		t.Errorf("manifest lacks %s:\n%s", want, r.Manifest)
	}
	if kubeversion.Default() == chartutil.DefaultCapabilities.KubeVersion.Version {
		t.Errorf("kubeversion.Default is Helm's default %s", kubeversion.Default())
	}
}
