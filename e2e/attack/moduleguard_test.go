package attack

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// moduleGuardMessage is the disable.message of the guarded module.
const moduleGuardMessage = "the vault's sealed data is deleted with it"

// moduleGuardEnv is one operator run over two modules: mg-vault, owned
// by the group vault-team and asking for a confirmation before it is
// disabled, and mg-web, which anyone may configure.
type moduleGuardEnv struct {
	*operatortest.Harness
	op      *operatortest.Operator
	dyn     dynamic.Interface
	modules string
}

// moduleGuardStart runs the operator with its webhook server, the
// writers file and the config source given.
func moduleGuardStart(t *testing.T, source string) *moduleGuardEnv {
	t.Helper()
	operatortest.InstallAPICRDs(t, cp.Config)
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	e := &moduleGuardEnv{Harness: operatortest.New(t, cp, bin), dyn: dyn, modules: filepath.Join(dir, "modules")}
	e.writeModule("010-mg-vault", "mgVault",
		"disable:\n  confirmation: true\n  message: \""+moduleGuardMessage+"\"\n")
	e.writeModule("020-mg-web", "mgWeb", "")
	writers := filepath.Join(dir, "writers.yaml")
	moduleGuardWrite(t, writers, "mg-vault: {groups: [vault-team]}\nglobal: {groups: [platform-team]}\n")
	_, port, _ := net.SplitHostPort(operatortest.FreeAddress(t))
	adm := e.Client.AdmissionregistrationV1()
	t.Cleanup(func() {
		// Its entries fail closed: no later test's write may reach a
		// stopped server.
		bg := context.WithoutCancel(t.Context())
		_ = adm.ValidatingWebhookConfigurations().Delete(bg, e.Namespace, metav1.DeleteOptions{})
		_ = adm.MutatingWebhookConfigurations().Delete(bg, e.Namespace, metav1.DeleteOptions{})
	})
	e.op = e.Start(operatortest.Options{ModulesDir: e.modules, Args: []string{
		"--retry-delay=200ms", "--retry-max-delay=1s", "--config-source=" + source, "--module-writers=" + writers,
		"--webhook-server", "--webhook-url=https://127.0.0.1:" + port,
		"--validating-webhook-listen-address=127.0.0.1", "--validating-webhook-listen-port=" + port,
		"--validating-webhook-configuration-name=" + e.Namespace, "--mutating-webhook-configuration-name=" + e.Namespace,
	}})
	e.op.WaitReady()
	e.Poll("the guard's webhooks registered with failurePolicy Fail, for DELETE too", func() bool {
		cfg, err := adm.ValidatingWebhookConfigurations().Get(t.Context(), e.Namespace, metav1.GetOptions{})
		if err != nil {
			return false
		}
		n := 0
		for i := range cfg.Webhooks {
			if w := &cfg.Webhooks[i]; strings.HasSuffix(w.Name, "-guard.addon-operator.io") && *w.FailurePolicy == admissionregv1.Fail &&
				slices.Contains(w.Rules[0].Operations, admissionregv1.Delete) {
				n++
			}
		}
		return n == 2
	})
	return e
}

// writeModule writes a module with module.yaml's extra lines and a chart
// rendering one ConfigMap from its "size" setting.
func (e *moduleGuardEnv) writeModule(dir, key, definition string) {
	t := e.T
	t.Helper()
	d := filepath.Join(e.modules, dir)
	moduleGuardWrite(t, filepath.Join(d, "module.yaml"), definition)
	moduleGuardWrite(t, filepath.Join(d, "Chart.yaml"), "apiVersion: v2\nname: "+key+"\nversion: 1.0.0\n")
	moduleGuardWrite(t, filepath.Join(d, "values.yaml"), key+":\n  size: 1\n")
	moduleGuardWrite(t, filepath.Join(d, "openapi", "config-values.yaml"), "type: object\nproperties:\n  size:\n    type: integer\n")
	moduleGuardWrite(t, filepath.Join(d, "templates", "cm.yaml"),
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+dir[4:]+"-out\ndata:\n  size: {{ .Values."+key+".size | quote }}\n")
}

func moduleGuardWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// as returns clients acting as user in groups, who may do nothing but
// write ModuleConfigs and the operator's ConfigMap.
func (e *moduleGuardEnv) as(user string, groups ...string) (dynamic.Interface, kubernetes.Interface) {
	t := e.T
	t.Helper()
	ctx, name := t.Context(), e.Namespace+"-"+user
	rbac := e.Client.RbacV1()
	verbs := []string{"get", "list", "create", "update", "patch", "delete"}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{v1.Group}, Resources: []string{"moduleconfigs"}, Verbs: verbs}}}
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}, Subjects: subjects}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		bg := context.WithoutCancel(ctx)
		_ = rbac.ClusterRoleBindings().Delete(bg, name, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(bg, name, metav1.DeleteOptions{})
	})
	nsRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"addon-operator"}, Verbs: verbs}}}
	if _, err := rbac.Roles(e.Namespace).Create(ctx, nsRole, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user}, Subjects: subjects}
	if _, err := rbac.RoleBindings(e.Namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// RBAC caches settle within a moment: wait until the user may read.
	e.Poll(user+" may write ModuleConfigs", func() bool {
		_, err := dyn.Resource(v1.ModuleConfigsResource()).List(ctx, metav1.ListOptions{})
		return err == nil
	})
	return dyn, kube
}

// vaultConfig creates mg-vault's ModuleConfig as the test's
// administrator (the operator's own user, which the writers file does not
// restrict), deleted (confirmed) at cleanup.
func (e *moduleGuardEnv) vaultConfig(spec map[string]any) {
	t := e.T
	t.Helper()
	const name = "mg-vault"
	res := e.dyn.Resource(v1.ModuleConfigsResource())
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1.APIVersion, "kind": v1.KindModuleConfig,
		"metadata": map[string]any{"name": name}, "spec": spec}}
	if _, err := res.Create(t.Context(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ModuleConfig %s: %v", name, err)
	}
	t.Cleanup(func() {
		bg := context.WithoutCancel(t.Context())
		_, _ = res.Patch(bg, name, types.MergePatchType, []byte(`{"metadata":{"annotations":{"addon-operator.io/allow-disabling":"true"}}}`), metav1.PatchOptions{})
		_ = res.Delete(bg, name, metav1.DeleteOptions{})
	})
}

func moduleGuardRefused(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: allowed, want a refusal", what)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: refusal %q lacks %q", what, err, p)
		}
	}
}

func moduleGuardEnabled(want bool) func(status.ModuleStatus) bool {
	return func(m status.ModuleStatus) bool {
		if want {
			return m.Enabled && m.Phase == status.PhaseReady
		}
		return !m.Enabled && m.Phase == status.PhaseDisabled
	}
}

// TestAttackerDisablesConfirmedModuleWithoutAnnotation: a writer of
// mg-vault's ModuleConfig disables it by enabled: false and by deleting
// the object, without the confirmation its module.yaml asks for; both are
// refused with the module's message, and with the annotation the module
// is disabled.
func TestAttackerDisablesConfirmedModuleWithoutAnnotation(t *testing.T) {
	e := moduleGuardStart(t, "moduleconfig")
	e.vaultConfig(map[string]any{"enabled": true, "settings": map[string]any{"size": 2}})
	e.op.WaitModule("mg-vault", "enabled", moduleGuardEnabled(true))
	dyn, _ := e.as("val", "vault-team")
	res := dyn.Resource(v1.ModuleConfigsResource())
	ctx := t.Context()

	_, err := res.Patch(ctx, "mg-vault", types.MergePatchType, []byte(`{"spec":{"enabled":false}}`), metav1.PatchOptions{})
	moduleGuardRefused(t, "enabled: false without the annotation", err, `disables module "mg-vault"`, moduleGuardMessage, "allow-disabling")
	err = res.Delete(ctx, "mg-vault", metav1.DeleteOptions{})
	moduleGuardRefused(t, "delete without the annotation", err, `disables module "mg-vault"`, moduleGuardMessage)
	if _, err := res.Get(ctx, "mg-vault", metav1.GetOptions{}); err != nil {
		t.Fatalf("the ModuleConfig is gone after refusals: %v", err)
	}
	if m, _ := e.op.Module("mg-vault"); !m.Enabled {
		t.Error("mg-vault disabled although every disabling write was refused")
	}

	// Deckhouse's annotation confirms too.
	patch := `{"metadata":{"annotations":{"modules.deckhouse.io/allow-disabling":"true"}},"spec":{"enabled":false}}`
	if _, err := res.Patch(ctx, "mg-vault", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("enabled: false with the annotation: %v", err)
	}
	e.op.WaitModule("mg-vault", "disabled", moduleGuardEnabled(false))
}

