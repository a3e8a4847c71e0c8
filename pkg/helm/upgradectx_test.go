package helm

import (
	"strconv"
	"testing"
	"testing/synctest"
)

// Helm's upgrade watches its context in a goroutine; Apply ends that
// context as it returns. Whenever the watcher runs, a successful upgrade
// must stay deployed, and the watcher must exit.
func TestApplyUpgradeOutlivesItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newTestEnv(t)
		dir := echoChart(t, "one")
		for i := range 50 {
			out, err := env.client.Apply(t.Context(), echoRelease(dir, strconv.Itoa(i)))
			if err != nil {
				t.Fatalf("apply %d: %v", i, err)
			}
			synctest.Wait() // Helm's goroutines have exited or blocked for good
			status, err := env.client.Status(t.Context(), "echo")
			if err != nil || status.Revision != out.Revision || status.State != "deployed" {
				t.Fatalf("after apply %d: Status = %+v, %v; want revision %d deployed", i, status, err, out.Revision)
			}
		}
	})
}
