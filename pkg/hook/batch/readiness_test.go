package batch

import (
	"path/filepath"
	"testing"
)

func TestReadinessQueue(t *testing.T) {
	t.Parallel()
	for source, want := range map[string]string{
		"/modules/010-echo/hooks/batch":    "readiness-010-echo",
		"/modules/010-echo/hooks/go/batch": "readiness-010-echo",
		"/elsewhere/bin/batch":             "readiness-bin",
		filepath.Join("rel", "hooks", "b"): "readiness-rel",
	} {
		if got := ReadinessQueue(source); got != want || !IsReadinessQueue(got) {
			t.Errorf("ReadinessQueue(%q) = %q, want %q", source, got, want)
		}
	}
	if IsReadinessQueue("main") || IsReadinessQueue("readiness-") {
		t.Error("IsReadinessQueue accepts main or the bare prefix")
	}
}
