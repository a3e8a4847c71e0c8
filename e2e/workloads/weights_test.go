package workloads

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// weightedDeployment is a Deployment of werf.io/weight weight whose Pod
// starts after delay.
func weightedDeployment(name, weight, delay string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
  annotations: {werf.io/weight: "` + weight + `"}
spec:
  replicas: 1
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata:
      labels: {app: ` + name + `}
      annotations: {` + cluster.AnnotationStartDelay + `: "` + delay + `"}
    spec:
      containers: [{name: main, image: registry.example/` + name + `:1}]
`
}

// order records, by the store's revision (the resourceVersion etcd gives
// every write, one counter for all kinds), when each Deployment of a
// namespace first became Available and when each ConfigMap was created.
type order struct {
	mu        sync.Mutex
	available map[string]int64
	created   map[string]int64
}

// watchOrder starts recording the order of ns's Deployments and
// ConfigMaps until the test ends.
func watchOrder(t *testing.T, h *operatortest.Harness, ns string) *order {
	t.Helper()
	o := &order{available: map[string]int64{}, created: map[string]int64{}}
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	deployments, err := h.Client.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	configMaps, err := h.Client.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(deployments.Stop)
	t.Cleanup(configMaps.Stop)
	go record(deployments, func(ev watch.Event) {
		d, ok := ev.Object.(*appsv1.Deployment)
		if !ok {
			return
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				o.note(o.available, d.Name, d.ResourceVersion)
			}
		}
	})
	go record(configMaps, func(ev watch.Event) {
		if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Added {
			o.note(o.created, cm.Name, cm.ResourceVersion)
		}
	})
	return o
}

func record(w watch.Interface, fn func(watch.Event)) {
	for ev := range w.ResultChan() {
		fn(ev)
	}
}

// note keeps the first revision of name in m.
func (o *order) note(m map[string]int64, name, rv string) {
	v, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := m[name]; !ok {
		m[name] = v
	}
}

// before checks that Deployment dep was Available before ConfigMap cm
// was created.
func (o *order) before(t *testing.T, h *operatortest.Harness, dep, cm string) {
	t.Helper()
	h.Poll("ConfigMap "+cm+" and Deployment "+dep+" recorded", func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		return o.available[dep] > 0 && o.created[cm] > 0
	})
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.available[dep] >= o.created[cm] {
		t.Errorf("ConfigMap %s created at revision %d, before Deployment %s was Available (revision %d)", cm, o.created[cm], dep, o.available[dep])
	}
}

// A chart whose Deployment has werf.io/weight -10 and whose ConfigMap has
// the default weight 0 is installed in that order: the ConfigMap is
// created only once the Deployment is Available. An upgrade that adds a
// Deployment of weight -5 and a ConfigMap of weight 0 creates them in the
// same order; the release's Helm revisions hold every object. A weight
// that is not an integer fails the module, naming the object and the
// annotation.
func TestWeightsOrderCreation(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	modules := filepath.Join(t.TempDir(), "modules")
	writeFiles(t, modules, map[string]string{
		"weighted/values.yaml":              "weighted:\n  upgrade: false\n",
		"weighted/templates/db.yaml":        weightedDeployment("db", "-10", "4s"),
		"weighted/templates/after.yaml":     configMap("after"),
		"weighted/templates/upgrade.yaml":   "{{- if .Values.weighted.upgrade }}\n" + weightedDeployment("cache", "-5", "4s") + "---\n" + configMap("after-upgrade") + "{{- end }}\n",
		"weight-invalid/templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: invalid\n  annotations: {werf.io/weight: early}\n",
		"weight-invalid/templates/cm2.yaml": configMap("fine"),
	})
	o := watchOrder(t, h, h.Namespace)
	h.SetConfig(map[string]string{"weightedEnabled": "true", "weightInvalidEnabled": "true"})
	h.Start(operatortest.Options{ModulesDir: modules})

	h.WaitModule("weighted", "Ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
	o.before(t, h, "db", "after")
	if rev := h.ReleaseRevision("weighted"); rev != 1 {
		t.Errorf("release weighted at revision %d after its install, want 1", rev)
	}

	h.SetConfig(map[string]string{"weightedEnabled": "true", "weightInvalidEnabled": "true", "weighted": "upgrade: true\n"})
	h.WaitModule("weighted", "Ready after the upgrade", func(m status.ModuleStatus) bool {
		return m.Phase == status.PhaseReady && m.Revision == 2
	})
	o.before(t, h, "cache", "after-upgrade")

	invalid := h.WaitModule("weight-invalid", "failed", operatortest.ErrorContains(`ConfigMap invalid: annotation werf.io/weight: "early" is not an integer`))
	if invalid.Phase != status.PhaseFailed {
		t.Errorf("weight-invalid is %s, want Failed", invalid.Phase)
	}
	if _, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), "fine", metav1.GetOptions{}); err == nil {
		t.Error("ConfigMap fine of the module with an invalid weight was created")
	}
}

// squatter returns a client of a user who may only create and read
// Deployments in ns.
func squatter(t *testing.T, h *operatortest.Harness, ns string) kubernetes.Interface {
	t.Helper()
	ctx := t.Context()
	const user = "weight-squatter"
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create", "get"}}}}
	if _, err := h.Client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	if _, err := h.Client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.Poll(user+" may create Deployments", func() bool {
		_, err := client.AppsV1().Deployments(ns).Get(ctx, "none", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	return client
}

// A user who may create Deployments in the module's namespace, and
// creates the object of a lower weight first, one that never becomes
// ready, neither holds the module until the readiness timeout nor has
// the object taken: the module fails at once with Helm's ownership
// conflict naming it, the higher weight's ConfigMap is not created, and
// the user's Deployment is left without the release's ownership.
func TestWeightsSquattedObjectIsNotAwaited(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	modules := filepath.Join(t.TempDir(), "modules")
	writeFiles(t, modules, map[string]string{
		"squatted/templates/db.yaml":    weightedDeployment("db", "-10", "1s"),
		"squatted/templates/after.yaml": configMap("after"),
	})
	user := squatter(t, h, h.Namespace)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "squat"}},
			Template: podTemplate("squat", corev1.RestartPolicyAlways, map[string]string{cluster.AnnotationStartDelay: "24h"}),
		},
	}
	if _, err := user.AppsV1().Deployments(h.Namespace).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("squatter creates Deployment db: %v", err)
	}
	h.SetConfig(map[string]string{"squattedEnabled": "true"})
	h.Start(operatortest.Options{ModulesDir: modules, Args: []string{"--readiness-timeout=30m"}})

	h.WaitModule("squatted", "failed on the ownership conflict", operatortest.ErrorContains("does not own", "db"))
	if _, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), "after", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap after of weight 0: %v, want not found", err)
	}
	got, err := h.Client.AppsV1().Deployments(h.Namespace).Get(t.Context(), "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if owner := got.Annotations["meta.helm.sh/release-name"]; owner != "" || got.Spec.Selector.MatchLabels["app"] != "squat" {
		t.Errorf("squatter's Deployment changed: release %q, selector %v", owner, got.Spec.Selector.MatchLabels)
	}
}
