package operatortest

import (
	"testing"
	"time"
)

// Timeout bounds every wait of a test for the operator or the cluster: a
// loaded two-core machine runs several test binaries side by side.
const Timeout = 90 * time.Second

// Poll calls cond every 50 ms until it holds, failing the test after
// Timeout; what names the awaited condition in the failure.
func Poll(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(Timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", Timeout, what)
		}
		<-tick.C
	}
}
