package drift

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDriftPartial(t *testing.T) {
	manifest := `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, labels: {app.kubernetes.io/name: d, tier: web}},
		spec: {replicas: 2, template: {spec: {containers: [{name: app, image: a}, {name: b, image: b}]}}}}`
	tests := []struct {
		name    string
		ref     Object
		fields  []string
		want    string
		wantErr bool
	}{
		{name: "a scalar and a label", ref: Object{Name: "d", Namespace: "ns"},
			fields: []string{"spec.replicas", `metadata.labels["app.kubernetes.io/name"]`},
			want: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, namespace: ns, labels: {app.kubernetes.io/name: d}},
				spec: {replicas: 2}}`},
		{name: "a list goes whole", ref: Object{Name: "d"},
			fields: []string{"spec.template.spec.containers[1].image", "spec.template.spec.containers[0].image"},
			want: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d},
				spec: {template: {spec: {containers: [{name: app, image: a}, {name: b, image: b}]}}}}`},
		{name: "a field the manifest does not set", ref: Object{Name: "d"}, fields: []string{"spec.paused"}, wantErr: true},
		{name: "a path through a scalar", ref: Object{Name: "d"}, fields: []string{"spec.replicas.x"}, wantErr: true},
		{name: "an unparsable path", ref: Object{Name: "d"}, fields: []string{"spec..x"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := driftPartial(testObject(t, manifest), tt.ref, tt.fields)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if d := cmp.Diff(testObject(t, tt.want), got); d != "" {
				t.Errorf("partial object (-want +got):\n%s", d)
			}
		})
	}
}