// TestAttackerDeletesConfirmedModuleConfigWithAnnotation: deleting an
// annotated ModuleConfig is the confirmed way, and is allowed.
func TestAttackerDeletesConfirmedModuleConfigWithAnnotation(t *testing.T) {
	e := moduleGuardStart(t, "moduleconfig")
	e.vaultConfig(map[string]any{"enabled": true})
	// Another object stays: with none left the operator holds the last
	// configuration (config-hold.md), which is not what this test is about.
	mcs := e.dyn.Resource(v1.ModuleConfigsResource())
	web := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1.APIVersion, "kind": v1.KindModuleConfig,
		"metadata": map[string]any{"name": "mg-web"}, "spec": map[string]any{"enabled": true}}}
	if _, err := mcs.Create(t.Context(), web, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create mg-web's ModuleConfig: %v", err)
	}
	t.Cleanup(func() { _ = mcs.Delete(context.WithoutCancel(t.Context()), "mg-web", metav1.DeleteOptions{}) })
	e.op.WaitModule("mg-vault", "enabled", moduleGuardEnabled(true))
	dyn, _ := e.as("val", "vault-team")
	res := dyn.Resource(v1.ModuleConfigsResource())
	if _, err := res.Patch(t.Context(), "mg-vault", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"addon-operator.io/allow-disabling":"true"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("annotate: %v", err)
	}
	if err := res.Delete(t.Context(), "mg-vault", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete the annotated ModuleConfig: %v", err)
	}
	e.op.WaitModule("mg-vault", "disabled", moduleGuardEnabled(false))
}

// TestAttackerWritesAnotherTeamsModuleConfig: a user whose only rights
// are on ModuleConfigs, outside mg-vault's writer groups, changes its
// settings, disables it with the annotation, deletes it and creates
// "global": every write is refused, naming the module and the user.
func TestAttackerWritesAnotherTeamsModuleConfig(t *testing.T) {
	e := moduleGuardStart(t, "moduleconfig")
	e.vaultConfig(map[string]any{"enabled": true, "settings": map[string]any{"size": 2}})
	dyn, _ := e.as("mallory", "web-team")
	res := dyn.Resource(v1.ModuleConfigsResource())
	ctx := t.Context()
	refusal := []string{`user "mallory" may not write the settings of module "mg-vault"`}

	_, err := res.Patch(ctx, "mg-vault", types.MergePatchType, []byte(`{"spec":{"settings":{"size":9}}}`), metav1.PatchOptions{})
	moduleGuardRefused(t, "change settings", err, refusal...)
	patch := `{"metadata":{"annotations":{"addon-operator.io/allow-disabling":"true"}},"spec":{"enabled":false}}`
	_, err = res.Patch(ctx, "mg-vault", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	moduleGuardRefused(t, "disable with the annotation", err, refusal...)
	moduleGuardRefused(t, "delete", res.Delete(ctx, "mg-vault", metav1.DeleteOptions{}), refusal...)
	global := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1.APIVersion, "kind": v1.KindModuleConfig,
		"metadata": map[string]any{"name": "global"}, "spec": map[string]any{"settings": map[string]any{}}}}
	_, err = res.Create(ctx, global, metav1.CreateOptions{})
	moduleGuardRefused(t, "create global", err, `user "mallory" may not write the settings of the global section`)
	if err == nil {
		_ = e.dyn.Resource(v1.ModuleConfigsResource()).Delete(context.WithoutCancel(ctx), "global", metav1.DeleteOptions{})
	}

	// A module without an entry is anyone's.
	web := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1.APIVersion, "kind": v1.KindModuleConfig,
		"metadata": map[string]any{"name": "mg-web"}, "spec": map[string]any{"enabled": true}}}
	if _, err := res.Create(ctx, web, metav1.CreateOptions{}); err != nil {
		t.Errorf("create mg-web's ModuleConfig, which has no writers entry: %v", err)
	} else {
		t.Cleanup(func() {
			_ = e.dyn.Resource(v1.ModuleConfigsResource()).Delete(context.WithoutCancel(ctx), "mg-web", metav1.DeleteOptions{})
		})
	}
}

