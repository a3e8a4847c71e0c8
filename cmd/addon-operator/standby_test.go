package main

import (
	"fmt"
	"log/slog"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/operator"
	"github.com/addon-operator/addon-operator/pkg/webhook"
)

// TestWireWebhooks: a standby's read-only configuration watch exists only
// with a webhook server and --ha, and reads what the leader reads.
func TestWireWebhooks(t *testing.T) {
	srv := webhook.New(webhook.DefaultOptions(), webhook.Clients{}, clock.RealClock{}, slog.New(slog.DiscardHandler))
	tests := []struct {
		name        string
		srv         *webhook.Server
		ha          bool
		source      string
		wantWebhook bool
		wantWatch   string // the watch's type; "" for none
	}{
		{"no webhook server", nil, true, configSourceConfigMap, false, ""},
		{"without --ha", srv, false, configSourceConfigMap, true, ""},
		{"the ConfigMap", srv, true, configSourceConfigMap, true, "*config.Source"},
		{"ModuleConfig objects", srv, true, configSourceModuleConfig, true, "*main.configSource"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &startOptions{operator: operator.DefaultOptions(), leader: newLeaderOptions(), api: newAPIOptions()}
			o.leader.Enabled, o.api.configSource = tt.ha, tt.source
			var deps operator.Deps
			o.wireWebhooks(&deps, tt.srv, fake.NewClientset(), dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), nil)
			if got := deps.Webhooks != nil; got != tt.wantWebhook {
				t.Errorf("webhooks wired = %v, want %v", got, tt.wantWebhook)
			}
			got := ""
			if deps.StandbyConfig != nil {
				got = fmt.Sprintf("%T", deps.StandbyConfig)
			}
			if got != tt.wantWatch {
				t.Errorf("standby configuration watch = %q, want %q", got, tt.wantWatch)
			}
			if (deps.StandbyConfigEvents != nil) != (tt.wantWatch != "") {
				t.Errorf("standby configuration events = %v, want them with a watch", deps.StandbyConfigEvents)
			}
		})
	}
}
