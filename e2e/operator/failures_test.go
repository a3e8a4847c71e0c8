package operator

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

func TestHookFailingOnceIsRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"flakyEnabled": "true"})
	h.start()
	trace := startupTrace()
	last := len(trace) - 1
	// The failed first attempt does not hold up the converge: afterAll runs,
	// and the module retries on its own after its backoff.
	h.expectTrace(0, append(trace[:last:last], "flaky:beforeHelm", "global:afterAll", "flaky:beforeHelm")...)
	h.WaitReady()
	if n := h.CountLog("module run failed, will retry", map[string]string{
		"module": "flaky",
		"error":  "module flaky hook hooks/trace (beforeHelm): exit code 3",
	}); n != 1 {
		t.Errorf("failure log lines naming module, hook and exit code = %d, want 1", n)
	}
	if n := h.CountLog("module run failed, will retry", map[string]string{"error": "flaky hook fails on purpose"}); n != 1 {
		t.Errorf("failure log lines with the hook's stderr = %d, want 1", n)
	}
	// The failure and the recovery are Kubernetes Events on the ConfigMap.
	h.Poll("ModuleRunFailed and ModuleRecovered events", func() bool {
		list, err := h.Client.EventsV1().Events(h.Namespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, e := range list.Items {
			if e.Regarding.Kind == "ConfigMap" && e.Regarding.Name == "addon-operator" && strings.Contains(e.Note, "module flaky") {
				seen[e.Reason+"/"+e.Type] = true
			}
		}
		return seen["ModuleRunFailed/Warning"] && seen["ModuleRecovered/Normal"]
	})
}

func TestHangingHookIsKilledAtTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"sleepyEnabled": "true"})
	h.start("--hook-timeout=2s")
	trace := startupTrace()
	last := len(trace) - 1
	mark := h.expectTrace(0, append(trace[:last:last], "sleepy:beforeHelm")...)
	// The converge goes on to afterAll, and the module's retry starts after
	// --retry-delay: the two are independent, in either order.
	h.Poll("afterAll and the retry of sleepy's beforeHelm", func() bool { return len(h.readTrace()) >= mark+2 })
	if next := h.readTrace()[mark : mark+2]; !slices.Contains(next, "global:afterAll") || !slices.Contains(next, "sleepy:beforeHelm") {
		t.Fatalf("trace after line %d: %v, want global:afterAll and sleepy:beforeHelm in either order", mark, next)
	}
	if n := h.CountLog("module run failed, will retry", map[string]string{"module": "sleepy", "error": "timed out after 2s"}); n != 1 {
		t.Errorf("timeout log lines = %d, want 1", n)
	}
	pid := h.sleepyChild()
	h.Poll("the hung hook's child to be killed", func() bool {
		return syscall.Kill(pid, 0) != nil || isZombie(pid)
	})
}

// sleepyChild waits for the sleepy hook to write the pid of the child it
// started, whole, and returns it.
func (h *harness) sleepyChild() int {
	h.T.Helper()
	var pid int
	h.Poll("the hanging hook to record its child's pid", func() bool {
		data, err := os.ReadFile(h.trace + ".sleepy-child")
		if err != nil || !strings.HasSuffix(string(data), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && pid > 0
	})
	return pid
}

// isZombie reports a process that is dead but not reaped (its parent, the
// sandbox's init, may not reap orphans).
func isZombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	fields := strings.Fields(string(data))
	return len(fields) > 2 && fields[2] == "Z"
}

func TestBadHookConfigIsReported(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"brokenConfigEnabled": "true"})
	h.start()
	h.WaitMetric(operatortest.ModuleRuns, operatortest.RunsOf("broken-config", "error"), "to reach 2", operatortest.AtLeast(2))
	h.WaitModule("broken-config", "last error names the hook config", operatortest.ErrorContains("900-broken-config/hooks/trace: schedule[0].crontab"))
	if n := h.CountLog("module hooks not loaded", map[string]string{"module": "broken-config", "error": "not a crontab"}); n != 1 {
		t.Errorf("startup log lines reporting the broken hook config = %d, want 1", n)
	}
	// Modules before it converged; nothing of them is lost.
	if got := h.ReleaseRevision("alpha"); got != 1 {
		t.Errorf("alpha release revision = %d, want 1", got)
	}
}

func TestPatchOutsideOwnSectionFailsTheHook(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"badPatchEnabled": "true"})
	h.start()
	h.WaitMetric(operatortest.ModuleRuns, operatortest.RunsOf("bad-patch", "error"), "to reach 2", operatortest.AtLeast(2))
	// The error names the hook and the rejected path.
	h.WaitModule("bad-patch", "last error names the hook and /global/stolen",
		operatortest.ErrorContains(`module bad-patch hook hooks/trace (beforeHelm): values patch: `, "/global/stolen"))
}

func TestInvalidConfigMapKeepsLastGoodConfig(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"alpha": "message: good"})
	h.start()
	mark := h.expectTrace(0, startupTrace()...)

	h.SetConfig(map[string]string{"alpha": "message: [unclosed"})
	h.WaitCondition(status.ConditionConfigMapInvalid, `key "alpha"`)
	h.SetConfig(map[string]string{"alpha": "message: fixed"})
	h.expectTrace(mark, "alpha:beforeHelm", "alpha:afterHelm")
	if got := h.alphaData()["message"]; got != "fixed" {
		t.Errorf("alpha message = %q, want fixed", got)
	}
	if got := h.ReleaseRevision("alpha"); got != 2 {
		t.Errorf("alpha release revision = %d, want 2: the invalid ConfigMap changed nothing", got)
	}
}

func TestSIGTERMKillsRunningHookAndStops(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"sleepyEnabled": "true"})
	h.start()
	trace := startupTrace()
	last := len(trace) - 1
	h.expectTrace(0, append(trace[:last:last], "sleepy:beforeHelm")...)
	pid := h.sleepyChild()
	started := time.Now()
	h.Stop()
	if took := time.Since(started); took > 20*time.Second {
		t.Errorf("stop took %s, want well under the 30s shutdown bound", took)
	}
	h.Poll("the hanging hook's child to be killed", func() bool {
		return syscall.Kill(pid, 0) != nil || isZombie(pid)
	})
}
