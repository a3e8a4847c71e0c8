package executionhook

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
)

// fakeExec records the commands run and checks, at each, that the stored
// hook already holds the container's start timestamp.
type fakeExec struct {
	t     *testing.T
	c     *Controller
	mu    sync.Mutex
	calls []string
	fail  map[string]int // pod/container:command -> failures before success
	// notStarted counts refusals before the command starts, by call.
	notStarted map[string]int
}

func (f *fakeExec) Exec(ctx context.Context, ns, pod, container string, command []string, output io.Writer) error {
	hook, err := f.c.get(ctx, ns, "h")
	if err != nil {
		return err
	}
	post := strings.Contains(strings.Join(command, " "), "thaw")
	for _, e := range hook.Status.ContainerExecutionHookStatuses {
		st := e.PreActionStatus
		if post {
			st = e.PostActionStatus
		}
		if e.PodName == pod && e.ContainerName == container && (st == nil || st.ActionTimestamp == nil) {
			f.t.Errorf("%s/%s: %v runs before its start is stored", pod, container, command)
		}
	}
	call := pod + "/" + container + ":" + strings.Join(command, " ")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	if f.notStarted[call] > 0 {
		f.notStarted[call]--
		return fmt.Errorf("exec: %w: upgrade refused", ErrNotStarted)
	}
	if output != nil {
		_, _ = fmt.Fprintf(output, "output of %s\n", call)
	}
	if f.fail[call] > 0 {
		f.fail[call]--
		return &ExitError{Code: 1}
	}
	return nil
}

// fakeAccess allows exec on the pods it lists, for any user, and records
// who was asked about.
type fakeAccess struct {
	mu      sync.Mutex
	allowed map[string]bool // namespace/pod
	asked   []string        // user@namespace/pod
}

func (f *fakeAccess) CanExec(_ context.Context, user authenticationv1.UserInfo, ns, pod string) (bool, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, user.Username+"@"+ns+"/"+pod)
	return f.allowed[ns+"/"+pod], "", nil
}

func newTestController(t *testing.T, hook *hooksv1.ExecutionHook, pods ...corev1.Pod) (*Controller, *fakeExec) {
	t.Helper()
	c, fx, _ := newTestControllerAccess(t, hook, pods...)
	return c, fx
}

// newTestControllerAccess returns a controller in whose authorizer every
// pod given may be exec'd into, and that authorizer.
func newTestControllerAccess(t *testing.T, hook *hooksv1.ExecutionHook, pods ...corev1.Pod) (*Controller, *fakeExec, *fakeAccess) {
	t.Helper()
	u, err := toUnstructured(hook)
	if err != nil {
		t.Fatal(err)
	}
	u.SetAPIVersion(hooksv1.Group + "/" + hooksv1.Version)
	u.SetKind("ExecutionHook")
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		hooksv1.ExecutionHooksGVR():         "ExecutionHookList",
		hooksv1.ExecutionHookTemplatesGVR(): "ExecutionHookTemplateList",
	}, u)
	objs := make([]runtime.Object, 0, len(pods))
	for i := range pods {
		objs = append(objs, &pods[i])
	}
	fx := &fakeExec{t: t, fail: map[string]int{}}
	fa := &fakeAccess{allowed: map[string]bool{}}
	for i := range pods {
		fa.allowed[pods[i].Namespace+"/"+pods[i].Name] = true
	}
	c := New(Options{DefaultActionTimeout: 10 * time.Second, Workers: 1, Resync: time.Minute, OperatorNamespace: "operator"}, Params{
		Dynamic: dyn, Client: fake.NewClientset(objs...), Exec: fx, Access: fa, Events: record.NewFakeRecorder(100),
		Metrics: NewMetrics(), Log: slog.New(slog.DiscardHandler), Clock: clock.RealClock{},
	})
	fx.c = c
	t.Cleanup(c.queue.ShutDown)
	return c, fx, fa
}

func action(word string) *hooksv1.ExecutionHookAction {
	return &hooksv1.ExecutionHookAction{Exec: hooksv1.ExecAction{Command: []string{word}}, ActionTimeoutSeconds: ptr.To[int64](5)}
}

