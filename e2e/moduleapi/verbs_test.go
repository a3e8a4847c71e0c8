package moduleapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

// cliResult is one run of the command line.
type cliResult struct {
	out, err string
	code     int
}

// cli runs the binary's command line against the test's cluster as the
// user of kubeconfig, in the test's namespace.
func (h *harness) cli(kubeconfig string, args ...string) cliResult {
	h.T.Helper()
	args = append(args, "--kubeconfig="+kubeconfig, "-n", h.Namespace)
	cmd := exec.CommandContext(h.T.Context(), bin, args...)
	cmd.Env = []string{"HOME=" + h.T.TempDir()}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	r := cliResult{}
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			h.T.Fatalf("run %v: %v", args, err)
		}
		r.code = exit.ExitCode()
	}
	r.out, r.err = out.String(), errOut.String()
	return r
}

func (r cliResult) want(t *testing.T, code int, parts ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.out, r.err)
	}
	for _, p := range parts {
		if !strings.Contains(r.out+r.err, p) {
			t.Errorf("output lacks %q:\nstdout:\n%s\nstderr:\n%s", p, r.out, r.err)
		}
	}
}

// userKubeconfig returns a kubeconfig of a new ServiceAccount of the test's
// namespace bound to a ClusterRole of rules: a user with only these rights.
func (h *harness) userKubeconfig(user string, rules []rbacv1.PolicyRule) string {
	h.T.Helper()
	ctx, ns, c := h.T.Context(), h.Namespace, h.Client
	name := ns + "-" + user
	if _, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: user}}, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: user, Namespace: ns}}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}, Subjects: subjects}, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	h.T.Cleanup(func() {
		_ = c.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = c.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	})
	tok, err := c.CoreV1().ServiceAccounts(ns).CreateToken(ctx, user, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
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
	path := filepath.Join(h.T.TempDir(), user+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		h.T.Fatal(err)
	}
	return path
}

func modulesRule(verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{v1.Group}, Resources: []string{v1.ResourceModules}, Verbs: verbs}
}

