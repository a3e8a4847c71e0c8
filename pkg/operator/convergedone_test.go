package operator

import (
	"slices"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// A configuration change that reaches the main queue while afterAll hooks
// run changes global values before the converge closes. The change queues
// its converge; closing the converge must not queue a second one for the
// same change, as if afterAll hooks had changed the values.
func TestConfigChangeDuringAfterAllConvergesOnce(t *testing.T) {
	runner := &fakeRunner{}
	var o *Operator
	runner.patch = func(call string, n int) values.Patch {
		if call == "global:afterAll" && n == 1 {
			// What the configuration watch does with an event: the
			// queue's front, ahead of the converge's closing task.
			o.main.PushFront(applyConfigTask{config: &config.Config{Global: values.Values{"greeting": "hi-there"}}})
		}
		return nil
	}
	o, _ = newTestOperator(t, runner)
	runUntil(t, o, func() bool {
		return o.Ready() && count(runner, "global:afterAll") >= 2 && o.main.Len() == 0
	})
	// A second converge queued for the same change would show as a third
	// beforeAll, or, had the loop stopped before it ran, as a Converge
	// task left in the queue.
	if got := count(runner, "global:beforeAll"); got != 2 || o.main.Has(is[convergeTask]) {
		t.Errorf("beforeAll ran %d times (a converge queued: %v), want 2: the startup converge and one for the change; calls: %v",
			got, o.main.Has(is[convergeTask]), runner.recorded())
	}
}

// count is how often call appears among runner's runs.
func count(runner *fakeRunner, call string) int {
	return len(slices.DeleteFunc(runner.recorded(), func(c string) bool { return c != call }))
}