func baseHook() *hooksv1.ExecutionHook {
	h := &hooksv1.ExecutionHook{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h"}}
	h.Spec.Requester = &authenticationv1.UserInfo{Username: "alice", Groups: []string{"team"}}
	h.Spec.PodContainerNamesList = []hooksv1.PodContainerNames{{PodName: "p1"}, {PodName: "p2"}}
	h.Spec.PreAction, h.Spec.PostAction = action("freeze"), action("thaw")
	return h
}

func testPods() []corev1.Pod {
	p1, p2 := pod("p1", nil, "db"), pod("p2", nil, "db")
	p1.Namespace, p2.Namespace = "ns", "ns"
	return []corev1.Pod{p1, p2}
}

func results(hook *hooksv1.ExecutionHook, post bool) []string {
	var out []string
	for _, e := range hook.Status.ContainerExecutionHookStatuses {
		st := e.PreActionStatus
		if post {
			st = e.PostActionStatus
		}
		switch {
		case st == nil || st.ActionTimestamp == nil:
			out = append(out, e.PodName+":-")
		case st.ActionSucceed == nil:
			out = append(out, e.PodName+":started")
		default:
			out = append(out, fmt.Sprintf("%s:%v", e.PodName, *st.ActionSucceed))
		}
	}
	return out
}

func TestReconcilePreAction(t *testing.T) {
	c, fx := newTestController(t, baseHook(), testPods()...)
	if _, err := c.reconcile(t.Context(), "ns/h"); err != nil {
		t.Fatal(err)
	}
	hook, _ := c.get(t.Context(), "ns", "h")
	if diff := cmp.Diff([]string{"p1/db:freeze", "p2/db:freeze"}, fx.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"p1:true", "p2:true"}, results(hook, false)); diff != "" {
		t.Errorf("PreAction results (-want +got):\n%s", diff)
	}
	if !*hook.Status.PreActionSucceed || hook.Status.PostActionSucceed != nil || !hasFinalizer(hook) {
		t.Errorf("status %+v finalizers %v: want PreAction succeeded, PostAction pending, finalizer set", hook.Status, hook.Finalizers)
	}
	// Reconciling again runs nothing.
	if _, err := c.reconcile(t.Context(), "ns/h"); err != nil {
		t.Fatal(err)
	}
	if len(fx.calls) != 2 {
		t.Errorf("calls after a second reconcile: %v", fx.calls)
	}
}

// A PreAction whose start is stored but whose end is not (the controller
// stopped) is never run again: it is marked failed.
func TestReconcileAfterRestart(t *testing.T) {
	h := baseHook()
	h.Finalizers = []string{hooksv1.Finalizer}
	h.Status.ContainerExecutionHookStatuses = entries("p1", "db", "p2", "db")
	h.Status.ContainerExecutionHookStatuses[0].PreActionStatus = &hooksv1.ExecutionHookActionStatus{ActionTimestamp: ptr.To(metav1.Now())}
	c, fx := newTestController(t, h, testPods()...)
	if _, err := c.reconcile(t.Context(), "ns/h"); err != nil {
		t.Fatal(err)
	}
	hook, _ := c.get(t.Context(), "ns", "h")
	if diff := cmp.Diff([]string{"p2/db:freeze"}, fx.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"p1:false", "p2:true"}, results(hook, false)); diff != "" {
		t.Errorf("PreAction results (-want +got):\n%s", diff)
	}
	if msg := hook.Status.ContainerExecutionHookStatuses[0].PreActionStatus.Error.Message; !strings.Contains(msg, "not run again") {
		t.Errorf("error %q, want it to say the action is not run again", msg)
	}
	if *hook.Status.PreActionSucceed {
		t.Errorf("PreActionSucceed true, want false")
	}
}

// Deletion runs the PostAction where the PreAction started, retrying a
// failing one until it succeeds, then drops the finalizer.
func TestReconcileDeletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := baseHook()
		h.Finalizers = []string{hooksv1.Finalizer}
		h.DeletionTimestamp = ptr.To(metav1.Now())
		h.Status.ContainerExecutionHookStatuses = entries("p1", "db", "p2", "db")
		h.Status.ContainerExecutionHookStatuses[0].PreActionStatus = &hooksv1.ExecutionHookActionStatus{
			ActionTimestamp: ptr.To(metav1.Now()), ActionSucceed: ptr.To(true)}
		h.Status.PreActionSucceed = ptr.To(true)
		c, fx := newTestController(t, h, testPods()...)
		fx.fail["p1/db:thaw"] = 2
		if _, err := c.reconcile(t.Context(), "ns/h"); err != nil {
			t.Fatal(err)
		}
		hook, _ := c.get(t.Context(), "ns", "h")
		if diff := cmp.Diff([]string{"p1/db:thaw", "p1/db:thaw", "p1/db:thaw"}, fx.calls); diff != "" {
			t.Errorf("calls (-want +got): p2 never started its PreAction\n%s", diff)
		}
		if diff := cmp.Diff([]string{"p1:true", "p2:-"}, results(hook, true)); diff != "" {
			t.Errorf("PostAction results (-want +got):\n%s", diff)
		}
		if !*hook.Status.PostActionSucceed || hasFinalizer(hook) {
			t.Errorf("status %+v finalizers %v: want PostAction succeeded and no finalizer", hook.Status, hook.Finalizers)
		}
	})
}

