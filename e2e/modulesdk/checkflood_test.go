package modulesdk

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestSettingsCheckFloodIsBounded: a user who may only update the
// operator's ConfigMap sends many dry-run writes at once, each with new
// settings whose check takes 3 s. Admission runs at most two checks at a
// time (the rest are refused as busy, never stored unchecked), and once
// the flood is over the user's next write is checked, stored and
// deployed.
func TestSettingsCheckFloodIsBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.chart("010-sdk", "sdk", "sdk")
	binary := h.sdkBinary("010-sdk")
	h.SetConfig(map[string]string{"sdkEnabled": "true", "sdk": "replicas: 1\n"})
	op := h.start(h.webhookArgs()...)
	op.WaitReady()
	h.Poll("replicas: 0 denied by the webhook", func() bool {
		err := h.update(map[string]string{"sdkEnabled": "true", "sdk": "replicas: 0\n"})
		return err != nil && strings.Contains(err.Error(), "replicas cannot be 0")
	})
	user := h.configMapWriter("flooder")

	var most atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			n := int64(runningChecks(binary))
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
		}
	}()

	const requests = 12
	errs := make([]error, requests)
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			errs[i] = h.updateAs(user, map[string]string{"sdkEnabled": "true", "sdk": fmt.Sprintf("replicas: %d\nholdSeconds: 3\n", i+1)}, true)
		})
	}
	wg.Wait()
	close(stop)
	<-sampled

	busy, accepted, other := 0, 0, []string{}
	for _, err := range errs {
		switch {
		case err == nil:
			accepted++
		case strings.Contains(err.Error(), "every admission check slot stayed busy"):
			busy++
		default:
			other = append(other, err.Error())
		}
	}
	t.Logf("%d writes at once: %d accepted, %d refused as busy, others %q; at most %d checks ran at once", requests, accepted, busy, other, most.Load())
	if busy == 0 {
		t.Errorf("no write of %d refused as busy: %v", requests, errs)
	}
	if got := most.Load(); got > 2 || got == 0 {
		t.Errorf("at most %d settings checks ran at once, want 1 or 2", got)
	}

	if err := h.updateAs(user, map[string]string{"sdkEnabled": "true", "sdk": "replicas: 7\n"}, false); err != nil {
		t.Fatalf("the user's write after the flood: %v", err)
	}
	h.Poll("the write after the flood deployed", func() bool { return h.ConfigMapData("sdk")["settings"] == `{"replicas":7}` })
}

// runningChecks counts the processes running "hook check" of binary.
func runningChecks(binary string) int {
	want := []byte(binary + "\x00hook\x00check")
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	n := 0
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.HasPrefix(b, want) {
			n++
		}
	}
	return n
}

// configMapWriter makes a user who may get and update the operator's
// ConfigMap and nothing else, and returns a client acting as that user.
func (h *harness) configMapWriter(user string) kubernetes.Interface {
	t := h.T
	t.Helper()
	ctx := t.Context()
	rbac := h.Client.RbacV1().Roles(h.Namespace)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"addon-operator"}, Verbs: []string{"get", "update"},
	}}}
	if _, err := rbac.Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	if _, err := h.Client.RbacV1().RoleBindings(h.Namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	cfg.QPS, cfg.Burst = -1, 0
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.Poll(user+" may read the ConfigMap", func() bool {
		_, err := kube.CoreV1().ConfigMaps(h.Namespace).Get(ctx, "addon-operator", metav1.GetOptions{})
		return err == nil
	})
	return kube
}

// updateAs writes the operator's ConfigMap data as the client's user,
// dry-run on request, and returns the API server's answer.
func (h *harness) updateAs(kube kubernetes.Interface, data map[string]string, dryRun bool) error {
	cms := kube.CoreV1().ConfigMaps(h.Namespace)
	cm, err := cms.Get(h.T.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		return err
	}
	cm.Data = data
	opts := metav1.UpdateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = cms.Update(h.T.Context(), cm, opts)
	return err
}
