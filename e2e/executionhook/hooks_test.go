package executionhook

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
)

// TestExecutionHooks runs the module's controller as the module's
// ServiceAccount against hooks in an allowed namespace.
func TestExecutionHooks(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	e := installModule(t, []string{ns})
	n := startNode(t)
	ctrl := startController(t, e, ns)
	metrics := ctrl.metricsURL(t)

	t.Run("group", func(t *testing.T) {
		t.Run("ExecuteAll", func(t *testing.T) { t.Parallel(); testExecuteAll(t, n, ns) })
		t.Run("ExecuteOnceFromTemplate", func(t *testing.T) { t.Parallel(); testExecuteOnce(t, n, ns) })
		t.Run("FailingAndHanging", func(t *testing.T) { t.Parallel(); testFailures(t, n, ns) })
		t.Run("Expiration", func(t *testing.T) { t.Parallel(); testExpiration(t, n, ns) })
		t.Run("Validation", func(t *testing.T) { t.Parallel(); testValidation(t, ns) })
	})
	if t.Failed() {
		return
	}
	// Counted over the group: 2 + 1 + 1 successful PreActions and as many
	// PostActions, 2 failed PreActions (one timed out).
	get := func(name string, labels map[string]string) float64 {
		return scrape(t, metrics, name, labels)
	}
	if got := get("addon_operator_execution_hook_action_runs_total", map[string]string{"action": "pre", "result": "success"}); got != 4 {
		t.Errorf("successful PreActions = %v, want 4", got)
	}
	if got := get("addon_operator_execution_hook_action_failures_total", map[string]string{"action": "pre"}); got != 2 {
		t.Errorf("failed PreActions = %v, want 2", got)
	}
	if got := get("addon_operator_execution_hook_action_runs_total", map[string]string{"action": "pre", "result": "timeout"}); got != 1 {
		t.Errorf("timed-out PreActions = %v, want 1", got)
	}
	if got := get("addon_operator_execution_hook_action_duration_seconds", map[string]string{"action": "post"}); got != 4 {
		t.Errorf("PostAction durations observed = %v, want 4", got)
	}
}

// appendCmd is an action that appends word to the file runs in the
// container's directory.
func appendCmd(word string) string {
	return fmt.Sprintf(`{"exec": {"command": ["sh", "-c", "echo %s >> runs"]}, "actionTimeoutSeconds": 20}`, word)
}

