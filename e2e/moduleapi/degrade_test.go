package moduleapi

import (
	"path/filepath"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

// removeCRDs deletes the addon-operator.io CRDs and waits until they are
// gone; the tests that need them install them again.
func removeCRDs(t *testing.T) {
	t.Helper()
	crds := apiextensions.NewForConfigOrDie(cp.Config).ApiextensionsV1().CustomResourceDefinitions()
	for _, name := range []string{v1.ResourceModules + "." + v1.Group, v1.ResourceModuleConfigs + "." + v1.Group} {
		if err := crds.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("delete CRD %s: %v", name, err)
		}
		operatortest.Poll(t, "CRD "+name+" gone", func() bool {
			_, err := crds.Get(t.Context(), name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	}
}

// TestWithoutCRDs: without the CRDs the operator runs on the ConfigMap,
// even when asked for ModuleConfigs, and says once what it cannot do.
func TestWithoutCRDs(t *testing.T) {
	removeCRDs(t)
	h := newHarness(t)
	h.chartModule("010-nc-echo", "ncEcho")
	h.SetConfig(map[string]string{"ncEchoEnabled": "true", "ncEcho": "greeting: plain\n"})
	op := h.start("--config-source=moduleconfig")
	op.WaitReady()
	h.Poll("greeting plain", func() bool { return h.greeting("nc-echo") == "plain" })
	// A change of the ConfigMap still works.
	h.SetConfig(map[string]string{"ncEchoEnabled": "true", "ncEcho": "greeting: again\n"})
	h.Poll("greeting again", func() bool { return h.greeting("nc-echo") == "again" })
	for _, msg := range []string{
		"module objects off: modules are not shown as Module objects; the operator works on without them",
		"moduleconfig source off: configuration comes from the ConfigMap",
	} {
		if n := h.CountLog(msg, nil); n != 1 {
			t.Errorf("%d log lines %q, want 1", n, msg)
		}
	}
}

// TestWithoutRights: with the CRDs installed but a ServiceAccount that may
// only work in its namespace, the operator runs on the ConfigMap and says
// once what it may not do.
func TestWithoutRights(t *testing.T) {
	operatortest.InstallAPICRDs(t, cp.Config)
	h := newHarness(t)
	h.chartModule("010-nr-echo", "nrEcho")
	h.SetConfig(map[string]string{"nrEchoEnabled": "true", "nrEcho": "greeting: narrow\n"})
	kubeconfig := h.namespaceOnlyKubeconfig()
	op := h.start("--config-source=moduleconfig", "--kube-config="+kubeconfig)
	op.WaitReady()
	h.Poll("greeting narrow", func() bool { return h.greeting("nr-echo") == "narrow" })
	for _, line := range []struct{ msg, reason string }{
		{"module objects off: modules are not shown as Module objects; the operator works on without them",
			"the operator may not list, create, patch or delete modules.addon-operator.io"},
		{"moduleconfig source off: configuration comes from the ConfigMap", "ModuleConfig objects cannot be listed"},
	} {
		if n := h.CountLog(line.msg, map[string]string{"reason": line.reason}); n != 1 {
			t.Errorf("%d log lines %q with reason %q, want 1", n, line.msg, line.reason)
		}
	}
	if _, ok := h.module("nr-echo"); ok {
		t.Error("a Module object was written without the rights to")
	}
}

// namespaceOnlyKubeconfig returns a kubeconfig of a ServiceAccount that
// may do anything in the test's namespace and nothing outside it.
func (h *harness) namespaceOnlyKubeconfig() string {
	h.T.Helper()
	ctx, ns := h.T.Context(), h.Namespace
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "operator"}}
	if _, err := h.Client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "operator"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	if _, err := h.Client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "operator"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "operator"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "operator", Namespace: ns}}}
	if _, err := h.Client.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	tok, err := h.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "operator", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(cp.Kubeconfig)
	if err != nil {
		h.T.Fatal(err)
	}
	for _, a := range cfg.AuthInfos {
		a.Token = tok.Status.Token
	}
	path := filepath.Join(h.T.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		h.T.Fatal(err)
	}
	return path
}
