package workloads

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// externalConfigMap is a ConfigMap with one external dependency, in ns
// when ns is not empty.
func externalConfigMap(name, id, resource, ns string) string {
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  annotations:\n" +
		"    " + id + ".external-dependency.werf.io/resource: " + resource + "\n"
	if ns != "" {
		doc += "    " + id + ".external-dependency.werf.io/namespace: " + ns + "\n"
	}
	return doc
}

// A ConfigMap whose <id>.external-dependency.werf.io/resource names a
// Deployment of another namespace is created only once that Deployment
// exists and is Available: the module's run parks while the Deployment is
// absent, then while its Pod starts. A dependency that never appears fails
// its module after the module's readinessTimeout (3 s here), naming it and
// what was last seen; one whose type no API serves fails at once, whatever
// the timeout. Neither creates the object that waited.
func TestExternalDependencyHoldsCreation(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	other := cp.Namespace(t)
	modules := filepath.Join(t.TempDir(), "modules")
	writeFiles(t, modules, map[string]string{
		"ext/templates/app.yaml":          externalConfigMap("app", "web", "deployments.v1.apps/web", other),
		"ext-missing/module.yaml":         "readinessTimeout: 3s\n",
		"ext-missing/templates/cm.yaml":   externalConfigMap("waits", "db", "secret/absent-db", ""),
		"ext-unknown/templates/cm.yaml":   externalConfigMap("unknown", "w", "widgets.v1.example.com/w", ""),
		"ext-unknown/templates/free.yaml": configMap("unknown-free"),
	})
	deployments := watchOrder(t, h, other)
	configMaps := watchOrder(t, h, h.Namespace)
	h.SetConfig(map[string]string{"extEnabled": "true", "extMissingEnabled": "true", "extUnknownEnabled": "true"})
	h.Start(operatortest.Options{ModulesDir: modules, Args: []string{"--readiness-timeout=5m"}})

	h.WaitLog(1, "objects wait for their external dependencies", map[string]string{"module": "ext"})
	if _, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ConfigMap app while its dependency is absent: %v, want not found", err)
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: podTemplate("web", corev1.RestartPolicyAlways, map[string]string{cluster.AnnotationStartDelay: "3s"}),
		},
	}
	if _, err := h.Client.AppsV1().Deployments(other).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitModule("ext", "Ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
	h.Poll("Deployment web Available and ConfigMap app created", func() bool {
		deployments.mu.Lock()
		defer deployments.mu.Unlock()
		configMaps.mu.Lock()
		defer configMaps.mu.Unlock()
		return deployments.available["web"] > 0 && configMaps.created["app"] > 0
	})
	if web, app := deployments.available["web"], configMaps.created["app"]; web >= app {
		t.Errorf("ConfigMap app created at revision %d, before Deployment %s/web was Available (revision %d)", app, other, web)
	}

	failed := func(parts ...string) func(status.ModuleStatus) bool {
		has := operatortest.ErrorContains(parts...)
		return func(m status.ModuleStatus) bool { return m.Phase == status.PhaseFailed && has(m) }
	}
	h.WaitModule("ext-missing", "failed naming the absent Secret", failed(
		"external dependency Secret "+h.Namespace+"/absent-db (annotation db.external-dependency.werf.io/resource of ConfigMap waits) not ready after 3s: absent"))
	h.WaitModule("ext-unknown", "failed naming the unknown type", failed(
		`external dependency widgets.v1.example.com/w in namespace `+h.Namespace, `resource type "widgets.v1.example.com"`))
	for _, name := range []string{"waits", "unknown", "unknown-free"} {
		if _, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("ConfigMap %s of a module whose dependency is missing or unknown: %v, want not found", name, err)
		}
	}
}

// configEditor returns a client of a user who may only read and update
// the operator's ConfigMap in ns.
func configEditor(t *testing.T, h *operatortest.Harness, ns string) kubernetes.Interface {
	t.Helper()
	ctx := t.Context()
	const user = "config-editor"
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"addon-operator"}, Verbs: []string{"get", "update", "patch"}}}}
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
	h.Poll(user+" may read the ConfigMap", func() bool {
		_, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "addon-operator", metav1.GetOptions{})
		return err == nil
	})
	return client
}

// A user who may only edit the operator's ConfigMap, of a module whose
// chart writes annotations from its values (a common pattern), points an
// external dependency at a Secret of a namespace where the user may read
// nothing. As docs/security.md says, the user learns whether the Secret
// exists (the module is Ready, or fails naming it absent after its
// readinessTimeout), and nothing of its content: its value is in no
// module status, Event or log line of the operator.
func TestExternalDependencyRevealsNoContent(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	private := cp.Namespace(t)
	const value = "s3cr3t-value-0042"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "private"}, StringData: map[string]string{"password": value}}
	if _, err := h.Client.CoreV1().Secrets(private).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	chart := func(name, key string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n" +
			"  {{- with .Values." + key + ".annotations }}\n  annotations: {{ toYaml . | nindent 4 }}\n  {{- end }}\n"
	}
	modules := filepath.Join(t.TempDir(), "modules")
	writeFiles(t, modules, map[string]string{
		"probe/templates/cm.yaml":         chart("probe", "probe"),
		"probe-missing/module.yaml":       "readinessTimeout: 3s\n",
		"probe-missing/templates/cm.yaml": chart("probe-missing", "probeMissing"),
	})
	h.SetConfig(map[string]string{})
	editor := configEditor(t, h, h.Namespace)
	if _, err := editor.CoreV1().Secrets(private).Get(t.Context(), "private", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the editor reads Secret %s/private: %v, want forbidden", private, err)
	}
	cm, err := editor.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	probe := func(name string) string {
		return "annotations:\n  x.external-dependency.werf.io/resource: secret/" + name + "\n  x.external-dependency.werf.io/namespace: " + private + "\n"
	}
	cm.Data = map[string]string{"probeEnabled": "true", "probe": probe("private"), "probeMissingEnabled": "true", "probeMissing": probe("missing")}
	if _, err := editor.CoreV1().ConfigMaps(h.Namespace).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("the editor updates the ConfigMap: %v", err)
	}
	h.Start(operatortest.Options{ModulesDir: modules})

	h.WaitModule("probe", "Ready: the Secret exists", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
	missing := h.WaitModule("probe-missing", "failed naming the absent Secret", operatortest.ErrorContains(
		"external dependency Secret "+private+"/missing (annotation x.external-dependency.werf.io/resource of ConfigMap probe-missing) not ready after 3s: absent"))

	texts := []string{missing.LastError}
	if m, ok := h.Newest().Module("probe"); ok {
		texts = append(texts, m.LastError)
	}
	for _, ns := range []string{h.Namespace, "default"} {
		events, err := h.Client.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events.Items {
			texts = append(texts, ev.Message)
		}
	}
	texts = append(texts, h.Newest().Log().String())
	encoded := base64.StdEncoding.EncodeToString([]byte(value))
	for _, text := range texts {
		if strings.Contains(text, value) || strings.Contains(text, encoded) {
			t.Errorf("the Secret's value is echoed: %s", text)
		}
	}
}
