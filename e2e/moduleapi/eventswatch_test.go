package moduleapi

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// moduleEvent records an Event about the Module name, where the API server
// keeps Events of cluster-scoped objects.
func (h *harness) moduleEvent(module, reason string) {
	h.T.Helper()
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: module + "-", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{APIVersion: "addon-operator.io/v1alpha1", Kind: "Module", Name: module},
		Reason:         reason, Message: "recorded by the test", Type: corev1.EventTypeNormal,
		FirstTimestamp: now, LastTimestamp: now, Count: 1, Source: corev1.EventSource{Component: "e2e"},
	}
	if _, err := h.Client.CoreV1().Events(metav1.NamespaceDefault).Create(h.T.Context(), ev, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
}

// TestEventsWatch: events --watch prints what was recorded before it
// started, then each Event recorded while it runs, and ends without an
// error on SIGINT. A user who may list Events but not watch them is told
// so.
func TestEventsWatch(t *testing.T) {
	h := newHarness(t)
	module := h.Namespace + "-ew" // a name no other test records Events for
	h.moduleEvent(module, "BeforeTheWatch")

	cmd := exec.CommandContext(t.Context(), bin, "events", "module", module, "--watch", "--objects=false",
		"--kubeconfig="+cp.Kubeconfig, "-n", h.Namespace)
	cmd.Env = []string{"HOME=" + t.TempDir()}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	var printed []string
	waitLine := func(part string) {
		t.Helper()
		timeout := time.NewTimer(operatortest.Timeout)
		defer timeout.Stop()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					_ = cmd.Wait() // stderr is complete once it returns
					t.Fatalf("events --watch ended before printing %q; stderr:\n%s", part, stderr.String())
				}
				printed = append(printed, l)
				if strings.Contains(l, part) {
					return
				}
			case <-timeout.C:
				t.Fatalf("events --watch did not print %q within %s", part, operatortest.Timeout)
			}
		}
	}
	waitLine("BeforeTheWatch")
	h.moduleEvent(module, "WhileWatching")
	h.moduleEvent(module+"-other", "OtherModule")
	h.moduleEvent(module, "WatchedAgain")
	waitLine("WhileWatching")
	waitLine("WatchedAgain")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		printed = append(printed, l)
	}
	if out := strings.Join(printed, "\n"); strings.Contains(out, "OtherModule") {
		t.Errorf("events --watch printed another module's Event:\n%s", out)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("events --watch after SIGINT: %v; stderr:\n%s", err, stderr.String())
	}

	// list without watch: the list is printed, then the refusal.
	lister := h.userKubeconfig("lister", nil)
	h.grantEvents("lister", "get", "list")
	r := h.cli(lister, "events", "module", module, "--watch", "--objects=false")
	r.want(t, 1, "BeforeTheWatch", "watch the Events of module", "forbidden", `cannot watch resource "events"`)
}

// grantEvents lets the ServiceAccount user of the test's namespace use
// verbs on Events in "default", where a Module's Events are.
func (h *harness) grantEvents(user string, verbs ...string) {
	h.T.Helper()
	ctx, c, name := h.T.Context(), h.Client, h.Namespace+"-"+user+"-events"
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: verbs}}}
	if _, err := c.RbacV1().Roles(metav1.NamespaceDefault).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: user, Namespace: h.Namespace}}}
	if _, err := c.RbacV1().RoleBindings(metav1.NamespaceDefault).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	h.T.Cleanup(func() {
		ctx := context.WithoutCancel(ctx) // the test's context has ended
		_ = c.RbacV1().RoleBindings(metav1.NamespaceDefault).Delete(ctx, name, metav1.DeleteOptions{})
		_ = c.RbacV1().Roles(metav1.NamespaceDefault).Delete(ctx, name, metav1.DeleteOptions{})
	})
}