// TestAttackerDisablesConfirmedModuleThroughConfigMap: with the
// ConfigMap as the source, a user with update rights on it turns
// mgVaultEnabled to "false", removes the key, and deletes the ConfigMap,
// without the annotation: all refused with the module's message; and,
// outside the writers, changes mg-vault's section: refused.
func TestAttackerDisablesConfirmedModuleThroughConfigMap(t *testing.T) {
	e := moduleGuardStart(t, "configmap")
	e.SetConfig(map[string]string{"mgVaultEnabled": "true", "mgVault": "size: 2\n"})
	e.op.WaitModule("mg-vault", "enabled", moduleGuardEnabled(true))
	_, val := e.as("val", "vault-team")
	cms := val.CoreV1().ConfigMaps(e.Namespace)
	ctx := t.Context()
	patch := func(p string) error {
		_, err := cms.Patch(ctx, "addon-operator", types.MergePatchType, []byte(p), metav1.PatchOptions{})
		return err
	}
	moduleGuardRefused(t, "mgVaultEnabled false", patch(`{"data":{"mgVaultEnabled":"false"}}`),
		`ConfigMap key mgVaultEnabled disables module "mg-vault"`, moduleGuardMessage)
	moduleGuardRefused(t, "mgVaultEnabled removed", patch(`{"data":{"mgVaultEnabled":null}}`), moduleGuardMessage)
	moduleGuardRefused(t, "ConfigMap deleted", cms.Delete(ctx, "addon-operator", metav1.DeleteOptions{}), moduleGuardMessage)

	_, mallory := e.as("mallory", "web-team")
	_, err := mallory.CoreV1().ConfigMaps(e.Namespace).Patch(ctx, "addon-operator", types.MergePatchType,
		[]byte(`{"data":{"mgVault":"size: 9\n"}}`), metav1.PatchOptions{})
	moduleGuardRefused(t, "another team's section", err, `user "mallory" may not write the settings of module "mg-vault"`)
	if m, _ := e.op.Module("mg-vault"); !m.Enabled {
		t.Error("mg-vault disabled although every disabling write was refused")
	}

	if err := patch(`{"metadata":{"annotations":{"addon-operator.io/allow-disabling":"true"}},"data":{"mgVaultEnabled":"false"}}`); err != nil {
		t.Fatalf("mgVaultEnabled false with the annotation: %v", err)
	}
	e.op.WaitModule("mg-vault", "disabled", moduleGuardEnabled(false))
}

// TestAttackerResetsModuleSettingsSilently: removing a module's settings
// (its writer drops spec.settings) resets them to the defaults; the
// operator says so in a WARN line and a Warning Event naming the module
// and the settings' keys.
func TestAttackerResetsModuleSettingsSilently(t *testing.T) {
	e := moduleGuardStart(t, "moduleconfig")
	e.vaultConfig(map[string]any{"enabled": true, "settings": map[string]any{"size": 2}})
	e.op.WaitModule("mg-vault", "enabled", moduleGuardEnabled(true))
	e.Poll("mg-vault's size 2 deployed", func() bool { return e.ConfigMapData("mg-vault-out")["size"] == "2" })
	dyn, _ := e.as("val", "vault-team")
	_, err := dyn.Resource(v1.ModuleConfigsResource()).Patch(t.Context(), "mg-vault", types.MergePatchType,
		[]byte(`{"spec":{"settings":null}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("drop mg-vault's settings: %v", err)
	}
	e.WaitLog(1, "module settings removed, reset to defaults", map[string]string{"level": "WARN", "module": "mg-vault", "fields": "size"})
	e.Poll("a SettingsReset Event naming mg-vault and size", func() bool {
		evs, err := e.Client.CoreV1().Events(e.Namespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		return slices.ContainsFunc(evs.Items, func(ev corev1.Event) bool {
			return ev.Reason == "SettingsReset" && ev.Type == corev1.EventTypeWarning &&
				strings.Contains(ev.Message, "module mg-vault") && strings.Contains(ev.Message, "size")
		})
	})
	e.Poll("mg-vault back to its default size 1", func() bool { return e.ConfigMapData("mg-vault-out")["size"] == "1" })
}
