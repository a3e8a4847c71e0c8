package executionhook

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// env is what the tests of one module installation share.
type env struct {
	h       *operatortest.Harness
	kubecfg string // of the module's ServiceAccount
}

// installModule runs the operator with the module enabled for the given
// namespaces and waits until its ServiceAccount exists. The operator
// serves the module's admission webhooks (which record each hook's
// requester) under configurations named after the test's namespace; they
// are deleted at cleanup, so that no later write reaches a stopped server.
func installModule(t *testing.T, namespaces []string) *env {
	t.Helper()
	h := operatortest.New(t, cp, bin)
	_, port, _ := net.SplitHostPort(operatortest.FreeAddress(t))
	t.Cleanup(func() {
		adm, bg := h.Client.AdmissionregistrationV1(), context.WithoutCancel(t.Context())
		_ = adm.ValidatingWebhookConfigurations().Delete(bg, h.Namespace, metav1.DeleteOptions{})
		_ = adm.MutatingWebhookConfigurations().Delete(bg, h.Namespace, metav1.DeleteOptions{})
	})
	quoted := make([]string, len(namespaces))
	for i, ns := range namespaces {
		quoted[i] = fmt.Sprintf("%q", ns)
	}
	h.SetConfig(map[string]string{
		"executionHooksEnabled": "true",
		"executionHooks":        fmt.Sprintf("namespaces: [%s]\n", strings.Join(quoted, ", ")),
	})
	modules, globalHooks := moduleDirs(t)
	op := h.Start(operatortest.Options{ModulesDir: modules, GlobalHooksDir: globalHooks,
		Args: []string{"--retry-delay=200ms", "--retry-max-delay=2s",
			"--webhook-server", "--webhook-url=https://127.0.0.1:" + port,
			"--validating-webhook-listen-address=127.0.0.1", "--validating-webhook-listen-port=" + port,
			"--validating-webhook-configuration-name=" + h.Namespace, "--mutating-webhook-configuration-name=" + h.Namespace,
		}})
	// The test runs the controller itself; its Deployment stands for it.
	h.MakeDeploymentAvailable(h.Namespace, "execution-hook-controller")
	op.WaitModule("execution-hooks", "installed", func(m status.ModuleStatus) bool { return m.Revision > 0 && m.LastError == "" })
	return &env{h: h, kubecfg: kubeconfig(t, controllerToken(t, h.Namespace))}
}

// TestModuleGrantsExecOnlyWhereAllowed checks the RBAC the module makes:
// its ServiceAccount may exec into pods of the allowed namespaces only (all
// of them when none are listed), only while the module is enabled.
func TestModuleGrantsExecOnlyWhereAllowed(t *testing.T) {
	t.Parallel()
	allowed := []string{cp.Namespace(t), cp.Namespace(t)}
	other := cp.Namespace(t)
	e := installModule(t, allowed)
	saNS := e.h.Namespace

	if !can(t, saNS, "create", "authorization.k8s.io/subjectaccessreviews", "", "") {
		t.Errorf("the ServiceAccount may not create SubjectAccessReviews")
	}
	type access struct{ Exec, ListPods, UpdateHooks bool }
	check := func(ns string) access {
		return access{
			Exec:        can(t, saNS, "create", "pods", "exec", ns),
			ListPods:    can(t, saNS, "list", "pods", "", ns),
			UpdateHooks: can(t, saNS, "update", "hooks.addon-operator.io/executionhooks", "status", ns),
		}
	}
	for _, ns := range allowed {
		if diff := cmp.Diff(access{true, true, true}, check(ns)); diff != "" {
			t.Errorf("rights in allowed namespace %s (-want +got):\n%s", ns, diff)
		}
	}
	if diff := cmp.Diff(access{}, check(other)); diff != "" {
		t.Errorf("rights in namespace %s not allowed (-want +got):\n%s", other, diff)
	}
	if can(t, saNS, "delete", "pods", "", allowed[0]) || can(t, saNS, "get", "secrets", "", allowed[0]) {
		t.Errorf("the ServiceAccount may delete pods or read secrets")
	}

	// No namespaces: granted everywhere, by a ClusterRoleBinding.
	e.h.SetConfig(map[string]string{"executionHooksEnabled": "true", "executionHooks": "namespaces: []\n"})
	operatortest.Poll(t, "pods/exec granted in every namespace", func() bool {
		return can(t, saNS, "create", "pods", "exec", other) && can(t, saNS, "list", "pods", "", "")
	})

	e.h.SetConfig(map[string]string{"executionHooksEnabled": "false"})
	operatortest.Poll(t, "pods/exec revoked after disabling the module", func() bool {
		return !slices.ContainsFunc(append(allowed, other), func(ns string) bool { return can(t, saNS, "create", "pods", "exec", ns) })
	})
	for _, name := range []string{"addon-operator:execution-hooks:" + saNS, "addon-operator:execution-hooks:" + saNS + ":reviews"} {
		operatortest.Poll(t, "ClusterRole "+name+" deleted after disabling the module", func() bool {
			_, err := cp.Clientset(t).RbacV1().ClusterRoles().Get(t.Context(), name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	}
}
