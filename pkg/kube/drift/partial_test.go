package drift

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func TestDriftPartial(t *testing.T) {
	manifest := `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, labels: {app.kubernetes.io/name: d, tier: web}},
		spec: {replicas: 2, template: {spec: {containers: [{name: app, image: a}, {name: b, image: b}]}}}}`
	containers := fieldpath.MakePathOrDie("spec", "template", "spec", "containers")
	tests := []struct {
		name    string
		ref     Object
		paths   []fieldpath.Path
		want    string
		wantErr bool
	}{
		{name: "a scalar and a label", ref: Object{Name: "d", Namespace: "ns"},
			paths: []fieldpath.Path{fieldpath.MakePathOrDie("spec", "replicas"), fieldpath.MakePathOrDie("metadata", "labels", "app.kubernetes.io/name")},
			want: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, namespace: ns, labels: {app.kubernetes.io/name: d}},
				spec: {replicas: 2}}`},
		{name: "a list goes whole", ref: Object{Name: "d"},
			paths: []fieldpath.Path{
				append(containers.Copy(), fieldpath.KeyElementByFields("name", "b"), fieldpath.FieldNameElement("image")),
				append(containers.Copy(), fieldpath.KeyElementByFields("name", "app"), fieldpath.FieldNameElement("image")),
			},
			want: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d},
				spec: {template: {spec: {containers: [{name: app, image: a}, {name: b, image: b}]}}}}`},
		{name: "a field the manifest does not set", ref: Object{Name: "d"}, paths: []fieldpath.Path{fieldpath.MakePathOrDie("spec", "paused")}, wantErr: true},
		{name: "a path through a scalar", ref: Object{Name: "d"}, paths: []fieldpath.Path{fieldpath.MakePathOrDie("spec", "replicas", "x")}, wantErr: true},
		{name: "a list item at the top", ref: Object{Name: "d"}, paths: []fieldpath.Path{fieldpath.MakePathOrDie(0)}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := driftPartial(testObject(t, manifest), tt.ref, tt.paths)
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
