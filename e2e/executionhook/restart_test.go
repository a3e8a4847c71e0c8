package executionhook

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
)

// TestRestartMidPreAction kills the controller with SIGKILL while the
// PreAction runs in the first of three containers and starts it again: no
// container runs the PreAction twice, and every container reaches a final
// state (the interrupted one failed, as its outcome is unknown).
func TestRestartMidPreAction(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	e := installModule(t, []string{ns})
	n := startNode(t)
	pods := []string{"r-1", "r-2", "r-3"}
	for _, p := range pods {
		n.pod(t, ns, p, nil, "db")
	}
	first := startController(t, e, ns)
	create(t, hooksv1.ExecutionHooksGVR(), ns, `{"apiVersion": "hooks.addon-operator.io/v1alpha1", "kind": "ExecutionHook",
		"metadata": {"name": "slow"}, "spec": {
		"podContainerNamesList": [{"podName": "r-1"}, {"podName": "r-2"}, {"podName": "r-3"}],
		"preAction": {"exec": {"command": ["sh", "-c", "echo start >> runs; touch started; sleep 8; echo end >> runs"]}, "actionTimeoutSeconds": 30},
		"postAction": `+appendCmd("thaw")+`}}`)
	operatortest.Poll(t, "the PreAction running in r-1", func() bool {
		_, err := os.Stat(filepath.Join(n.ContainerDir(ns, "r-1", "db"), "started"))
		return err == nil
	})
	first.kill()

	startController(t, e, ns)
	hook := waitHook(t, ns, "slow", "PreAction done", preDone)
	type result struct {
		Pod     string
		Succeed bool
	}
	got := make([]result, 0, len(hook.Status.ContainerExecutionHookStatuses))
	for _, s := range hook.Status.ContainerExecutionHookStatuses {
		st := s.PreActionStatus
		if st == nil || st.ActionTimestamp == nil || st.ActionSucceed == nil {
			t.Fatalf("%s: PreAction status %+v, want final", s.PodName, st)
		}
		got = append(got, result{s.PodName, *st.ActionSucceed})
	}
	if diff := cmp.Diff([]result{{"r-1", false}, {"r-2", true}, {"r-3", true}}, got); diff != "" {
		t.Errorf("PreAction results (-want +got):\n%s", diff)
	}
	if *hook.Status.PreActionSucceed {
		t.Errorf("PreActionSucceed true, want false: r-1's outcome is unknown")
	}
	// r-1's command, started by the killed controller, ends by itself.
	operatortest.Poll(t, "the first run in r-1 to end", func() bool {
		return slices.Contains(n.lines(t, ns, "r-1", "db"), "end")
	})
	for _, p := range pods {
		if diff := cmp.Diff([]string{"start", "end"}, n.lines(t, ns, p, "db")); diff != "" {
			t.Errorf("%s runs (-want +got): the PreAction ran other than once\n%s", p, diff)
		}
	}

	deleteHook(t, ns, "slow")
	waitGone(t, ns, "slow")
	for _, p := range pods {
		if diff := cmp.Diff([]string{"start", "end", "thaw"}, n.lines(t, ns, p, "db")); diff != "" {
			t.Errorf("%s runs after delete (-want +got):\n%s", p, diff)
		}
	}
}
