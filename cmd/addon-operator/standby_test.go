package main

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/operator/admission"
	"github.com/addon-operator/addon-operator/pkg/operator/options"
)

// TestWireStandby: a standby's read-only configuration watch exists only
// with a webhook server and --ha, and reads what the leader reads.
func TestWireStandby(t *testing.T) {
	tests := []struct {
		name        string
		webhooks    bool
		ha          bool
		source      string
		wantStandby bool
		wantWatch   string // the watch's type; "" for none
	}{
		{"no webhook server", false, true, configSourceConfigMap, false, ""},
		{"without --ha", true, false, configSourceConfigMap, false, ""},
		{"the ConfigMap", true, true, configSourceConfigMap, true, "*config.Source"},
		{"ModuleConfig objects", true, true, configSourceModuleConfig, true, "*main.configSource"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &startOptions{operator: options.Default(), leader: newLeaderOptions(), api: newAPIOptions()}
			o.leader.Enabled, o.api.configSource = tt.ha, tt.source
			var cfg *admission.Config
			if tt.webhooks {
				cfg = &admission.Config{}
			}
			o.wireStandby(cfg, fake.NewClientset(), dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), nil)
			if cfg == nil {
				return
			}
			if cfg.Standby != tt.wantStandby {
				t.Errorf("standby = %v, want %v", cfg.Standby, tt.wantStandby)
			}
			got := ""
			if cfg.StandbyConfig != nil {
				w := cfg.StandbyConfig(config.Checks{})
				got = fmt.Sprintf("%T", w)
				if w.Events() == nil {
					t.Error("standby configuration watch has no events channel")
				}
			}
			if got != tt.wantWatch {
				t.Errorf("standby configuration watch = %q, want %q", got, tt.wantWatch)
			}
		})
	}
}
