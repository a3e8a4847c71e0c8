package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// TestModulePageNeedsItsOwnRight starts the real operator with
// --status-page=auth over the vault module: its page shows the module's
// run, revision and object from the cluster, without the secret in its
// values, to a user who may get /modules/*; a user who may only get the
// overview (the rule earlier charts rendered), a user without rights and
// a request without a token get none of it.
func TestModulePageNeedsItsOwnRight(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	reader := serviceAccountToken(t, h.Namespace, "page-reader")
	overviewOnly := serviceAccountToken(t, h.Namespace, "overview-reader")
	stranger := serviceAccountToken(t, h.Namespace, "stranger")
	grantNonResource(t, h.Namespace, "page-reader", "/", "/modules/*")
	grantNonResource(t, h.Namespace, "overview-reader", "/")
	_, base := startVault(t, h, "--status-page=auth")

	for _, tt := range []struct {
		who, token string
		wantCode   int
	}{
		{"nobody", "", http.StatusUnauthorized},
		{"a user without rights", stranger, http.StatusForbidden},
		{"a user who may get / only", overviewOnly, http.StatusForbidden},
	} {
		code, body := getAs(t, base+"/modules/vault", tt.token)
		if code != tt.wantCode || strings.Contains(body, "vault-0.1.0") || strings.Contains(body, vaultValue) {
			t.Errorf("GET /modules/vault as %s: %d %q, want %d and nothing of the module", tt.who, code, body, tt.wantCode)
		}
	}
	if code, _ := getAs(t, base+"/", overviewOnly); code != http.StatusOK {
		t.Errorf("GET / as a user who may get /: %d, want 200", code)
	}

	code, body := getAs(t, base+"/modules/vault", reader)
	if code != http.StatusOK {
		t.Fatalf("GET /modules/vault as a reader: %d %q", code, body)
	}
	for _, want := range []string{
		`<h1 id="module-name">vault</h1>`,
		`<td class="Succeeded">Succeeded</td>`,
		`<td>deployed</td><td>vault-0.1.0</td>`,
		`<tr class="object"><td>ConfigMap ` + h.Namespace + `/vault</td><td class="Current">Current</td>`,
		`<div class="tl-row" id="timeline-vault">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the module page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, vaultValue) {
		t.Errorf("the module page shows the module's secret value:\n%s", body)
	}
	if code, body := getAs(t, base+"/", reader); code != http.StatusOK || !strings.Contains(body, `<a class="tl-name" href="/modules/vault">vault</a>`) {
		t.Errorf("GET / as a reader: %d, want the timeline's row of vault linking its page:\n%s", code, body)
	}
	if code, _ := getAs(t, base+"/modules/no-such-module", reader); code != http.StatusNotFound {
		t.Errorf("GET /modules/no-such-module as a reader: %d, want 404", code)
	}
}

// grantNonResource binds a ClusterRole allowing get on urls to the
// ServiceAccount name in ns, and waits until the API server's authorizer
// allows the first of them.
func grantNonResource(t *testing.T, ns, name string, urls ...string) {
	t.Helper()
	client := cp.Clientset(t)
	roleName := ns + "-" + name
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: roleName},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: urls, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: roleName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
	}
	rbac := client.RbacV1()
	if _, err := rbac.ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterRole: %v", err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoles().Delete(context.WithoutCancel(t.Context()), roleName, metav1.DeleteOptions{})
	})
	if _, err := rbac.ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterRoleBinding: %v", err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.WithoutCancel(t.Context()), roleName, metav1.DeleteOptions{})
	})
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:                  "system:serviceaccount:" + ns + ":" + name,
		Groups:                []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: strings.TrimSuffix(urls[len(urls)-1], "*") + "x", Verb: "get"},
	}}
	if !strings.HasSuffix(urls[len(urls)-1], "*") {
		review.Spec.NonResourceAttributes.Path = urls[len(urls)-1]
	}
	operatortest.Poll(t, "the ClusterRoleBinding to take effect", func() bool {
		got, err := client.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), review, metav1.CreateOptions{})
		return err == nil && got.Status.Allowed
	})
}
