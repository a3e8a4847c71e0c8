package moduleobject

import (
	"strings"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/pkg/status"
)

// TestWriterRedacts: a last error that quotes a secret is written with
// the marker instead, in lastError and in the conditions' messages.
func TestWriterRedacts(t *testing.T) {
	const secret = "s3cr3t-token-value"
	r := startRig(t, Options{Redact: func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }})
	r.w.Prune([]string{"a"})
	failed := state(status.PhaseFailed)
	failed.LastError = `Secret "creds" is invalid: metadata.labels: Invalid value: "` + secret + `"`
	r.w.Update(failed)
	r.clk.Step(time.Second)
	r.handled(1)
	r.w.mu.Lock()
	st := r.w.written["a"]
	r.w.mu.Unlock()
	if strings.Contains(st.LastError, secret) || !strings.Contains(st.LastError, "[redacted]") {
		t.Errorf("lastError = %q", st.LastError)
	}
	for _, c := range st.Conditions {
		if strings.Contains(c.Message, secret) {
			t.Errorf("condition %s shows the secret: %q", c.Type, c.Message)
		}
	}
}
