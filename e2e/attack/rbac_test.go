package attack

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// rbacRepo is the repository's root, from this file.
func rbacRepo(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// rbacInstall installs charts/addon-operator with vals over its defaults as
// release addon-operator in ns, as helm install does, and uninstalls it at
// cleanup (its ClusterRoles are cluster-wide).
func rbacInstall(t *testing.T, ns string, vals map[string]any) {
	t.Helper()
	ch, err := loader.Load(filepath.Join(rbacRepo(t), "charts", "addon-operator"))
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &cp.Kubeconfig, &ns
	cacheDir := t.TempDir()
	flags.CacheDir = &cacheDir
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", t.Logf); err != nil {
		t.Fatalf("init helm for namespace %s: %v", ns, err)
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.Timeout = "addon-operator", ns, time.Minute
	if _, err := in.RunWithContext(t.Context(), ch, vals); err != nil {
		t.Fatalf("helm install with %v: %v", vals, err)
	}
	t.Cleanup(func() {
		un := action.NewUninstall(cfg)
		un.Timeout = time.Minute
		if _, err := un.Run("addon-operator"); err != nil {
			t.Errorf("helm uninstall: %v", err)
		}
	})
}

// rbacOperatorConfig returns a client config with a token of the chart's
// ServiceAccount in ns: the operator's rights, which its hooks' object
// patches act with.
func rbacOperatorConfig(t *testing.T, ns string) *rest.Config {
	t.Helper()
	tr, err := cp.Clientset(t).CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), "addon-operator",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of ServiceAccount %s/addon-operator: %v", ns, err)
	}
	cfg := rest.AnonymousClientConfig(cp.Config)
	cfg.BearerToken = tr.Status.Token
	return cfg
}

// rbacKubeconfig writes cfg as a kubeconfig file for the operator binary.
func rbacKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["operator"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "operator"}
	kc.CurrentContext = "local"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// rbacDryRun refuses to store anything: an escalation that is allowed
// shows as no error, and leaves nothing behind.
var rbacDryRun = []string{metav1.DryRunAll} //nolint:gochecknoglobals // constant

// rbacWantForbidden fails the test unless err is the API server's
// authorization refusal.
func rbacWantForbidden(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s with the operator's token: err = %v, want Forbidden", what, err)
	}
}

