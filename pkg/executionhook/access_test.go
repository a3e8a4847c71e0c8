package executionhook

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
)

// events drains the fake recorder's Events.
func events(c *Controller) []string {
	rec := c.events.(*record.FakeRecorder)
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// A hook runs nothing unless its requester may exec into every selected
// pod, is not in the operator's namespace and is not one of the operator's
// ServiceAccounts; the refusal is in the status, a condition and an Event.
func TestReconcileRefusesWithoutExecRight(t *testing.T) {
	for _, tc := range []struct {
		name       string
		edit       func(*hooksv1.ExecutionHook)
		deny       string // namespace/pod the authorizer refuses
		wantReason string
		wantInMsg  []string
	}{
		{name: "a pod the requester may not exec into", deny: "ns/p2", wantReason: reasonExecForbidden,
			wantInMsg: []string{`"alice"`, "create pods/exec", "pod p2", "namespace ns"}},
		{name: "no requester recorded", edit: func(h *hooksv1.ExecutionHook) { h.Spec.Requester = nil },
			wantReason: reasonNoRequester, wantInMsg: []string{"spec.requester is not recorded"}},
		{name: "the operator's namespace", edit: func(h *hooksv1.ExecutionHook) { h.Namespace = "operator" },
			wantReason: reasonOperatorNamespace, wantInMsg: []string{"operator's"}},
		{name: "the operator's ServiceAccount as requester", edit: func(h *hooksv1.ExecutionHook) {
			h.Spec.Requester = &authenticationv1.UserInfo{Username: "system:serviceaccount:operator:execution-hook-controller"}
		}, wantReason: reasonOperatorRequester, wantInMsg: []string{"not lent"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := baseHook()
			if tc.edit != nil {
				tc.edit(h)
			}
			pods := testPods()
			for i := range pods {
				pods[i].Namespace = h.Namespace
			}
			c, fx, fa := newTestControllerAccess(t, h, pods...)
			delete(fa.allowed, tc.deny)
			if _, err := c.reconcile(t.Context(), h.Namespace+"/h"); err != nil {
				t.Fatal(err)
			}
			hook, _ := c.get(t.Context(), h.Namespace, "h")
			if len(fx.calls) != 0 {
				t.Errorf("calls %v, want none", fx.calls)
			}
			if hook.Status.PreActionSucceed == nil || *hook.Status.PreActionSucceed {
				t.Errorf("preActionSucceed %v, want false", hook.Status.PreActionSucceed)
			}
			cond := meta.FindStatusCondition(hook.Status.Conditions, hooksv1.ConditionAuthorized)
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != tc.wantReason {
				t.Fatalf("Authorized condition %+v, want False %s", cond, tc.wantReason)
			}
			for _, part := range tc.wantInMsg {
				if !strings.Contains(cond.Message, part) || !strings.Contains(hook.Status.Message, part) {
					t.Errorf("condition message %q / status message %q: want %q in both", cond.Message, hook.Status.Message, part)
				}
			}
			evs := events(c)
			if !strings.Contains(strings.Join(evs, "\n"), "Warning Forbidden PreAction not run: "+cond.Message) {
				t.Errorf("events %q, want a Forbidden one with the message", evs)
			}
		})
	}
}

// A requester who loses the right after the PreAction does not get the
// PostAction run: it fails, unrun, and the finalizer goes.
func TestReconcilePostActionRefused(t *testing.T) {
	h := baseHook()
	h.Finalizers = []string{hooksv1.Finalizer}
	h.DeletionTimestamp = ptr.To(metav1.Now())
	h.Status.ContainerExecutionHookStatuses = entries("p1", "db", "p2", "db")
	for i := range h.Status.ContainerExecutionHookStatuses {
		h.Status.ContainerExecutionHookStatuses[i].PreActionStatus = &hooksv1.ExecutionHookActionStatus{
			ActionTimestamp: ptr.To(metav1.Now()), ActionSucceed: ptr.To(true)}
	}
	h.Status.PreActionSucceed = ptr.To(true)
	c, fx, fa := newTestControllerAccess(t, h, testPods()...)
	delete(fa.allowed, "ns/p1")
	if _, err := c.reconcile(t.Context(), "ns/h"); err != nil {
		t.Fatal(err)
	}
	hook, _ := c.get(t.Context(), "ns", "h")
	if len(fx.calls) != 0 {
		t.Errorf("calls %v, want none", fx.calls)
	}
	for _, e := range hook.Status.ContainerExecutionHookStatuses {
		if st := e.PostActionStatus; st == nil || st.ActionTimestamp != nil || st.ActionSucceed == nil || *st.ActionSucceed {
			t.Errorf("%s: PostAction status %+v, want failed without a start", e.PodName, st)
		}
	}
	if msg := hook.Status.ContainerExecutionHookStatuses[1].PostActionStatus.Error.Message; !strings.Contains(msg, "pod p1") {
		t.Errorf("error %q, want the pod refused", msg)
	}
	if *hook.Status.PostActionSucceed || hasFinalizer(hook) {
		t.Errorf("status %+v finalizers %v: want PostAction failed and no finalizer", hook.Status, hook.Finalizers)
	}
	if diff := cmp.Diff([]string{"alice@ns/p1"}, fa.asked); diff != "" {
		t.Errorf("reviews (-want +got):\n%s", diff)
	}
}

// The output of a command reaches the status only with captureOutput, and
// never an Event.
func TestReconcileCapturesOutputOnlyWhenAsked(t *testing.T) {
	for _, capture := range []bool{false, true} {
		h := baseHook()
		h.Spec.PreAction.CaptureOutput = capture
		c, fx := newTestController(t, h, testPods()...)
		fx.fail["p2/db:freeze"] = 1
		if _, err := c.reconcile(t.Context(), "ns/h"); err != nil {
			t.Fatal(err)
		}
		hook, _ := c.get(t.Context(), "ns", "h")
		got := make([]string, 0, len(hook.Status.ContainerExecutionHookStatuses))
		for _, e := range hook.Status.ContainerExecutionHookStatuses {
			got = append(got, e.PreActionStatus.Output)
		}
		want := []string{"", ""}
		if capture {
			want = []string{"output of p1/db:freeze", "output of p2/db:freeze"}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("captureOutput %v: outputs (-want +got):\n%s", capture, diff)
		}
		if msg := hook.Status.ContainerExecutionHookStatuses[1].PreActionStatus.Error.Message; strings.Contains(msg, "output of") {
			t.Errorf("captureOutput %v: error %q holds the output", capture, msg)
		}
		if evs := strings.Join(events(c), "\n"); strings.Contains(evs, "output of") {
			t.Errorf("captureOutput %v: events hold the output:\n%s", capture, evs)
		}
	}
}

func TestTailBufferBound(t *testing.T) {
	b := &tailBuffer{max: 8}
	_, _ = b.Write([]byte("0123456789é"))
	if got := b.String(); got != "456789é" {
		t.Errorf("tail %q, want the last bytes without a cut rune", got)
	}
	b = &tailBuffer{max: 3}
	_, _ = b.Write([]byte("aé01"))
	if got := b.String(); got != "01" {
		t.Errorf("tail %q, want the cut rune dropped", got)
	}
}

// A missing template is a condition and one Event, retried with backoff
// (errWaiting); once it exists it is copied into the status, not the
// spec, and the hook runs.
func TestReconcileTemplateNotFound(t *testing.T) {
	h := baseHook()
	h.Spec.PreAction, h.Spec.PostAction = nil, nil
	h.Spec.ExecutionHookTemplateName = "freeze"
	c, fx := newTestController(t, h, testPods()...)
	for range 2 {
		if _, err := c.reconcile(t.Context(), "ns/h"); !errors.Is(err, errWaiting) {
			t.Fatalf("reconcile: %v, want errWaiting", err)
		}
	}
	hook, _ := c.get(t.Context(), "ns", "h")
	cond := meta.FindStatusCondition(hook.Status.Conditions, hooksv1.ConditionTemplateFound)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "TemplateNotFound" || !strings.Contains(hook.Status.Message, `"freeze" not found`) {
		t.Fatalf("condition %+v message %q, want TemplateFound False", cond, hook.Status.Message)
	}
	if evs := events(c); len(evs) != 1 || !strings.Contains(evs[0], "TemplateNotFound") {
		t.Errorf("events %q, want one TemplateNotFound over two reconciles", evs)
	}

	tpl := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": hooksv1.Group + "/" + hooksv1.Version, "kind": "ExecutionHookTemplate",
		"metadata":  map[string]any{"namespace": "ns", "name": "freeze"},
		"preAction": map[string]any{"exec": map[string]any{"command": []any{"freeze"}}},
	}}
	if _, err := c.dyn.Resource(hooksv1.ExecutionHookTemplatesGVR()).Namespace("ns").Create(t.Context(), tpl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.reconcile(t.Context(), "ns/h"); err != nil {
		t.Fatal(err)
	}
	hook, _ = c.get(t.Context(), "ns", "h")
	if hook.Spec.PreAction != nil || hook.Status.Template == nil || hook.Status.Message != "" {
		t.Errorf("spec.preAction %v, status.template %v, message %q: want the template in the status only", hook.Spec.PreAction, hook.Status.Template, hook.Status.Message)
	}
	if cond := meta.FindStatusCondition(hook.Status.Conditions, hooksv1.ConditionTemplateFound); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("TemplateFound %+v, want True", cond)
	}
	if diff := cmp.Diff([]string{"p1/db:freeze", "p2/db:freeze"}, fx.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
