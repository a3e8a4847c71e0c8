package readiness

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const createdManifest = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa
---
apiVersion: v1
kind: Service
metadata:
  name: headless
spec:
  clusterIP: None
---
apiVersion: v1
kind: Service
metadata:
  name: lb
  namespace: edge
spec:
  type: LoadBalancer
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: x
---
apiVersion: example.com/v1
kind: ServiceAccount
metadata:
  name: lookalike
`

func TestObjectsFromManifest(t *testing.T) {
	objects := func(created ...bool) []Object {
		return []Object{
			{APIVersion: "v1", Kind: "ServiceAccount", Name: "sa", ReadyAsCreated: created[0]},
			{APIVersion: "v1", Kind: "Service", Name: "headless", ReadyAsCreated: created[1]},
			{APIVersion: "v1", Kind: "Service", Namespace: "edge", Name: "lb"},
			{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding", Name: "crb", ReadyAsCreated: created[2]},
			{APIVersion: "apps/v1", Kind: "Deployment", Name: "x"},
			{APIVersion: "example.com/v1", Kind: "ServiceAccount", Name: "lookalike"},
		}
	}
	tests := []struct {
		name    string
		created bool
		want    []Object
	}{
		{"just created: ready-on-creation kinds marked", true, objects(true, true, true)},
		{"not created by this operation: every object read", false, objects(false, false, false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ObjectsFromManifest(createdManifest, tt.created)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckDoesNotReadObjectsReadyAsCreated(t *testing.T) {
	c, dyn := newChecker(t, deployment(3))
	objects := []Object{
		{APIVersion: "v1", Kind: "ServiceAccount", Name: "sa", ReadyAsCreated: true},
		{APIVersion: "v1", Kind: "Service", Name: "s", ReadyAsCreated: true},
		theDeployment(),
	}
	p, err := c.Check(t.Context(), "web", objects)
	if err != nil || p != nil {
		t.Fatalf("Check = %v, %v; want ready", p, err)
	}
	actions := dyn.Actions()
	read := make([]string, 0, len(actions))
	for _, a := range actions {
		read = append(read, a.GetVerb()+" "+a.GetResource().Resource)
	}
	if diff := cmp.Diff([]string{"get deployments"}, read); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