// rbacMutatingWebhook is a cluster-wide mutating webhook on Pods and
// Secrets: whoever registers it sees and rewrites every one.
func rbacMutatingWebhook(name string) *admissionregv1.MutatingWebhookConfiguration {
	return &admissionregv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregv1.MutatingWebhook{{
			Name:         "steal.attack.example.com",
			ClientConfig: admissionregv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/steal")},
			Rules: []admissionregv1.RuleWithOperations{{
				Operations: []admissionregv1.OperationType{admissionregv1.Create, admissionregv1.Update},
				Rule:       admissionregv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods", "secrets"}},
			}},
			FailurePolicy: ptr.To(admissionregv1.Ignore), SideEffects: ptr.To(admissionregv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// TestAttackerHookRegistersClusterWideMutatingWebhook: a hook's object
// patch (the operator's token) registers a mutating webhook on every Pod
// and Secret of the cluster, by create and by server-side apply, or
// rewrites the operator's own configuration into one by create. Only an
// apply to the operator's own name is allowed.
func TestAttackerHookRegistersClusterWideMutatingWebhook(t *testing.T) {
	ns := cp.Namespace(t)
	rbacInstall(t, ns, nil)
	client := kubernetes.NewForConfigOrDie(rbacOperatorConfig(t, ns))
	adm := client.AdmissionregistrationV1()
	own := ns + "-addon-operator"

	_, err := adm.MutatingWebhookConfigurations().Create(t.Context(), rbacMutatingWebhook("attack-"+ns), metav1.CreateOptions{DryRun: rbacDryRun})
	rbacWantForbidden(t, "create MutatingWebhookConfiguration attack-"+ns, err)
	_, err = adm.MutatingWebhookConfigurations().Create(t.Context(), rbacMutatingWebhook(own), metav1.CreateOptions{DryRun: rbacDryRun})
	rbacWantForbidden(t, "create MutatingWebhookConfiguration "+own+" (a plain create carries no name)", err)
	data, err := json.Marshal(rbacMutatingWebhook("attack-" + ns))
	if err != nil {
		t.Fatal(err)
	}
	apply := metav1.PatchOptions{FieldManager: "attack", DryRun: rbacDryRun}
	_, err = adm.MutatingWebhookConfigurations().Patch(t.Context(), "attack-"+ns, types.ApplyPatchType, data, apply)
	rbacWantForbidden(t, "apply MutatingWebhookConfiguration attack-"+ns, err)
	validating := &admissionregv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "attack-" + ns}}
	_, err = adm.ValidatingWebhookConfigurations().Create(t.Context(), validating, metav1.CreateOptions{DryRun: rbacDryRun})
	rbacWantForbidden(t, "create ValidatingWebhookConfiguration attack-"+ns, err)

	// The operator's own configuration, as it writes it: allowed, so the
	// refusals above are the rules', not a broken token's.
	data, err = json.Marshal(&admissionregv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: own},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.MutatingWebhookConfigurations().Patch(t.Context(), own, types.ApplyPatchType, data, apply); err != nil {
		t.Errorf("apply the operator's own MutatingWebhookConfiguration %s: %v", own, err)
	}
}

// TestAttackerHookPatchesForeignCRD: a hook's object patch points another
// team's CRD at a conversion webhook of its choosing, or changes its
// schema.
func TestAttackerHookPatchesForeignCRD(t *testing.T) {
	ns := cp.Namespace(t)
	rbacInstall(t, ns, nil)
	crds := apiextensions.NewForConfigOrDie(cp.Config).ApiextensionsV1().CustomResourceDefinitions()
	group := ns + ".attack.example.com"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "secrets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "secrets", Singular: "secret", Kind: "Secret", ListKind: "SecretList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true, Schema: &apiextensionsv1.CustomResourceValidation{
				OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)},
			}}},
		},
	}
	if _, err := crds.Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.WithoutCancel(t.Context()), crd.Name, metav1.DeleteOptions{}) })

	as := apiextensions.NewForConfigOrDie(rbacOperatorConfig(t, ns)).ApiextensionsV1().CustomResourceDefinitions()
	patch := []byte(`{"spec":{"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"https://127.0.0.1:1/steal"}}}}}`)
	_, err := as.Patch(t.Context(), crd.Name, types.MergePatchType, patch, metav1.PatchOptions{DryRun: rbacDryRun})
	rbacWantForbidden(t, "patch CRD "+crd.Name, err)
	_, err = as.Patch(t.Context(), crd.Name, types.ApplyPatchType,
		[]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"`+crd.Name+`"},"spec":{"conversion":{"strategy":"None"}}}`),
		metav1.PatchOptions{FieldManager: "attack", Force: ptr.To(true), DryRun: rbacDryRun})
	rbacWantForbidden(t, "apply CRD "+crd.Name, err)
	err = as.Delete(t.Context(), crd.Name, metav1.DeleteOptions{DryRun: rbacDryRun})
	rbacWantForbidden(t, "delete CRD "+crd.Name, err)
}

// rbacGenerate runs `addon-operator rbac` on the image's catalogue with
// args and returns its rules as the chart's rbac.generated value.
func rbacGenerate(t *testing.T, modules string, args ...string) map[string]any {
	t.Helper()
	repo := rbacRepo(t)
	cmd := exec.CommandContext(t.Context(), bin, append([]string{"rbac", "--modules-dir", modules,
		"--global-hooks-dir", filepath.Join(repo, "global-hooks"), "-o", "json"}, args...)...)
	cmd.Env = append(os.Environ(), "ADDON_OPERATOR_NAMESPACE=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("addon-operator rbac %v: %v\n%s", args, err, stderr.String())
	}
	var generated map[string]any
	if err := json.Unmarshal(out, &generated); err != nil {
		t.Fatalf("addon-operator rbac output: %v\n%s", err, out)
	}
	return generated
}

// TestAttackerHookBindsClusterAdmin: with the rights of every module of
// the catalogue (one of them deploys a ClusterRole and its binding), a
// hook's object patch binds cluster-admin to the operator, grants its
// module's ClusterRole every right, or binds that role to itself.
func TestAttackerHookBindsClusterAdmin(t *testing.T) {
	ns := cp.Namespace(t)
	generated := rbacGenerate(t, filepath.Join(rbacRepo(t), "modules"), "--all")
	// The chart makes a Role in each namespace of a module's module.yaml,
	// which must exist (the operator would create it before the module).
	namespaces, _ := generated["namespaces"].(map[string]any)
	for name := range namespaces {
		_, err := cp.Clientset(t).CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	rbacInstall(t, ns, map[string]any{"rbac": map[string]any{"generated": generated}})
	client := kubernetes.NewForConfigOrDie(rbacOperatorConfig(t, ns))
	rbacClient := client.RbacV1()
	self := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "addon-operator", Namespace: ns}}

	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "attack-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   self,
	}
	_, err := rbacClient.ClusterRoleBindings().Create(t.Context(), crb, metav1.CreateOptions{DryRun: rbacDryRun})
	rbacWantForbidden(t, "bind cluster-admin", err)

	everything := []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}
	module := "addon-operator:execution-hooks:" + ns
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: module}, Rules: everything}
	_, err = rbacClient.ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{DryRun: rbacDryRun})
	rbacWantForbidden(t, "create ClusterRole "+module+" granting everything", err)
	role.Name = "attack-" + ns
	_, err = rbacClient.ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{DryRun: rbacDryRun})
	rbacWantForbidden(t, "create ClusterRole attack-"+ns+" granting everything", err)

	// The module's own ClusterRole, as its chart renders it: allowed, so
	// the refusals above are the rules', not a broken token's.
	own := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: module}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"get", "create"}},
	}}
	if _, err := rbacClient.ClusterRoles().Create(t.Context(), own, metav1.CreateOptions{DryRun: rbacDryRun}); err != nil {
		t.Errorf("create the module's ClusterRole %s: %v", module, err)
	}
}

// TestRBACDefaultChartRunsTheCatalogue: the chart's default
// rights run the image's catalogue (modules/ and global-hooks/) to ready,
// so nobody is pushed to rbac.clusterWide: the discovery hook watches
// Nodes, namespace-defaults writes its quota into a labelled namespace.
func TestRBACDefaultChartRunsTheCatalogue(t *testing.T) {
	h := operatortest.New(t, cp, bin)
	rbacInstall(t, h.Namespace, nil)
	repo := rbacRepo(t)
	// The catalogue with its Go hooks built, as the image has it.
	modules := t.TempDir()
	if err := os.CopyFS(modules, os.DirFS(filepath.Join(repo, "modules"))); err != nil {
		t.Fatal(err)
	}
	build := exec.CommandContext(t.Context(), "go", "build", "-o",
		filepath.Join(modules, "010-namespace-defaults", "hooks", "namespace-defaults"), "./modules/010-namespace-defaults/hooks-go")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build namespace-defaults' hook: %v\n%s", err, out)
	}
	own := h.Namespace + "-addon-operator"
	t.Cleanup(func() {
		adm, bg := cp.Clientset(t).AdmissionregistrationV1(), context.WithoutCancel(t.Context())
		_ = adm.ValidatingWebhookConfigurations().Delete(bg, own, metav1.DeleteOptions{})
		_ = adm.MutatingWebhookConfigurations().Delete(bg, own, metav1.DeleteOptions{})
	})
	_, port, _ := net.SplitHostPort(operatortest.FreeAddress(t))
	// As the chart's Deployment runs it, with the chart's ServiceAccount.
	h.Start(operatortest.Options{ModulesDir: modules, GlobalHooksDir: filepath.Join(repo, "global-hooks"), Args: []string{
		"--kube-config=" + rbacKubeconfig(t, rbacOperatorConfig(t, h.Namespace)),
		"--retry-delay=200ms", "--retry-max-delay=2s",
		"--webhook-server", "--webhook-url=https://127.0.0.1:" + port,
		"--validating-webhook-listen-address=127.0.0.1", "--validating-webhook-listen-port=" + port,
		"--validating-webhook-configuration-name=" + own, "--mutating-webhook-configuration-name=" + own,
		"--webhook-cert-secret=addon-operator-webhook-tls",
	}})
	h.WaitReady()

	labelled := cp.Namespace(t)
	nsClient := h.Client.CoreV1().Namespaces()
	if _, err := nsClient.Patch(t.Context(), labelled, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"addon-operator.io/defaults":"enabled"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	h.Poll("ResourceQuota namespace-defaults in "+labelled, func() bool {
		_, err := h.Client.CoreV1().ResourceQuotas(labelled).Get(t.Context(), "namespace-defaults", metav1.GetOptions{})
		return err == nil
	})
	h.Poll("the operator's ValidatingWebhookConfiguration "+own, func() bool {
		_, err := h.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), own, metav1.GetOptions{})
		return err == nil
	})
	for _, l := range h.Lines() {
		if text := fmt.Sprint(l.Fields); strings.Contains(strings.ToLower(text), "forbidden") {
			t.Errorf("the operator was refused something: %s", text)
		}
	}
}
