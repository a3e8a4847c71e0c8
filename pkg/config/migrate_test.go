package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

func TestModuleConfigsRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		data  map[string]string
		names []string // the objects, in order
	}{
		{"empty", nil, nil},
		{"global only", map[string]string{"global": "a: 1\nb: {c: [x, y]}\n"}, []string{"global"}},
		{"sections and flags", map[string]string{
			"global": "x: true\n", "certManager": "replicas: 2\nissuer: {name: letsencrypt}\n", "certManagerEnabled": "true",
			"ingressNginxEnabled": "false", "prometheus": "retention: 7d\n",
		}, []string{"global", "cert-manager", "ingress-nginx", "prometheus"}},
		{"empty section dropped, maintenance kept", map[string]string{
			"echo": "{}", "echoEnabled": "true", "echoMaintenance": "NoResourceReconciliation", "idle": "",
			"frozenMaintenance": "NoResourceReconciliation",
		}, []string{"echo", "frozen"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			objs := ToModuleConfigs(c)
			var names []string
			for i := range objs {
				names = append(names, objs[i].Name)
				// Through the API's representation, as the objects are stored.
				u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&objs[i])
				if err != nil {
					t.Fatal(err)
				}
				var back v1.ModuleConfig
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, &back); err != nil {
					t.Fatal(err)
				}
				objs[i] = back
			}
			if diff := cmp.Diff(tt.names, names); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			got := FromModuleConfigs(objs)
			// Empty sections equal absent ones (Checksum, Diff).
			for k, v := range c.Modules {
				if len(v) == 0 {
					delete(c.Modules, k)
				}
			}
			if diff := cmp.Diff(c, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("config read back (-want +got):\n%s", diff)
			}
			if d := Diff(c, got); d.GlobalChanged || len(d.EnabledChanged) > 0 || len(d.ModulesChanged) > 0 {
				t.Errorf("Diff of the ConfigMap's config and the objects' = %+v, want no change", d)
			}
		})
	}
}