// TestReconcileVerb: a module failing on something outside it (its
// objects' namespace is missing) backs off for an hour, and its status
// says so; a reconcile request runs it at once and reports the failure,
// and, once the namespace exists, the success. Users with fewer rights
// cannot request one, nor change more than they may.
func TestReconcileVerb(t *testing.T) {
	operatortest.InstallAPICRDs(t, cp.Config)
	h := newHarness(t)
	target := h.Namespace + "-rc"
	h.writeFile("010-rc-echo/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rc-out\n  namespace: "+target+"\n")
	h.chartModule("020-rc-other", "rcOther")
	h.SetConfig(map[string]string{"rcEchoEnabled": "true", "rcOtherEnabled": "true"})
	h.start("--retry-delay=1h", "--retry-max-delay=1h").WaitReady()
	failed := h.waitModule("rc-echo", "Failed with a retry in an hour", func(m v1.Module) bool {
		return m.Status.Phase == v1.PhaseFailed && m.Status.NextRetryTime != nil
	})
	if failed.Status.Attempts != 1 || time.Until(failed.Status.NextRetryTime.Time) < 50*time.Minute {
		t.Errorf("attempts %d, next retry %v: want 1 and about an hour from now", failed.Status.Attempts, failed.Status.NextRetryTime)
	}
	h.waitModule("rc-other", "Ready", conditionTrue(v1.ConditionReady))

	// Users with fewer rights: one who may only read modules, and one who
	// may patch rc-other alone.
	reader := h.userKubeconfig("reader", []rbacv1.PolicyRule{modulesRule("get", "list", "watch")})
	h.cli(reader, "reconcile", "module", "rc-echo").want(t, 1, "forbidden")
	narrow := h.userKubeconfig("narrow", []rbacv1.PolicyRule{modulesRule("get"),
		{APIGroups: []string{v1.Group}, Resources: []string{v1.ResourceModules}, ResourceNames: []string{"rc-other"}, Verbs: []string{"patch"}}})
	h.cli(narrow, "reconcile", "module", "rc-echo").want(t, 1, "forbidden")
	if m, _ := h.module("rc-echo"); m.Annotations[v1.ReconcileRequestAnnotation] != "" || m.Status.Attempts != 1 {
		t.Fatalf("a refused request reached rc-echo: annotations %v, attempts %d", m.Annotations, m.Status.Attempts)
	}
	// Patching rc-other's object may not touch its status (a subresource).
	narrowClient := h.dynFor(narrow)
	_, err := narrowClient.Resource(v1.ModulesResource()).Patch(t.Context(), "rc-other", types.MergePatchType,
		[]byte(`{"status":{"phase":"Failed","lastHandledReconcileAt":"forged"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("merge patch of rc-other's status through the main resource: %v", err)
	}
	if m, _ := h.module("rc-other"); m.Status.Phase != v1.PhaseReady || m.Status.LastHandledReconcileAt != "" {
		t.Errorf("rc-other after a status patch through the main resource: phase %s, handled %q", m.Status.Phase, m.Status.LastHandledReconcileAt)
	}
	// The narrow user's own module: a request runs it, and is handled.
	h.cli(narrow, "reconcile", "module", "rc-other").want(t, 0, "module rc-other: reconciled: phase Ready")

	// The failing module, asked for by the admin: the hour's backoff ends,
	// the run fails again and the command says so.
	r := h.cli(cp.Kubeconfig, "reconcile", "module", "rc-echo", "-o", "json")
	r.want(t, 1, `"phase": "Failed"`, "run failed")
	var got struct{ RequestedAt string }
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("reconcile -o json: %v\n%s", err, r.out)
	}
	m, _ := h.module("rc-echo")
	if m.Status.Attempts != 2 || m.Status.LastHandledReconcileAt != got.RequestedAt {
		t.Errorf("after the request: attempts %d, handled %q; want 2 and %q", m.Status.Attempts, m.Status.LastHandledReconcileAt, got.RequestedAt)
	}

	// What it lacked is there: the next request succeeds, at once.
	if _, err := h.Client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: target}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.Client.CoreV1().Namespaces().Delete(context.WithoutCancel(t.Context()), target, metav1.DeleteOptions{})
	})
	h.cli(cp.Kubeconfig, "reconcile", "module", "rc-echo").want(t, 0, "module rc-echo: reconciled: phase Ready")
	m, _ = h.module("rc-echo")
	if m.Status.Attempts != 0 || m.Status.NextRetryTime != nil {
		t.Errorf("after a success: attempts %d, next retry %v; want neither", m.Status.Attempts, m.Status.NextRetryTime)
	}
	// --wait=false returns once the request is written.
	h.cli(cp.Kubeconfig, "reconcile", "module", "rc-echo", "--wait=false").want(t, 0, "reconcile requested")
}

// dynFor is a dynamic client acting as the user of kubeconfig.
func (h *harness) dynFor(kubeconfig string) dynamic.Interface {
	h.T.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		h.T.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		h.T.Fatal(err)
	}
	return dyn
}

// TestModuleVerbs: history, tree and events of a module that failed once
// and changed values; rollback refused while the operator would undo it,
// then kept while suspended (a reconcile does not upgrade it); resume
// upgrades it to the desired state. A user who may patch Module objects
// but not the ConfigMap cannot suspend.
func TestModuleVerbs(t *testing.T) {
	operatortest.InstallAPICRDs(t, cp.Config)
	h := newHarness(t)
	h.chartModule("010-vb-echo", "vbEcho")
	h.SetConfig(map[string]string{"vbEchoEnabled": "true", "vbEcho": "greeting: one\n"})
	h.start().WaitReady()
	h.Poll("greeting one", func() bool { return h.greeting("vb-echo") == "one" })
	h.SetConfig(map[string]string{"vbEchoEnabled": "true", "vbEcho": "greeting: one\nfail: true\n"})
	h.waitModule("vb-echo", "Failed", func(m v1.Module) bool { return m.Status.Phase == v1.PhaseFailed })
	h.SetConfig(map[string]string{"vbEchoEnabled": "true", "vbEcho": "greeting: two\n"})
	h.Poll("greeting two", func() bool { return h.greeting("vb-echo") == "two" })
	h.waitModule("vb-echo", "Ready", conditionTrue(v1.ConditionReady))
	admin := cp.Kubeconfig

	h.cli(admin, "history", "module", "vb-echo").want(t, 0, "REVISION", "install", "values change", "Upgrade complete")
	var revs []struct {
		Revision                       int
		Reason, Status, ValuesChecksum string
	}
	if err := json.Unmarshal([]byte(h.cli(admin, "history", "module", "vb-echo", "-o", "json").out), &revs); err != nil {
		t.Fatal(err)
	}
	if len(revs) != 2 || revs[0].Reason != "install" || revs[1].Reason != "values change" || revs[0].ValuesChecksum == revs[1].ValuesChecksum {
		t.Errorf("history = %+v, want install then values change, with different checksums", revs)
	}
	h.cli(admin, "tree", "module", "vb-echo").want(t, 0, "Module/vb-echo", "└── ConfigMap/"+h.Namespace+"/vb-echo-out", "Current")
	h.cli(admin, "tree", "module", "vb-echo", "-o", "name").want(t, 0, "vb-echo-out")
	ev := h.cli(admin, "events", "module", "vb-echo")
	ev.want(t, 0, "ModuleRunFailed", "Module/vb-echo")
	if i, j := strings.Index(ev.out, "ModuleRunFailed"), strings.Index(ev.out, "ModuleRecovered"); j >= 0 && j < i {
		t.Errorf("events not in time order:\n%s", ev.out)
	}

	// Rollback: refused while the operator would undo it.
	h.cli(admin, "rollback", "module", "vb-echo", "1").want(t, 1, "module not suspended", "--suspend")
	if n := h.ReleaseRevision("vb-echo"); n != 2 {
		t.Fatalf("revision %d after a refused rollback, want 2", n)
	}
	// A user who may patch modules but not the ConfigMap cannot suspend.
	patcher := h.userKubeconfig("patcher", []rbacv1.PolicyRule{modulesRule("get", "patch")})
	h.cli(patcher, "suspend", "module", "vb-echo").want(t, 1, "forbidden")
	h.cli(patcher, "rollback", "module", "vb-echo", "1", "--suspend").want(t, 1, "forbidden")
	if _, ok := h.ConfigMapData("addon-operator")["vbEchoMaintenance"]; ok {
		t.Fatal("a user without rights on the ConfigMap suspended the module")
	}

	h.cli(admin, "rollback", "module", "vb-echo", "1", "--suspend").want(t, 0, "rolled back: revision 3 (Rollback to 1)", "stays suspended")
	if h.greeting("vb-echo") != "one" || h.ConfigMapData("addon-operator")["vbEchoMaintenance"] != "NoResourceReconciliation" {
		t.Errorf("after the rollback: greeting %q, maintenance key %q", h.greeting("vb-echo"), h.ConfigMapData("addon-operator")["vbEchoMaintenance"])
	}
	h.cli(admin, "history", "module", "vb-echo").want(t, 0, "Rollback to 1", "rollback")
	// A run of the suspended module keeps the rolled-back release.
	h.cli(admin, "reconcile", "module", "vb-echo").want(t, 0, "reconciled: phase Maintenance")
	if n, g := h.ReleaseRevision("vb-echo"), h.greeting("vb-echo"); n != 3 || g != "one" {
		t.Errorf("after a run in maintenance: revision %d, greeting %q; want 3, one", n, g)
	}

	h.cli(admin, "resume", "module", "vb-echo").want(t, 0, "resumed")
	h.Poll("greeting two again", func() bool { return h.greeting("vb-echo") == "two" })
	h.waitModule("vb-echo", "Ready after resume", conditionTrue(v1.ConditionReady))
	if n := h.ReleaseRevision("vb-echo"); n != 4 {
		t.Errorf("revision %d after resume, want 4", n)
	}
	// suspend and resume write the same key a person would.
	h.cli(admin, "suspend", "module", "vb-echo", "-o", "json").want(t, 0, `"action": "suspend"`)
	h.waitModule("vb-echo", "in maintenance", func(m v1.Module) bool { return m.Status.Phase == v1.PhaseMaintenance })
}
