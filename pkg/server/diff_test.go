package server

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// obj parses one YAML object.
func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const renderedDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {addon-operator.io/managed-by: addon-operator, module: web}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.27
`

// liveDeployment is renderedDeployment as the API server returns it:
// server metadata, defaults, status, and Helm's own labels and annotations.
const liveDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
  uid: 0b6c
  resourceVersion: "812"
  generation: 3
  creationTimestamp: "2026-05-04T10:30:00Z"
  managedFields: [{manager: helm, operation: Update}]
  labels: {addon-operator.io/managed-by: addon-operator, module: web, app.kubernetes.io/managed-by: Helm}
  annotations: {meta.helm.sh/release-name: web, deployment.kubernetes.io/revision: "3"}
spec:
  replicas: 2
  revisionHistoryLimit: 10
  strategy: {type: RollingUpdate}
  template:
    spec:
      dnsPolicy: ClusterFirst
      containers:
      - name: web
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        terminationMessagePath: /dev/termination-log
status:
  replicas: 2
`

// diffObjectCase is one case of TestDiffObject.
type diffObjectCase struct {
	name       string
	rendered   string
	live       string // "" for a missing object
	wantAction Action
	wantDiff   string
}

func diffObjectCases() []diffObjectCase {
	return []diffObjectCase{
		{
			name:       "server fields, defaults and Helm's labels are not differences",
			rendered:   renderedDeployment,
			live:       liveDeployment,
			wantAction: ActionNone,
		},
		{
			name:       "a changed image",
			rendered:   strings.Replace(renderedDeployment, "nginx:1.27", "nginx:1.28", 1),
			live:       liveDeployment,
			wantAction: ActionUpdate,
			wantDiff: `--- Deployment/apps/web (live)
+++ Deployment/apps/web (rendered)
@@ -10,5 +10,5 @@
   template:
     spec:
       containers:
-      - image: nginx:1.27
+      - image: nginx:1.28
         name: web
`,
		},
		{
			name:       "a label the chart sets was removed in the cluster",
			rendered:   renderedDeployment,
			live:       strings.Replace(liveDeployment, "module: web, ", "", 1),
			wantAction: ActionUpdate,
			wantDiff: `--- Deployment/apps/web (live)
+++ Deployment/apps/web (rendered)
@@ -3,6 +3,7 @@
 metadata:
   labels:
     addon-operator.io/managed-by: addon-operator
+    module: web
   name: web
 spec:
   replicas: 2
`,
		},
		{
			name:       "a container added in the cluster",
			rendered:   renderedDeployment,
			live:       strings.Replace(liveDeployment, "status:", "      - name: debug\n        image: busybox\nstatus:", 1),
			wantAction: ActionUpdate,
			wantDiff: `--- Deployment/apps/web (live)
+++ Deployment/apps/web (rendered)
@@ -12,5 +12,3 @@
       containers:
       - image: nginx:1.27
         name: web
-      - image: busybox
-        name: debug
`,
		},
		{
			name:       "a Secret's stringData is compared as data",
			rendered:   "apiVersion: v1\nkind: Secret\nmetadata: {name: web}\ndata: {a: YQ==}\nstringData: {b: b}\n",
			live:       "apiVersion: v1\nkind: Secret\nmetadata: {name: web}\ndata: {a: YQ==, b: Yg==}\ntype: Opaque\n",
			wantAction: ActionNone,
		},
		{
			name:       "a missing object is to be created",
			rendered:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: \"1\"}\n",
			wantAction: ActionCreate,
			wantDiff: `--- Deployment/apps/web (not in the cluster)
+++ Deployment/apps/web (rendered)
@@ -0,0 +1,6 @@
+apiVersion: v1
+data:
+  a: "1"
+kind: ConfigMap
+metadata:
+  name: web
`,
		},
	}
}

func TestDiffObject(t *testing.T) {
	for _, tt := range diffObjectCases() {
		t.Run(tt.name, func(t *testing.T) {
			var live map[string]any
			if tt.live != "" {
				live = obj(t, tt.live)
			}
			got, err := DiffObject("Deployment/apps/web", obj(t, tt.rendered), live)
			if err != nil {
				t.Fatal(err)
			}
			want := ObjectDiff{Object: "Deployment/apps/web", Action: tt.wantAction, Diff: tt.wantDiff}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\ngot diff:\n%s", diff, got.Diff)
			}
		})
	}
}

func TestClusterDiff(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, meta.RESTScopeRoot)
	live := []runtime.Object{
		&unstructured.Unstructured{Object: obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same, namespace: ops, uid: x}\ndata: {a: \"1\"}\n")},
		&unstructured.Unstructured{Object: obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: elsewhere}\ndata: {a: \"1\"}\n")},
		&unstructured.Unstructured{Object: obj(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\nrules: []\n")},
	}
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), live...)
	manifest := `apiVersion: v1
kind: ConfigMap
metadata: {name: same}
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other, namespace: elsewhere}
data: {a: "2"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules: []
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: ops}
`
	got, err := Cluster{Dynamic: dyn, Kinds: kube.NewResolver(mapper), Namespace: "ops"}.Diff(t.Context(), manifest)
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Object string
		Action Action
	}
	sum := make([]summary, 0, len(got))
	for _, d := range got {
		sum = append(sum, summary{d.Object, d.Action})
	}
	want := []summary{
		{"ConfigMap/ops/same", ActionNone},
		{"ConfigMap/elsewhere/other", ActionUpdate},
		{"ClusterRole/reader", ActionNone},
		{"Widget/ops/w", ActionCreate}, // a kind the cluster does not serve yet
	}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	_, err = Cluster{Dynamic: dyn, Kinds: kube.NewResolver(mapper)}.Diff(t.Context(), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\n")
	if err == nil || !strings.Contains(err.Error(), "ConfigMap/same has no namespace") {
		t.Errorf("no namespace anywhere: %v, want an error naming the object", err)
	}
}
