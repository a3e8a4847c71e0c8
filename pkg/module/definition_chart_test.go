package module

import (
	"testing"
	"time"
)

func TestDefinitionChartFields(t *testing.T) {
	_, set, _, err := discoverTree(t, map[string]node{
		"m/ingress/module.yaml":      file("chartHookTimeout: 2m\nupgradeOnValuesChange: always\n"),
		"m/dns/module.yaml":          file("upgradeOnValuesChange: whenRenderedChanges\n"),
		"m/cert-manager/module.yaml": file("\n"),
	}, Options{ModulesDirs: []string{"m"}, UnnumberedOrder: DefaultUnnumberedOrder})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct {
		timeout time.Duration
		always  bool
	}{"ingress": {2 * time.Minute, true}, "dns": {0, false}, "cert-manager": {0, false}} {
		m, ok := set.Module(name)
		if !ok {
			t.Fatalf("no module %s", name)
		}
		d := m.Definition()
		if d.ChartHookTimeout.Duration != want.timeout || d.UpgradesOnValuesChange() != want.always {
			t.Errorf("%s: chartHookTimeout %s, upgrades on values change %t; want %s, %t",
				name, d.ChartHookTimeout.Duration, d.UpgradesOnValuesChange(), want.timeout, want.always)
		}
	}
}

func TestDefinitionChartFieldErrors(t *testing.T) {
	runErrorCases(t, []errorCase{
		{
			name:    "unknown upgradeOnValuesChange",
			entries: map[string]node{"m/a/module.yaml": file("upgradeOnValuesChange: sometimes\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`$ROOT/m/a/module.yaml: field upgradeOnValuesChange: "sometimes": want always or whenRenderedChanges`},
		},
		{
			name:    "negative chartHookTimeout",
			entries: map[string]node{"m/a/module.yaml": file("chartHookTimeout: -5s\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`$ROOT/m/a/module.yaml`, `"-5s" is negative`},
		},
	})
}
