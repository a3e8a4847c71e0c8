package helm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"

	"github.com/addon-operator/addon-operator/pkg/helm"
)

const (
	selectHelm  = "heritage=Helm"
	selectOurs  = helm.LabelManagedBy + "=" + helm.ManagedByValue
	selectOlder = "heritage=addon-operator"
)

func TestChartLabelsSurviveUpgrade(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)

	for i, greeting := range []string{"hello", "bye"} {
		if out := apply(t, c, echo(greeting)); out.Revision != i+1 {
			t.Fatalf("apply %s: revision %d, want %d", greeting, out.Revision, i+1)
		}
		if diff := cmp.Diff([]string{"echo"}, configMapsLabelled(t, ns, selectHelm)); diff != "" {
			t.Errorf("revision %d: ConfigMaps -l %s (-want +got):\n%s", i+1, selectHelm, diff)
		}
		if diff := cmp.Diff([]string{"echo", "echo-capabilities"}, configMapsLabelled(t, ns, selectOurs)); diff != "" {
			t.Errorf("revision %d: ConfigMaps -l %s (-want +got):\n%s", i+1, selectOurs, diff)
		}
	}
}

// installEarlierVersion installs release echo the way an earlier version
// of the operator left it: owned, its objects labelled heritage=addon-operator
// over the chart's own heritage label.
func installEarlierVersion(t *testing.T, ns string) {
	t.Helper()
	install := action.NewInstall(helmConfig(t, ns))
	install.ReleaseName, install.Namespace = "echo", ns
	install.Labels = map[string]string{helm.LabelManagedBy: helm.ManagedByValue, helm.LabelChecksum: "earlier"}
	meta := "  labels:\n    heritage: addon-operator\n    " + helm.LabelModule + ": echo\ndata:\n  greeting: earlier\n"
	earlier := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "echo", Version: "1.0.0"},
		Templates: []*chart.File{
			{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: echo\n" + meta)},
			{Name: "templates/caps.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: echo-capabilities\n" + meta)},
		},
	}
	if _, err := install.RunWithContext(t.Context(), earlier, nil); err != nil {
		t.Fatalf("install the earlier version's release: %v", err)
	}
}

func TestUpgradeRelabelsObjectsOfEarlierVersion(t *testing.T) {
	ns := cp.Namespace(t)
	installEarlierVersion(t, ns)
	if diff := cmp.Diff([]string{"echo", "echo-capabilities"}, configMapsLabelled(t, ns, selectOlder)); diff != "" {
		t.Fatalf("before the upgrade: ConfigMaps -l %s (-want +got):\n%s", selectOlder, diff)
	}

	if out := apply(t, newClient(t, ns), echo("hello")); out.Revision != 2 || out.Reason != helm.ReasonChecksumChanged {
		t.Fatalf("apply over the earlier version's release = %+v, want revision 2 upgraded", out)
	}
	for _, tt := range []struct {
		selector string
		want     []string
	}{
		{selector: selectOlder, want: []string{}},
		{selector: selectHelm, want: []string{"echo"}},
		{selector: selectOurs, want: []string{"echo", "echo-capabilities"}},
	} {
		if diff := cmp.Diff(tt.want, configMapsLabelled(t, ns, tt.selector)); diff != "" {
			t.Errorf("after the upgrade: ConfigMaps -l %s (-want +got):\n%s", tt.selector, diff)
		}
	}
	checkObjectLabels(t, "upgraded ConfigMap", configMap(t, ns, "echo").Labels)
}