func testExecuteAll(t *testing.T, n *node, ns string) {
	t.Helper()
	for _, p := range []string{"all-a", "all-b"} {
		n.pod(t, ns, p, map[string]string{"app": "all-db"}, "db", "sidecar")
	}
	n.pod(t, ns, "all-other", map[string]string{"app": "other"}, "db")
	create(t, hooksv1.ExecutionHooksGVR(), ns, `{"apiVersion": "hooks.addon-operator.io/v1alpha1", "kind": "ExecutionHook",
		"metadata": {"name": "all"},
		"spec": {"podSelector": {"matchLabels": {"app": "all-db"}}, "containerSelector": {"containerName": "db"},
			"policy": "ExecuteAll", "preAction": `+appendCmd("freeze")+`,
			"postAction": {"exec": {"command": ["sh", "-c", "while [ ! -e go ]; do sleep 0.1; done; echo thaw >> runs"]}, "actionTimeoutSeconds": 60}}}`)
	hook := waitHook(t, ns, "all", "PreAction done", preDone)
	if !*hook.Status.PreActionSucceed || hook.Status.Containers != 2 {
		t.Fatalf("status %+v, want PreAction succeeded in 2 containers", hook.Status)
	}
	columns, rows := table(t, ns)
	if diff := cmp.Diff([]string{"Name", "Template", "Policy", "Containers", "PreAction", "PostAction", "Message", "Requester", "Age"}, columns); diff != "" {
		t.Errorf("printer columns (-want +got):\n%s", diff)
	}
	if row := rows["all"]; len(row) < 6 || row[2] != "ExecuteAll" || row[3] != float64(2) || row[4] != true || row[5] != nil {
		t.Errorf("kubectl get row %v, want policy ExecuteAll, 2 containers, PreAction true, PostAction empty", row)
	}
	if !slices.Contains(hook.Finalizers, hooksv1.Finalizer) {
		t.Errorf("finalizers %v, want %s", hook.Finalizers, hooksv1.Finalizer)
	}
	for _, p := range []string{"all-a", "all-b"} {
		if diff := cmp.Diff([]string{"freeze"}, n.lines(t, ns, p, "db")); diff != "" {
			t.Errorf("%s/db runs (-want +got):\n%s", p, diff)
		}
		if got := n.lines(t, ns, p, "sidecar"); got != nil {
			t.Errorf("%s/sidecar ran %v, want nothing (not selected)", p, got)
		}
	}
	if got := n.lines(t, ns, "all-other", "db"); got != nil {
		t.Errorf("all-other/db ran %v, want nothing (not selected)", got)
	}

	// The PostAction waits for a file "go": until then the finalizer must
	// hold the deleted hook.
	deleteHook(t, ns, "all")
	waitHook(t, ns, "all", "PostAction started in the first container", func(h *hooksv1.ExecutionHook) bool {
		st := h.Status.ContainerExecutionHookStatuses[0].PostActionStatus
		return h.DeletionTimestamp != nil && st != nil && st.ActionTimestamp != nil
	})
	for _, p := range []string{"all-a", "all-b"} {
		if err := os.WriteFile(filepath.Join(n.ContainerDir(ns, p, "db"), "go"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	waitGone(t, ns, "all")
	for _, p := range []string{"all-a", "all-b"} {
		if diff := cmp.Diff([]string{"freeze", "thaw"}, n.lines(t, ns, p, "db")); diff != "" {
			t.Errorf("%s/db runs after delete (-want +got):\n%s", p, diff)
		}
	}
	reasons := eventReasons(t, cp.Clientset(t), ns, "all")
	for _, want := range []string{"PreActionSucceeded", "PostActionSucceeded"} {
		if !slices.Contains(reasons, want) {
			t.Errorf("events %v, want %s", reasons, want)
		}
	}
}

func testExecuteOnce(t *testing.T, n *node, ns string) {
	t.Helper()
	for _, p := range []string{"once-c", "once-a", "once-b"} {
		n.pod(t, ns, p, map[string]string{"app": "once"}, "db")
	}
	create(t, hooksv1.ExecutionHookTemplatesGVR(), ns, `{"apiVersion": "hooks.addon-operator.io/v1alpha1", "kind": "ExecutionHookTemplate",
		"metadata": {"name": "once"}, "policy": "ExecuteOnce", "preAction": `+appendCmd("freeze")+`, "postAction": `+appendCmd("thaw")+`}`)
	create(t, hooksv1.ExecutionHooksGVR(), ns, `{"apiVersion": "hooks.addon-operator.io/v1alpha1", "kind": "ExecutionHook",
		"metadata": {"name": "once"}, "spec": {"podSelector": {"matchLabels": {"app": "once"}}, "executionHookTemplateName": "once"}}`)
	hook := waitHook(t, ns, "once", "PreAction done", preDone)
	// The template is copied into the status: the spec stays as its requester wrote it.
	if tpl := hook.Status.Template; !*hook.Status.PreActionSucceed || tpl == nil || tpl.Policy != hooksv1.ExecuteOnce || tpl.PostAction == nil || hook.Spec.PreAction != nil {
		t.Fatalf("hook %+v, want the template copied into the status and PreAction succeeded", hook)
	}
	var ran []string
	for _, p := range []string{"once-a", "once-b", "once-c"} {
		if got := n.lines(t, ns, p, "db"); got != nil {
			ran = append(ran, p+":"+strings.Join(got, ","))
		}
	}
	if diff := cmp.Diff([]string{"once-a:freeze"}, ran); diff != "" {
		t.Errorf("pods that ran (-want +got):\n%s", diff)
	}
	deleteHook(t, ns, "once")
	waitGone(t, ns, "once")
	if diff := cmp.Diff([]string{"freeze", "thaw"}, n.lines(t, ns, "once-a", "db")); diff != "" {
		t.Errorf("once-a runs after delete (-want +got):\n%s", diff)
	}
}

func testFailures(t *testing.T, n *node, ns string) {
	t.Helper()
	n.pod(t, ns, "bad", nil, "db")
	create(t, hooksv1.ExecutionHooksGVR(), ns, `{"apiVersion": "hooks.addon-operator.io/v1alpha1", "kind": "ExecutionHook",
		"metadata": {"name": "failing"}, "spec": {"podContainerNamesList": [{"podName": "bad", "containerNames": ["db"]}],
		"preAction": {"exec": {"command": ["sh", "-c", "echo cannot freeze >&2; exit 2"]}, "captureOutput": true}}}`)
	create(t, hooksv1.ExecutionHooksGVR(), ns, `{"apiVersion": "hooks.addon-operator.io/v1alpha1", "kind": "ExecutionHook",
		"metadata": {"name": "hanging"}, "spec": {"podContainerNamesList": [{"podName": "bad"}],
		"preAction": {"exec": {"command": ["sleep", "60"]}, "actionTimeoutSeconds": 2}}}`)
	for name, want := range map[string]string{"failing": "command exited with status 2", "hanging": "timed out after 2s"} {
		hook := waitHook(t, ns, name, "PreAction done", preDone)
		if *hook.Status.PreActionSucceed {
			t.Errorf("%s: PreActionSucceed true, want false", name)
			continue
		}
		st := hook.Status.ContainerExecutionHookStatuses[0].PreActionStatus
		if st == nil || st.ActionSucceed == nil || *st.ActionSucceed || st.Error == nil || !strings.Contains(st.Error.Message, want) {
			t.Errorf("%s: container status %+v, want failed with %q", name, st, want)
		}
		// The output is kept (captureOutput) in its own field, never in the error.
		if wantOut := map[string]string{"failing": "cannot freeze"}[name]; st != nil && (st.Output != wantOut || st.Error != nil && strings.Contains(st.Error.Message, "cannot freeze")) {
			t.Errorf("%s: output %q, error %+v: want output %q and an error without it", name, st.Output, st.Error, wantOut)
		}
		operatortest.Poll(t, name+" PreActionFailed event", func() bool {
			return slices.Contains(eventReasons(t, cp.Clientset(t), ns, name), "PreActionFailed")
		})
		// No PostAction: deletion only drops the finalizer.
		deleteHook(t, ns, name)
		waitGone(t, ns, name)
	}
}

func testExpiration(t *testing.T, n *node, ns string) {
	t.Helper()
	n.pod(t, ns, "exp", nil, "db")
	create(t, hooksv1.ExecutionHooksGVR(), ns, `{"apiVersion": "hooks.addon-operator.io/v1alpha1", "kind": "ExecutionHook",
		"metadata": {"name": "exp"}, "spec": {"podContainerNamesList": [{"podName": "exp"}], "expirationSeconds": 3,
		"preAction": `+appendCmd("freeze")+`, "postAction": `+appendCmd("thaw")+`}}`)
	hook := waitHook(t, ns, "exp", "PostAction done without a deletion", postDone)
	if !*hook.Status.PostActionSucceed || hook.DeletionTimestamp != nil {
		t.Errorf("status %+v, deletion %v: want PostAction succeeded, not deleted", hook.Status, hook.DeletionTimestamp)
	}
	if diff := cmp.Diff([]string{"freeze", "thaw"}, n.lines(t, ns, "exp", "db")); diff != "" {
		t.Errorf("runs after expiration (-want +got):\n%s", diff)
	}
	deleteHook(t, ns, "exp")
	waitGone(t, ns, "exp")
	if diff := cmp.Diff([]string{"freeze", "thaw"}, n.lines(t, ns, "exp", "db")); diff != "" {
		t.Errorf("runs after delete (-want +got): the PostAction ran again\n%s", diff)
	}
	if !slices.Contains(eventReasons(t, cp.Clientset(t), ns, "exp"), "Expired") {
		t.Errorf("no Expired event")
	}
}

// testValidation checks that the CRD's schema rejects bad hooks at
// admission, with a message naming the rule.
func testValidation(t *testing.T, ns string) {
	t.Helper()
	for name, tc := range map[string]struct{ spec, want string }{
		"no-action":    {`{"podSelector": {}}`, "set preAction or executionHookTemplateName"},
		"no-selection": {`{"preAction": ` + appendCmd("x") + `}`, "select containers with podContainerNamesList or podSelector"},
		"bad-policy":   {`{"podSelector": {}, "policy": "Sometimes", "preAction": ` + appendCmd("x") + `}`, `Unsupported value: "Sometimes"`},
		"no-command":   {`{"podSelector": {}, "preAction": {"exec": {"command": []}}}`, "spec.preAction.exec.command"},
		"zero-timeout": {`{"podSelector": {}, "preAction": {"exec": {"command": ["true"]}, "actionTimeoutSeconds": 0}}`, "actionTimeoutSeconds"},
	} {
		u := &unstructured.Unstructured{}
		manifest := `{"apiVersion": "hooks.addon-operator.io/v1alpha1", "kind": "ExecutionHook", "metadata": {"name": "` + name + `"}, "spec": ` + tc.spec + `}`
		if err := u.UnmarshalJSON([]byte(manifest)); err != nil {
			t.Fatal(err)
		}
		_, err := dyn(t).Resource(hooksv1.ExecutionHooksGVR()).Namespace(ns).Create(t.Context(), u, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: create = %v, want rejected with %q", name, err, tc.want)
		}
	}
}