// A PostAction failing until its timeout is recorded as failed, the other
// containers still run it, and the finalizer goes anyway.
func TestReconcilePostActionTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := baseHook()
		h.Finalizers = []string{hooksv1.Finalizer}
		h.DeletionTimestamp = ptr.To(metav1.Now())
		h.Status.ContainerExecutionHookStatuses = entries("p1", "db", "p2", "db")
		for i := range h.Status.ContainerExecutionHookStatuses {
			h.Status.ContainerExecutionHookStatuses[i].PreActionStatus = &hooksv1.ExecutionHookActionStatus{
				ActionTimestamp: ptr.To(metav1.Now()), ActionSucceed: ptr.To(true)}
		}
		h.Status.PreActionSucceed = ptr.To(true)
		c, fx := newTestController(t, h, testPods()...)
		fx.fail["p1/db:thaw"] = 1000
		start := time.Now()
		if _, err := c.reconcile(t.Context(), "ns/h"); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < 5*time.Second {
			t.Errorf("gave up after %s, want retries until the 5s timeout", took)
		}
		hook, _ := c.get(t.Context(), "ns", "h")
		if diff := cmp.Diff([]string{"p1:false", "p2:true"}, results(hook, true)); diff != "" {
			t.Errorf("PostAction results (-want +got):\n%s", diff)
		}
		msg := hook.Status.ContainerExecutionHookStatuses[0].PostActionStatus.Error.Message
		if !strings.Contains(msg, "timed out after 5s") || !strings.Contains(msg, "exited with status 1") {
			t.Errorf("error %q, want the timeout and the last failure", msg)
		}
		if *hook.Status.PostActionSucceed || hasFinalizer(hook) {
			t.Errorf("status %+v finalizers %v: want PostAction failed and no finalizer", hook.Status, hook.Finalizers)
		}
	})
}

// A hook deleted before its template exists runs nothing and lets go.
func TestReconcileDeletedBeforeTemplate(t *testing.T) {
	h := &hooksv1.ExecutionHook{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h",
		Finalizers: []string{hooksv1.Finalizer}, DeletionTimestamp: ptr.To(metav1.Now())}}
	h.Spec.ExecutionHookTemplateName = "missing"
	h.Spec.PodSelector = &metav1.LabelSelector{}
	c, fx := newTestController(t, h, testPods()...)
	if _, err := c.reconcile(t.Context(), "ns/h"); err != nil {
		t.Fatal(err)
	}
	hook, _ := c.get(t.Context(), "ns", "h")
	if len(fx.calls) != 0 || hasFinalizer(hook) || hook.Status.PreActionSucceed != nil {
		t.Errorf("calls %v, finalizers %v, status %+v: want nothing run, no finalizer, no PreAction summary", fx.calls, hook.Finalizers, hook.Status)
	}
}

// A PreAction whose exec could not start is tried again until it runs; one
// that ran and failed is not.
func TestReconcilePreActionNotStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fx := newTestController(t, baseHook(), testPods()...)
		fx.notStarted = map[string]int{"p1/db:freeze": 2}
		fx.fail["p2/db:freeze"] = 1
		if _, err := c.reconcile(t.Context(), "ns/h"); err != nil {
			t.Fatal(err)
		}
		hook, _ := c.get(t.Context(), "ns", "h")
		if diff := cmp.Diff([]string{"p1/db:freeze", "p1/db:freeze", "p1/db:freeze", "p2/db:freeze"}, fx.calls); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"p1:true", "p2:false"}, results(hook, false)); diff != "" {
			t.Errorf("PreAction results (-want +got):\n%s", diff)
		}
	})
}
