package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestModuleConfigSpecDeepCopy checks that the hand-written copy shares
// nothing with the original: changing the copy's Enabled or any level of
// its Settings leaves the original as it was.
func TestModuleConfigSpecDeepCopy(t *testing.T) {
	newSpec := func() *ModuleConfigSpec {
		return &ModuleConfigSpec{
			Enabled: new(true),
			Settings: map[string]any{
				"replicas": int64(2),
				"ratio":    0.5,
				"https":    map[string]any{"mode": "CertManager", "hosts": []any{"a", "b"}},
				"none":     nil,
			},
			Version:     2,
			Maintenance: "NoResourceReconciliation",
		}
	}
	orig := newSpec()
	cp := orig.DeepCopy()
	if diff := cmp.Diff(newSpec(), cp); diff != "" {
		t.Fatalf("copy (-want +got):\n%s", diff)
	}
	*cp.Enabled = false
	cp.Settings["replicas"] = int64(3)
	https := cp.Settings["https"].(map[string]any)
	https["mode"] = "Disabled"
	https["hosts"].([]any)[0] = "c"
	if diff := cmp.Diff(newSpec(), orig); diff != "" {
		t.Errorf("changing the copy changed the original (-want +got):\n%s", diff)
	}

	var nilSpec *ModuleConfigSpec
	if nilSpec.DeepCopy() != nil {
		t.Error("copy of nil is not nil")
	}
	obj := &ModuleConfig{Spec: *newSpec()}
	objCopy := obj.DeepCopyObject().(*ModuleConfig)
	objCopy.Spec.Settings["https"].(map[string]any)["mode"] = "Disabled"
	if diff := cmp.Diff(newSpec(), &obj.Spec); diff != "" {
		t.Errorf("changing the ModuleConfig's copy changed the original (-want +got):\n%s", diff)
	}
}
