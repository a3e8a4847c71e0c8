package server

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/server"
)

// manifestTemplate is a module's rendered manifest; %[1]s is the test's
// namespace. Objects without a namespace live in the operator's namespace.
const manifestTemplate = `# Source: web/templates/same.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: same
data:
  a: "1"
---
# Source: web/templates/changed.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: changed
  namespace: %[1]s
  labels: {module: web}
data:
  a: "2"
---
# Source: web/templates/secret.yaml
apiVersion: v1
kind: Secret
metadata:
  name: token
stringData:
  token: s3cret
---
# Source: web/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
---
# Source: web/templates/missing.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: missing
---
# Source: web/templates/widget.yaml
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
`

// TestRenderDiffAgainstCluster renders a module through the debug socket
// and diffs it against live objects, as module render --diff does: objects
// as the API server stores them (uid, managedFields, defaults, status)
// match their manifest, a changed one shows its change, a missing one and
// one of an unserved kind are to be created.
func TestRenderDiffAgainstCluster(t *testing.T) {
	ns := cp.Namespace(t)
	ctx := t.Context()
	createLive(t, ns)

	r := runServer(t, &source{manifest: fmt.Sprintf(manifestTemplate, ns)})
	rendered, err := server.NewSocketClient(r.socket).Render(ctx, "ingress-nginx")
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	got, err := server.Cluster{Dynamic: dyn, Kinds: kube.NewDiscovery(disc, 0, nil).Resolver(), Namespace: ns}.Diff(ctx, rendered.Manifest)
	if err != nil {
		t.Fatal(err)
	}

	ref := func(kind, name string) string { return kind + "/" + ns + "/" + name }
	want := []server.ObjectDiff{
		{Object: ref("ConfigMap", "same"), Action: server.ActionNone},
		{Object: ref("ConfigMap", "changed"), Action: server.ActionUpdate, Diff: fmt.Sprintf(`--- %[1]s (live)
+++ %[1]s (rendered)
@@ -1,6 +1,6 @@
 apiVersion: v1
 data:
-  a: "1"
+  a: "2"
 kind: ConfigMap
 metadata:
   labels:
`, ref("ConfigMap", "changed"))},
		{Object: ref("Secret", "token"), Action: server.ActionNone},
		{Object: ref("Deployment", "web"), Action: server.ActionNone},
		{Object: ref("ConfigMap", "missing"), Action: server.ActionCreate, Diff: fmt.Sprintf(`--- %[1]s (not in the cluster)
+++ %[1]s (rendered)
@@ -0,0 +1,4 @@
+apiVersion: v1
+kind: ConfigMap
+metadata:
+  name: missing
`, ref("ConfigMap", "missing"))},
		{Object: "Widget/w", Action: server.ActionCreate, Diff: `--- Widget/w (not in the cluster)
+++ Widget/w (rendered)
@@ -0,0 +1,4 @@
+apiVersion: example.com/v1
+kind: Widget
+metadata:
+  name: w
`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// createLive creates the live objects of TestRenderDiffAgainstCluster.
func createLive(t *testing.T, ns string) {
	t.Helper()
	client := cp.Clientset(t)
	ctx := t.Context()
	cms := client.CoreV1().ConfigMaps(ns)
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "same"}, Data: map[string]string{"a": "1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "changed", Labels: map[string]string{"module": "web", "added-by": "someone"}}, Data: map[string]string{"a": "1"}},
	} {
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token"}, StringData: map[string]string{"token": "s3cret"}}
	if _, err := client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
